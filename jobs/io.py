"""Parquet inputs and small text outputs through Hadoop's FileSystem (local, HDFS or object
store). Replacing the output directory atomically lives in jobs/output.py."""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql import SparkSession

from jobs.inputs import read_inputs, read_table

__all__ = ["exists", "read_inputs", "read_table", "write_json", "write_text"]


def _fs(spark: SparkSession, path: str) -> tuple[Any, Any]:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    return hpath.getFileSystem(conf), hpath


def exists(spark: SparkSession, path: str) -> bool:
    fs, hpath = _fs(spark, path)
    return bool(fs.exists(hpath))


def write_text(spark: SparkSession, path: str, text: str) -> None:
    fs, hpath = _fs(spark, path)
    stream = fs.create(hpath, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def write_json(spark: SparkSession, path: str, payload: dict[str, Any]) -> None:
    write_text(spark, path, json.dumps(payload, indent=2, sort_keys=True) + "\n")
