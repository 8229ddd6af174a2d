"""Small Spark jobs started together.

A job over a small table (a count, an aggregate of the metrics) costs a few hundred
milliseconds, nearly all of it planning and scheduling on the driver, not work on the
executors. Run one after another, a handful of them cost seconds even on a one-group
output; Spark runs jobs submitted from several threads at once (each Python thread gets a
JVM thread of its own), so their latencies overlap instead of adding up.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

# Enough to overlap the latencies of a few small jobs; more threads only queue on the driver.
CONCURRENT_JOBS = 4


def together(*jobs: Callable[[], Any]) -> list[Any]:
    """Each job's result, in the order given (the first exception is raised)."""
    if len(jobs) < 2:
        return [job() for job in jobs]
    with ThreadPoolExecutor(
        min(len(jobs), CONCURRENT_JOBS), thread_name_prefix="spark-job"
    ) as pool:
        futures = [pool.submit(job) for job in jobs]
        return [f.result() for f in futures]
