"""The Spark layer against a plain-pandas oracle.

The oracle runs the very same pure planning over the whole estate in one pandas frame, with
no Spark: bucketing, the member/owned union, Arrow conversions, the topic catalog and the
output split must not change a single row.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from chispa import assert_df_equality
from helpers.oracle import split_tables
from pyspark.sql.types import IntegerType, LongType

import jobs.plan.pipeline
from assignors.inputs.topics import partition_data
from assignors.inputs.validation import TopicStatus, check_topic
from jobs.plan.pipeline import STAGED, STAGED_ROWS, has_weights
from jobs.plan.udf import INPUT_COLUMNS, PlanContext, plan_bucket
from jobs.plan_assignments import run
from jobs.settings.config import PlannerConfig
from jobs.settings.run import RunSettings
from jobs.tables.rows import KIND_MEMBER, KIND_OFFSETS, KIND_OWNED
from jobs.tables.schemas import OUTPUT_FIELDS, REJECTED_FIELDS, struct
from tools.sample_estate import generate, write

pytestmark = pytest.mark.spark

STRATEGIES = ("range", "roundrobin", "elected")


def oracle(
    input_dir: Path, strategies: tuple[str, ...] = ("range", "roundrobin")
) -> dict[str, pd.DataFrame]:
    tp = pq.read_table(input_dir / "topic_partitions").to_pandas()
    subs = pq.read_table(input_dir / "subscriptions").to_pandas()
    cur = pq.read_table(input_dir / "current_assignment").to_pandas()
    catalog: dict[str, TopicStatus] = {}
    topic_rows = []
    for topic, rows in tp.groupby("topic"):
        parts = rows["partition"]
        status, problems = check_topic(
            str(topic),
            len(rows),
            parts.nunique(),
            int(parts.min()),
            int(parts.max()),
            int(parts.isna().sum()),
        )
        catalog[str(topic)] = status
        # by field name: the rejected table's columns are REJECTED_FIELDS, whatever they are
        topic_rows += [tuple(getattr(p, f[0]) for f in REJECTED_FIELDS) for p in problems]
    # the driver's per-partition data: replica racks and weights, where given
    catalog, weight_problems = partition_data(
        catalog,
        [
            (r.topic, r.partition, r.replica_racks)
            for r in tp.itertuples()
            if r.replica_racks is not None
        ],
        [(r.topic, r.partition, r.weight) for r in tp.itertuples() if not pd.isna(r.weight)],
    )
    topic_rows += [tuple(getattr(p, f[0]) for f in REJECTED_FIELDS) for p in weight_problems]
    members = subs.assign(kind=KIND_MEMBER, topic=None, partition=None)
    owned = cur.assign(kind=KIND_OWNED)
    frames = [members, owned]
    has_offsets = (input_dir / "offsets").exists()
    if has_offsets:  # offsets rows ride with their group's members
        frames.append(pq.read_table(input_dir / "offsets").to_pandas().assign(kind=KIND_OFFSETS))
    pdf = pd.concat(frames, ignore_index=True).reindex(columns=list(INPUT_COLUMNS))
    ctx = PlanContext(
        RunSettings.of(
            strategies,
            True,
            plan_elected=True,
            has_weights=has_weights(catalog),
            has_offsets=has_offsets,
        )
    )
    wide = plan_bucket(pdf, catalog, ctx)
    out = split_tables(wide)
    out["rejected"] = pd.concat(
        [
            out["rejected"],
            pd.DataFrame.from_records(topic_rows, columns=[f[0] for f in REJECTED_FIELDS]),
        ],
        ignore_index=True,
    )
    return out


def to_spark(spark, pdf: pd.DataFrame, fields):  # type: ignore[no-untyped-def]
    integral = [isinstance(f[1], IntegerType | LongType) for f in fields]

    def plain(v: object, is_int: bool) -> object:
        if isinstance(v, list | tuple):
            return list(v)
        if pd.isna(v):
            return None
        # pandas holds an int column with nulls as float64 (the load metrics, `lag`)
        return int(v) if is_int and isinstance(v, float) else v

    records = [
        tuple(plain(v, i) for v, i in zip(row, integral, strict=True))
        for row in pdf.astype(object).itertuples(index=False)
    ]
    return spark.createDataFrame(records, struct(fields))


def assert_tables_equal(spark, out: Path, expected: dict[str, pd.DataFrame]) -> None:  # type: ignore[no-untyped-def]
    """Every output table the job wrote in `out` equals the oracle's (row order aside)."""
    for name, fields in OUTPUT_FIELDS.items():
        actual = spark.read.parquet(str(out / name)).select(*[f[0] for f in fields])
        assert_df_equality(
            actual,
            to_spark(spark, expected[name], fields),
            ignore_row_order=True,
            ignore_nullable=True,
        )


