"""Which core planned a run's buckets: `phases.core` in the manifest, and the phase line.

A run on the compiled core (`make core`) reports every bucket compiled; a run whose Python
workers import the sources only (a copy of the packages without the extension modules, as a
`--py-files` zip ships them) reports every bucket pure, with the same rows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from chispa import assert_df_equality
from helpers.estate import member, write_estate

from jobs.plan.udf import COMPILED, PURE, planning_core
from jobs.plan_assignments import run
from jobs.settings.config import PlannerConfig

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
TABLES = ("assignments", "balance_metrics", "elections", "rejected")


def small_estate(root: Path) -> Path:
    members = [member(f"g{g}", f"c{i}", ["t1", "t2"]) for g in range(6) for i in range(3)]
    return write_estate(root, {"t1": 4, "t2": 3}, members)


def pure_copy(root: Path) -> Path:
    """The planner's packages and config without the compiled core."""
    for name in ("assignors", "jobs", "conf"):
        shutil.copytree(
            REPO / name, root / name, ignore=shutil.ignore_patterns("*.so", "__pycache__")
        )
    return root


def test_a_run_says_which_core_planned_its_buckets(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    core = planning_core()  # the local workers import the same packages as this process
    if os.environ.get("PLANNER_EXPECT_COMPILED") == "1":
        assert core == COMPILED
    out = tmp_path / "out"
    result = run(spark, str(small_estate(tmp_path / "in")), str(out), PlannerConfig())
    cores = json.loads((out / "_manifest.json").read_text())["phases"]["core"]
    assert cores == result.phases["core"]
    buckets = cores[core]
    assert 1 <= buckets <= 6  # one per bucket that holds a group
    assert cores == {COMPILED: 0, PURE: 0, core: buckets}
    compiled = buckets if core == COMPILED else 0
    assert f"; core compiled {compiled}/{buckets};" in result.phase_line()


@pytest.mark.slow
def test_workers_on_the_pure_core_report_every_bucket_pure(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate = small_estate(tmp_path / "in")
    copy = pure_copy(tmp_path / "pure")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env.update(PYTHONPATH=str(copy), SPARK_LOCAL_IP="127.0.0.1")
    out = tmp_path / "out-pure"
    command = [sys.executable, "-m", "jobs.plan_assignments", "--input", str(estate)]
    done = subprocess.run(
        [*command, "--output", str(out), "--no-report"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    phases = json.loads((out / "_manifest.json").read_text())["phases"]
    assert phases["core"][COMPILED] == 0
    assert phases["core"][PURE] >= 1
    assert f"core compiled 0/{phases['core'][PURE]}" in done.stdout + done.stderr

    # The same rows as a run in this process (whichever core it has).
    here = tmp_path / "out-here"
    run(spark, str(estate), str(here), PlannerConfig(), report=False)
    for table in TABLES:
        assert_df_equality(
            spark.read.parquet(str(out / table)),
            spark.read.parquet(str(here / table)),
            ignore_row_order=True,
            ignore_nullable=True,
        )
