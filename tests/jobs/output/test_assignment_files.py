"""The buckets' rows files and the pyarrow writer of `assignments`, without a JVM (Spark's
own write is compared in tests/spark/test_pyarrow_assignments_vs_spark.py)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import jobs.plan.udf
from jobs.output.assignment_files import FILE_INDEX, file_schema, write_file
from jobs.output.spark_layout import spark_file_index
from jobs.plan.pipeline import PARTITION_KEYS, SORT_KEYS
from jobs.tables.rows import ROUND_SEPARATOR, SHARED_SEPARATOR
from tests.jobs.plan.test_udf import TOPICS, bucket, ctx


def test_a_bucket_writes_each_output_files_rows_in_row_groups_of_their_own(tmp_path: Path) -> None:
    # The writer of file i then reads only its row groups (their statistics say so).
    pdf = bucket()
    plain, grouped = str(tmp_path / "plain.parquet"), str(tmp_path / "grouped.parquet")
    jobs.plan.udf.plan_bucket(pdf, TOPICS, ctx(), rows_file=plain)
    grouped_ctx = dataclasses.replace(ctx(), rows_dir=str(tmp_path), output_files=3)
    jobs.plan.udf.plan_bucket(pdf, TOPICS, grouped_ctx, rows_file=grouped)
    rows, tagged = pq.read_table(plain), pq.read_table(grouped)
    assert tagged.drop_columns([FILE_INDEX]).sort_by("group_id").num_rows == rows.num_rows > 100
    index = spark_file_index(rows["group_id"], rows["partition"], 3)
    assert sorted(tagged[FILE_INDEX].to_pylist()) == sorted(index.tolist())
    meta = pq.ParquetFile(grouped).metadata
    column = tagged.schema.get_field_index(FILE_INDEX)
    stats = [meta.row_group(i).column(column).statistics for i in range(meta.num_row_groups)]
    assert [(s.min, s.max) for s in stats] == [(i, i) for i in range(3)]
    key = ["group_id", "strategy", "topic", "partition"]
    assert (
        tagged.drop_columns([FILE_INDEX])
        .sort_by([(k, "ascending") for k in key])
        .equals(rows.sort_by([(k, "ascending") for k in key]))
    )


def test_the_writer_follows_the_pipelines_partitioning_and_order() -> None:
    # `write_file` hard-codes both: a change to the table's layout must change it too.
    assert PARTITION_KEYS["assignments"] == ("group_id", "partition")
    assert SORT_KEYS["assignments"] == ("strategy", "group_id", "topic", "partition")


def _rows(tmp_path: Path, **columns: list[object]) -> str:
    folder = tmp_path / "rows"
    folder.mkdir(exist_ok=True)
    n = len(columns["group_id"])
    table = pa.table(
        {
            "group_id": pa.array(columns["group_id"], pa.string()),
            "strategy": pa.array(columns["strategy"], pa.string()),
            "member_id": pa.array(["m"] * n, pa.string()),
            "group_instance_id": pa.nulls(n, pa.string()),
            "topic": pa.array(columns["topic"], pa.string()),
            "partition": pa.array(columns["partition"], pa.int32()),
            "previous_member_id": pa.nulls(n, pa.string()),
            "rebalance_round": pa.array(columns["rebalance_round"], pa.int32()),
            "lag": pa.nulls(n, pa.int64()),
            "payload": pa.array(columns["payload"], pa.string()),
            FILE_INDEX: pa.array([0] * n, pa.int32()),
        }
    )
    pq.write_table(table, folder / "bucket-00000.parquet")
    return str(folder)


def test_shared_rows_are_repeated_per_strategy_with_their_own_rounds(tmp_path: Path) -> None:
    rows_dir = _rows(
        tmp_path,
        group_id=["g2", "g1", "g1"],
        strategy=["sticky", "sticky", "range"],
        topic=["t", "t", "t"],
        partition=[0, 1, 0],
        rebalance_round=[1, 1, 1],
        payload=[
            f"cooperative-sticky{ROUND_SEPARATOR}2",
            f"cooperative-sticky{SHARED_SEPARATOR}x/y",
            "elected",
        ],
    )
    table = tmp_path / "out"
    written = write_file(0, rows_dir, str(table), "run", file_schema("4"))
    assert written == {"cooperative-sticky": 2, "elected": 1, "range": 1, "sticky": 2, "x/y": 1}

    def read(folder: str) -> list[tuple[object, ...]]:
        t = pq.read_table(table / folder / "part-00000-run.c000.snappy.parquet")
        columns = (t[c].to_pylist() for c in ("group_id", "partition", "rebalance_round"))
        return list(zip(*columns, strict=True))

    assert read("strategy=sticky") == [("g1", 1, 1), ("g2", 0, 1)]
    assert read("strategy=cooperative-sticky") == [("g1", 1, 1), ("g2", 0, 2)]
    assert read("strategy=x%2Fy") == [("g1", 1, 1)]
    assert read("strategy=elected") == read("strategy=range") == [("g1", 0, 1)]
    # a retried attempt replaces the files and leaves no partial one behind
    assert write_file(0, rows_dir, str(table), "run", file_schema("4")) == written
    names = [n for _, _, files in os.walk(table) for n in files]
    assert len(names) == 5
    assert not [n for n in names if n.startswith(".")]


def test_a_file_with_no_rows_writes_nothing(tmp_path: Path) -> None:
    rows_dir = _rows(
        tmp_path, group_id=[], strategy=[], topic=[], partition=[], rebalance_round=[], payload=[]
    )
    assert write_file(0, rows_dir, str(tmp_path / "out"), "run", file_schema("4")) == {}
    assert not (tmp_path / "out").exists()
