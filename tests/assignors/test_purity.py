"""The assignor core stays pure: no Spark or pandas on import, and its doctests pass."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import assignors

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(assignors.__path__, prefix="assignors.")
)

_PROBE = """
import importlib, json, pkgutil, sys
import assignors
names = sorted(i.name for i in pkgutil.walk_packages(assignors.__path__, prefix="assignors."))
for name in names:
    importlib.import_module(name)
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "pandas"))
print(json.dumps({"modules": names, "heavy": heavy}))
"""


def test_known_modules_are_discovered() -> None:
    expected = {
        "assignors.model",
        "assignors.strategies.range",
        "assignors.strategies.roundrobin",
        "assignors.ownership",
        "assignors.analysis.metrics",
        "assignors.catalog.registry",
    }
    assert expected <= set(MODULES)


def test_importing_assignors_pulls_in_neither_pyspark_nor_pandas() -> None:
    # From the folder of the package this process imported (compiled or `make test-pure`'s
    # sources): `-c` puts the working directory first on the probe's path.
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=Path(assignors.__file__).parents[1],
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(report["modules"]) == set(MODULES)
    assert report["heavy"] == []


def run_doctests(name: str) -> doctest.TestResults:
    """The module's doctests, run from its `.py`: doctest cannot find the examples inside
    the functions of a compiled extension (`make core`), which Python imports instead."""
    module = importlib.import_module(name)
    source = Path(assignors.__file__).parent.joinpath(*name.split(".")[1:]).with_suffix(".py")
    if getattr(module, "__file__", None) == str(source) or not source.exists():
        # the package, a module run from source, mypyc's runtime library
        return doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    spec = importlib.util.spec_from_file_location(name, source)
    assert spec is not None
    assert spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    sys.modules[name] = loaded  # doctest keeps what `inspect.getmodule` says is the module's
    try:
        return doctest.testmod(loaded, optionflags=doctest.ELLIPSIS, verbose=False)
    finally:
        sys.modules[name] = module


@pytest.mark.parametrize("name", ["assignors", *MODULES])
def test_doctests_pass(name: str) -> None:
    result = run_doctests(name)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctests failed in {name}"


def test_doctests_exist() -> None:
    """The worked examples in the module docstrings are executed, not just printed."""
    attempted = {
        name: run_doctests(name).attempted
        for name in (
            "assignors.model",
            "assignors.strategies.range",
            "assignors.strategies.roundrobin",
        )
    }
    assert all(n > 0 for n in attempted.values()), attempted
