"""Shared fixtures: one local SparkSession for the whole run (a JVM start costs seconds)."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Iterator

import pytest

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("planner-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.optimizer.canChangeCachedPlanOutputPartitioning", "true")
        # Faster JVM start for short test jobs (C1 JIT, serial GC). C1 alone gets a 48 MB
        # code cache by default, and one session's thousands of generated Spark classes can
        # fill it ("CodeCache is full. Compiler has been disabled", then the JVM fails).
        .config(
            "spark.driver.extraJavaOptions",
            "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ReservedCodeCacheSize=256m",
        )
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# --- markers: what a test needs, so that the Makefile can slice by them ------------------


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that takes the shared session needs a JVM: `spark`, whether or not its module
    says so (`make check` runs the tests that need none)."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


# --- no INTERNAL_ERROR unless a test expects one -----------------------------------------

INTERNAL_ERROR_MARK = "internal_error_expected"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{INTERNAL_ERROR_MARK}: the test provokes an INTERNAL_ERROR on purpose"
    )


class _PlannerErrors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture(autouse=True)
def _no_internal_errors(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Fail a test when the planner logged an internal error in this process, or when a run
    (in any process: Spark executors, spark-submit) wrote a manifest that counts
    INTERNAL_ERROR rows, unless the test is marked `internal_error_expected`."""
    started = time.time()
    handler = _PlannerErrors()
    logger = logging.getLogger("assignors.planner")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
    if request.node.get_closest_marker(INTERNAL_ERROR_MARK) is not None:
        return
    found = [f"logged: {m}" for m in handler.messages]
    for manifest in tmp_path_factory.getbasetemp().rglob("_manifest.json"):
        if manifest.stat().st_mtime < started:
            continue
        reasons = json.loads(manifest.read_text()).get("rejected_by_reason", {})
        found += [f"{manifest}: {k}" for k in reasons if k.endswith(":INTERNAL_ERROR")]
    if found:
        pytest.fail("unexpected INTERNAL_ERROR: " + "; ".join(found), pytrace=False)
