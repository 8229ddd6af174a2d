"""Every numeric setting has a documented range, checked when the config is read; a config
that sets part of a section keeps the shipped values for the rest."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from jobs.settings.config import DEFAULT_CONFIG, KNOWN_KEYS, ConfigError, PlannerConfig, load_config
from jobs.settings.model import RANGES


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "planner.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("section", "key"), sorted(RANGES))
@pytest.mark.parametrize("where", ["below", "above", "not-an-integer"])
def test_a_value_outside_its_range_names_the_setting_and_the_range(
    tmp_path: Path, section: str, key: str, where: str
) -> None:
    rng = RANGES[(section, key)]
    value = {"below": str(rng.low - 1), "above": str(rng.high + 1), "not-an-integer": "1.5"}
    path = _config(tmp_path, f"[{section}]\n{key} = {value[where]}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert f"{section}.{key} must be an integer >= {rng.low:,} and <= {rng.high:,}" in str(
        caught.value
    )


@pytest.mark.parametrize(("section", "key"), sorted(RANGES))
def test_both_ends_of_each_range_are_accepted(tmp_path: Path, section: str, key: str) -> None:
    rng = RANGES[(section, key)]
    for value in (rng.low, rng.high):
        load_config(_config(tmp_path, f"[{section}]\n{key} = {value}\n"))


def test_a_hundred_million_buckets_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"execution\.buckets must be an integer >= 0 and <= 100,000"
    ):
        load_config(_config(tmp_path, "[execution]\nbuckets = 100000000\n"))


def test_every_numeric_setting_of_the_shipped_file_has_a_range() -> None:
    shipped = tomllib.loads(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    numeric = {
        (section, key)
        for section, table in shipped.items()
        if section != "spark"
        for key, value in table.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
    assert numeric == set(RANGES)
    assert all(key in KNOWN_KEYS[section] for section, key in RANGES)


def test_an_empty_strategy_list_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"planner\.strategies is empty"):
        load_config(_config(tmp_path, "[planner]\nstrategies = []\n"))


def test_a_partial_planner_section_keeps_the_shipped_values(tmp_path: Path) -> None:
    shipped = load_config()
    partial = load_config(_config(tmp_path, '[planner]\nbalance_by = "weight"\n'))
    assert partial.planner.balance_by == "weight"
    assert partial.planner.strategies == shipped.planner.strategies
    assert len(partial.planner.strategies) == 7
    assert partial.planner.scenarios == shipped.planner.scenarios
    assert partial.planner.recommend_from == shipped.planner.recommend_from
    assert partial.planner.scenario_max_members == shipped.planner.scenario_max_members
    assert partial.output.lock_lease_s == shipped.output.lock_lease_s


def test_the_dataclass_defaults_are_the_shipped_values() -> None:
    shipped, default = load_config().as_dict(), PlannerConfig().as_dict()
    for key in ("spark", "source"):
        shipped.pop(key), default.pop(key)
    assert default == shipped
