"""The `assignments` table of a local output, written by the executors' Python with pyarrow.

With a local output the buckets write their assignment rows as Parquet themselves
(`jobs.udf.write_rows`), each row with the index of the output file it belongs in: Spark's
own hash partitioning of the table, `pmod(hash(group_id, partition), files)`, which
`spark_file_index` computes as Spark's Murmur3 does. One task per output file then reads its
rows from every bucket's file, repeats the shared rows once per strategy they stand for (see
`jobs.tables.schemas.SHARED_SEPARATOR`), sorts them and writes one Parquet file per strategy: the
rows, files and order that `jobs.pipeline.sorted_for_write` and `partitionBy("strategy")`
give through Spark, with the same schema and the same Spark metadata in each file.

Why: the JVM's shuffle, row sort and Parquet encoder took about 38 s of a 100,000-group run
(16.5M rows, two files) where pyarrow reads, sorts and writes the same rows in a few seconds
a file. The rows of one file are sorted in one worker's memory, so `fits` sends a run whose
files would hold more than `MAX_ROWS_PER_FILE` rows through Spark, which spills to disk.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import struct
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import types as T

from jobs.tables.schemas import ASSIGNMENTS_FIELDS, PAYLOAD, ROUND_SEPARATOR, SHARED_SEPARATOR
from jobs.tables.schemas import struct as spark_struct

# The output file index of each row of a bucket's rows file (see `spark_file_index`).
FILE_INDEX = "file"
# Rows a file, on average, that one worker sorts in memory: about 300 bytes a row at the
# peak (the rows read, their sort keys and the sorted copy: 2.5 GB for 8.3M rows), so at
# most some 3 GB a task.
MAX_ROWS_PER_FILE = 10_000_000
# Rows per row group: about what Spark's 2 MiB row groups (jobs.pipeline) hold of these rows,
# so that a reader of one group skips the rest by their statistics as it does in Spark's files.
ROWS_PER_ROW_GROUP = 200_000

# Spark's Murmur3 (org.apache.spark.unsafe.hash.Murmur3_x86_32) and its seed in `hash()`.
_C1, _C2, _SEED, _MASK = 0xCC9E2D51, 0x1B873593, 42, 0xFFFFFFFF


def _mix_k1(k: int) -> int:
    k = (k * _C1) & _MASK
    k = ((k << 15) | (k >> 17)) & _MASK
    return (k * _C2) & _MASK


def _mix_h1(h: int, k: int) -> int:
    h ^= k
    h = ((h << 13) | (h >> 19)) & _MASK
    return (h * 5 + 0xE6546B64) & _MASK


def _fmix(h: int, length: int) -> int:
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    return h ^ (h >> 16)


def spark_string_hash(value: str, seed: int = _SEED) -> int:
    """Spark's Murmur3 hash of a string (`hashUnsafeBytes`, unsigned): its UTF-8 bytes four
    at a time, then each byte left over mixed alone as a signed byte (not Murmur3's own tail,
    which Spark keeps for compatibility). One value at a time: the reference that
    `spark_string_hashes` is tested against."""
    data = value.encode()
    aligned = len(data) - len(data) % 4
    h = seed
    for (word,) in struct.iter_unpack("<I", data[:aligned]):
        h = _mix_h1(h, _mix_k1(word))
    for byte in data[aligned:]:
        h = _mix_h1(h, _mix_k1((byte - 256 if byte > 127 else byte) & _MASK))
    return _fmix(h, len(data))


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


# The same steps over numpy arrays of uint32 (multiplications wrap, as Java's int ones do).
def _np_mix_k1(k: np.ndarray) -> np.ndarray:
    return _rotl(k * np.uint32(_C1), 15) * np.uint32(_C2)


def _np_mix_h1(h: np.ndarray, k: np.ndarray) -> np.ndarray:
    return _rotl(h ^ k, 13) * np.uint32(5) + np.uint32(0xE6546B64)


def _np_fmix(h: np.ndarray, length: np.ndarray | int) -> np.ndarray:
    h = h ^ np.asarray(length).astype(np.uint32)
    h = (h ^ (h >> np.uint32(16))) * np.uint32(0x85EBCA6B)
    h = (h ^ (h >> np.uint32(13))) * np.uint32(0xC2B2AE35)
    out: np.ndarray = h ^ (h >> np.uint32(16))
    return out


def spark_string_hashes(values: pa.Array) -> np.ndarray:
    """`spark_string_hash` of every value of a string array without nulls (uint32), word by
    word across all values at once: a Python loop per value cost 0.6 s per 100,000 ids."""
    values = values.cast(pa.string())
    n = len(values)
    if n == 0:
        return np.zeros(0, np.uint32)
    buffers = values.buffers()
    offsets = np.frombuffer(buffers[1], np.int32)[values.offset : values.offset + n + 1]
    data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    starts, lengths = offsets[:-1].astype(np.int64), np.diff(offsets).astype(np.int64)
    words = lengths // 4
    h = np.full(n, _SEED, np.uint32)
    with np.errstate(over="ignore"):
        for w in range(int(words.max())):
            at = np.flatnonzero(words > w)
            pos = starts[at] + 4 * w
            word = data[pos].astype(np.uint32)
            for b in (1, 2, 3):
                word |= data[pos + b].astype(np.uint32) << np.uint32(8 * b)
            h[at] = _np_mix_h1(h[at], _np_mix_k1(word))
        # each byte left over alone, as a signed byte
        for b in range(3):
            at = np.flatnonzero(lengths - 4 * words > b)
            byte = data[starts[at] + 4 * words[at] + b].view(np.int8).astype(np.int32)
            h[at] = _np_mix_h1(h[at], _np_mix_k1(byte.view(np.uint32)))
        return _np_fmix(h, lengths)


def spark_file_index(
    group_ids: pa.Array | pa.ChunkedArray, partitions: pa.Array | pa.ChunkedArray, files: int
) -> np.ndarray:
    """Each row's output file: Spark's `pmod(hash(group_id, partition), files)`, the
    partition `repartition(files, "group_id", "partition")` sends the row to. The group's hash
    once per distinct group, then `hashInt` of the partition seeded by it, over every row."""
    h = spark_group_hashes(group_ids)
    k = np.asarray(partitions.to_numpy(zero_copy_only=False), np.int32).view(np.uint32)
    with np.errstate(over="ignore"):
        h = _np_fmix(_np_mix_h1(h, _np_mix_k1(k)), 4)
    return spark_pmod(h, files)


def spark_group_hashes(group_ids: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Spark's `hash(group_id)` of each row (uint32), computed once per distinct group."""
    if isinstance(group_ids, pa.ChunkedArray):
        group_ids = group_ids.combine_chunks()
    encoded = pc.dictionary_encode(group_ids)
    rows: np.ndarray = spark_string_hashes(encoded.dictionary)[
        encoded.indices.to_numpy(zero_copy_only=False)
    ]
    return rows


