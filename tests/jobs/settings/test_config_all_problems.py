"""A config with several mistakes names every one of them in one error, not the first."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.plan_assignments import main
from jobs.settings.config import ConfigError, check_keys, load_config

SEVERAL = """\
[planner]
strategy = ["range"]
balance_by = "bytes"
scenarios = ["member_leave", "meteor"]

[execution]
buckets = "many"
output_files = 0

[excution]
buckets = 3

[spark]
"spark.driver.memory" = "lots"
"spark.sql.shuffle.partitions" = [1]
"""
# one needle per mistake: unknown key and section, wrong types, values out of range
NEEDLES = [
    "unknown key 'strategy' in [planner]",
    "planner.balance_by must be one of",
    "unknown scenario 'meteor'",
    "execution.buckets must be an integer >= 0 and <= 100,000 (0 = 16 x the default"
    " parallelism, at least 1,000 and at most 20,000 members a bucket), got 'many'",
    "execution.output_files must be an integer >= 1 and <= 10,000, got 0",
    "unknown section 'excution'",
    "[spark] spark.driver.memory = 'lots' is invalid",
    "Spark property spark.sql.shuffle.partitions must be a string, number or boolean",
]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "planner.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_mistake_is_named_in_one_error(tmp_path: Path) -> None:
    path = write(tmp_path, SEVERAL)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    missing = [n for n in NEEDLES if n not in text]
    assert missing == [], text
    assert text.startswith(f"{path}: 8 problems: (1) ")
    assert "\n" not in text, "one line, as every planner message"
    assert text.count(str(path)) == 1, "the file is named once, not once per problem"


def test_one_mistake_keeps_its_own_message(tmp_path: Path) -> None:
    path = write(tmp_path, "[execution]\noutput_files = 0\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == (
        f"{path}: execution.output_files must be an integer >= 1 and <= 10,000, got 0"
    )


def test_check_keys_names_every_unknown_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        check_keys({"planner": {"strategy": [], "balance": "x"}, "sparkk": {}}, "c.toml")
    for needle in ("'strategy'", "'balance'", "unknown section 'sparkk'"):
        assert needle in str(err.value)


def test_the_entry_point_exits_2_naming_them_all(tmp_path: Path, caplog, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    code = main(
        ["--input", str(tmp_path), "--output", str(out), "--config", str(write(tmp_path, SEVERAL))]
    )
    assert code == 2
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1
    assert [n for n in NEEDLES if n not in errors[0]] == []
    assert not out.exists()
