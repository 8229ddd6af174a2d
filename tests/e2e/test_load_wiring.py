"""Racks, weights and offsets through the job: the rack-aware result and the
load columns against plain-Python recomputations, bad load input with its reason codes."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from chispa import assert_approx_df_equality
from helpers.estate import member

from jobs.plan_assignments import main, run
from jobs.settings.config import PlannerConfig
from tools.sample_estate import SCHEMAS, generate, write

pytestmark = pytest.mark.e2e

LAG_COLUMNS = [
    "total_lag",
    "max_partition_lag",
    "max_member_lag",
    "lag_imbalance",
    "unknown_lag_partition_count",
    "lag_moved",
]
WEIGHT_COLUMNS = [
    "total_weight",
    "max_member_weight",
    "min_member_weight",
    "weight_imbalance",
    "weight_lower_bound",
]


def _read(spark, out: Path, table: str) -> pd.DataFrame:  # type: ignore[no-untyped-def]
    return spark.read.parquet(str(out / table)).toPandas()


def _tables(
    topic_rows: list[tuple[str, int, list[str | None] | None, float | None]],
    members: list[dict[str, Any]],
    offsets: list[tuple[str | None, str, int, int | None, int]] | None = None,
    owned: list[tuple[str, str, str, int]] | None = None,
) -> dict[str, dict[str, list[Any]]]:
    tables: dict[str, dict[str, list[Any]]] = {
        "topic_partitions": {
            name: [r[i] for r in topic_rows]
            for i, name in enumerate(SCHEMAS["topic_partitions"].names)
        },
        "subscriptions": {k: [m[k] for m in members] for k in SCHEMAS["subscriptions"].names},
    }
    if offsets is not None:
        tables["offsets"] = {
            name: [r[i] for r in offsets] for i, name in enumerate(SCHEMAS["offsets"].names)
        }
    if owned is not None:
        tables["current_assignment"] = {
            k: [o[i] for o in owned] for i, k in enumerate(SCHEMAS["current_assignment"].names)
        }
    return tables


# ------------------------------------------------------------------------------ racks

# Kafka's RangeAssignorTest fact R1 with rf 1
# (tests/assignors/strategies/test_range_racks.py "R1-rf1"): topics
# t1(6), t2(7), t3(2) laid out over brokers on racks a, b, c (partition p of a topic at offset
# `off` on rack "abc"[(p + off) % 3]); consumer0..2 on racks a, b, c: rack-aware range.
R1_TOPICS = {"t1": 6, "t2": 7, "t3": 2}
R1_RACK = [
    "t1-0, t1-3, t2-0, t2-3, t2-6",
    "t1-1, t1-4, t2-1, t2-4, t3-0",
    "t1-2, t1-5, t2-2, t2-5, t3-1",
]
R1_NON_RACK = [
    "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0",
    "t1-2, t1-3, t2-3, t2-4, t3-1",
    "t1-4, t1-5, t2-5, t2-6",
]


def _r1_topic_rows(
    racks: bool,
) -> list[tuple[str, int, list[str | None] | None, float | None]]:
    rows: list[tuple[str, int, list[str | None] | None, float | None]] = []
    off = 0
    for t, n in R1_TOPICS.items():
        for p in range(n):
            rack = "abc"[(p + off) % 3]
            # null racks, empty strings and duplicates inside: ignored, as the pure core says
            rows.append((t, p, [rack, None, "", rack] if racks else None, None))
        off += n
    return rows


def _printed(rows: pd.DataFrame, gid: str) -> list[str]:
    mine = rows[rows["group_id"] == gid]
    return [
        ", ".join(sorted(f"{t}-{p}" for t, p in zip(m["topic"], m["partition"], strict=True)))
        for _, m in sorted(mine.groupby("member_id"))
    ]


def test_rack_aware_range_through_the_job(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    members = [
        member(gid, f"consumer{i}", ["t1", "t2", "t3"], client_rack="abc"[i])
        for gid in ("racks", "plain")
        for i in range(3)
    ]
    rows = _r1_topic_rows(racks=True)
    estate = tmp_path / "in"
    write(_tables(rows, [m for m in members if m["group_id"] == "racks"]), estate, files=1)
    config = PlannerConfig().replace(strategies=("range",), buckets=3, output_files=1)
    run(spark, str(estate), str(tmp_path / "out"), config)
    assignments = _read(spark, tmp_path / "out", "assignments")
    metrics = _read(spark, tmp_path / "out", "balance_metrics")
    assert _printed(assignments, "racks") == R1_RACK
    assert metrics.loc[metrics["group_id"] == "racks", "rack_mismatch_count"].tolist() == [0]

    # the same group without replica racks: Kafka's non-rack result, no rack information
    write(_tables(_r1_topic_rows(racks=False), members[3:]), tmp_path / "in2", files=1)
    run(spark, str(tmp_path / "in2"), str(tmp_path / "out2"), config)
    assignments = _read(spark, tmp_path / "out2", "assignments")
    metrics = _read(spark, tmp_path / "out2", "balance_metrics")
    assert _printed(assignments, "plain") == R1_NON_RACK
    assert metrics["rack_mismatch_count"].isna().all()


# ---------------------------------------------------------------- load on a seeded estate


def _expected_load(estate: Path, assignments: pd.DataFrame) -> pd.DataFrame:
    """Every lag and weight column recomputed in plain Python from the input tables and the
    job's assignments (weight_lower_bound is checked as a bound, not recomputed)."""
    tp = pq.read_table(estate / "topic_partitions").to_pandas()
    subs = pq.read_table(estate / "subscriptions").to_pandas()
    offsets = pq.read_table(estate / "offsets").to_pandas()
    cur = pq.read_table(estate / "current_assignment").to_pandas()
    counts = tp.groupby("topic")["partition"].max().add(1).to_dict()
    weight = {(r.topic, r.partition): r.weight for r in tp.itertuples()}
    lag: dict[tuple[str, str, int], int | None] = {}
    for r in offsets.itertuples():
        c = None if pd.isna(r.committed_offset) else int(r.committed_offset)
        lag[(r.group_id, r.topic, r.partition)] = (
            None if c is None else max(0, int(r.log_end_offset) - c)
        )
    members = subs.groupby("group_id")["member_id"].apply(list).to_dict()
    topics = subs.groupby("group_id")["topics"].apply(lambda s: sorted({t for x in s for t in x}))
    prev = {(r.group_id, r.topic, r.partition): r.member_id for r in cur.itertuples()}
    rows = []
    for (gid, strategy), a in assignments.groupby(["group_id", "strategy"]):
        parts = [(t, p) for t in topics[gid] for p in range(counts[t])]
        lags = [lag.get((gid, t, p)) for t, p in parts]
        known = [x for x in lags if x is not None]
        member_lag: dict[str, int] = dict.fromkeys(members[gid], 0)
        member_w: dict[str, float] = dict.fromkeys(members[gid], 0.0)
        moved = 0
        for r in a.itertuples():
            x = lag.get((gid, r.topic, r.partition)) or 0
            member_lag[r.member_id] += x
            member_w[r.member_id] += weight[(r.topic, r.partition)]
            owner = prev.get((gid, r.topic, r.partition))
            if owner is not None and owner != r.member_id:
                moved += x
        n = len(members[gid])
        total_w = sum(weight[tp_] for tp_ in parts)
        mean_lag = sum(member_lag.values()) / n
        mean_w = sum(member_w.values()) / n
        rows.append(
            {
                "group_id": gid,
                "strategy": strategy,
                "total_lag": sum(known) if known else None,
                "max_partition_lag": max(known) if known else None,
                "max_member_lag": max(member_lag.values()) if known else None,
                "lag_imbalance": (max(member_lag.values()) / mean_lag)
                if known and mean_lag
                else None,
                "unknown_lag_partition_count": len(lags) - len(known),
                # the run has a current_assignment table: 0 for a group without rows in it
                "lag_moved": moved if known else None,
                "total_weight": total_w,
                "max_member_weight": max(member_w.values()),
                "min_member_weight": min(member_w.values()),
                "weight_imbalance": max(member_w.values()) / mean_w if mean_w else None,
            }
        )
    return pd.DataFrame(rows)


