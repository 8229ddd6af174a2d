"""The page's context: every section from the aggregates, or a note that its data is absent."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from assignors.problems import NOT_PLANNED
from assignors.whatif.simulation import SCENARIOS
from jobs.report.aggregates import (
    balance_figures,
    capacity_figures,
    change_figures,
    elected_mix,
    live_figures,
    load_imbalance,
    overview,
    rebalance_costs,
    recommendation_counts,
    recommendation_mix,
    recommended_per_strategy,
    rejected_by_reason,
    worst_groups,
)
from jobs.report.migration import MIGRATIONS, migration_figures
from jobs.report.render import ReportContext
from jobs.report.tables import (
    GAP_BINS,
    LOAD_COLUMNS,
    MAX_BINS,
    WORST_GROUPS,
    absent_column,
    absent_table,
    has,
    read_tables,
    strategy_order,
)
from jobs.tables.group_view import describe_command
from jobs.tables.manifest import MANIFEST_FILE, Manifest

# Every aggregation of the page at once: small jobs over small tables, each mostly driver
# latency, so they overlap better all together than a few at a time (`jobs.together`).
REPORT_JOBS = 8

# ---- the page -----------------------------------------------------------------------------


class _Queries:
    """The aggregations of the page, started together (`jobs.together`: small Spark jobs
    overlap); `get` waits for one of them. The charts are still drawn one at a time, after:
    pyplot is not thread-safe."""

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self.pool = pool
        self.futures: dict[str, Future[Any]] = {}

    def start(self, key: str, fn: Callable[..., Any], *args: Any) -> None:
        self.futures[key] = self.pool.submit(fn, *args)

    def get(self, key: str) -> Any:
        return self.futures[key].result()


def _start_queries(q: _Queries, t: dict[str, DataFrame | None]) -> None:
    metrics, elections, rejected = t["balance_metrics"], t["elections"], t["rejected"]
    costs, recs = t["rebalance_costs"], t["recommendations"]
    if metrics is not None:
        gap_col = "balance_gap" if has(metrics, "balance_gap") else "partition_spread"
        q.start("balance", balance_figures, metrics, gap_col)
        q.start("load", load_imbalance, metrics)
        q.start("worst", worst_groups, metrics, elections, recs)
    if costs is not None:
        q.start("costs", rebalance_costs, costs)
    if recs is not None and has(recs, "recommended_strategy"):
        q.start("recommended", recommendation_counts, recs)
    if rejected is not None:
        q.start("rejected", rejected_by_reason, rejected)
    if elections is not None:
        q.start("elected", elected_mix, elections)
    if t.get("changes") is not None:
        q.start("changes", change_figures, t["changes"])
    if t.get("capacity") is not None:
        q.start("capacity", capacity_figures, t["capacity"], elections, recs)
    if t.get("live_check") is not None:
        q.start("live", live_figures, t["live_check"])
    if t.get(MIGRATIONS) is not None:
        q.start(MIGRATIONS, migration_figures, t[MIGRATIONS])


@contextmanager
def started_context(
    spark: SparkSession, output_dir: str, own: bool = False
) -> Iterator[Callable[[Manifest | None], ReportContext]]:
    """Every figure of the page, from the output tables (small aggregates only): the
    aggregations all start at once; the function it yields waits for them and builds the
    context once the manifest is known (the pipeline computes its summary meanwhile)."""
    t = read_tables(spark, output_dir, own)
    with ThreadPoolExecutor(REPORT_JOBS, thread_name_prefix="report") as pool:
        q = _Queries(pool)
        _start_queries(q, t)
        yield lambda manifest: _context(q, t, output_dir, manifest)


def _context(
    q: _Queries, t: dict[str, DataFrame | None], output_dir: str, manifest: Manifest | None
) -> ReportContext:
    metrics, elections, rejected = t["balance_metrics"], t["elections"], t["rejected"]
    costs, recs = t["rebalance_costs"], t["recommendations"]
    ctx: ReportContext = {
        # the manifest's output path: the pipeline may write the page into a temporary dir
        "output_dir": (manifest.output if manifest is not None else "") or output_dir,
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
    notes = ctx["notes"]
    present = (
        q.get("balance")["present"]
        if metrics is not None
        else (list(manifest.strategies) if manifest is not None else [])
    )
    ctx["strategies"] = strategy_order(manifest, present)
    ctx["header"] = _header(manifest, elections, rejected, notes)
    ctx["since"] = _since_section(q, t.get("changes"), manifest)
    _balance_section(ctx, q, metrics, recs, notes)
    _cost_section(ctx, q, costs, notes)
    _recommendation_section(ctx, q, recs, notes)
    _worst_section(ctx, q, metrics, recs, notes)
    _capacity_section(ctx, q, t.get("capacity"), notes)
    _live_section(ctx, q, t.get("live_check"), notes)
    _migration_section(ctx, q, t.get(MIGRATIONS), notes)
    ctx["rejected"] = q.get("rejected") if rejected is not None else None
    ctx["rejected_has_strategy"] = has(rejected, "strategy")
    if rejected is None:
        notes.setdefault("rejected", []).append(absent_table("rejected"))
    elif not has(rejected, "strategy"):
        notes.setdefault("rejected", []).append(
            absent_column("rejected", "strategy") + " Every row concerns a whole group or topic."
        )
    ctx["elected"] = q.get("elected") if elections is not None else None
    if elections is None:
        notes.setdefault("elected", []).append(absent_table("elections"))
    return ctx


def _since_section(
    q: _Queries, changes: DataFrame | None, manifest: Manifest | None
) -> dict[str, Any] | None:
    """What changed since `--previous`: None for a run without one (no section); else the
    previous run, the counts per change and the groups that got worse, or why there are none
    (`unusable`)."""
    previous = manifest.previous if manifest is not None else None
    if previous is None and changes is None:
        return None
    since: dict[str, Any] = {"previous": previous or {}, "counts": None, "worse": []}
    if changes is None:
        since["unusable"] = (previous or {}).get("unusable") or "no changes table in this output"
        return since
    figures = q.get("changes")
    since["counts"], since["worse"] = figures["counts"], figures["worse"]
    return since


def _capacity_section(
    ctx: ReportContext, q: _Queries, capacity: DataFrame | None, notes: dict[str, list[str]]
) -> None:
    """Members idle estate-wide, groups running more members than they can use and groups
    below their target, under each group's current strategy."""
    ctx["capacity"] = None
    if capacity is None:
        notes.setdefault("capacity", []).append(
            absent_table("capacity") + " (or the run left capacity out: [capacity] enabled)"
        )
        return
    figures = q.get("capacity")
    for row in [*figures["over"], *figures["under"]]:
        row["describe"] = describe_command(ctx["output_dir"], row["group_id"])
    ctx["capacity"] = figures


