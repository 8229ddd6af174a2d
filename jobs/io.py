"""Parquet inputs, and atomic output through Hadoop's FileSystem (local, HDFS or object store).

Output is written into a temporary sibling directory and renamed into place only when every
table and the manifest are complete, so a failed or retried run never leaves half a result.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from jobs.schemas import InputTable, SchemaError, conform


def _fs(spark: SparkSession, path: str) -> tuple[Any, Any]:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    return hpath.getFileSystem(conf), hpath


def exists(spark: SparkSession, path: str) -> bool:
    fs, hpath = _fs(spark, path)
    return bool(fs.exists(hpath))


def read_table(spark: SparkSession, input_dir: str, table: InputTable) -> DataFrame | None:
    """The table's Parquet dataset conformed to the contract; None for an absent optional one."""
    path = f"{input_dir.rstrip('/')}/{table.name}"
    if not exists(spark, path):
        if table.required:
            raise SchemaError(f"{table.name}: required input table not found at {path}")
        return None
    try:
        df = spark.read.parquet(path)
    except Exception as exc:  # AnalysisException, or a JVM error reading a corrupt footer
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SchemaError(f"{table.name}: cannot read Parquet at {path}: {first}") from exc
    return conform(df, table)


def write_text(spark: SparkSession, path: str, text: str) -> None:
    fs, hpath = _fs(spark, path)
    stream = fs.create(hpath, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def write_json(spark: SparkSession, path: str, payload: dict[str, Any]) -> None:
    write_text(spark, path, json.dumps(payload, indent=2, sort_keys=True) + "\n")


@contextmanager
def atomic_output(spark: SparkSession, output_dir: str) -> Iterator[str]:
    """Yield a hidden temporary sibling directory; on success it replaces `output_dir`.

    The previous output is renamed aside, the new one renamed into place, then the previous
    one deleted: readers see either the old or the new tables, never a mix or a half. On
    failure the temporary directory is deleted and `output_dir` is left as it was.
    """
    out = output_dir.rstrip("/")
    token = uuid.uuid4().hex[:12]
    parent, _, name = out.rpartition("/")
    # Hidden names ("."): Spark's partition discovery and most readers skip them, so a run in
    # progress (or one killed outright) never shows up as an extra `ds=...` partition.
    hidden = f"{parent}/.{name}" if parent else f".{name}"
    tmp = f"{hidden}.__tmp-{token}"
    fs, tmp_path = _fs(spark, tmp)
    _, out_path = _fs(spark, out)
    try:
        yield tmp
    except BaseException:
        fs.delete(tmp_path, True)
        raise
    old_path = None
    if fs.exists(out_path):
        _, old_path = _fs(spark, f"{hidden}.__old-{token}")
        if not fs.rename(out_path, old_path):
            fs.delete(tmp_path, True)
            raise OSError(f"cannot move the previous output {out} aside")
    if not fs.rename(tmp_path, out_path):
        if old_path is not None:
            fs.rename(old_path, out_path)
        raise OSError(f"cannot move the new output into place at {out} (kept {tmp})")
    if old_path is not None:
        fs.delete(old_path, True)
