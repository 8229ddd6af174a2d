"""What is shipped to executors: the job's code, never the developer tools."""

from __future__ import annotations

import zipfile
from pathlib import Path

from jobs.plan.session import REPO_ROOT, shipped_files, write_archive


def test_the_shipped_archive_has_the_job_but_not_the_tools(tmp_path: Path) -> None:
    names = set(zipfile.ZipFile(write_archive(tmp_path / "code.zip")).namelist())
    assert {
        "jobs/plan_assignments.py",
        "jobs/plan/pipeline.py",
        "assignors/catalog/registry.py",
    } <= names
    assert not [n for n in names if n.startswith("tools/")]
    tools = sorted(p.relative_to(REPO_ROOT) for p in (REPO_ROOT / "tools").rglob("*.py"))
    assert tools, "tools/ holds the benchmarks and the sample estate"
    assert not set(tools) & set(shipped_files())