def spark_pmod(hashes: np.ndarray, files: int) -> np.ndarray:
    """Spark's `pmod(hash, files)` of uint32 hashes read as Java ints: the output file."""
    # numpy's % on a positive divisor is never negative, as Spark's pmod
    index: np.ndarray = (hashes.view(np.int32).astype(np.int64) % files).astype(np.int32)
    return index


# Characters Spark escapes in a partition folder's value (ExternalCatalogUtils), as %XX.
_ESCAPED = frozenset([*map(chr, range(1, 32)), *"\"#%'*/:=?\\\x7f{[]^"])


def partition_folder(column: str, value: str) -> str:
    """The folder `partitionBy(column)` writes `value`'s rows in, as Spark names it."""
    escaped = "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)
    return f"{column}={escaped}"


def _file_fields() -> list[tuple[str, Any, bool]]:
    return [(n, t, nullable) for n, t, nullable in ASSIGNMENTS_FIELDS if n != "strategy"]


# The Arrow type of each Spark type of the output columns.
ARROW_TYPES: dict[type, pa.DataType] = {
    T.StringType: pa.string(),
    T.IntegerType: pa.int32(),
    T.LongType: pa.int64(),
    T.DoubleType: pa.float64(),
    T.BooleanType: pa.bool_(),
}


def arrow_type(dtype: T.DataType) -> pa.DataType:
    """The Arrow type of an output column's Spark type (arrays of them included)."""
    if isinstance(dtype, T.ArrayType):
        return pa.list_(arrow_type(dtype.elementType))
    return ARROW_TYPES[type(dtype)]


