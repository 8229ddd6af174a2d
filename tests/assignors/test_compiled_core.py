"""The compiled core (`make core`): all or nothing, and never older than its sources."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import pickle
import shutil
from pathlib import Path

import pytest

import assignors
from assignors.inputs.validation import TopicStatus
from assignors.whatif.group import WhatIfSettings
from tools.build_core import INTERPRETED, PACKAGE, compiled_modules, compiled_sources

SO = ".cpython-311-x86_64-linux-gnu.so"


def test_the_core_is_compiled_whole_or_not_at_all() -> None:
    built = {p.name.split(".")[0] for p in compiled_modules()} - {"_core__mypyc"}
    assert built in (set(), {p.stem for p in compiled_sources()})
    assert not built & {Path(n).stem for n in INTERPRETED}


def test_the_compiled_core_is_there_when_expected() -> None:
    """`make test-main` sets PLANNER_EXPECT_COMPILED=1: a missing build fails, never skips."""
    if os.environ.get("PLANNER_EXPECT_COMPILED") != "1":
        pytest.skip("PLANNER_EXPECT_COMPILED=1 not set: the pure-Python core is fine here")
    sources = compiled_sources()
    assert sources, f"no sources to compile under {PACKAGE}"
    built = {p.name.split(".")[0] for p in compiled_modules()}
    missing = sorted({p.stem for p in sources} - built)
    assert not missing, f"not compiled: {missing}: run `make core`"
    # And the interpreter imports the extension modules, not the .py files next to them.
    for source in compiled_sources():
        parts = source.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        origin = importlib.import_module(name).__file__ or ""
        assert origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), (name, origin)


def load_guard(package: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "guarded", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None
    assert spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


@pytest.fixture
def package(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    shutil.copy(Path(assignors.__file__), pkg / "__init__.py")
    (pkg / "range.py").write_text("x = 1\n")
    (pkg / f"range{SO}").write_bytes(b"")
    (pkg / f"_core__mypyc{SO}").write_bytes(b"")  # mypyc's runtime: no source of its own
    return pkg


def test_a_compiled_module_newer_than_its_source_is_imported(package: Path) -> None:
    os.utime(package / "range.py", (1_000, 1_000))
    load_guard(package)  # no error


def test_a_compiled_module_older_than_its_source_is_refused(package: Path) -> None:
    os.utime(package / f"range{SO}", (1_000, 1_000))
    with pytest.raises(ImportError, match=r"older than range\.py: run `make core`"):
        load_guard(package)


def test_what_travels_to_executors_pickles_with_every_field() -> None:
    # Frozen dataclasses of the compiled core pickle through `assignors.pickled.by_fields`.
    status = TopicStatus(3, "BAD", "why", (frozenset({"a"}), frozenset(), frozenset()), (1, 2, 3))
    settings = WhatIfSettings(("member_join",), 7, 99, ("range", "balanced"))
    for value in (status, settings):
        assert pickle.loads(pickle.dumps(value)) == value
