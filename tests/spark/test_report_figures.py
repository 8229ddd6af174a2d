"""The report's per-strategy figures, two aggregations over `balance_metrics`, against a
plain-Python count of the same rows: bins and percentiles leave nulls out, and a strategy
with no value of a column has no entry for it (the page then draws nothing for it)."""

from __future__ import annotations

import statistics
from typing import Any

import pytest
from pyspark.sql import types as T

from jobs.report.aggregates import (
    balance_figures,
    load_imbalance,
    overview,
    recommendation_mix,
    recommended_per_strategy,
)
from jobs.report.tables import GAP_BINS, MAX_BINS

pytestmark = pytest.mark.spark

SCHEMA = T.StructType(
    [
        T.StructField("group_id", T.StringType()),
        T.StructField("strategy", T.StringType()),
        T.StructField("partition_count", T.IntegerType()),
        T.StructField("is_fully_balanced", T.BooleanType()),
        T.StructField("idle_member_count", T.IntegerType()),
        T.StructField("moved_partition_count", T.IntegerType()),
        T.StructField("is_valid", T.BooleanType()),
        T.StructField("max_partitions_per_member", T.IntegerType()),
        T.StructField("balance_gap", T.IntegerType()),
        T.StructField("lag_imbalance", T.DoubleType()),
        T.StructField("weight_imbalance", T.DoubleType()),
    ]
)
# (strategy, max per member, gap, lag imbalance, weight imbalance): `sticky` has no gap and
# no lag at all, `range` no weight
ROWS = [
    ("range", 0, 0, 1.0, None),
    ("range", 1, 1, None, None),
    ("range", 2, 3, 2.5, None),
    ("range", 4, 7, 1.5, None),
    ("range", 600, 20, 9.0, None),
    ("range", 5, None, 3.0, None),
    ("sticky", 3, None, None, 1.25),
    ("sticky", 17, None, None, None),
]


def _bin(value: int, bins: Any) -> int:
    return next(i for i, (_, high, _) in enumerate(bins) if high is None or value <= high)


def _percentile(values: list[float], q: float) -> float:
    """Spark's exact `percentile`: linear interpolation between the closest ranks."""
    values = sorted(values)
    pos = q * (len(values) - 1)
    low = int(pos)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (pos - low)


def test_one_aggregation_gives_every_balance_figure(spark: Any) -> None:
    rows = [
        (f"g{i}", s, 10 + i, i % 2 == 0, i % 3, i, i != 4, most, gap, lag, weight)
        for i, (s, most, gap, lag, weight) in enumerate(ROWS)
    ]
    metrics = spark.createDataFrame(rows, SCHEMA)
    figures = balance_figures(metrics, "balance_gap")

    assert sorted(figures["present"]) == ["range", "sticky"]
    by = {s: [r for r in rows if r[1] == s] for s in ("range", "sticky")}
    expected_max = {s: [0] * len(MAX_BINS) for s in by}
    for s, rs in by.items():
        for r in rs:
            expected_max[s][_bin(r[7], MAX_BINS)] += 1
    assert figures["max"] == expected_max
    expected_gap = [0] * len(GAP_BINS)
    for r in by["range"]:
        if r[8] is not None:
            expected_gap[_bin(r[8], GAP_BINS)] += 1
    assert figures["gap"] == {"range": expected_gap}  # sticky: no gap, no bins
    lags = [r[9] for r in by["range"] if r[9] is not None]
    assert load_imbalance(metrics) == {
        "lag": {
            "range": {
                "strategy": "range",
                "groups": len(lags),
                "p50": pytest.approx(statistics.median(lags)),
                "p90": pytest.approx(_percentile(lags, 0.9)),
                "max": max(lags),
            }
        },
        "weight": {
            "sticky": {"strategy": "sticky", "groups": 1, "p50": 1.25, "p90": 1.25, "max": 1.25}
        },
    }
    range_ = figures["overview"]["range"]
    assert range_["groups"] == 6
    assert range_["partitions"] == sum(r[2] for r in by["range"])
    assert range_["fully_balanced"] == sum(r[3] for r in by["range"])
    assert range_["invalid"] == sum(not r[6] for r in by["range"])
    assert range_["worst_max"] == 600
    assert (range_["gap_zero"], range_["gap_known"], range_["gap_max"]) == (1, 5, 20)
    assert "rack_mismatches" not in range_  # no rack_mismatch_count column
    assert not any(k.startswith(("bin_", "load_")) for k in range_)


def test_overview_and_mix_from_one_recommendations_query() -> None:
    counts = [
        {"current_strategy": "range", "recommended_strategy": "sticky", "count": 3},
        {"current_strategy": "sticky", "recommended_strategy": "sticky", "count": 2},
        {"current_strategy": "range", "recommended_strategy": None, "count": 4},
        {"current_strategy": "range", "recommended_strategy": "range", "count": 3},
    ]
    assert recommended_per_strategy(counts) == {"sticky": 5, "range": 3}
    assert [
        (r["current_strategy"], r["recommended_strategy"]) for r in recommendation_mix(counts)
    ] == [
        ("range", None),
        ("range", "range"),
        ("range", "sticky"),
        ("sticky", "sticky"),
    ]
    figures = {
        "range": {"strategy": "range", "groups": 4, "fully_balanced": 1},
        "sticky": {"strategy": "sticky", "groups": 2, "fully_balanced": None},
    }
    rows = overview(figures, {"sticky": 5})
    assert (rows["range"]["recommended"], rows["sticky"]["recommended"]) == (0, 5)
    assert (rows["range"]["balanced_share"], rows["sticky"]["balanced_share"]) == (0.25, 0.0)
    # without a recommendations table the column is unknown, not zero
    assert overview(figures, None)["range"]["recommended"] is None
