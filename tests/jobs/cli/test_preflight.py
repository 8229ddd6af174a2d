"""Which paths are surely local before a JVM exists (jobs.cli.preflight): only those are checked
before the SparkSession is built; every other one is left to Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from jobs.cli.preflight import local_path

CORE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>fs.defaultFS</name><value>{}</value></property>
</configuration>
"""


@pytest.fixture(autouse=True)
def _no_cluster_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("PYSPARK_GATEWAY_PORT", "PYSPARK_SUBMIT_ARGS", "HADOOP_CONF_DIR",
                "YARN_CONF_DIR", "SPARK_CONF_DIR", "SPARK_HOME"):  # fmt: skip
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize(
    ("path", "local"),
    [
        ("/data/out", "/data/out"),
        ("out/ds=2026-11-22", "out/ds=2026-11-22"),
        ("file:///data/out", "/data/out"),
        ("file:/data/out", "/data/out"),
        ("file://localhost/data/out", "/data/out"),
        ("file://other-host/data/out", None),
        ("hdfs://nn:8020/data/out", None),
        ("s3a://bucket/out", None),
    ],
)
def test_paths(path: str, local: str | None) -> None:
    assert local_path(path) == local


def test_a_default_file_system_elsewhere_leaves_plain_paths_to_spark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert local_path("/data/out", {"spark.hadoop.fs.defaultFS": "hdfs://nn:8020"}) is None
    assert local_path("/data/out", {"spark.hadoop.fs.defaultFS": "file:///"}) == "/data/out"
    (tmp_path / "core-site.xml").write_text(CORE_SITE.format("hdfs://nn:8020"))
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
    assert local_path("/data/out") is None
    assert local_path("file:///data/out") == "/data/out", "an explicit file: URI is local"
    (tmp_path / "core-site.xml").write_text(CORE_SITE.format("file:///"))
    assert local_path("/data/out") == "/data/out"


def test_spark_defaults_and_submit_args(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "spark-defaults.conf").write_text("spark.hadoop.fs.defaultFS  hdfs://nn:8020\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert local_path("/data/out") is None
    monkeypatch.delenv("SPARK_CONF_DIR")
    monkeypatch.setenv(
        "PYSPARK_SUBMIT_ARGS", "--conf spark.hadoop.fs.defaultFS=hdfs://x pyspark-shell"
    )
    assert local_path("/data/out") is None


def test_under_spark_submit_plain_paths_are_left_to_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "40000")
    assert local_path("/data/out") is None
    assert local_path("file:///data/out") == "/data/out"
