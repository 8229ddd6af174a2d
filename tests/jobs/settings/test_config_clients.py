"""`[clients] library_by_group`: group-id patterns -> client library, in file order, into
the run's settings; a bad table is a ConfigError naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.settings.config import ConfigError, load_config
from jobs.settings.run import load_settings


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "planner.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_patterns_keep_file_order_and_reach_the_run_settings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[clients]\nlibrary_by_group = { "pay-eu-*" = " librdkafka ", "pay-*" = "kafka-python" }\n',
    )
    config, settings = load_settings(path)
    expected = (("pay-eu-*", "librdkafka"), ("pay-*", "kafka-python"))
    assert config.clients.library_by_group == expected
    assert settings.library_by_group == expected
    # the manifest's config writes pairs as `key=value`, as it writes `[migration] landing`
    assert config.as_dict()["library_by_group"] == ["pay-eu-*=librdkafka", "pay-*=kafka-python"]


def test_the_shipped_config_names_no_pattern() -> None:
    assert load_config().clients.library_by_group == ()


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ('library_by_group = { "pay-*" = "" }', "must name a client library"),
        ('library_by_group = { "" = "java" }', "empty group-id pattern"),
        ('library_by_group = { "pay-*" = 3 }', "must name a client library"),
        ('library_by_group = "pay-*"', "must be a table"),
    ],
)
def test_a_bad_table_is_a_config_error_naming_the_key(
    tmp_path: Path, value: str, named: str
) -> None:
    with pytest.raises(ConfigError, match=named) as caught:
        load_config(write(tmp_path, f"[clients]\n{value}\n"))
    assert "clients.library_by_group" in str(caught.value)
