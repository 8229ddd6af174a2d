"""`make dist`: dist/planner-env.tar.gz, the executors' Python environment with the planner.

    python -m tools.planner_env dist/planner-env.tar.gz

A venv (build/planner-env) with the pinned runtime dependencies of pyproject.toml but pyspark
(Spark puts its own pyspark and py4j on every Python worker's path), and the planner's
packages (`assignors/`, `jobs/`) with the compiled core (`make core`) copied into its
site-packages, packed with venv-pack. Spark unpacks it on every executor
(`--archives dist/planner-env.tar.gz#environment`, `spark.pyspark.python=
./environment/bin/python`): the executors then plan with the compiled core, where a
`--py-files` zip ships the sources only (the pure-Python core).

The archive is for the platform it is built on (the compiled core and the wheels of pyarrow,
pandas and numpy are CPython- and OS-specific): build it on the cluster's OS with the cluster's
Python version. It holds the packages, not the interpreter: `environment/bin/python` is a link
to the interpreter this venv was made from, which the nodes need at the same path (or at the
`--python-prefix` given).

The venv is kept between builds: the dependencies are installed again only when their pins
change (from pip's cache), the planner's files are replaced on every build.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from jobs.plan.session import PACKAGES, REPO_ROOT, shipped_files
from tools.build_core import compiled_modules

ENV_DIR = REPO_ROOT / "build" / "planner-env"
# Provided on the executors by Spark itself (its python/lib zips on PYTHONPATH).
PROVIDED_BY_SPARK = ("pyspark", "py4j")
# Not needed to run: the packages' own test suites, C headers and Cython sources (a third of
# the archive), and the bytecode caches (Python compiles what it imports).
EXCLUDED = (
    "*/site-packages/*/tests/*",
    "*/site-packages/pyarrow/include/*",
    "*/site-packages/pyarrow/src/*",
    "*/site-packages/numpy/_core/include/*",
    "*.pyx",
    "*.pxd",
    "*.pxi",
    "*.h",
    "*.pyc",
)


def requirements(pyproject: Path = REPO_ROOT / "pyproject.toml") -> list[str]:
    """The pinned runtime dependencies (`[project].dependencies`) the executors need."""
    with pyproject.open("rb") as f:
        deps: list[str] = tomllib.load(f)["project"]["dependencies"]
    return [d for d in deps if not d.startswith(tuple(f"{p}=" for p in PROVIDED_BY_SPARK))]


def site_packages(env: Path) -> Path:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return env / "lib" / version / "site-packages"


def install_dependencies(env: Path, pins: list[str]) -> None:
    """A venv of this interpreter's version with `pins`, unless it already has exactly them."""
    stamp = env / "requirements.txt"
    wanted = "\n".join(pins) + "\n"
    if stamp.exists() and stamp.read_text() == wanted and (env / "bin" / "python").exists():
        return
    shutil.rmtree(env, ignore_errors=True)
    # no pip inside: this interpreter's pip installs into it (--python), nothing to ship
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    pip = [sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install"]
    subprocess.run([*pip, "--quiet", "--no-compile", *pins], check=True)
    stamp.write_text(wanted)


def install_planner(env: Path, root: Path = REPO_ROOT) -> list[Path]:
    """Copy the shipped files and the compiled core into the venv's site-packages."""
    modules = compiled_modules()
    if not modules:
        raise SystemExit("no compiled core in assignors/: run `make core` first")
    target = site_packages(env)
    for package in PACKAGES:
        shutil.rmtree(target / package, ignore_errors=True)
    files = [*shipped_files(root), *(m.relative_to(root) for m in modules)]
    for rel in files:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, target / rel)
    # One time for every file: `import assignors` refuses a compiled module older than its
    # source, and an archive keeps whole seconds only.
    stamp = (min(os.stat(root / rel).st_mtime for rel in files) // 1) - 1
    for rel in files:
        os.utime(target / rel, (stamp, stamp))
    return files


def build(output: Path, env: Path = ENV_DIR, python_prefix: str | None = None) -> Path:
    # Imported here: venv-pack is a build tool (the dev extras), never needed to run the job.
    import venv_pack

    install_dependencies(env, requirements())
    install_planner(env)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.unlink(missing_ok=True)
    venv_pack.pack(
        prefix=str(env),
        output=str(output),
        force=True,
        python_prefix=python_prefix,
        filters=[("exclude", pattern) for pattern in EXCLUDED],
    )
    output.chmod(0o644)  # venv-pack writes it readable by its owner only
    return output


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path, help="the archive to write (.tar.gz)")
    parser.add_argument("--env", type=Path, default=ENV_DIR, help="the venv to build and pack")
    parser.add_argument(
        "--python-prefix",
        help="where the nodes' Python (of this version) is installed, if not where this one is",
    )
    args = parser.parse_args(argv)
    out = build(args.output, args.env, args.python_prefix)
    print(f"{out} ({out.stat().st_size / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
