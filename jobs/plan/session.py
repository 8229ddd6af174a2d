"""The job's SparkSession, and shipping this repository's code to the executors."""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from pyspark.sql import SparkSession

from jobs.settings.config import PlannerConfig

log = logging.getLogger("planner")
REPO_ROOT = Path(__file__).resolve().parents[2]
# Developer tools (benchmarks, the sample estate) live in tools/ and never run on executors.
PACKAGES = ("assignors", "jobs")


# A local session (python -m jobs.plan_assignments) listens on loopback only, so it needs no
# SPARK_LOCAL_IP and prints no "hostname resolves to a loopback address" warning; Spark's own
# INFO chatter is off (the planner's progress goes through the "planner" logger). The config's
# [spark] table overrides these; under spark-submit the user's settings are kept.
LOCAL_DEFAULTS = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.log.level": "WARN",
}


def build_session(config: PlannerConfig) -> SparkSession:
    """The job's session: local[*] when run with python, the submitted one under spark-submit.

    The config's [spark] properties never override what spark-submit was given (--conf,
    --properties-file): they only fill in what is unset.
    """
    builder = SparkSession.builder.appName("kafka-assignment-planner")
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    if not submitted:
        # Local Python workers must run this interpreter (it has pyarrow and pandas); on a
        # cluster the executors' Python comes from spark.pyspark.python / PYSPARK_PYTHON.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = builder.master(os.environ.get("PLANNER_MASTER", "local[*]"))
        settings = {**LOCAL_DEFAULTS, **config.spark}
        # The JVM looks up its address (and warns about the hostname) before reading any
        # property: tell it through the environment it inherits, unless the user did.
        os.environ.setdefault("SPARK_LOCAL_IP", settings["spark.driver.bindAddress"])
        for key, value in settings.items():
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    # Build the session state now: a SQL property Spark refuses (a bad shuffle partition
    # count, an unknown time zone) fails here, as a configuration error, not at the first read.
    spark.conf.get("spark.sql.session.timeZone")
    if submitted:
        given = dict(spark.sparkContext.getConf().getAll())
        if "spark.log.level" not in given:  # the user's choice wins; else quiet from here on
            spark.sparkContext.setLogLevel(LOCAL_DEFAULTS["spark.log.level"])
        for key, value in config.spark.items():
            if key not in given:
                try:
                    spark.conf.set(key, value)
                except Exception:  # static properties cannot be set on a running session
                    log.debug("not applying static Spark property %s under spark-submit", key)
    _ship_code(spark)
    return spark


def shipped_files(root: Path = REPO_ROOT) -> list[Path]:
    """The files executors need, relative to `root` (also what `make dist` zips): the Python
    modules, and the report's template for a driver that runs from the zip (cluster mode)."""
    files: list[Path] = []
    for package in PACKAGES:
        found = [*(root / package).rglob("*.py"), *(root / package).rglob("*.j2")]
        files.extend(f.relative_to(root) for f in sorted(found))
    return files


def write_archive(archive: Path, root: Path = REPO_ROOT) -> Path:
    with zipfile.ZipFile(archive, "w") as zf:
        for rel in shipped_files(root):
            zf.write(root / rel, rel.as_posix())
    return archive


def _ship_code(spark: SparkSession) -> None:
    """Ship assignors/ and jobs/ to the executors (a cluster has no copy of this repo).

    When the code itself runs from an archive (`--py-files planner.zip`), Spark already
    distributes it and there is nothing to add.
    """
    if not all((REPO_ROOT / package).is_dir() for package in PACKAGES):
        return
    if (spark.sparkContext.master or "").startswith("local") and _workers_import(spark, REPO_ROOT):
        # Local workers import this very checkout already, the compiled core (`make core`)
        # included; an archive of its sources would come first on their path and shadow it.
        return
    workdir = Path(tempfile.mkdtemp(prefix="planner-code-"))
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    spark.sparkContext.addPyFile(str(write_archive(workdir / "planner_code.zip")))


def _workers_import(spark: SparkSession, root: Path) -> bool:
    """Whether a Python worker imports `assignors` and `jobs` from `root` (one tiny task)."""
    where = str(root)

    def probe(_: object) -> list[bool]:
        try:
            import assignors
            import jobs
        except ImportError:  # not on the worker's path, or a stale compiled module
            return [False]
        return [
            all(
                str(Path(p.__file__ or "").resolve().parents[1]) == where for p in (assignors, jobs)
            )
        ]

    return all(spark.sparkContext.parallelize([0], 1).flatMap(probe).collect())


if __name__ == "__main__":  # `make dist`
    print(write_archive(Path(sys.argv[1])))
