"""`.venv/bin/spark-submit` works from any shell, without activating the venv.

pyspark's bin/find-spark-home runs `python3` from PATH to locate SPARK_HOME, and the driver
runs `python3` too: outside an activated venv that is a Python without pyspark or pyarrow.
`make venv` points both at the venv (see the Makefile's venv rule).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# spark-submit starts a JVM
pytestmark = pytest.mark.spark

VENV_BIN = Path(sys.executable).parent
SPARK_SUBMIT = VENV_BIN / "spark-submit"

APP = """
import sys
from pyspark.sql import SparkSession

spark = SparkSession.builder.master("local[1]").getOrCreate()
workers = spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("sys").executable)
print("PYTHONS", sys.executable, *workers.collect())
spark.stop()
"""


def bare_env() -> dict[str, str]:
    """A shell that never activated the venv: no venv on PATH, no Spark/PySpark variables."""
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != VENV_BIN and p
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_HOME", "PYSPARK_"))}
    env.update(PATH=path or "/usr/bin:/bin", SPARK_LOCAL_IP="127.0.0.1")
    env.pop("VIRTUAL_ENV", None)
    return env


@pytest.fixture(autouse=True)
def _needs_venv_script() -> None:
    if not SPARK_SUBMIT.exists():
        pytest.skip(f"{SPARK_SUBMIT} not found: these tests run with the project's .venv")


def test_spark_submit_version_without_an_activated_venv(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(SPARK_SUBMIT), "--version"],
        env=bare_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    import pyspark

    assert f"version {pyspark.__version__}" in done.stdout + done.stderr


@pytest.mark.spark
@pytest.mark.slow
def test_spark_submit_runs_python_apps_on_the_venv_python(tmp_path: Path) -> None:
    app = tmp_path / "which_python.py"
    app.write_text(APP)
    done = subprocess.run(
        [str(SPARK_SUBMIT), "--conf", "spark.ui.enabled=false", str(app)],
        env=bare_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    pythons = next(line for line in done.stdout.splitlines() if line.startswith("PYTHONS "))
    driver, worker = pythons.split()[1:]
    assert Path(driver).parent == VENV_BIN
    assert Path(worker).parent == VENV_BIN
