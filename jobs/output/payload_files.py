"""`balance_metrics` and `rebalance_costs` of a local output, written by pyarrow.

The rows of these tables travel from the buckets as text payloads beside the assignment rows
(`jobs.tables.rows`: JSON for `balance_metrics`, delimited values for `rebalance_costs`) and are
staged as Parquet with them. Through Spark, each table is a parse of every payload in the
JVM, a shuffle by `group_id` and a row sort per output file. With a local output, one task
per output file instead reads the staged payloads of these tables once, keeps the rows of
its file (Spark's `pmod(hash(group_id), files)`, as `repartition(files, "group_id")` sends
them), decodes them (`jobs.tables.rows.decode`), sorts them by the table's sort keys and
writes the file: the rows, files and order that `jobs.plan.pipeline.sorted_for_write`
gives, with Spark's schema in the footer (`spark_layout.spark_file_schema`).

Why: on a 100,000-group run with every what-if scenario, Spark's parse, shuffle and sort of
these two tables cost several times pyarrow's (docs/performance.md).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jobs.output.assignment_files import per_file_job, whole_file
from jobs.output.spark_layout import (
    group_file_index,
    mark_written,
    spark_file_schema,
)
from jobs.tables.rows import KIND_METRICS, KIND_REBALANCE_COSTS, PAYLOAD, TABLE_OF, decode
from jobs.tables.schemas import SORT_KEYS, spark_fields

# The tables written here, by the kind of their staged rows.
TABLES = {k: TABLE_OF[k].name for k in (KIND_METRICS, KIND_REBALANCE_COSTS)}
# About the rows Spark's 2 MiB row groups (`jobs.plan.pipeline.OUTPUT_ROW_GROUP_BYTES`) hold of
# each table, so that a reader of one group skips the others by their statistics as it does
# in Spark's files.
ROWS_PER_ROW_GROUP = {"balance_metrics": 20_000, "rebalance_costs": 400_000}
# Rows of one table that a task handles at most, else Spark writes that table. Each task reads
# the staged rows of every table it writes a batch at a time and holds its own file's rows,
# decoded (docs/performance.md).
MAX_ROWS = 10_000_000


def write_files(
    index: int,
    files: int,
    kinds: Iterable[str],
    staged_dir: str,
    tmp_dir: str,
    token: str,
    version: str,
) -> dict[str, int]:
    """Output file `index` of the table of each of `kinds` (into `tmp_dir`/TABLE) from the
    staged rows, read once for all of them; returns the rows written per kind.

    The staged rows are read a batch at a time, and each batch's rows of this file decoded
    at once: a task holds its own file's decoded rows, never every file's payload text.

    A file with no rows is not written (as Spark writes none for an empty partition), but
    for an empty table file 0 is: Spark writes one, for the schema."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    kinds = list(kinds)
    schemas = {k: spark_file_schema(spark_fields(TABLE_OF[k].columns), version) for k in kinds}
    decoded: dict[str, list[pa.Table]] = {k: [] for k in kinds}
    staged = dict.fromkeys(kinds, 0)
    batches = ds.dataset(staged_dir, format="parquet").to_batches(
        columns=["kind", "group_id", PAYLOAD], filter=pc.field("kind").isin(kinds)
    )
    for batch in batches:
        if batch.num_rows == 0:
            continue
        group_ids, payloads = batch["group_id"], batch[PAYLOAD]
        mine = group_file_index(group_ids, files) == index
        for kind in kinds:
            of_kind = pc.equal(batch["kind"], kind).to_numpy(zero_copy_only=False)
            staged[kind] += int(of_kind.sum())
            rows = np.flatnonzero(of_kind & mine)
            if len(rows):
                taken = pa.array(rows)
                part = decode(kind, group_ids.take(taken), payloads.take(taken), schemas[kind])
                decoded[kind].append(part)
    written = {}
    for kind in kinds:
        table = TABLES[kind]
        written[kind] = sum(part.num_rows for part in decoded[kind])
        if not written[kind] and (index != 0 or staged[kind]):
            continue
        none = pa.array([], pa.string())
        parts = decoded.pop(kind)
        out = pa.concat_tables(parts) if parts else decode(kind, none, none, schemas[kind])
        order = pc.sort_indices(out, sort_keys=[(k, "ascending") for k in SORT_KEYS[table]])
        out = out.take(order)
        folder = os.path.join(tmp_dir, table)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"part-{index:05d}-{token}.c000.snappy.parquet")
        with whole_file(path) as partial:
            pq.write_table(
                out, partial, row_group_size=ROWS_PER_ROW_GROUP[table], compression="snappy"
            )
    return written


def fits(rows: int) -> bool:
    """Whether a table's staged rows fit one worker's memory (each task reads them all and
    keeps its file's): else Spark writes the table, spilling to disk as it must."""
    return rows <= MAX_ROWS


def write_tables(
    spark: Any, staged_dir: str, tmp_dir: str, files: int, kinds: Iterable[str]
) -> dict[str, int]:
    """The tables of `kinds` (TABLES) into `tmp_dir`/TABLE from the staged rows in
    `staged_dir`: one task per output file (`write_files`), then each table's `_SUCCESS`.
    Returns the rows written per table."""
    kinds = list(kinds)
    if not kinds:
        return {}
    token = str(uuid.uuid4())
    version = spark.version
    tables = [TABLES[kind] for kind in kinds]
    for table in tables:
        os.makedirs(os.path.join(tmp_dir, table), exist_ok=True)

    def task(indexes: Iterable[int]) -> Iterator[tuple[str, int]]:
        for index in indexes:
            yield from write_files(index, files, kinds, staged_dir, tmp_dir, token, version).items()

    written = per_file_job(spark, "write " + ", ".join(tables) + " (pyarrow)", files, task)
    rows = dict.fromkeys(tables, 0)
    for kind, n in written:
        rows[TABLES[kind]] += n
    for table in tables:
        mark_written(os.path.join(tmp_dir, table))
    return rows
