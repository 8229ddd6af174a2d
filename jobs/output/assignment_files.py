"""The `assignments` table of a local output, written by the executors' Python with pyarrow.

With a local output the buckets write their assignment rows as Parquet themselves
(`jobs.plan.udf.write_rows`), each row with the index of the output file it belongs in: Spark's
own hash partitioning of the table, `pmod(hash(group_id, partition), files)`, which
`spark_layout.spark_file_index` computes as Spark's Murmur3 does. One task per output file
then reads its rows from every bucket's file, repeats the shared rows once per strategy they
stand for (see `jobs.tables.rows.SHARED_SEPARATOR`), sorts them and writes one Parquet
file per strategy: the rows, files and order that `jobs.plan.pipeline.sorted_for_write` and
`partitionBy("strategy")` give through Spark, with the same schema and the same Spark
metadata in each file.

Why: the JVM's shuffle, row sort and Parquet encoder are several times slower than pyarrow
reading, sorting and writing the same rows (docs/performance.md). The rows of one file are
held in one worker's memory, so `fits` sends a run whose files would hold more than
`MAX_ROWS_PER_FILE` rows through Spark, which spills to disk.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jobs.output.spark_layout import mark_written, partition_folder, spark_file_schema
from jobs.tables.contract import ASSIGNMENTS
from jobs.tables.rows import PAYLOAD, shared_entries
from jobs.tables.schemas import spark_fields

# The output file index of each row of a bucket's rows file
# (see `spark_layout.spark_file_index`).
FILE_INDEX = "file"
# Rows a file, on average, that one worker holds (the rows read, dictionary-encoded, their
# sort keys and one strategy's rows as text; docs/performance.md).
MAX_ROWS_PER_FILE = 10_000_000
# Rows per row group: about what Spark's 2 MiB row groups (jobs.plan.pipeline) hold of these rows,
# so that a reader of one group skips the rest by their statistics as it does in Spark's files.
ROWS_PER_ROW_GROUP = 200_000
# The text columns of the rows read, read dictionary-encoded.
_TEXT = [c.name for c in ASSIGNMENTS.columns if c.type == pa.string()] + [PAYLOAD]


def file_schema(spark_version: str) -> pa.Schema:
    """The schema of an `assignments` file as Spark writes it: the table's columns but the
    partition column (`spark_file_schema`)."""
    columns = [c for c in ASSIGNMENTS.columns if c.name != ASSIGNMENTS.partition_by]
    return spark_file_schema(spark_fields(columns), spark_version)


def _rank(values: pa.DictionaryArray) -> np.ndarray:
    """Each value's rank among the distinct values, in Spark's order (UTF-8 bytes)."""
    ranks: np.ndarray = _ranks(values.dictionary)[values.indices.to_numpy(False)]
    return ranks


def _ranks(values: pa.Array) -> np.ndarray:
    """The rank of each of `values` (distinct) in sorted order."""
    ranks = np.empty(len(values), np.int32)
    ranks[pc.sort_indices(values).to_numpy()] = np.arange(len(values), dtype=np.int32)
    return ranks


# A copy's round where its strategy's round is the row's own.
_NO_ROUND = np.iinfo(np.int64).min


class _Copies:
    """The rows of the further strategies of shared rows (see SHARED_SEPARATOR), never
    built: `parents` (each copy's row), `strategies` (each copy's strategy, an index into
    `names`, which extends the `names` given) and `rounds` (its own round, or `_NO_ROUND`).
    Each distinct payload is parsed once: a file's payloads repeat a few dozen values."""

    def __init__(self, payload: pa.DictionaryArray, names: list[str]) -> None:
        code = {name: i for i, name in enumerate(names)}
        strategies: list[int] = []
        rounds: list[int] = []
        starts = [0]
        for value in payload.dictionary.to_pylist():
            for name, own in shared_entries(value):
                strategies.append(code.setdefault(name, len(code)))
                rounds.append(_NO_ROUND if own is None else own)
            starts.append(len(strategies))
        self.names = list(code)
        first = np.array(starts, np.int64)
        rows = np.flatnonzero(payload.is_valid().to_numpy(zero_copy_only=False))
        kinds = payload.indices.to_numpy(zero_copy_only=False)[rows].astype(np.int64)
        counts = first[kinds + 1] - first[kinds]
        self.parents = np.repeat(rows, counts)
        # each copy's entry: its payload's first entry, plus its place among its row's copies
        place = np.arange(len(self.parents)) - np.repeat(np.cumsum(counts) - counts, counts)
        entries = np.repeat(first[kinds], counts) + place
        self.strategies = np.array(strategies, np.int32)[entries]
        self.rounds = np.array(rounds, np.int64)[entries]


