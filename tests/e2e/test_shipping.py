"""What is shipped to executors: the job's code (as sources, or with the compiled core in the
executors' environment), never the developer tools."""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import pytest

from jobs.plan.session import REPO_ROOT, code_digest, shipped_files, write_archive


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


def test_the_environment_holds_the_runtime_pins_but_pyspark() -> None:
    from tools.planner_env import requirements

    pins = requirements()
    assert {p.split("==")[0] for p in pins} == {"pyarrow", "pandas", "numpy", "mypy-extensions"}
    assert all("==" in p for p in pins)  # pinned, as pyproject.toml pins them


def test_the_environment_gets_the_planner_with_its_compiled_core(tmp_path: Path) -> None:
    from tools.build_core import compiled_modules
    from tools.planner_env import install_planner, site_packages

    if not compiled_modules():
        pytest.skip("no compiled core here (make core): `make dist` refuses to pack one")
    files = install_planner(tmp_path)
    target = site_packages(tmp_path)
    assert set(shipped_files()) <= set(files)
    compiled = {m.relative_to(REPO_ROOT) for m in compiled_modules()}
    assert compiled <= set(files)
    assert not [f for f in files if f.parts[0] == "tools"]
    # no source newer than its compiled module: `import assignors` would refuse it
    times = {os.stat(target / f).st_mtime for f in files}
    assert len(times) == 1


def test_the_same_files_have_the_same_digest_wherever_they_are(tmp_path: Path) -> None:
    for rel in shipped_files():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO_ROOT / rel, tmp_path / rel)
    assert code_digest(tmp_path) == code_digest()
    (tmp_path / "jobs" / "udf.py").write_text("# another planner\n")
    assert code_digest(tmp_path) != code_digest()
    assert code_digest(tmp_path / "nothing-here") == ""
