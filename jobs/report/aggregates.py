"""Spark aggregations of the output tables: only small results reach the driver."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from assignors.catalog.registry import ELECTED
from assignors.model import CONSUMER
from assignors.problems import NOT_PLANNED
from jobs.report.tables import LOAD_COLUMNS, WORST_GROUPS, has

# ---- aggregates ---------------------------------------------------------------------------


def _bin_index(col: str, bins: Sequence[tuple[int, int | None, str]]) -> Column:
    expr = F.lit(len(bins) - 1)
    for i in reversed(range(len(bins) - 1)):
        high = bins[i][1]
        assert high is not None  # only the last bin is open-ended
        expr = F.when(F.col(col) <= high, F.lit(i)).otherwise(expr)
    return expr


def overview(metrics: DataFrame, recs: DataFrame | None) -> dict[str, dict[str, Any]]:
    """One row per strategy: the headline figures of the strategy table."""
    aggs = [
        F.count(F.lit(1)).alias("groups"),
        F.sum("partition_count").alias("partitions"),
        F.sum(F.col("is_fully_balanced").cast("int")).alias("fully_balanced"),
        F.sum("idle_member_count").alias("idle_members"),
        F.sum("moved_partition_count").alias("moved"),
        F.sum(F.when(~F.col("is_valid"), 1).otherwise(0)).alias("invalid"),
        F.max("max_partitions_per_member").alias("worst_max"),
    ]
    if has(metrics, "balance_gap"):
        aggs += [
            F.sum(F.when(F.col("balance_gap") == 0, 1).otherwise(0)).alias("gap_zero"),
            F.count("balance_gap").alias("gap_known"),
            F.max("balance_gap").alias("gap_max"),
            F.sum("balance_gap").alias("gap_sum"),
        ]
    if has(metrics, "rack_mismatch_count"):
        aggs.append(F.sum("rack_mismatch_count").alias("rack_mismatches"))
    rows = {r["strategy"]: r.asDict() for r in metrics.groupBy("strategy").agg(*aggs).collect()}
    if recs is not None and has(recs, "recommended_strategy"):
        for r in recs.groupBy("recommended_strategy").count().collect():
            if r["recommended_strategy"] in rows:
                rows[r["recommended_strategy"]]["recommended"] = int(r["count"])
    for row in rows.values():
        row.setdefault("recommended", 0 if recs is not None else None)
        if row.get("gap_known"):
            row["gap_zero_share"] = row["gap_zero"] / row["gap_known"]
            row["gap_mean"] = row["gap_sum"] / row["gap_known"]
        row["balanced_share"] = (row["fully_balanced"] or 0) / row["groups"]
    return rows


def distribution(
    metrics: DataFrame, column: str, bins: Sequence[tuple[int, int | None, str]]
) -> dict[str, list[int]]:
    """Per strategy, how many groups fall in each bin of `column` (nulls left out)."""
    rows = (
        metrics.where(F.col(column).isNotNull())
        .groupBy("strategy", _bin_index(column, bins).alias("bin"))
        .count()
        .collect()
    )
    out: dict[str, list[int]] = {}
    for r in rows:
        out.setdefault(r["strategy"], [0] * len(bins))[r["bin"]] = int(r["count"])
    return out


def load_imbalance(metrics: DataFrame) -> dict[str, dict[str, dict[str, Any]]]:
    """Per load column present and filled: per strategy, groups measured and exact p50/p90/max.

    `percentile` (exact, not `percentile_approx`) so the figures are the same on every run.
    """
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for column, label in LOAD_COLUMNS:
        if not has(metrics, column):
            continue
        rows = (
            metrics.where(F.col(column).isNotNull())
            .groupBy("strategy")
            .agg(
                F.count(F.lit(1)).alias("groups"),
                F.percentile(F.col(column), F.lit(0.5)).alias("p50"),
                F.percentile(F.col(column), F.lit(0.9)).alias("p90"),
                F.max(column).alias("max"),
            )
            .collect()
        )
        if rows:
            out[label] = {r["strategy"]: r.asDict() for r in rows}
    return out


def rebalance_costs(costs: DataFrame) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (strategy, scenario): groups simulated and the summed costs."""
    aggs = [F.count(F.lit(1)).alias("groups")]
    for c in ("rebalances", "moved_partition_count", "paused_partition_count"):
        if has(costs, c):
            aggs.append(F.sum(c).alias(c))
    if has(costs, "lag_moved"):
        # Lags of many groups can sum past a bigint: summed exactly, shown saturated (as the
        # tables saturate sums of lags at 2^63-1), never an overflow that stops the job.
        total = F.sum(F.col("lag_moved").cast("decimal(38,0)"))
        aggs.append(F.least(total, F.lit(2**63 - 1)).cast("bigint").alias("lag_moved"))
    for c in ("balance_gap_after",):
        if has(costs, c):
            aggs.append(F.max(c).alias(c))
    rows = costs.groupBy("strategy", "scenario").agg(*aggs).collect()
    return {(r["strategy"], r["scenario"]): r.asDict() for r in rows}


