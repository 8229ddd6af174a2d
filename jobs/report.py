"""The estate report: one self-contained HTML page per run (DESIGN §9).

    python -m jobs.report OUTPUT_DIR      # (re)build OUTPUT_DIR/report.html

Everything on the page is computed from the output tables with Spark aggregations: only small
aggregates (one row per strategy, bin, scenario or reason, and the 20 worst groups) reach the
driver, never assignment rows. Every section reads the contract's tables and columns when they
are there and says so on the page when they are not, so the report works on outputs written
before a table or column existed. The page has no script and fetches nothing: charts are inline
SVG (jobs/report_charts.py), the template is jobs/templates/report.html.j2 (Jinja2, autoescape).
Identical tables give identical bytes: no timestamps, deterministic ordering and ids.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs import io
from jobs.group_view import describe_command

log = logging.getLogger("jobs.report")

REPORT_FILE = "report.html"
MANIFEST_FILE = "_manifest.json"
TABLES = ("balance_metrics", "elections", "rejected", "rebalance_costs", "recommendations")
ELECTED = "elected"
WORST_GROUPS = 20
# Kafka's default preference order, then ours: the row order of every per-strategy view when
# the manifest does not give the configured order.
KNOWN_ORDER = ("range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "balanced")
# (low, high, label); high None = open-ended. Gap 0 is the verdict an operator wants.
GAP_BINS: tuple[tuple[int, int | None, str], ...] = (
    (0, 0, "0 (best possible)"),
    (1, 1, "1"),
    (2, 3, "2–3"),
    (4, 7, "4–7"),
    (8, 15, "8–15"),
    (16, None, "16+"),
)
MAX_BINS: tuple[tuple[int, int | None, str], ...] = (
    (0, 0, "0"),
    (1, 1, "1"),
    (2, 2, "2"),
    (3, 4, "3–4"),
    (5, 8, "5–8"),
    (9, 16, "9–16"),
    (17, 32, "17–32"),
    (33, 64, "33–64"),
    (65, 128, "65–128"),
    (129, 512, "129–512"),
    (513, None, "513+"),
)
SCENARIOS = (
    "member_leave",
    "member_join",
    "partition_growth",
    "subscription_change",
    "rolling_restart",
)
LOAD_COLUMNS = (("lag_imbalance", "lag"), ("weight_imbalance", "weight"))


# ---- reading ------------------------------------------------------------------------------


def read_manifest(spark: SparkSession, output_dir: str) -> dict[str, Any] | None:
    """The run's `_manifest.json` (through Hadoop's FileSystem), or None when absent."""
    path = f"{output_dir.rstrip('/')}/{MANIFEST_FILE}"
    if not io.exists(spark, path):
        return None
    # Hadoop's FileSystem, not spark.read: Spark's file listing skips names starting with "_".
    fs, hpath = io._fs(spark, path)
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    stream = fs.open(hpath)
    try:
        text = jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
    finally:
        stream.close()
    manifest: dict[str, Any] = json.loads(text)
    return manifest


def read_tables(spark: SparkSession, output_dir: str) -> dict[str, DataFrame | None]:
    """The small output tables the report reads; None for a table this output does not have."""
    out: dict[str, DataFrame | None] = {}
    for name in TABLES:
        path = f"{output_dir.rstrip('/')}/{name}"
        out[name] = spark.read.parquet(path) if io.exists(spark, path) else None
    return out


def has(df: DataFrame | None, *columns: str) -> bool:
    return df is not None and all(c in df.columns for c in columns)


def absent_table(name: str) -> str:
    return f"No {name} table in this output: this section needs it."


def absent_column(table: str, column: str) -> str:
    return f"No {column} column in {table} in this output."


def _bin_index(col: str, bins: Sequence[tuple[int, int | None, str]]) -> Column:
    expr = F.lit(len(bins) - 1)
    for i in reversed(range(len(bins) - 1)):
        high = bins[i][1]
        assert high is not None  # only the last bin is open-ended
        expr = F.when(F.col(col) <= high, F.lit(i)).otherwise(expr)
    return expr


def strategy_order(manifest: dict[str, Any] | None, present: Sequence[str]) -> list[str]:
    """Configured order (manifest), then Kafka's default order, then by name; `elected` last."""
    configured = list((manifest or {}).get("strategies") or [])
    known = [s for s in KNOWN_ORDER if s not in configured]

    def rank(s: str) -> tuple[int, int, str]:
        if s == ELECTED:
            return (3, 0, s)
        if s in configured:
            return (0, configured.index(s), s)
        if s in known:
            return (1, known.index(s), s)
        return (2, 0, s)

    return sorted(set(present), key=rank)