def spark_file_schema(fields: Iterable[tuple[str, T.DataType, bool]], version: str) -> pa.Schema:
    """The schema of a file of these columns as Spark writes it: every column nullable, and
    Spark's own footer metadata (the schema it reads back)."""
    fields = list(fields)
    spark_schema = spark_struct(tuple((n, t, True) for n, t, _ in fields))
    return pa.schema(
        [pa.field(n, arrow_type(t), True) for n, t, _ in fields],
        metadata={
            "org.apache.spark.version": version,
            # in Spark's key order (pyspark's own `json()` sorts the keys)
            "org.apache.spark.sql.parquet.row.metadata": json.dumps(
                spark_schema.jsonValue(), separators=(",", ":")
            ),
        },
    )


def file_schema(spark_version: str) -> pa.Schema:
    """The schema of an `assignments` file as Spark writes it: the table's columns but the
    partition column (`spark_file_schema`)."""
    return spark_file_schema(_file_fields(), spark_version)


def _rank(values: pa.Array) -> np.ndarray:
    """Each value's rank among the distinct values, in Spark's order (UTF-8 bytes)."""
    encoded = pc.dictionary_encode(values)
    ranks: np.ndarray = _ranks(encoded.dictionary)[encoded.indices.to_numpy(False)]
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
            for entry in value.split(SHARED_SEPARATOR):
                name, _, own = entry.partition(ROUND_SEPARATOR)
                strategies.append(code.setdefault(name, len(code)))
                rounds.append(int(own) if own else _NO_ROUND)
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
    strategy a row stands for, sorted as Spark sorts them (`jobs.pipeline.SORT_KEYS`:
    strategy, group_id, topic, partition), each strategy's rows under its
    partition folder. Returns the rows written per strategy. Each file is written under a
    hidden name and renamed into place, so a retried or speculative attempt replaces it.

    The further strategies' rows (the pyarrow twin of `jobs.pipeline.split_output`'s
    explode) are sorted as indices into the rows read, by integer keys (each string's rank):
    every row is copied once, into its final place."""
    import pyarrow.dataset as ds

    parquet = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(dictionary_columns=[PAYLOAD]))
    read = ds.dataset(rows_dir, format=parquet).to_table(
        columns=[n for n, _, _ in ASSIGNMENTS_FIELDS] + [PAYLOAD],
        filter=pc.field(FILE_INDEX) == index,
    )
    if read.num_rows == 0:
        return {}
    rows = read.drop_columns([PAYLOAD]).combine_chunks()
    own = pc.dictionary_encode(rows["strategy"].chunk(0))
    copies = _Copies(
        read[PAYLOAD].unify_dictionaries().combine_chunks(), own.dictionary.to_pylist()
    )
    parents = copies.parents
    # the rows, then their copies: keys strategy, group_id, topic, partition
    name_rank = _ranks(pa.array(copies.names, pa.string()))
    strategy = name_rank[np.concatenate([own.indices.to_numpy(False), copies.strategies])]
    keys = {"strategy": strategy}
    for column in ("group_id", "topic", "partition"):
        values = rows[column].chunk(0)
        key = values.to_numpy(False) if column == "partition" else _rank(values)
        keys[column] = np.concatenate([key, key[parents]])
    by = [(k, "ascending") for k in keys]
    order = pc.sort_indices(pa.table(keys), sort_keys=by).to_numpy().astype(np.int64)
    n = rows.num_rows
    source = order.copy()
    copied = order >= n
    source[copied] = parents[order[copied] - n]
    rounds = rows["rebalance_round"].to_numpy()
    copy_rounds = np.where(copies.rounds == _NO_ROUND, rounds[parents], copies.rounds)
    out = rows.take(pa.array(source))
    out = out.set_column(
        out.schema.get_field_index("rebalance_round"),
        "rebalance_round",
        pa.array(np.concatenate([rounds, copy_rounds]).astype(np.int32)[order]),
    )
    ranked = strategy[order]
    name_of = dict(zip(name_rank.tolist(), copies.names, strict=True))
    written = {}
    for start, end in runs(ranked):
        name = name_of[int(ranked[start])]
        folder = os.path.join(table_dir, partition_folder("strategy", name))
        os.makedirs(folder, exist_ok=True)
        part = out.slice(start, end - start).select(schema.names).cast(schema)
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


def mark_written(table_dir: str) -> None:
    """Spark's `_SUCCESS` marker of a table written whole."""
    with open(os.path.join(table_dir, "_SUCCESS"), "wb"):
        pass
