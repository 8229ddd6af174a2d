"""`make core`: compile the planning core (`assignors/`) with mypyc, in place.

    python -m tools.build_core          # compile (about a minute on 2 cores)
    python -m tools.build_core --clean  # back to the pure-Python modules

The sources stay the plain, typed Python they are (mypy-strict, no pyspark, no pandas); mypyc
turns each hot module into a C extension beside its `.py`
(`assignors/strategies/range.cpython-311-*.so`), which Python imports in preference to the
source. The same tests pass either way (`make test-pure` runs the unit suite on the `.py`
files alone). Where no compiled module is present (a `spark-submit --py-files` zip, a
machine without a C compiler) the `.py` files run unchanged, only slower.

`assignors/__init__.py` refuses to import a compiled module older than its source: after
editing `assignors/`, run `make core` again (the Makefile's targets do it for you).
"""

from __future__ import annotations

import argparse
import importlib.machinery
import os
import sys
import warnings
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "assignors"
# Not compiled: the package guard itself, and the modules that load plugins, hold the
# strategy registry or are pickled field by field to executors (cold paths, all of them).
INTERPRETED = frozenset({"__init__.py", "plugins.py", "catalog.py", "registry.py"})
# Plugin examples are loaded by name like any user's plugin: they stay plain Python.
INTERPRETED_DIRS = frozenset({"examples"})
# The shared runtime library mypyc builds for the group, inside the package.
GROUP = "assignors._core"


def compiled_sources() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if p.name not in INTERPRETED and not INTERPRETED_DIRS & set(p.relative_to(PACKAGE).parts)
    )


def compiled_modules() -> list[Path]:
    """The extension modules present in the package (built earlier)."""
    return sorted(
        {
            p
            for suffix in importlib.machinery.EXTENSION_SUFFIXES
            for p in PACKAGE.rglob(f"*{suffix}")
        }
    )


def clean() -> None:
    for path in compiled_modules():
        path.unlink()


def build() -> None:
    # Imported here: mypy (mypyc) and setuptools are build tools, not runtime dependencies.
    from mypyc.build import mypycify
    from setuptools import setup

    clean()
    # setuptools reads the project's pyproject.toml too; its beta notice is noise here
    warnings.filterwarnings("ignore", message=".*is still \\*beta\\*")
    root = PACKAGE.parent
    sources = [str(p.relative_to(root)) for p in compiled_sources()]
    setup(
        name="kafka-assignment-planner-core",
        ext_modules=mypycify(sources, opt_level="3", group_name=GROUP),
        script_args=["--quiet", "build_ext", "--inplace", "--build-temp", "build/core"],
    )
    # setuptools copies unchanged extensions with their old times; the package's staleness
    # check compares times with the sources, so mark every module as built now
    for path in compiled_modules():
        os.utime(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="remove the compiled modules")
    args = parser.parse_args()
    if args.clean:
        clean()
    else:
        try:
            build()
        except (Exception, SystemExit) as exc:  # setuptools exits on a compiler error
            clean()  # never half a core: every module compiled, or none
            print(
                f"the compiled core was not built ({exc}); the pure-Python modules run",
                file=sys.stderr,
            )
    print(f"{len(compiled_modules())} compiled modules in {PACKAGE}")


if __name__ == "__main__":
    main()