# ---- aggregates ---------------------------------------------------------------------------


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
    for c in ("rebalances", "moved_partition_count", "paused_partition_count", "lag_moved"):
        if has(costs, c):
            aggs.append(F.sum(c).alias(c))
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
    """How many groups elected each strategy; no election is counted by its error."""
    rows = elections.groupBy("elected_strategy", "error").count().collect()
    mix = []
    for r in rows:
        if r["elected_strategy"] is not None:
            label = r["elected_strategy"]
        elif r["error"] == "NOT_PLANNED":
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


# ---- the page -----------------------------------------------------------------------------


def build_context(
    spark: SparkSession, output_dir: str, manifest: dict[str, Any] | None
) -> dict[str, Any]:
    """Every figure of the page, from the output tables (small aggregates only)."""
    t = read_tables(spark, output_dir)
    metrics, elections, rejected = t["balance_metrics"], t["elections"], t["rejected"]
    costs, recs = t["rebalance_costs"], t["recommendations"]
    ctx: dict[str, Any] = {
        # the manifest's output path: the pipeline may write the page into a temporary dir
        "output_dir": (manifest or {}).get("output") or output_dir,
        "notes": {},
        "charts": {},
        "overview": None,
        "has_gap": False,
        "has_racks": False,
        "gap_column": "balance_gap",
        "load": {},
        "costs": None,
        "recommendations": None,
        "worst": None,
        "worst_basis": "",
        "worst_limit": WORST_GROUPS,
    }
    notes: dict[str, list[str]] = ctx["notes"]
    present = (
        [r["strategy"] for r in metrics.select("strategy").distinct().collect()]
        if metrics is not None
        else list((manifest or {}).get("strategies") or [])
    )
    ctx["strategies"] = strategy_order(manifest, present)
    ctx["header"] = _header(manifest, elections, rejected, notes)
    _balance_section(ctx, metrics, recs, notes)
    _cost_section(ctx, costs, notes)
    _recommendation_section(ctx, recs, notes)
    _worst_section(ctx, metrics, elections, recs, notes)
    ctx["rejected"] = rejected_by_reason(rejected) if rejected is not None else None
    ctx["rejected_has_strategy"] = has(rejected, "strategy")
    if rejected is None:
        notes.setdefault("rejected", []).append(absent_table("rejected"))
    elif not has(rejected, "strategy"):
        notes.setdefault("rejected", []).append(
            absent_column("rejected", "strategy") + " Every row concerns a whole group or topic."
        )
    ctx["elected"] = elected_mix(elections) if elections is not None else None
    if elections is None:
        notes.setdefault("elected", []).append(absent_table("elections"))
    return ctx


def _worst_section(
    ctx: dict[str, Any],
    metrics: DataFrame | None,
    elections: DataFrame | None,
    recs: DataFrame | None,
    notes: dict[str, list[str]],
) -> None:
    worst = notes.setdefault("worst", [])
    if metrics is None:
        worst.append(absent_table("balance_metrics"))
        return
    ctx["worst"], ctx["worst_basis"] = worst_groups(metrics, elections, recs)
    for row in ctx["worst"]:  # the command that shows the group in a terminal
        row["describe"] = describe_command(ctx["output_dir"], row["group_id"])
    if recs is None:
        worst.append(absent_table("recommendations") + " (recommended strategy column)")
    if not has(metrics, "balance_gap"):
        worst.append(
            absent_column("balance_metrics", "balance_gap") + " Ranked by partition_spread instead."
        )


