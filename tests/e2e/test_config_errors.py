"""Configuration typos through the entry point: exit 2, culprit named,
nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.plan_assignments import main

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("toml", "extra", "needles"),
    [
        ('[planner]\nstrategy = ["range"]\n', [], ["unknown key 'strategy' in [planner]"]),
        ("[excution]\nbuckets = 3\n", [], ["unknown section 'excution'", "[execution]"]),
        ('[spark]\n"spark.driver.memory" = "lots"\n', [], ["spark.driver.memory = 'lots'"]),
        ("[spark.sql]\nshuffle.partitions = 0\n", [], ["spark.sql.shuffle.partitions = '0'"]),
        ("", ["--ds", "2026-1-5"], ["--ds must be a date YYYY-MM-DD, got '2026-1-5'"]),
        ("", ["--ds", "20261105"], ["--ds must be a date YYYY-MM-DD, got '20261105'"]),
    ],
    ids=["unknown-key", "unknown-section", "memory", "nested-partitions", "ds-short", "ds-basic"],
)
def test_config_typos_exit_2_before_spark_starts(  # type: ignore[no-untyped-def]
    tmp_path: Path, capsys, caplog, toml: str, extra: list[str], needles: list[str]
) -> None:
    config = tmp_path / "planner.toml"
    config.write_text(toml, encoding="utf-8")
    out = tmp_path / "out"
    args = ["--input", str(tmp_path), "--output", str(out), "--config", str(config), *extra]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse errors
        code = exc.code
    assert code == 2
    text = capsys.readouterr().err + caplog.text
    for needle in needles:
        assert needle in text
    assert not out.exists()


@pytest.mark.parametrize(
    ("spark", "needle"),
    [
        # the JVM itself refuses to start
        ('"spark.driver.memory" = "1k"', "Spark did not start; check the [spark] properties"),
        # the JVM starts, Spark refuses the value when it builds the session state
        (
            '"spark.sql.session.timeZone" = "Mars/Olympus"',
            "Spark refused the [spark] property spark.sql.session.timeZone = 'Mars/Olympus'",
        ),
    ],
    ids=["jvm", "sql-conf"],
)
@pytest.mark.slow
def test_spark_refusing_a_property_exits_2_naming_it(
    tmp_path: Path, spark: str, needle: str
) -> None:
    config = tmp_path / "planner.toml"
    config.write_text(f'[spark]\n{spark}\n"spark.ui.enabled" = "false"\n', encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PLANNER_MASTER": "local[1]"}
    done = subprocess.run(
        [sys.executable, "-m", "jobs.plan_assignments", "--input", str(tmp_path),
         "--output", str(out), "--config", str(config)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-3000:]
    assert needle in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()
