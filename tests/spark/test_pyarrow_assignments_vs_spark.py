"""The `assignments` table written by pyarrow (a local output) against Spark's own write.

Spark's hash partitioning, partition folders and files, row for row: the same rows must sit
in the same file, in the same order, whichever path wrote them.
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import jobs.plan.pipeline
from jobs.output import assignment_files, payload_files
from jobs.output.spark_layout import group_file_index, partition_folder, spark_file_index
from jobs.plan_assignments import run
from jobs.settings.config import PlannerConfig
from jobs.tables.schemas import OUTPUT_SCHEMAS
from tools.sample_estate import generate, write

pytestmark = pytest.mark.spark


def test_file_index_is_sparks_hash_partitioning(spark) -> None:  # type: ignore[no-untyped-def]
    # Multi-byte UTF-8 (Spark hashes the leftover bytes one by one, as signed bytes), empty
    # ids, negative and extreme partitions, every length modulo 4.
    rng = random.Random(5)
    alphabet = "abcXYZ-_.09é漢😀\x01"
    ids = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 13))) for _ in range(2000)]
    parts = [rng.choice([0, -5, 2**31 - 1, -(2**31), rng.randint(0, 5000)]) for _ in ids]
    frame = spark.createDataFrame(list(zip(ids, parts, strict=True)), "g string, p int")
    for files in (1, 2, 3, 7, 200):
        expected = [r[0] for r in frame.select(F.pmod(F.hash("g", "p"), F.lit(files))).collect()]
        got = spark_file_index(pa.array(ids), pa.array(parts, pa.int32()), files)
        assert got.tolist() == expected, files


def test_partition_folders_are_named_as_spark_names_them(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    names = ["range", "com.example:sticky", "a/b", "50%", "with space", "k=v", "t\x01", "é漢"]
    frame = spark.createDataFrame([(n, 1) for n in names], "strategy string, v int")
    frame.write.partitionBy("strategy").parquet(str(tmp_path / "t"))
    folders = {p.name for p in (tmp_path / "t").iterdir() if p.is_dir()}
    assert folders == {partition_folder("strategy", n) for n in names}


def _files(table: Path) -> dict[str, Path]:
    """The table's data files by folder and part number (Spark's names carry a run id)."""
    out = {}
    for path in table.rglob("part-*.parquet"):
        key = re.sub(r"^(part-\d{5})-.*$", r"\1", path.name)
        out[f"{path.parent.name}/{key}"] = path
    return out


@pytest.mark.parametrize("files", [1, 3])
@pytest.mark.slow
def test_pyarrow_writes_the_files_spark_writes(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, monkeypatch, files: int
) -> None:
    # Shared rows (elected and the strategy it names; sticky and cooperative-sticky, whose
    # rounds differ where a partition moves) are repeated per strategy in either path.
    estate = tmp_path / "in"
    write(generate(120, seed=29, bad_rows=True, offsets=True), estate)
    config = PlannerConfig().replace(
        strategies=("range", "sticky", "cooperative-sticky", "elected"),
        buckets=4,
        output_files=files,
    )
    calls: list[int] = []
    real = assignment_files.write_assignments
    monkeypatch.setattr(
        assignment_files,
        "write_assignments",
        lambda *a: calls.append(1) or real(*a),  # type: ignore[func-returns-value]
    )
    real_payloads = payload_files.write_tables
    monkeypatch.setattr(
        payload_files,
        "write_tables",
        lambda *a: calls.append(2) or real_payloads(*a),  # type: ignore[func-returns-value]
    )
    by_pyarrow = run(spark, str(estate), str(tmp_path / "a"), config)
    assert sorted(calls) == [1, 2]
    monkeypatch.setattr(jobs.plan.pipeline, "workers_rows_dir", lambda target: None)
    by_spark = run(spark, str(estate), str(tmp_path / "b"), config)
    assert sorted(calls) == [1, 2]
    assert by_pyarrow.output_rows == by_spark.output_rows
    a, b = _files(tmp_path / "a" / "assignments"), _files(tmp_path / "b" / "assignments")
    assert sorted(a) == sorted(b)
    assert len(a) >= 4
    for key in a:
        left, right = pq.read_table(a[key]), pq.read_table(b[key])
        assert left.num_rows > 0
        assert left.schema.equals(right.schema, check_metadata=False), key
        assert left.to_pydict() == right.to_pydict(), key
        # Spark's own schema in the footer, so Spark reads the columns back as it wrote them
        spark_key = b"org.apache.spark.sql.parquet.row.metadata"
        assert left.schema.metadata[spark_key] == right.schema.metadata[spark_key]
    assert (tmp_path / "a" / "assignments" / "_SUCCESS").exists()
    assert not [p for p in (tmp_path / "a").rglob(".*") if not p.name.endswith(".crc")]
    read_a = spark.read.parquet(str(tmp_path / "a" / "assignments"))
    read_b = spark.read.parquet(str(tmp_path / "b" / "assignments"))
    assert read_a.schema == read_b.schema
    assert read_a.count() == by_pyarrow.output_rows["assignments"]
    # the tables whose rows are staged as payloads: one file per output file, no folders
    for table in payload_files.TABLES.values():
        a, b = _files(tmp_path / "a" / table), _files(tmp_path / "b" / table)
        assert sorted(a) == sorted(b), table
        assert a, table
        for key in a:
            left, right = pq.read_table(a[key]), pq.read_table(b[key])
            assert left.num_rows > 0, key
            assert left.schema.equals(right.schema, check_metadata=False), key
            assert left.to_pydict() == right.to_pydict(), key
            spark_key = b"org.apache.spark.sql.parquet.row.metadata"
            assert left.schema.metadata[spark_key] == right.schema.metadata[spark_key]
        assert (tmp_path / "a" / table / "_SUCCESS").exists()
        written = spark.read.schema(OUTPUT_SCHEMAS[table]).parquet(str(tmp_path / "a" / table))
        assert written.count() == by_pyarrow.output_rows[table] > 0


def test_group_file_index_is_sparks_hash_partitioning(spark) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(7)
    alphabet = "abcXYZ-_.09é漢😀\x01"
    ids = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 13))) for _ in range(2000)]
    frame = spark.createDataFrame([(g,) for g in ids], "g string")
    for files in (1, 2, 3, 7, 200):
        expected = [r[0] for r in frame.select(F.pmod(F.hash("g"), F.lit(files))).collect()]
        assert group_file_index(pa.array(ids), files).tolist() == expected, files


@pytest.mark.slow
def test_an_empty_table_is_one_empty_file_as_spark_writes_it(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, monkeypatch
) -> None:
    # No what-if scenario: `rebalance_costs` has no row, and both paths write one file
    # holding the schema (Spark's reader then finds the columns without a schema given).
    estate = tmp_path / "in"
    write(generate(30, seed=3), estate)
    config = PlannerConfig().replace(
        strategies=("range", "sticky"), buckets=2, output_files=3, scenarios=()
    )
    by_pyarrow = run(spark, str(estate), str(tmp_path / "a"), config)
    monkeypatch.setattr(jobs.plan.pipeline, "workers_rows_dir", lambda target: None)
    by_spark = run(spark, str(estate), str(tmp_path / "b"), config)
    assert by_pyarrow.output_rows == by_spark.output_rows
    assert by_pyarrow.output_rows["rebalance_costs"] == 0
    for table in payload_files.TABLES.values():
        a, b = _files(tmp_path / "a" / table), _files(tmp_path / "b" / table)
        assert sorted(a) == sorted(b), table
        for key in a:
            left, right = pq.read_table(a[key]), pq.read_table(b[key])
            assert left.schema.equals(right.schema, check_metadata=False), key
            assert left.to_pydict() == right.to_pydict(), key
    assert spark.read.parquet(str(tmp_path / "a" / "rebalance_costs")).columns == list(
        OUTPUT_SCHEMAS["rebalance_costs"].names
    )


@pytest.mark.slow
def test_files_too_large_for_a_worker_go_through_spark(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, monkeypatch
) -> None:
    # The workers' rows are read back by Spark (their file index column ignored) when a
    # file's rows would not fit a worker's memory.
    estate = tmp_path / "in"
    write(generate(60, seed=31), estate)
    config = PlannerConfig().replace(
        strategies=("range", "sticky", "elected"), buckets=3, output_files=2
    )
    expected = run(spark, str(estate), str(tmp_path / "a"), config)
    monkeypatch.setattr(assignment_files, "MAX_ROWS_PER_FILE", 10)
    monkeypatch.setattr(assignment_files, "write_assignments", None)  # not called
    monkeypatch.setattr(payload_files, "MAX_ROWS", 10)  # nor the payload tables' writer
    monkeypatch.setattr(payload_files, "write_files", None)
    fallback = run(spark, str(estate), str(tmp_path / "b"), config)
    assert fallback.output_rows == expected.output_rows
    for table in ("assignments", *payload_files.TABLES.values()):
        a, b = _files(tmp_path / "a" / table), _files(tmp_path / "b" / table)
        assert sorted(a) == sorted(b), table
        for k in a:
            left, right = pq.read_table(a[k]), pq.read_table(b[k])
            assert left.equals(right), k
    assert not os.path.exists(tmp_path / "b" / jobs.plan.pipeline.STAGED_ROWS)
