"""The what-if keys of [planner]: defaults, typos refused, recommend_from resolved."""

from __future__ import annotations

from pathlib import Path

import pytest

from assignors.whatif.recommend import DEFAULT_RECOMMEND_FROM
from assignors.whatif.simulation import DEFAULT_MAX_MEMBERS, SCENARIOS
from jobs.settings.config import ConfigError, PlannerConfig, load_config
from jobs.settings.run import RunSettings

PLUGIN = "helpers.failing_plugins:LeastLoaded"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "planner.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_from_the_shipped_config_and_without_the_keys(tmp_path: Path) -> None:
    for config in (load_config(), load_config(write(tmp_path, "[planner]\n"))):
        assert config.planner.scenarios == SCENARIOS
        assert config.planner.scenario_max_members == DEFAULT_MAX_MEMBERS == 200
        assert config.planner.scenario_max_partitions == 10_000
        assert config.planner.recommend_from == DEFAULT_RECOMMEND_FROM
    assert PlannerConfig().planner.scenarios == SCENARIOS
    assert load_config().as_dict()["scenarios"] == list(SCENARIOS)


def test_keys_are_read(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            '[planner]\nscenarios = ["rolling_restart", "member_join"]\n'
            "scenario_max_members = 50\nscenario_max_partitions = 0\n"
            'recommend_from = ["balanced", "range", "range"]\n',
        )
    )
    assert config.planner.scenarios == ("member_join", "rolling_restart")  # SCENARIOS order
    assert (config.planner.scenario_max_members, config.planner.scenario_max_partitions) == (50, 0)
    assert config.planner.recommend_from == ("balanced", "range")
    assert load_config(write(tmp_path, "[planner]\nscenarios = []\n")).planner.scenarios == ()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('scenarios = ["member_crash"]', "unknown scenario 'member_crash' (known: member_leave"),
        ('scenarios = "member_join"', "scenarios must be a list of scenario names"),
        ("scenario_max_members = -1", "planner.scenario_max_members must be an integer >= 0"),
        ("scenario_max_partitions = 1.5", "planner.scenario_max_partitions must be an integer"),
        ("recommend_from = [1]", "recommend_from must be a list of non-empty strings"),
        ("scenario = []", "unknown key 'scenario' in [planner] (did you mean 'scenarios'?)"),
    ],
)
def test_bad_values_are_configuration_errors(tmp_path: Path, text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, f"[planner]\n{text}\n"))
    assert needle in str(err.value)


def test_recommend_from_resolves_to_protocol_names() -> None:
    config = PlannerConfig().replace(
        strategies=("range", PLUGIN),
        recommend_from=(
            "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
            "balanced",
            PLUGIN,
            "least-loaded",
        ),
    )
    settings = RunSettings.from_config(config).whatif
    assert settings.recommend_from == ("cooperative-sticky", "balanced", "least-loaded")
    assert settings.scenarios == SCENARIOS


@pytest.mark.parametrize(
    "name",
    ["stikcy", "elected", PLUGIN, "least-loaded"],  # the plugin is not configured here
)
def test_recommend_from_names_a_known_strategy(name: str) -> None:
    config = PlannerConfig().replace(strategies=("range",), recommend_from=(name,))
    with pytest.raises(ConfigError, match="neither a built-in strategy nor a plugin"):
        RunSettings.from_config(config)
