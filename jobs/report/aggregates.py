"""Spark aggregations of the output tables: only small results reach the driver."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from assignors.analysis.live import MATCHES_ELECTED, UNEXPLAINED, VERDICTS
from assignors.catalog.registry import ELECTED
from assignors.model import CONSUMER
from assignors.problems import NOT_PLANNED
from assignors.whatif.recommend import members_sentence
from jobs.report.tables import GAP_BINS, LOAD_COLUMNS, MAX_BINS, WORST_GROUPS, has
from jobs.tables import changes as changes_kinds
from jobs.together import together

# ---- aggregates ---------------------------------------------------------------------------


def _bin_index(col: str, bins: Sequence[tuple[int, int | None, str]]) -> str:
    """SQL: the index of the bin `col` falls in (the last bin is open-ended)."""
    cases = []
    for i, (_, high, _) in enumerate(bins[:-1]):
        assert high is not None  # only the last bin is open-ended
        cases.append(f"WHEN `{col}` <= {high} THEN {i}")
    return f"CASE {' '.join(cases)} ELSE {len(bins) - 1} END"


# The charts' bins ride in the same aggregation as the strategy table's headline figures,
# their columns named with this prefix.
_BIN = "bin_"


def _bins(prefix: str, col: str, bins: Sequence[tuple[int, int | None, str]]) -> list[Column]:
    """Per bin of `col`, how many rows fall in it (nulls in none); and the rows not null.

    SQL text, parsed in the JVM: built as Columns, the bins took hundreds of py4j round trips
    (over half a second of driver time per page)."""
    index = _bin_index(col, bins)
    return [F.count(col).alias(f"{prefix}_rows")] + [
        F.expr(f"sum(CASE WHEN `{col}` IS NOT NULL AND {index} = {i} THEN 1 ELSE 0 END)").alias(
            f"{prefix}_{i}"
        )
        for i in range(len(bins))
    ]


def _balance_aggs(metrics: DataFrame, gap_col: str) -> list[Column]:
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
    aggs += _bins(f"{_BIN}gap", gap_col, GAP_BINS)
    aggs += _bins(f"{_BIN}max", "max_partitions_per_member", MAX_BINS)
    return aggs


def balance_figures(metrics: DataFrame, gap_col: str) -> dict[str, Any]:
    """The per-strategy figures of the page's balance sections but the load percentiles
    (`load_imbalance`), in one aggregation over `balance_metrics` (one scan and two small
    Spark jobs, where a query per figure took five scans and ten jobs):

    - `present`: the strategies with rows;
    - `overview`: per strategy, the strategy table's headline figures (`overview`);
    - `gap`, `max`: per strategy with a non-null value, the groups in each bin of `gap_col`
      (GAP_BINS) and of max_partitions_per_member (MAX_BINS).
    """
    aggs = _balance_aggs(metrics, gap_col)
    rows = [r.asDict() for r in metrics.groupBy("strategy").agg(*aggs).collect()]
    out: dict[str, Any] = {
        "present": [r["strategy"] for r in rows],
        "overview": {
            r["strategy"]: {k: v for k, v in r.items() if not k.startswith(_BIN)} for r in rows
        },
    }
    for key, bins in (("gap", GAP_BINS), ("max", MAX_BINS)):
        out[key] = {
            r["strategy"]: [int(r[f"{_BIN}{key}_{i}"]) for i in range(len(bins))]
            for r in rows
            if r[f"{_BIN}{key}_rows"]
        }
    return out


def load_imbalance(metrics: DataFrame) -> dict[str, dict[str, dict[str, Any]]]:
    """Per load column present and filled (LOAD_COLUMNS' label): per strategy with a value,
    groups measured and exact p50/p90/max. One query for every column.

    `percentile` (exact, not `percentile_approx`) so the figures are the same on every run;
    like count and max it leaves nulls out. Apart from `balance_figures`: an exact percentile
    makes the whole aggregation an object aggregate without generated code, slower over the
    other figures' columns too (docs/performance.md)."""
    columns = [(c, label) for c, label in LOAD_COLUMNS if has(metrics, c)]
    if not columns:
        return {}
    aggs = []
    for column, label in columns:
        aggs += [
            F.count(column).alias(f"{label}_groups"),
            F.percentile(F.col(column), F.lit(0.5)).alias(f"{label}_p50"),
            F.percentile(F.col(column), F.lit(0.9)).alias(f"{label}_p90"),
            F.max(column).alias(f"{label}_max"),
        ]
    filled = F.lit(False)
    for column, _ in columns:
        filled = filled | F.col(column).isNotNull()
    rows = [r.asDict() for r in metrics.where(filled).groupBy("strategy").agg(*aggs).collect()]
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for _, label in columns:
        per = {
            r["strategy"]: {
                "strategy": r["strategy"],
                **{f: r[f"{label}_{f}"] for f in ("groups", "p50", "p90", "max")},
            }
            for r in rows
            if r[f"{label}_groups"]
        }
        if per:
            out[label] = per
    return out


def overview(
    figures: dict[str, dict[str, Any]], recommended: dict[str, int] | None
) -> dict[str, dict[str, Any]]:
    """One row per strategy: the strategy table's figures (`balance_figures`), with the groups
    each strategy is recommended for (None without a recommendations table)."""
    rows = {s: dict(row) for s, row in figures.items()}
    for s, count in (recommended or {}).items():
        if s in rows:
            rows[s]["recommended"] = count
    for row in rows.values():
        row.setdefault("recommended", 0 if recommended is not None else None)
        if row.get("gap_known"):
            row["gap_zero_share"] = row["gap_zero"] / row["gap_known"]
            row["gap_mean"] = row["gap_sum"] / row["gap_known"]
        row["balanced_share"] = (row["fully_balanced"] or 0) / row["groups"]
    return rows


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


def recommendation_counts(recs: DataFrame) -> list[dict[str, Any]]:
    """Groups per (current strategy, recommended strategy), or per recommended strategy only
    when the table has no current_strategy: the mix and the overview's counts from one query."""
    keys = [c for c in ("current_strategy", "recommended_strategy") if has(recs, c)]
    return [r.asDict() for r in recs.groupBy(*keys).count().collect()]


def recommended_per_strategy(counts: list[dict[str, Any]]) -> dict[str, int]:
    """Groups recommended per strategy (`recommendation_counts`' rows)."""
    out: dict[str, int] = {}
    for r in counts:
        if r["recommended_strategy"] is not None:
            out[r["recommended_strategy"]] = out.get(r["recommended_strategy"], 0) + int(r["count"])
    return out


def recommendation_mix(counts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """(current strategy -> recommended strategy, groups), most groups first."""
    mix = [dict(r) for r in counts]
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
    columns = [c for c in wanted if c in rows.columns]
    top = [r.asDict() for r in rows.orderBy(*order).limit(WORST_GROUPS).select(*columns).collect()]
    # Their elected and recommended strategies, looked up by id (a filter the Parquet reader
    # applies), not joined: a left join with the top rows shuffled or broadcast every group's
    # elections and recommendations rows.
    ids = [r["group_id"] for r in top]
    lookups: list[tuple[DataFrame, list[str]]] = []
    if has(elections, "elected_strategy"):
        assert elections is not None
        lookups.append((elections, ["elected_strategy"]))
    if has(recs, "recommended_strategy"):
        assert recs is not None
        lookups.append((recs, ["recommended_strategy", *[c for c in ("reason",) if has(recs, c)]]))
    found = together(
        *[
            lambda t=table, c=cols: {
                r["group_id"]: r.asDict()
                for r in t.where(F.col("group_id").isin(ids)).select("group_id", *c).collect()
            }
            for table, cols in lookups
        ]
    )
    for (_, cols), by_id in zip(lookups, found, strict=True):
        for row in top:
            match = by_id.get(row["group_id"], {})
            row.update({c: match.get(c) for c in cols})
    return top, basis


# ---- since the previous run -----------------------------------------------------------------


def change_figures(changes: DataFrame, limit: int = WORST_GROUPS) -> dict[str, Any]:
    """Rows per change (every change named, in the table's vocabulary order), and the rows
    of the groups that got worse, largest step first (`jobs.tables.changes.worse_first`'s
    order, computed by Spark: only `limit` rows reach the driver)."""
    per_change = {r["change"]: int(r["count"]) for r in changes.groupBy("change").count().collect()}
    counts = {c: per_change.get(c, 0) for c in changes_kinds.CHANGES}
    rank = F.lit(len(changes_kinds.WORSE))
    for i, c in reversed(list(enumerate(changes_kinds.WORSE))):
        rank = F.when(F.col("change") == c, F.lit(i)).otherwise(rank)
    step = F.col("after").cast("bigint") - F.col("before").cast("bigint")
    worse = (
        changes.where(F.col("change").isin(*changes_kinds.WORSE))
        .orderBy(rank, F.coalesce(step, F.lit(0)).desc(), "group_id")
        .limit(limit)
        .collect()
    )
    return {"counts": counts, "worse": [r.asDict() for r in worse]}


# ---- capacity (docs/capacity.md) ------------------------------------------------------------


def capacity_figures(
    capacity: DataFrame, elections: DataFrame | None, recs: DataFrame | None
) -> dict[str, Any]:
    """Under each group's current strategy (`_current_rows`): estate-wide totals of the
    `capacity` rows (members, idle members, members beyond those the group can use, groups
    running more members than they can use, groups below their target, groups no member
    count brings to it), and the WORST_GROUPS groups furthest over and under, each with the
    recommendation's member count (`members_sentence`, from all of the group's rows)."""
    rows, basis = _current_rows(capacity, elections)
    members, active = F.col("members"), F.col("active_members")
    useful, needed = F.col("max_useful_members"), F.col("members_for_target")

    def count(condition: Column) -> Column:
        return F.sum(F.when(condition, 1).otherwise(0))

    totals = rows.agg(
        F.count(F.lit(1)).alias("groups"),
        F.sum(members).alias("members"),
        F.sum(members - active).alias("idle_members"),
        count(active < members).alias("groups_with_idle"),
        F.sum(F.when(members > useful, members - useful).otherwise(0)).alias("beyond_useful"),
        count(members > useful).alias("over"),
        count(members < needed).alias("under"),
        count(F.col("target").isNotNull() & needed.isNull()).alias("unreachable"),
        F.max("target").alias("target"),
    ).collect()[0]
    columns = ["group_id", "members", "active_members", "max_useful_members"]
    columns += ["members_for_target", "target", "detail"]
    over = rows.where(members > useful).orderBy((members - useful).desc(), "group_id")
    under = rows.where(members < needed).orderBy((needed - members).desc(), "group_id")
    listed = together(
        lambda: [r.asDict() for r in over.select(*columns).limit(WORST_GROUPS).collect()],
        lambda: [r.asDict() for r in under.select(*columns).limit(WORST_GROUPS).collect()],
    )
    _with_member_counts(capacity, recs, [r for rows_ in listed for r in rows_])
    return {"totals": totals.asDict(), "over": listed[0], "under": listed[1], "basis": basis}


def _with_member_counts(
    capacity: DataFrame, recs: DataFrame | None, listed: list[dict[str, Any]]
) -> None:
    """Each listed row with its group's current and recommended strategies and the
    recommendation's member count, looked up by id (the listed groups only)."""
    ids = sorted({r["group_id"] for r in listed})
    if not ids:
        return
    by_group: dict[str, dict[str, dict[str, Any]]] = {}
    for r in capacity.where(F.col("group_id").isin(ids)).collect():
        by_group.setdefault(r["group_id"], {})[r["strategy"]] = r.asDict()
    picked: dict[str, tuple[str | None, str | None]] = {}
    if has(recs, "current_strategy", "recommended_strategy"):
        assert recs is not None
        wanted = recs.where(F.col("group_id").isin(ids))
        for r in wanted.select("group_id", "current_strategy", "recommended_strategy").collect():
            picked[r["group_id"]] = (r["current_strategy"], r["recommended_strategy"])
    for row in listed:
        current, recommended = picked.get(row["group_id"], (None, None))
        rows = dict(by_group.get(row["group_id"], {}))
        if current is not None and current not in rows and ELECTED in rows:
            rows[current] = rows[ELECTED]  # the elected row repeats the current strategy's
        row["strategy"] = current
        row["recommended_strategy"] = recommended
        row["note"] = members_sentence(current, recommended, rows)


# ---- live vs plan -------------------------------------------------------------------------

# The order the section lists verdicts and groups in: the unexplained first, then by the
# verdicts' precedence (docs/live.md).
LIVE_ORDER = (UNEXPLAINED, *(v for v in VERDICTS if v != UNEXPLAINED))


def live_figures(live: DataFrame, limit: int = WORST_GROUPS) -> dict[str, Any]:
    """Groups per verdict (every verdict, in LIVE_ORDER) and the first `limit` groups that do
    not match their plan, the unexplained first, then by the partitions that differ."""
    counts = {r["verdict"]: int(r["count"]) for r in live.groupBy("verdict").count().collect()}
    rank = F.lit(len(LIVE_ORDER))
    for i, verdict in reversed(list(enumerate(LIVE_ORDER))):
        rank = F.when(F.col("verdict") == verdict, F.lit(i)).otherwise(rank)
    columns = ["group_id", "verdict", "elected_strategy", "client_library"]
    columns += ["differing_partition_count", "detail"]
    listed = (
        live.where(F.col("verdict") != MATCHES_ELECTED)
        .orderBy(rank, F.col("differing_partition_count").desc(), "group_id")
        .select(*columns)
        .limit(limit)
        .collect()
    )
    return {
        "counts": [{"verdict": v, "count": counts.get(v, 0)} for v in LIVE_ORDER],
        "groups": [r.asDict() for r in listed],
        "total": sum(counts.values()),
    }
