"""A planned bucket names the core that planned it; the manifest counts the buckets per core."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from test_udf import TOPICS, bucket, ctx

import jobs.plan.udf
from assignors.problems import ERROR, Problem, Reason
from jobs.plan.udf import COMPILED, CORE, PURE, TALLY, plan_bucket, planning_core, problems_frame
from jobs.tables.manifest import GroupCounts, Manifest

REPO = Path(__file__).resolve().parents[3]


def test_a_planned_buckets_tally_names_the_core_of_its_process() -> None:
    timed = plan_bucket(bucket(), TOPICS, ctx(), timing_row=True)
    tally = json.loads(timed.iloc[-1]["payload"])[TALLY]
    assert tally[CORE] == planning_core() in (COMPILED, PURE)


def test_the_guards_rejected_rows_are_no_bucket_of_their_own() -> None:
    # A guarded bucket's failures come with a timing row of their own (their tally only):
    # it must not count as a second bucket.
    failure = Problem("g", None, None, ERROR, Reason.INTERNAL_ERROR.value, "boom", "range")
    frame = problems_frame([failure], tally=True)
    assert CORE not in json.loads(frame.iloc[-1]["payload"])[TALLY]


def test_the_core_is_pure_where_python_imports_the_sources(tmp_path: Path) -> None:
    for name in ("assignors", "jobs"):
        shutil.copytree(
            REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("*.so", "__pycache__")
        )
    probe = "import jobs.plan.udf; print(jobs.plan.udf.planning_core(), jobs.plan.udf.__file__)"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == [PURE, str(tmp_path / "jobs" / "plan" / "udf.py")]
    if os.environ.get("PLANNER_EXPECT_COMPILED") == "1":  # `make test-main`: this process
        assert jobs.plan.udf.planning_core() == COMPILED


def manifest(**phases: dict[str, float]) -> Manifest:
    return Manifest(
        version="0",
        ds=None,
        input="in",
        output="out",
        strategies=["range"],
        config={},
        input_rows={},
        output_rows={},
        topics=1,
        groups=GroupCounts(1, 1, 0),
        planned_by_strategy={"range": 1},
        rejected_by_reason={},
        spark_version="4",
        duration_seconds=10.0,
        phases={"wall": {"read": 1.0, "plan": 8.0}, **phases},
    )


def test_the_phase_line_says_how_many_buckets_the_compiled_core_planned() -> None:
    line = manifest(core={COMPILED: 30, PURE: 2}, memory={"peak_bucket_rss_mib": 512.0})
    assert "; total 10.0 s; core compiled 30/32; peak worker memory 0.50 GiB" in line.phase_line()
    assert "core compiled 0/32" in manifest(core={COMPILED: 0, PURE: 32}).phase_line()
    # a manifest of a run that did not count them says nothing about the core
    assert "core" not in manifest().phase_line()


def test_phases_core_is_written_and_read_back() -> None:
    written = manifest(core={COMPILED: 32, PURE: 0}).to_json()
    assert written["phases"]["core"] == {COMPILED: 32, PURE: 0}
    assert Manifest.from_json(json.loads(json.dumps(written))).phases["core"] == {
        COMPILED: 32,
        PURE: 0,
    }
