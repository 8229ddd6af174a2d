"""Out-of-range settings and an empty strategy list through the entry point: exit 2 naming
the setting (and its range) before Spark starts, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.cli import plan as cli
from jobs.plan_assignments import main

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("[execution]\nbuckets = 100000000\n", "execution.buckets must be an integer >= 0 and"),
        ("[execution]\noutput_files = 0\n", "execution.output_files must be an integer >= 1 and"),
        ("[planner]\nscenario_max_members = 1000000\n", "<= 10,000"),
        ("[output]\nlock_lease_s = 1\n", "output.lock_lease_s must be an integer >= 30 and"),
        ("[planner]\nstrategies = []\n", "planner.strategies is empty"),
    ],
    ids=["buckets", "output-files", "scenario-members", "lease", "no-strategies"],
)
def test_out_of_range_settings_exit_2_before_spark_starts(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, caplog, toml: str, needle: str
) -> None:
    def no_session(config: object) -> object:
        raise AssertionError("Spark must not start for a configuration error")

    monkeypatch.setattr(cli, "build_session", no_session)
    config = tmp_path / "planner.toml"
    config.write_text(toml, encoding="utf-8")
    out = tmp_path / "out"
    code = main(["--input", str(tmp_path), "--output", str(out), "--config", str(config)])
    assert code == 2
    assert "configuration error" in caplog.text
    assert needle in caplog.text
    assert not out.exists()