@pytest.mark.parametrize("buckets", [1, 7])
@pytest.mark.slow
def test_job_matches_pandas_oracle(spark, tmp_path: Path, buckets: int) -> None:  # type: ignore[no-untyped-def]
    estate = tmp_path / "in"
    write(generate(120, seed=11, bad_rows=True), estate)
    config = PlannerConfig().replace(strategies=STRATEGIES, buckets=buckets, output_files=2)
    result = run(spark, str(estate), str(tmp_path / "out"), config)
    expected = oracle(estate)
    assert_tables_equal(spark, tmp_path / "out", expected)
    internal = [r for r in expected["rejected"]["reason"] if r == "INTERNAL_ERROR"]
    assert internal == []  # the oracle too: a bug in a built-in assignor is never "expected"
    assert not any(k.endswith(":INTERNAL_ERROR") for k in result.to_json()["rejected_by_reason"])
    groups = result.to_json()["groups"]
    subscriptions = pq.read_table(estate / "subscriptions").to_pandas()
    assert groups["input"] == subscriptions["group_id"].dropna().nunique()
    assert groups["input"] == groups["planned"] + groups["rejected"]
    assert groups["rejected"] == 3


@pytest.mark.slow
def test_job_with_offsets_matches_pandas_oracle(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Offsets rows in the planner input's union, lags per group in the UDF, the
    # `lag` column and the load metrics: the Spark path equals the plain-pandas one.
    estate = tmp_path / "in"
    tables = generate(70, seed=17, bad_rows=True, offsets=True)
    tables["offsets"]["group_id"][:3] = ["ghost", None, "ghost"]  # OFFSETS_UNKNOWN_GROUP etc.
    write(tables, estate)
    strategies = ("range", "sticky", "balanced", "elected")
    config = PlannerConfig().replace(strategies=strategies, buckets=5, output_files=2)
    run(spark, str(estate), str(tmp_path / "out"), config)
    expected = oracle(estate, strategies[:-1])
    assert_tables_equal(spark, tmp_path / "out", expected)
    reasons = set(expected["rejected"]["reason"])
    assert {"OFFSETS_UNKNOWN_GROUP", "OFFSETS_NULL_KEY"} <= reasons
    assert expected["assignments"]["lag"].notna().any()


@pytest.mark.parametrize("workers_write", [True, False])
@pytest.mark.slow
def test_rows_the_workers_write_equal_rows_through_spark(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, monkeypatch, workers_write: bool
) -> None:
    # A local output: the buckets write their assignment rows as Parquet themselves. Other
    # outputs (HDFS, object stores): the rows go back through Spark. Both give the oracle's
    # tables, and neither leaves its staged rows in the output.
    estate = tmp_path / "in"
    write(generate(90, seed=23, bad_rows=True, offsets=True), estate)
    strategies = ("range", "sticky", "cooperative-sticky", "elected")
    written: list[list[str]] = []
    real = jobs.plan.pipeline._plan_and_write

    def spy(spark, wide, tmp, rows_dir, *rest):  # type: ignore[no-untyped-def]
        out = real(spark, wide, tmp, rows_dir, *rest)
        written.append([] if rows_dir is None else sorted(os.listdir(rows_dir)))
        return out

    monkeypatch.setattr(jobs.plan.pipeline, "_plan_and_write", spy)
    if not workers_write:
        monkeypatch.setattr(jobs.plan.pipeline, "workers_rows_dir", lambda target: None)
    config = PlannerConfig().replace(strategies=strategies, buckets=4, output_files=2)
    run(spark, str(estate), str(tmp_path / "out"), config)
    assert_tables_equal(spark, tmp_path / "out", oracle(estate, strategies[:-1]))
    files = [f"bucket-{b:05d}.parquet" for b in range(4)]
    assert written == [files if workers_write else []]
    left = {p.name for p in (tmp_path / "out").iterdir()}
    assert not {STAGED, STAGED_ROWS} & left, left


def shuffled_copy(tables: dict[str, dict[str, list[Any]]], seed: int) -> dict[str, Any]:
    """The same estate with every table's rows in another order."""
    rng = random.Random(seed)
    out = {}
    for name, cols in tables.items():
        order = list(range(len(next(iter(cols.values())))))
        rng.shuffle(order)
        out[name] = {c: [values[i] for i in order] for c, values in cols.items()}
    return out


@pytest.mark.slow
def test_reruns_on_shuffled_split_input_give_identical_data(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # The same estate in 1 file and shuffled into 3 files plans to the same
    # rows, floats included, bit for bit (row order within a group's bucket changes).
    tables = generate(80, seed=5, bad_rows=True)
    write(tables, tmp_path / "one", files=1)
    write(shuffled_copy(tables, seed=9), tmp_path / "three", files=3)
    config = PlannerConfig().replace(
        strategies=("range", "sticky", "uniform", "elected"), buckets=3
    )
    for name in ("one", "three"):
        run(spark, str(tmp_path / name), str(tmp_path / f"out-{name}"), config)
    for table, fields in OUTPUT_FIELDS.items():
        names = [f[0] for f in fields]
        one, three = (
            sorted(
                map(
                    tuple,
                    spark.read.parquet(str(tmp_path / f"out-{n}" / table)).select(*names).collect(),
                ),
                key=repr,
            )
            for n in ("one", "three")
        )
        assert one, table
        assert one == three, table
