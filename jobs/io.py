"""Parquet inputs and small text outputs through Hadoop's FileSystem (local, HDFS or object
store). Replacing the output directory atomically lives in jobs/output.py."""

from __future__ import annotations

import json
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
