"""`--previous DIR`: the run's `changes` table (docs/changes.md).

The previous output's small tables are read on the driver before planning (so `--previous`
may name the very output this run replaces), reduced to one figure per group; once today's
tables are written, theirs are reduced the same way, compared (`jobs.tables.changes`), and
the rows written as one more table of the temporary output. A previous output that cannot be
compared is one warning line naming the cause: the run goes on without `changes`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from jobs import fs
from jobs.tables import changes, contract
from jobs.tables.inputs import local_path
from jobs.tables.manifest import MANIFEST_FILE
from jobs.tables.previous import (
    MEMBER_FIGURES,
    PreviousRun,
    PreviousUnusable,
    ReadTable,
    compare_runs,
    local_reader,
    missing_columns,
    previous_of,
    read_previous,
    run_figures,
)
from jobs.tables.schemas import OUTPUT_SCHEMAS

log = logging.getLogger("planner")
TABLE = contract.CHANGES.name


@dataclass
class Since:
    """What `--previous` gave: the previous run, or why there is none (`unusable`)."""

    path: str
    previous: PreviousRun | None = None
    unusable: str | None = None

    def as_manifest(self) -> dict[str, Any]:
        if self.previous is not None:
            return self.previous.as_manifest()
        return {"path": self.path, "ds": None, "unusable": self.unusable}


def spark_reader(spark: SparkSession, root: str, own: bool = False) -> ReadTable:
    """Tables under `root` through Spark (any file system), collected to the driver as Arrow.
    `own`: written by this run, read with the contract's schemas."""

    def read(name: str, columns: tuple[str, ...], optional: tuple[str, ...]) -> pa.Table | None:
        path = f"{root.rstrip('/')}/{name}"
        if not fs.exists(spark, path):
            return None
        reader = spark.read.schema(OUTPUT_SCHEMAS[name]) if own else spark.read
        frame = reader.parquet(path)
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise missing_columns(name, missing)
        present = [*columns, *(c for c in optional if c in frame.columns)]
        return frame.select(*present).toArrow()

    return read


def read_since(spark: SparkSession, path: str) -> Since:
    """The previous output at `path`, read now; an absent or unusable one is logged.

    Local when Hadoop resolves `path` to its local file system (`file:` URIs, and a path
    without a scheme when the cluster's default file system is local): read with pyarrow
    on the driver. Otherwise (HDFS, an object store; a path without a scheme on an HDFS
    cluster): through Spark and Hadoop's FileSystem, never the OS. A local output is named
    (in the warning, the manifest) by its absolute path."""
    where = path
    try:
        local = local_path(spark, path)
        if local is not None:
            where = local
            previous = read_previous(local)
        else:
            if not fs.exists(spark, path):
                raise PreviousUnusable(f"{path} does not exist")
            text = fs.read_text(spark, f"{path.rstrip('/')}/{MANIFEST_FILE}")
            if text is None:
                raise PreviousUnusable(f"{path} is not a planner output (no {MANIFEST_FILE})")
            try:
                manifest = json.loads(text)
            except ValueError as exc:
                raise PreviousUnusable(f"{path}/{MANIFEST_FILE} is unreadable: {exc}") from None
            previous = previous_of(path, manifest, spark_reader(spark, path))
    except PreviousUnusable as exc:
        log.warning("no changes table: previous output not compared: %s", exc)
        return Since(where, unusable=str(exc))
    except Exception as exc:  # a damaged output must never fail the run
        cause = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        log.warning("no changes table: previous output %s unreadable: %s", where, cause)
        return Since(where, unusable=f"{where}: unreadable: {cause}")
    log.info(
        "comparing with the previous output %s (ds %s, %d groups)",
        where,
        previous.ds or "not recorded",
        previous.run.groups,
    )
    return Since(where, previous=previous)


def changes_frame(spark: SparkSession, rows: list[changes.Row]) -> DataFrame:
    """The `changes` rows as a DataFrame of the contract's schema, through Arrow: a list
    of Python rows goes through the JVM a row at a time, seconds for 100,000 of them."""
    table = contract.CHANGES
    columns = {c: pa.array([r[c] for r in rows], pa.string()) for c in table.names}
    arrow = pa.table(columns, schema=table.schema())
    return spark.createDataFrame(arrow, OUTPUT_SCHEMAS[table.name])


def write_changes(
    spark: SparkSession,
    since: Since,
    tmp: str,
    local_tmp: str | None,
    files: int,
    min_lag_change: int,
) -> int | None:
    """Compare today's tables in `tmp` with the previous run and write `changes` there; the
    rows written, or None when there is nothing to compare with."""
    if since.previous is None:
        return None
    read = local_reader(local_tmp) if local_tmp is not None else spark_reader(spark, tmp, True)
    today = run_figures(read)
    before = since.previous.run
    if not before.member_figures:
        log.warning(
            "the previous output %s has no elections.%s (an older planner): REBALANCED from"
            " member counts, partitions and protocol only",
            since.path,
            " or ".join(MEMBER_FIGURES),
        )
    rows = compare_runs(before, today, min_lag_change)
    table = contract.CHANGES
    frame = changes_frame(spark, rows)
    # the same layout as every table: files by hash of group_id, each sorted
    (
        frame.repartition(files, *table.file_keys)
        .sortWithinPartitions(*table.sort_keys)
        .write.mode("error")
        .parquet(f"{tmp}/{table.name}")
    )
    found = changes.counts(rows)
    log.info(
        "%d changes since %s: %s",
        len(rows),
        since.previous.ds or since.path,
        ", ".join(f"{n} {c}" for c, n in found.items() if n) or "none",
    )
    return len(rows)
