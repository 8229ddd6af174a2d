"""spark-submit runs jobs/plan_assignments.py as a script, and Python then puts jobs/ first on
sys.path: the entry point takes it off, so that no wing of jobs/ (cli, plan, tables, output,
settings, report, export) can shadow a top-level module of the same name."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENTRY = REPO / "jobs" / "plan_assignments.py"


@pytest.mark.parametrize("given", [str(REPO / "jobs"), "jobs", str(REPO / "jobs") + "/"])
def test_run_as_a_script_the_entry_point_takes_its_folder_off_the_path(
    monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(sys, "path", [given, *sys.path])
    runpy.run_path(str(ENTRY), run_name="as_a_script")  # not __main__: main() does not run
    assert sys.path[0] == str(REPO)
    assert not [p for p in sys.path if Path(p or ".").resolve() == REPO / "jobs"]


def test_as_a_module_the_path_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    before = [str(REPO / "jobs"), *sys.path]
    monkeypatch.setattr(sys, "path", list(before))
    monkeypatch.delitem(sys.modules, "jobs.plan_assignments", raising=False)
    runpy.run_module("jobs.plan_assignments", run_name="as_a_module")
    assert sys.path == before


def test_run_as_a_script_no_wing_of_jobs_is_importable_at_the_top(tmp_path: Path) -> None:
    probe = (
        "import runpy, sys;"
        f"sys.path.insert(0, {str(REPO / 'jobs')!r});"
        "import importlib.util as u;"
        f"runpy.run_path({str(ENTRY)!r}, run_name='as_a_script');"
        "print([w for w in ('cli', 'plan', 'tables', 'output', 'settings') if u.find_spec(w)])"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