def write_file(
    index: int, rows_dir: str, table_dir: str, token: str, schema: pa.Schema
) -> dict[str, int]:
    """Output file `index` of every strategy: its rows from every bucket's file, one per
    strategy a row stands for, sorted as Spark sorts them (`jobs.plan.pipeline.SORT_KEYS`:
    strategy, group_id, topic, partition), each strategy's rows under its
    partition folder. Returns the rows written per strategy. Each file is written under a
    hidden name and renamed into place, so a retried or speculative attempt replaces it.

    The rows are read once, their text columns dictionary-encoded (a group id, member id or
    topic repeats over a group's partitions and strategies); the further strategies' rows
    (the pyarrow twin of `jobs.plan.pipeline.split_output`'s explode) are indices into them.
    Each strategy's rows are then sorted by integer keys (each string's rank), decoded and
    written in turn, so only one strategy's rows are ever held as text."""
    import pyarrow.dataset as ds

    parquet = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(dictionary_columns=_TEXT))
    read = ds.dataset(rows_dir, format=parquet).to_table(
        columns=[*ASSIGNMENTS.names, PAYLOAD],
        filter=pc.field(FILE_INDEX) == index,
    )
    if read.num_rows == 0:
        return {}
    read = read.unify_dictionaries().combine_chunks()
    rows = read.drop_columns([PAYLOAD])
    own = rows["strategy"].chunk(0)
    copies = _Copies(read[PAYLOAD].chunk(0), own.dictionary.to_pylist())
    del read
    parents = copies.parents
    n = rows.num_rows
    # each row, then each copy: its strategy (an index into copies.names) and its round
    strategy = np.concatenate([own.indices.to_numpy(False), copies.strategies])
    rounds = rows["rebalance_round"].chunk(0).to_numpy(False)
    copy_rounds = np.where(copies.rounds == _NO_ROUND, rounds[parents], copies.rounds)
    rounds = np.concatenate([rounds, copy_rounds]).astype(np.int32)
    group = _rank(rows["group_id"].chunk(0))
    topic = _rank(rows["topic"].chunk(0))
    partition = rows["partition"].chunk(0).to_numpy(False)
    by_strategy = np.argsort(strategy, kind="stable")
    ordered = strategy[by_strategy]
    written = {}
    for start, end in runs(ordered):
        name = copies.names[int(ordered[start])]
        picked = by_strategy[start:end]
        source = picked.copy()
        copied = picked >= n
        source[copied] = parents[picked[copied] - n]
        keys = pa.table({"g": group[source], "t": topic[source], "p": partition[source]})
        order = pc.sort_indices(keys, [(k, "ascending") for k in ("g", "t", "p")]).to_numpy()
        part = rows.take(pa.array(source[order]))
        part = part.set_column(
            part.schema.get_field_index("rebalance_round"),
            "rebalance_round",
            pa.array(rounds[picked[order]]),
        )
        part = part.select(schema.names).cast(schema)
        folder = os.path.join(table_dir, partition_folder("strategy", name))
        os.makedirs(folder, exist_ok=True)
        _write_whole(part, os.path.join(folder, f"part-{index:05d}-{token}.c000.snappy.parquet"))
        written[name] = end - start
    return written


def runs(values: np.ndarray) -> list[tuple[int, int]]:
    """The [start, end) of each run of equal values."""
    bounds = [0, *(np.flatnonzero(np.diff(values)) + 1).tolist(), len(values)]
    return list(itertools.pairwise(bounds))


def _write_whole(rows: pa.Table, path: str) -> None:
    import pyarrow.parquet as pq

    with whole_file(path) as partial:
        pq.write_table(rows, partial, row_group_size=ROWS_PER_ROW_GROUP, compression="snappy")


@contextlib.contextmanager
def whole_file(path: str) -> Iterator[str]:
    """A file written whole or not at all: the caller writes the hidden name this yields
    (Spark's and pyarrow's readers skip names starting with "."), which is then renamed to
    `path`, replacing what a failed or earlier attempt left; on an error it is removed."""
    folder, name = os.path.split(path)
    partial = os.path.join(folder, f".{name}.{os.getpid()}")
    try:
        yield partial
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
        raise


def fits(assignment_rows: int, files: int) -> bool:
    """Whether each output file's rows can be sorted in one worker's memory (on average:
    the rows of a file are spread by group and partition, so even one large group's)."""
    return assignment_rows <= MAX_ROWS_PER_FILE * files


def write_assignments(spark: Any, rows_dir: str, table_dir: str, files: int) -> int:
    """The `assignments` table in `table_dir` from the buckets' files in `rows_dir`: one
    task per output file, then Spark's `_SUCCESS` marker. Returns the rows written."""
    schema = file_schema(spark.version)
    token = str(uuid.uuid4())
    os.makedirs(table_dir, exist_ok=True)

    def task(indexes: Iterable[int]) -> Iterator[int]:
        for index in indexes:
            yield sum(write_file(index, rows_dir, table_dir, token, schema).values())

    total: int = sum(per_file_job(spark, "write assignments (pyarrow)", files, task))
    mark_written(table_dir)
    return total


def per_file_job(
    spark: Any, description: str, files: int, task: Callable[[Iterable[int]], Iterator[Any]]
) -> list[Any]:
    """One Spark task per output file index (`task` gets its index), collected."""
    sc = spark.sparkContext
    sc.setJobDescription(description)
    try:
        return list(sc.parallelize(range(files), files).mapPartitions(task).collect())
    finally:
        sc.setJobDescription(None)