def recommendation_mix(recs: DataFrame) -> list[dict[str, Any]]:
    """(current strategy -> recommended strategy, groups), most groups first."""
    rows = recs.groupBy("current_strategy", "recommended_strategy").count().collect()
    mix = [r.asDict() for r in rows]
    mix.sort(
        key=lambda r: (-r["count"], r["current_strategy"] or "", r["recommended_strategy"] or "")
    )
    return mix


def elected_mix(elections: DataFrame) -> list[dict[str, Any]]:
    """How many groups elected each strategy; no election is counted by its error. A KIP-848
    group's broker-side choice is counted apart (`group_protocol = consumer`)."""
    keys = ["elected_strategy", "error"]
    if has(elections, "group_protocol"):
        keys.append("group_protocol")
    rows = elections.groupBy(*keys).count().collect()
    mix = []
    for r in rows:
        if r["elected_strategy"] is not None and r.asDict().get("group_protocol") == CONSUMER:
            label = f"{r['elected_strategy']} (consumer protocol, chosen by the broker)"
        elif r["elected_strategy"] is not None:
            label = r["elected_strategy"]
        elif r["error"] == NOT_PLANNED:
            label = "not planned (rejected)"
        else:
            label = f"none: {r['error'] or 'no common strategy'}"
        mix.append({"label": label, "count": int(r["count"]), "elected": r["elected_strategy"]})
    mix.sort(key=lambda r: (-r["count"], r["label"]))
    return mix


def rejected_by_reason(rejected: DataFrame) -> list[dict[str, Any]]:
    """Rows and distinct groups per (severity, reason[, strategy]), with one example detail."""
    keys = ["severity", "reason"] + (["strategy"] if has(rejected, "strategy") else [])
    rows = (
        rejected.groupBy(*keys)
        .agg(
            F.count(F.lit(1)).alias("rows"),
            F.countDistinct("group_id").alias("groups"),
            F.min("detail").alias("example"),
        )
        .collect()
    )
    out = [r.asDict() for r in rows]
    out.sort(
        key=lambda r: (r["severity"] != "error", -r["rows"], r["reason"], r.get("strategy") or "")
    )
    return out


def _current_rows(metrics: DataFrame, elections: DataFrame | None) -> tuple[DataFrame, str]:
    """Each group's metrics under the strategy it runs today, and how that was chosen."""
    elected = metrics.where(F.col("strategy") == ELECTED)
    if elected.limit(1).count():
        return elected, "the strategy Kafka's election picks for each group (the elected rows)"
    if elections is not None:
        picked = elections.where(F.col("elected_strategy").isNotNull()).select(
            "group_id", F.col("elected_strategy").alias("strategy")
        )
        return metrics.join(picked, ["group_id", "strategy"]), "each group's elected strategy"
    return metrics, "every (group, strategy) row (no elections table)"


def worst_groups(
    metrics: DataFrame, elections: DataFrame | None, recs: DataFrame | None
) -> tuple[list[dict[str, Any]], str]:
    """The WORST_GROUPS groups furthest from their best balance under their current strategy."""
    rows, basis = _current_rows(metrics, elections)
    order: list[Column] = []
    if has(rows, "balance_gap"):
        order.append(F.col("balance_gap").desc_nulls_last())
    else:
        order.append(F.col("partition_spread").desc_nulls_last())
    if has(rows, "lag_imbalance"):
        order.append(F.col("lag_imbalance").desc_nulls_last())
    order += [
        F.col("max_partitions_per_member").desc_nulls_last(),
        F.col("group_id"),
        F.col("strategy"),
    ]
    wanted = [
        "group_id",
        "strategy",
        "member_count",
        "partition_count",
        "max_partitions_per_member",
        "partition_spread",
        "best_max_partitions_per_member",
        "balance_gap",
        "lag_imbalance",
        "weight_imbalance",
    ]
    top = rows.orderBy(*order).limit(WORST_GROUPS)
    top = top.select(*[c for c in wanted if c in top.columns])
    if has(elections, "elected_strategy") and "elected_strategy" not in top.columns:
        assert elections is not None
        top = top.join(
            elections.select("group_id", "elected_strategy"), "group_id", "left"
        ).orderBy(*order)
    if has(recs, "recommended_strategy"):
        assert recs is not None
        extra = [c for c in ("reason",) if c in recs.columns]
        top = top.join(
            recs.select("group_id", "recommended_strategy", *extra), "group_id", "left"
        ).orderBy(*order)
    return [r.asDict() for r in top.collect()], basis
