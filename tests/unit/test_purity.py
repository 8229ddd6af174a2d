"""The assignor core stays pure: no Spark or pandas on import, and its doctests pass."""

from __future__ import annotations

import doctest
import importlib
import json
import pkgutil
import subprocess
import sys

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
        "assignors.range",
        "assignors.roundrobin",
        "assignors.ownership",
        "assignors.metrics",
        "assignors.registry",
    }
    assert expected <= set(MODULES)


def test_importing_assignors_pulls_in_neither_pyspark_nor_pandas() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=False, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(report["modules"]) == set(MODULES)
    assert report["heavy"] == []


@pytest.mark.parametrize("name", ["assignors", *MODULES])
def test_doctests_pass(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctests failed in {name}"


def test_doctests_exist() -> None:
    """The worked examples in the module docstrings are executed, not just printed."""
    attempted = {
        name: doctest.testmod(importlib.import_module(name), verbose=False).attempted
        for name in ("assignors.model", "assignors.range", "assignors.roundrobin")
    }
    assert all(n > 0 for n in attempted.values()), attempted
