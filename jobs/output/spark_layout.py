"""Spark's file layout, as the pyarrow writers of a local output reproduce it.

Spark's hash partitioning (`hash()`: Murmur3 as `org.apache.spark.unsafe.hash.Murmur3_x86_32`
computes it, seed 42; `pmod(hash, files)`: the output file a row goes to), the folder
`partitionBy` names for a value (`strategy=…`, escaped as Spark escapes it), the Arrow type of
each Spark type of the output columns, the schema and footer metadata of a file as Spark
writes it, and the `_SUCCESS` marker of a table written whole. `assignment_files` and
`payload_files` write their tables with these, so that their files read back exactly as
Spark's own (tests/spark/test_pyarrow_assignments_vs_spark.py compares the two).
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import types as T

from jobs.tables.schemas import struct as spark_struct

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
    word across all values at once, not a Python loop per value (docs/performance.md)."""
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


def group_file_index(group_ids: pa.Array, files: int) -> np.ndarray:
    """Each row's output file: Spark's `pmod(hash(group_id), files)`."""
    return spark_pmod(spark_group_hashes(group_ids), files)


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


def mark_written(table_dir: str) -> None:
    """Spark's `_SUCCESS` marker of a table written whole."""
    with open(os.path.join(table_dir, "_SUCCESS"), "wb"):
        pass