def _header(
    manifest: dict[str, Any] | None,
    elections: DataFrame | None,
    rejected: DataFrame | None,
    notes: dict[str, list[str]],
) -> dict[str, Any]:
    m = manifest or {}
    groups = dict(m.get("groups") or {})
    if not groups and elections is not None:
        total = elections.count()
        not_planned = elections.where(F.col("error") == "NOT_PLANNED").count()
        groups = {"input": total, "planned": total - not_planned, "rejected": not_planned}
    if manifest is None:
        notes.setdefault("header", []).append(
            f"No {MANIFEST_FILE} in this output: run details are unknown; group counts come "
            "from the elections table."
        )
    rejected_rows = (m.get("output_rows") or {}).get("rejected")
    if rejected_rows is None and rejected is not None:
        rejected_rows = rejected.count()
    return {
        "ds": m.get("ds"),
        "input": m.get("input"),
        "version": m.get("version"),
        "spark_version": m.get("spark_version"),
        "duration": m.get("duration_seconds"),
        "groups": groups,
        "rejected_rows": rejected_rows,
        "input_rows": m.get("input_rows") or {},
        "output_rows": m.get("output_rows") or {},
        "topics": m.get("topics"),
    }


def _balance_section(
    ctx: dict[str, Any],
    metrics: DataFrame | None,
    recs: DataFrame | None,
    notes: dict[str, list[str]],
) -> None:
    from jobs import report_charts as charts

    order = ctx["strategies"]
    if metrics is None:
        notes.setdefault("balance", []).append(absent_table("balance_metrics"))
        return
    ctx["overview"] = overview(metrics, recs)
    if not ctx["overview"]:
        notes.setdefault("balance", []).append("balance_metrics is empty: no group was planned.")
    ctx["has_gap"] = has(metrics, "balance_gap")
    ctx["has_racks"] = has(metrics, "rack_mismatch_count")
    if recs is None:
        notes.setdefault("balance", []).append(
            absent_table("recommendations") + " (groups recommended per strategy)"
        )
    gap_col = "balance_gap" if ctx["has_gap"] else "partition_spread"
    if not ctx["has_gap"]:
        notes.setdefault("balance", []).append(
            absent_column("balance_metrics", "balance_gap") + " The gap columns are empty."
        )
        notes.setdefault("gap", []).append(
            absent_column("balance_metrics", "balance_gap")
            + " This chart shows partition_spread (max - min partitions per member) instead:"
            " an upper bound of the gap that heterogeneous subscriptions can make unreachable."
        )
    ctx["gap_column"] = gap_col
    gap = distribution(metrics, gap_col, GAP_BINS)
    with_rows = [s for s in order if s in gap]
    if with_rows:
        labels = [b[2] for b in GAP_BINS]
        if not ctx["has_gap"]:
            labels[0] = "0"  # a spread of 0 is not "best possible" (the gap's verdict) per se
        ctx["charts"]["gap"] = charts.gap_chart(with_rows, gap, labels)
    most = distribution(metrics, "max_partitions_per_member", MAX_BINS)
    with_rows = [s for s in order if s in most]
    if with_rows:
        # only the bins from the first to the last one holding a group
        used = [i for i in range(len(MAX_BINS)) if any(most[s][i] for s in with_rows)]
        lo, hi = used[0], used[-1] + 1
        ctx["charts"]["max"] = charts.heatmap_chart(
            with_rows,
            {s: most[s][lo:hi] for s in with_rows},
            [b[2] for b in MAX_BINS[lo:hi]],
            "max partitions per member",
        )
    ctx["load"] = load_imbalance(metrics)
    missing = [c for c, _ in LOAD_COLUMNS if not has(metrics, c)]
    if missing:
        notes.setdefault("load", []).append(
            "No " + " or ".join(missing) + " column in balance_metrics in this output."
        )
    elif not ctx["load"]:
        notes.setdefault("load", []).append(
            "No group has lag or weight figures: the input had no offsets and no weights."
        )
    if ctx["load"]:
        panels: list[tuple[str, Sequence[str], dict[str, list[float | None]]]] = []
        for label, per in ctx["load"].items():
            values: dict[str, list[float | None]] = {
                s: [per[s]["p50"], per[s]["p90"]] if s in per else [None, None] for s in order
            }
            panels.append((f"{label} imbalance (max / mean)", ["p50", "p90"], values))
        ctx["charts"]["load"] = charts.grouped_bars("load", panels, order)