def test_load_metrics_match_a_plain_python_recomputation(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate = tmp_path / "in"
    write(generate(60, seed=13, offsets=True), estate)
    strategies = ("range", "roundrobin", "sticky", "balanced")
    config = PlannerConfig().replace(strategies=strategies, buckets=4, output_files=1)
    result = run(spark, str(estate), str(tmp_path / "out"), config)
    groups = result.to_json()["groups"]
    assert groups["input"] == groups["planned"] + groups["rejected"] == 60

    assignments = _read(spark, tmp_path / "out", "assignments")
    # `lag` on every assignment row is the partition's own lag (null when never committed)
    offsets = pq.read_table(estate / "offsets").to_pandas()
    expected_lag = {
        (r.group_id, r.topic, r.partition): None
        if pd.isna(r.committed_offset)
        else max(0, r.log_end_offset - int(r.committed_offset))
        for r in offsets.itertuples()
    }
    actual_lag = {
        (r.group_id, r.topic, r.partition): None if pd.isna(r.lag) else int(r.lag)
        for r in assignments.itertuples()
    }
    assert actual_lag == {k: expected_lag.get(k) for k in actual_lag}
    assert assignments["lag"].isna().any()
    assert assignments["lag"].notna().any()

    columns = ["group_id", "strategy", *LAG_COLUMNS, *WEIGHT_COLUMNS[:-1]]
    actual = spark.read.parquet(str(tmp_path / "out" / "balance_metrics")).select(*columns)
    expected = _expected_load(estate, assignments)[columns]
    schema = actual.schema
    expected_df = spark.createDataFrame(
        [tuple(None if _isnull(v) else v for v in row) for row in expected.astype(object).values],
        schema,
    )
    assert_approx_df_equality(
        actual, expected_df, 1e-6, ignore_row_order=True, ignore_nullable=True
    )
    metrics = _read(spark, tmp_path / "out", "balance_metrics")
    # a proven lower bound: no strategy's heaviest member weighs less
    assert (metrics["weight_lower_bound"] <= metrics["max_member_weight"] + 1e-9).all()
    assert metrics["weight_lower_bound"].notna().all()


def _isnull(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def test_without_offsets_or_weights_every_load_column_is_null(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = [("t", p, None, None) for p in range(4)]
    members = [member("g", "a", ["t"]), member("g", "b", ["t"])]
    write(_tables(rows, members), tmp_path / "in", files=1)
    config = PlannerConfig().replace(strategies=("range", "balanced"), buckets=2, output_files=1)
    run(spark, str(tmp_path / "in"), str(tmp_path / "out"), config)
    metrics = _read(spark, tmp_path / "out", "balance_metrics")
    assert metrics[list(LAG_COLUMNS + WEIGHT_COLUMNS)].isna().all().all()
    assert _read(spark, tmp_path / "out", "assignments")["lag"].isna().all()


# -------------------------------------------------------------------------- bad input


def test_bad_load_input_is_reported_and_planned_around(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    nan, inf = float("nan"), float("inf")
    rows = [("t", 0, None, 1.0), ("t", 1, None, -1.0), ("t", 2, None, nan), ("t", 3, None, inf)]
    rows += [("u", 0, None, 2.0)]
    members = [member("g", "a", ["t"]), member("g", "b", ["t"]), member("h", "a", ["u"])]
    offsets: list[tuple[str | None, str, int, int | None, int]] = [
        ("g", "t", 0, 120, 100),  # committed past the log end: lag 0
        ("g", "t", 1, -5, 100),  # negative offset: unknown
        ("g", "t", 2, 90, 100),  # duplicated, identical: counted once
        ("g", "t", 2, 90, 100),
        ("g", "t", 3, 10, 100),  # conflicting: unknown
        ("g", "t", 3, 20, 100),
        ("g", "t", 9, 1, 2),  # no such partition
        ("g", "u", 0, 1, 2),  # a topic g does not consume
        ("ghost", "t", 0, 1, 2),  # a group with no member
        (None, "t", 0, 1, 2),  # no group at all
        ("h", "u", 0, 5, 7),
    ]
    write(_tables(rows, members, offsets), tmp_path / "in", files=1)
    config = PlannerConfig().replace(strategies=("range", "balanced"), buckets=3, output_files=1)
    result = run(spark, str(tmp_path / "in"), str(tmp_path / "out"), config)
    groups = result.to_json()["groups"]
    assert (groups["input"], groups["planned"], groups["rejected"]) == (2, 2, 0)

    rejected = _read(spark, tmp_path / "out", "rejected")
    found = sorted(
        (r.severity, r.reason, r.group_id, r.topic)
        for r in rejected.astype(object).where(rejected.notna(), None).itertuples()
    )
    assert found == sorted(
        [
            ("warning", "COMMITTED_PAST_LOG_END", "g", "t"),
            ("warning", "NEGATIVE_OFFSET", "g", "t"),
            ("warning", "DUPLICATE_OFFSETS", "g", "t"),
            ("warning", "CONFLICTING_OFFSETS", "g", "t"),
            ("warning", "OFFSETS_UNKNOWN_PARTITION", "g", "t"),
            ("warning", "OFFSETS_UNKNOWN_TOPIC", "g", "u"),
            ("warning", "OFFSETS_UNKNOWN_GROUP", "ghost", None),
            ("warning", "OFFSETS_NULL_KEY", None, None),
            ("warning", "INVALID_WEIGHT", None, "t"),  # once for the topic, naming 1, 2, 3
        ]
    )
    weight_row = rejected[rejected["reason"] == "INVALID_WEIGHT"].iloc[0]
    assert "3 partition(s) [1, 2, 3]" in weight_row["detail"]

    lags = {
        (r.strategy, r.partition): None if pd.isna(r.lag) else int(r.lag)
        for r in _read(spark, tmp_path / "out", "assignments").itertuples()
        if r.group_id == "g"
    }
    assert {p: lag for (s, p), lag in lags.items() if s == "range"} == {
        0: 0,
        1: None,
        2: 10,
        3: None,
    }
    metrics = _read(spark, tmp_path / "out", "balance_metrics").set_index(["group_id", "strategy"])
    g = metrics.loc[("g", "range")]
    # invalid weights count as 1.0; the unknown lags are counted, never guessed
    assert (g["total_weight"], g["unknown_lag_partition_count"], g["total_lag"]) == (4.0, 2, 10)
    assert metrics.loc[("h", "range"), "total_lag"] == 2


# ----------------------------------------------------------------------- balance_by


@pytest.mark.slow
def test_balance_by_weight_minimises_the_heaviest_member(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # one hot partition of weight 9 and three of weight 1: counts give 2/2 (max 10), weights
    # give {hot} and the rest (max 9, the proven bound)
    rows = [("t", 0, None, 9.0), *(("t", p, None, 1.0) for p in (1, 2, 3))]
    members = [member("g", "a", ["t"]), member("g", "b", ["t"])]
    write(_tables(rows, members), tmp_path / "in", files=1)
    by: dict[str, Any] = {}
    for balance_by in ("count", "weight", "lag"):
        config = PlannerConfig().replace(
            strategies=("balanced",), buckets=1, output_files=1, balance_by=balance_by
        )
        run(spark, str(tmp_path / "in"), str(tmp_path / f"out-{balance_by}"), config)
        by[balance_by] = _read(spark, tmp_path / f"out-{balance_by}", "balance_metrics").iloc[0]
    assert by["count"]["max_member_weight"] == 10.0
    assert by["weight"]["max_member_weight"] == by["weight"]["weight_lower_bound"] == 9.0
    assert by["weight"]["max_partitions_per_member"] == 3
    # no offsets table: `lag` falls back to counts
    assert by["lag"]["max_member_weight"] == 10.0


def test_unknown_balance_by_exits_2(tmp_path: Path, capsys, caplog) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "planner.toml"
    config.write_text('[planner]\nbalance_by = "bytes"\n', encoding="utf-8")
    out = tmp_path / "out"
    code = main(["--input", str(tmp_path), "--output", str(out), "--config", str(config)])
    assert code == 2
    text = capsys.readouterr().err + caplog.text
    assert "balance_by must be one of 'count', 'weight', 'lag', got 'bytes'" in text
    assert not out.exists()


def _member_lags(assignments: pd.DataFrame) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for r in assignments.itertuples():
        out[r.member_id] += 0 if pd.isna(r.lag) else int(r.lag)
    return dict(out)


def test_balance_by_lag_spreads_the_backlog(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = [("t", p, None, None) for p in range(4)]
    members = [member("g", "a", ["t"]), member("g", "b", ["t"])]
    offsets: list[tuple[str | None, str, int, int | None, int]] = [
        ("g", "t", 0, 0, 500),
        ("g", "t", 1, 0, 400),
        ("g", "t", 2, 0, 100),
        ("g", "t", 3, None, 50),
    ]
    write(_tables(rows, members, offsets), tmp_path / "in", files=1)
    config = PlannerConfig().replace(
        strategies=("range", "balanced"), buckets=1, output_files=1, balance_by="lag"
    )
    run(spark, str(tmp_path / "in"), str(tmp_path / "out"), config)
    assignments = _read(spark, tmp_path / "out", "assignments")
    by_strategy = {s: _member_lags(a) for s, a in assignments.groupby("strategy")}
    assert max(by_strategy["range"].values()) == 900  # range: p0, p1 to a
    assert max(by_strategy["balanced"].values()) == 500  # the hot partition alone
    metrics = _read(spark, tmp_path / "out", "balance_metrics").set_index("strategy")
    assert metrics.loc["balanced", "max_member_lag"] == 500
    assert metrics.loc["balanced", "unknown_lag_partition_count"] == 1
