"""The estate report of a real run of the planner on the sample estate, and its entry point."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib", reason="the report needs the `report` dependency group")
pytest.importorskip("jinja2", reason="the report needs the `report` dependency group")

from jobs.plan_assignments import run
from jobs.report import REPORT_FILE, write_report
from jobs.settings.config import PlannerConfig
from tools.sample_estate import generate, write

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "elected")
SECTIONS = ("run", "strategies", "gap", "max", "load", "costs", "recommend", "worst")
SECTIONS += ("rejected", "elected", "capacity", "migration")


@pytest.fixture(scope="module")
def sample_run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    base = tmp_path_factory.mktemp("sample-report")
    write(generate(60, seed=7, bad_rows=True), base / "in")
    out = base / "out"
    result = run(
        spark,
        str(base / "in"),
        str(out),
        PlannerConfig().replace(strategies=STRATEGIES),
        ds="2026-11-23",
    )
    path = write_report(spark, str(out), result)
    return out, Path(path).read_text(encoding="utf-8")


def test_sample_estate_report_has_every_strategy_and_section(sample_run: tuple[Path, str]) -> None:
    out, page = sample_run
    assert (out / REPORT_FILE).exists()
    for name in SECTIONS:
        assert f'<section id="{name}">' in page, name
    glance = re.search(r'<section id="strategies">(.*?)</section>', page, re.S)
    assert glance
    for s in STRATEGIES:
        assert f">{s}</span>" in glance.group(1), s
    assert "2026-11-23" in page
    # the sample estate has bad rows: they are listed by reason
    rejected = re.search(r'<section id="rejected">(.*?)</section>', page, re.S)
    assert rejected
    assert "DUPLICATE_MEMBER_ID" in rejected.group(1)
    assert "http://" not in page
    assert "https://" not in page


def test_the_capacity_section_counts_idle_members(sample_run: tuple[Path, str]) -> None:
    _, page = sample_run
    section = re.search(r'<section id="capacity">(.*?)</section>', page, re.S)
    assert section
    assert "idle members" in section.group(1)
    assert "No capacity table" not in section.group(1)


@pytest.mark.slow
def test_module_entry_point_rebuilds_the_same_bytes(sample_run: tuple[Path, str]) -> None:
    out, page = sample_run
    (out / REPORT_FILE).unlink()
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PLANNER_MASTER": "local[2]"}
    done = subprocess.run(
        [sys.executable, "-m", "jobs.report", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith(f"{out}/{REPORT_FILE}")
    assert (out / REPORT_FILE).read_text(encoding="utf-8") == page


def test_module_entry_point_refuses_a_missing_directory(tmp_path: Path) -> None:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PLANNER_MASTER": "local[1]"}
    done = subprocess.run(
        [sys.executable, "-m", "jobs.report", str(tmp_path / "nope")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 2
    assert "no such output directory" in done.stderr
    assert not (tmp_path / "nope").exists()


def test_module_entry_point_refuses_a_folder_that_is_not_a_planner_output(
    tmp_path: Path,
) -> None:
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    (snapshot / "subscriptions.parquet").write_bytes(b"not a planner output")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PLANNER_MASTER": "local[1]"}
    done = subprocess.run(
        [sys.executable, "-m", "jobs.report", str(snapshot)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 2
    assert "is not a planner output (no _manifest.json)" in done.stderr
    assert sorted(p.name for p in snapshot.iterdir()) == ["subscriptions.parquet"]