def _cost_section(
    ctx: dict[str, Any], costs: DataFrame | None, notes: dict[str, list[str]]
) -> None:
    from jobs import report_charts as charts

    if costs is None:
        notes.setdefault("costs", []).append(absent_table("rebalance_costs"))
        return
    agg = rebalance_costs(costs)
    scenarios = [s for s in SCENARIOS if any(k[1] == s for k in agg)]
    scenarios += sorted({k[1] for k in agg} - set(scenarios))
    order = [s for s in ctx["strategies"] if any(k[0] == s for k in agg)]
    order += sorted({k[0] for k in agg} - set(order))
    groups = {s: max((agg[k]["groups"] for k in agg if k[0] == s), default=0) for s in order}
    has_lag = any(v.get("lag_moved") is not None for v in agg.values())
    ctx["costs"] = {
        "scenarios": scenarios,
        "strategies": order,
        "cells": agg,
        "groups": groups,
        "has_lag": has_lag,
    }
    panels = []
    for column, title in (
        ("paused_partition_count", "partitions paused (summed over groups)"),
        ("moved_partition_count", "partitions moved (summed over groups)"),
    ):
        if has(costs, column):
            values = {s: [(agg.get((s, sc)) or {}).get(column) for sc in scenarios] for s in order}
            panels.append((title, scenarios, values))
    if panels and scenarios:
        ctx["charts"]["costs"] = charts.grouped_bars("costs", panels, order)


def _recommendation_section(
    ctx: dict[str, Any], recs: DataFrame | None, notes: dict[str, list[str]]
) -> None:
    if recs is None:
        notes.setdefault("recommend", []).append(absent_table("recommendations"))
        return
    if not has(recs, "current_strategy", "recommended_strategy"):
        notes.setdefault("recommend", []).append(
            "The recommendations table lacks current_strategy or recommended_strategy."
        )
        return
    ctx["recommendations"] = recommendation_mix(recs)


def render(ctx: dict[str, Any]) -> str:
    """The HTML page for a context built by build_context."""
    import jinja2
    from markupsafe import Markup

    from jobs import report_charts as charts

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("jobs", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["num"] = _num
    env.filters["pct"] = _pct
    # charts are our own SVG (text escaped by matplotlib): trusted markup
    ctx = dict(ctx)
    if ctx.get("elected"):
        colors = charts.strategy_colors(ctx["strategies"])
        ctx["charts"]["elected"] = charts.count_bars(
            "elected",
            [(r["label"], r["count"]) for r in ctx["elected"]],
            [colors.get(r["elected"] or "", charts.MUTED) for r in ctx["elected"]],
        )
    ctx["svg"] = {k: Markup(v) for k, v in ctx["charts"].items()}
    ctx["colors"] = charts.strategy_colors(ctx["strategies"])
    return env.get_template("report.html.j2").render(**ctx)


def _num(value: Any, digits: int = 0) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and digits:
        return f"{value:,.{digits}f}"
    if isinstance(value, float):
        return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"
    return f"{value:,}"


def _pct(value: Any) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def write_report(
    spark: SparkSession, output_dir: str, manifest: dict[str, Any] | None = None
) -> str:
    """Write OUTPUT_DIR/report.html from the output tables; return its path.

    `manifest` is the run's manifest when the caller has it (the pipeline, before the output
    is moved into place); otherwise `_manifest.json` is read from `output_dir`.
    """
    if manifest is None:
        manifest = read_manifest(spark, output_dir)
    html = render(build_context(spark, output_dir, manifest))
    path = f"{output_dir.rstrip('/')}/{REPORT_FILE}"
    io.write_text(spark, path, html)
    return path


def _local_session() -> SparkSession:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return (
        SparkSession.builder.master(os.environ.get("PLANNER_MASTER", "local[*]"))
        .appName("planner-report")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    p = argparse.ArgumentParser(
        prog="python -m jobs.report", description="(Re)build OUTPUT_DIR/report.html."
    )
    p.add_argument("output_dir", help="an output directory of the planner")
    args = p.parse_args(argv)
    spark = _local_session()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        if not io.exists(spark, args.output_dir):
            log.error("no such output directory: %s", args.output_dir)
            return 2
        print(write_report(spark, args.output_dir))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
