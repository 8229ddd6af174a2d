"""The job's SparkSession, and shipping this repository's code to the executors."""

from __future__ import annotations

import atexit
import hashlib
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


def code_digest(root: Path = REPO_ROOT) -> str:
    """A digest of the shipped files under `root`: their paths and contents ("" if none)."""
    files = shipped_files(root)
    if not files:
        return ""
    digest = hashlib.sha256()
    for rel in files:
        digest.update(f"{rel.as_posix()}\0".encode())
        digest.update((root / rel).read_bytes())
    return digest.hexdigest()


def _ship_code(spark: SparkSession) -> None:
    """Ship assignors/ and jobs/ to the executors (a cluster has no copy of this repo), unless
    their Python imports this very code already.

    When the code itself runs from an archive (`--py-files planner.zip`), Spark already
    distributes it and there is nothing to add. An archive of the sources comes first on the
    workers' path: it would shadow a compiled core they have (`make core` on a local run, the
    environment of `--archives dist/planner-env.tar.gz#environment` on a cluster).
    """
    if not all((REPO_ROOT / package).is_dir() for package in PACKAGES):
        return
    where, digest = _workers_code(spark)
    local = (spark.sparkContext.master or "").startswith("local")
    if (local and where == str(REPO_ROOT)) or digest == code_digest():
        return
    if digest:  # an installed planner of other files (an older environment)
        log.warning(
            "the executors' planner (%s) is not this checkout's: shipping its sources, which "
            "run on the pure-Python core",
            where,
        )
    workdir = Path(tempfile.mkdtemp(prefix="planner-code-"))
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    spark.sparkContext.addPyFile(str(write_archive(workdir / "planner_code.zip")))


def _workers_code(spark: SparkSession) -> tuple[str, str]:
    """Where a Python worker imports `assignors` and `jobs` from (one tiny task), and the
    `code_digest` of its files there; empty strings when it cannot import them or read them
    (the packages in a zip), and no digest when the two come from different places."""

    def probe(_: object) -> list[tuple[str, str]]:
        try:
            import assignors
            import jobs.plan.session

            roots = {Path(p.__file__ or "").resolve().parents[1] for p in (assignors, jobs)}
            if len(roots) != 1:  # from two places: not one copy of the planner
                return [(str(Path(jobs.__file__ or "").resolve().parents[1]), "")]
            (root,) = roots
            return [(str(root), jobs.plan.session.code_digest(root))]
        except (ImportError, OSError):  # not on the worker's path, or a stale compiled module
            return [("", "")]

    ((where, digest),) = spark.sparkContext.parallelize([0], 1).flatMap(probe).collect()
    return where, digest


if __name__ == "__main__":  # `make dist`
    print(write_archive(Path(sys.argv[1])))
