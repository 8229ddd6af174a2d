"""[migration]: Kafka's defaults, the broker names read, bad values refused with the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from assignors.migration.conditions import MigrationSettings
from jobs.settings.config import ConfigError, PlannerConfig, load_config
from jobs.settings.run import RunSettings


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "planner.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_kafkas(tmp_path: Path) -> None:
    for config in (load_config(), load_config(write(tmp_path, "[planner]\n")), PlannerConfig()):
        settings = RunSettings.from_config(config)
        assert settings.migration == MigrationSettings()
    assert MigrationSettings().policy == "bidirectional"
    assert MigrationSettings().consumer_max_size == 2**31 - 1


def test_keys_are_read_as_the_broker_names_them(tmp_path: Path) -> None:
    text = (
        '[migration]\npolicy = " Upgrade"\nconsumer_max_size = 500\n'
        'landing = ["org.apache.kafka.clients.consumer.RangeAssignor=uniform",'
        ' "org.apache.kafka.clients.consumer.StickyAssignor'
        '=range", "*=org.apache.kafka.coordinator.group.assignor.UniformAssignor"]\n'
    )
    settings = RunSettings.from_config(load_config(write(tmp_path, text)))
    assert settings.migration == MigrationSettings(
        "upgrade", 500, (("range", "uniform"), ("sticky", "server-range"), ("*", "uniform"))
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('policy = "both"', "migration.policy must be one of"),
        ("consumer_max_size = 0", "migration.consumer_max_size must be an integer >= 1"),
        ('landing = ["range"]', "migration.landing entries must read 'strategy=assignor'"),
        ('landing = ["range=uniform", "range=range"]', "migration.landing maps 'range' twice"),
        ('landing = ["range=cooperative-sticky"]', "is not a broker-side assignor"),
        ('landing = ["nope=uniform"]', "'nope' is not a built-in strategy"),
    ],
)
def test_bad_values_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        RunSettings.from_config(load_config(write(tmp_path, f"[migration]\n{text}\n")))
    assert message in str(caught.value)
