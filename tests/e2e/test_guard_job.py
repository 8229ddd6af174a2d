"""Through the entry point: a plugin that segfaults or hangs fails only its (group, strategy);
every other group and strategy is planned and the run exits 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers.estate import counted_from_tables, member, write_estate

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_plugin_that_kills_or_hangs_its_worker_fails_only_what_it_touched(
    tmp_path: Path,
) -> None:
    members = [
        member(g, f"{p}{i}", ["t"]) for g, p in (("ok", "m"), ("bad", "bad")) for i in range(3)
    ]
    snapshot = write_estate(tmp_path / "in", {"t": 6}, members)
    config = tmp_path / "planner.toml"
    config.write_text(
        (REPO / "conf" / "planner.toml")
        .read_text()
        .replace("group_timeout_s = 60", "group_timeout_s = 3")
    )
    strategies = "range,helpers.killer_plugins:Segfaults,helpers.killer_plugins:Hangs"
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'tests'}:{REPO}", "PLANNER_MASTER": "local[2]"}
    done = subprocess.run(
        [sys.executable, "-m", "jobs.plan_assignments", "--input", str(snapshot), "--output",
         str(tmp_path / "out"), "--config", str(config), "--strategies", strategies],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    metrics = pq.read_table(tmp_path / "out" / "balance_metrics").to_pylist()
    planned = sorted((r["group_id"], r["strategy"]) for r in metrics)
    assert planned == [
        ("bad", "range"),
        ("ok", "hangs"),
        ("ok", "range"),
        ("ok", "segfaults"),
    ]
    rejected = {r["strategy"]: r for r in pq.read_table(tmp_path / "out" / "rejected").to_pylist()}
    assert set(rejected) == {"segfaults", "hangs"}
    assert all(
        r["group_id"] == "bad" and r["reason"] == "ASSIGNOR_FAILED" for r in rejected.values()
    )
    assert "killed its worker with signal SIGSEGV" in rejected["segfaults"]["detail"]
    assert "did not finish within 3 s" in rejected["hangs"]["detail"]
    assert "Traceback" not in done.stdout
    # the rows of the failures, added beside the bucket's, are counted with it
    manifest = json.loads((tmp_path / "out" / "_manifest.json").read_text())
    counted = counted_from_tables(tmp_path / "out")
    assert counted["rejected_by_reason"] == {"error:ASSIGNOR_FAILED": 2}
    assert {k: manifest[k] for k in counted} == counted