def _live_section(
    ctx: ReportContext, q: _Queries, live: DataFrame | None, notes: dict[str, list[str]]
) -> None:
    """Groups per `live_check` verdict, and the groups that do not hold their plan (the
    unexplained first), each with the command that describes it."""
    ctx["live"] = None
    if live is None:
        notes.setdefault("live", []).append(absent_table("live_check"))
        return
    figures = q.get("live")
    for row in figures["groups"]:
        row["describe"] = describe_command(ctx["output_dir"], row["group_id"])
    ctx["live"] = figures


def _migration_section(
    ctx: ReportContext, q: _Queries, migrations: DataFrame | None, notes: dict[str, list[str]]
) -> None:
    """Groups ready to move to the consumer protocol, blocked (per reason) and with
    warnings; partitions moved and paused per landing assignor; the groups that pay most."""
    ctx["migration"] = None
    if migrations is None:
        notes.setdefault(MIGRATIONS, []).append(absent_table(MIGRATIONS))
        return
    figures = q.get(MIGRATIONS)
    for row in figures["worst"]:
        row["describe"] = describe_command(ctx["output_dir"], row["group_id"])
    ctx["migration"] = figures


def _worst_section(
    ctx: ReportContext,
    q: _Queries,
    metrics: DataFrame | None,
    recs: DataFrame | None,
    notes: dict[str, list[str]],
) -> None:
    worst = notes.setdefault("worst", [])
    if metrics is None:
        worst.append(absent_table("balance_metrics"))
        return
    rows, ctx["worst_basis"] = q.get("worst")
    ctx["worst"] = rows
    for row in rows:  # the command that shows the group in a terminal
        row["describe"] = describe_command(ctx["output_dir"], row["group_id"])
    if recs is None:
        worst.append(absent_table("recommendations") + " (recommended strategy column)")
    if not has(metrics, "balance_gap"):
        worst.append(
            absent_column("balance_metrics", "balance_gap") + " Ranked by partition_spread instead."
        )


def _header(
    manifest: Manifest | None,
    elections: DataFrame | None,
    rejected: DataFrame | None,
    notes: dict[str, list[str]],
) -> dict[str, Any]:
    m = manifest.to_json() if manifest is not None else {}
    groups = dict(m.get("groups") or {})
    if not groups and elections is not None:
        total = elections.count()
        not_planned = elections.where(F.col("error") == NOT_PLANNED).count()
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
    ctx: ReportContext,
    q: _Queries,
    metrics: DataFrame | None,
    recs: DataFrame | None,
    notes: dict[str, list[str]],
) -> None:
    from jobs.report import charts

    order = ctx["strategies"]
    if metrics is None:
        notes.setdefault("balance", []).append(absent_table("balance_metrics"))
        return
    figures = q.get("balance")
    ctx["overview"] = overview(figures["overview"], _recommended(q, recs))
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
    gap = figures["gap"]
    with_rows = [s for s in order if s in gap]
    if with_rows:
        labels = [b[2] for b in GAP_BINS]
        if not ctx["has_gap"]:
            labels[0] = "0"  # a spread of 0 is not "best possible" (the gap's verdict) per se
        ctx["charts"]["gap"] = charts.gap_chart(with_rows, gap, labels)
    most = figures["max"]
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
    ctx["load"] = q.get("load")
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


def _recommended(q: _Queries, recs: DataFrame | None) -> dict[str, int] | None:
    """Groups recommended per strategy; None without a recommendations table."""
    if recs is None:
        return None
    return (
        recommended_per_strategy(q.get("recommended")) if has(recs, "recommended_strategy") else {}
    )


def _cost_section(
    ctx: ReportContext, q: _Queries, costs: DataFrame | None, notes: dict[str, list[str]]
) -> None:
    from jobs.report import charts

    if costs is None:
        notes.setdefault("costs", []).append(absent_table("rebalance_costs"))
        return
    agg = q.get("costs")
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
    ctx: ReportContext, q: _Queries, recs: DataFrame | None, notes: dict[str, list[str]]
) -> None:
    if recs is None:
        notes.setdefault("recommend", []).append(absent_table("recommendations"))
        return
    if not has(recs, "current_strategy", "recommended_strategy"):
        notes.setdefault("recommend", []).append(
            "The recommendations table lacks current_strategy or recommended_strategy."
        )
        return
    ctx["recommendations"] = recommendation_mix(q.get("recommended"))
