"""The console summary of a run: per-strategy figures from `balance_metrics`."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from assignors.analysis.live import UNEXPLAINED, VERDICTS
from jobs.tables.manifest import MANIFEST_FILE, Manifest


def strategy_summary(metrics: DataFrame) -> list[dict[str, Any]]:
    """Per-strategy summary for the console (computed from the metrics rows)."""
    rows = (
        metrics.groupBy("strategy")
        .agg(
            F.count(F.lit(1)).alias("groups"),
            F.sum("partition_count").alias("partitions"),
            F.avg(F.col("is_fully_balanced").cast("double")).alias("fully_balanced_share"),
            F.max("partition_spread").alias("worst_spread"),
            F.sum("moved_partition_count").alias("moved"),
            F.sum("idle_member_count").alias("idle_members"),
            F.sum(F.when(~F.col("is_valid"), 1).otherwise(0)).alias("invalid"),
            # the worst backlog one member holds under the strategy (null without offsets)
            F.max("max_member_lag").alias("max_member_lag"),
        )
        .collect()
    )
    # sorted here: Spark's orderBy would add a sampling job and a shuffle for a few rows
    # (Python's order of str is Spark's: by code point)
    return sorted((r.asDict() for r in rows), key=lambda r: r["strategy"])


def whatif_summary(costs: DataFrame, recommendations: DataFrame) -> list[dict[str, Any]]:
    """Per strategy: partitions paused by a rolling restart of every group (summed over the
    groups with a `rolling_restart` row) and the groups it is recommended for."""
    paused = {
        r["strategy"]: (int(r["paused"]), int(r["groups"]))
        for r in costs.where(F.col("scenario") == "rolling_restart")
        .groupBy("strategy")
        .agg(
            F.sum("paused_partition_count").alias("paused"),
            F.count(F.lit(1)).alias("groups"),
        )
        .collect()
    }
    recommended = {
        r["recommended_strategy"]: int(r["count"])
        for r in recommendations.where(F.col("recommended_strategy").isNotNull())
        .groupBy("recommended_strategy")
        .count()
        .collect()
    }
    return [
        {
            "strategy": s,
            "restart_paused": paused[s][0] if s in paused else None,
            "restart_groups": paused[s][1] if s in paused else 0,
            "recommended_groups": recommended.get(s, 0),
        }
        for s in sorted(paused.keys() | recommended.keys())
    ]


def format_whatif(rows: list[dict[str, Any]]) -> list[str]:
    """The what-if block of the console summary (empty without rows)."""
    if not rows:
        return []
    lines = [
        "",
        f"{'what-if':<20} {'rolling restart: paused partitions':>35} {'recommended for':>16}",
    ]
    for r in rows:
        paused = "-" if r["restart_paused"] is None else str(r["restart_paused"])
        lines.append(f"{r['strategy']:<20} {paused:>35} {r['recommended_groups']:>9} groups")
    return lines


def format_summary(m: Manifest) -> str:
    g = m.groups
    attention = m.needs_attention()
    banner = [f"!!! NEEDS ATTENTION (exit 3): {reason}" for reason in attention]
    lines = [
        *([*banner, ""] if banner else []),
        f"planned {g.planned} of {g.input} groups ({g.rejected} rejected);"
        f" {m.output_rows['rejected']} rejected rows"
        + (
            " (" + ", ".join(f"{k}={v}" for k, v in m.rejected_by_reason.items()) + ")"
            if m.rejected_by_reason
            else ""
        ),
        "",
        f"{'strategy':<20} {'groups':>8} {'partitions':>11} {'balanced':>9} {'worst spread':>13}"
        f" {'moved':>9} {'idle members':>13} {'max member lag':>15}",
    ]
    for s in m.summary:
        moved = "-" if s["moved"] is None else str(s["moved"])
        lag = s.get("max_member_lag")
        lines.append(
            f"{s['strategy']:<20} {s['groups']:>8} {s['partitions'] or 0:>11}"
            f" {100 * (s['fully_balanced_share'] or 0):>8.1f}% {s['worst_spread'] or 0:>13}"
            f" {moved:>9} {s['idle_members'] or 0:>13} {'-' if lag is None else lag:>15}"
        )
    lines += format_whatif(m.whatif)
    lines += format_live(m)
    lines += format_migrations(m)
    lines += format_since(m)
    out = m.output
    lines += [
        "",
        f"tables: {out}/assignments (partitioned by strategy), {out}/balance_metrics,"
        f" {out}/elections, {out}/rejected, {out}/rebalance_costs, {out}/recommendations,"
        f" {out}/{MANIFEST_FILE}",
        *([f"changes: {out}/changes"] if "changes" in m.output_rows else []),
        *([f"capacity: {out}/capacity, {out}/{m.capacity_feed}"] if m.capacity_feed else []),
        *([f"live check: {out}/live_check"] if m.live_verdicts else []),
        *([f"migrations: {out}/migrations"] if m.migration_paths else []),
        *([f"report: {out}/{m.report}"] if m.report else []),
        *([m.phase_line()] if m.phases else []),
        *(["", *banner] if banner else []),
    ]
    return "\n".join(lines)


def format_live(m: Manifest) -> list[str]:
    """The console's line of `live_check` counts per verdict, the unexplained first (none
    for a run whose groups hold no current assignment)."""
    counts = m.live_verdicts
    if not counts:
        return []
    order = [UNEXPLAINED, *(v for v in VERDICTS if v != UNEXPLAINED)]
    listed = ", ".join(f"{v} {counts.get(v, 0)}" for v in order)
    return ["", f"live vs plan ({sum(counts.values())} groups): {listed}"]


def format_migrations(m: Manifest) -> list[str]:
    """The console's line of `migrations` per path: groups, how many are ready, and the
    blockers that stop the others (none for a run without classic groups)."""
    parts = []
    for path, f in m.migration_paths.items():
        blocked = f["groups"] - f["ready"]
        why = ", ".join(f"{code} {n}" for code, n in f["blockers"].items())
        parts.append(
            f"{path} {f['groups']} groups ({f['ready']} ready"
            + (f", {blocked} blocked: {why}" if blocked else "")
            + ")"
        )
    return ["", "migration: " + "; ".join(parts)] if parts else []


def format_since(m: Manifest) -> list[str]:
    """The console's line about `--previous`: the changes found, or why none were."""
    previous = m.previous
    if previous is None:
        return []
    if "changes" not in m.output_rows:
        return ["", f"since the previous run: not compared ({previous.get('unusable')})"]
    return [
        "",
        f"since the previous run ({previous.get('ds') or previous.get('path')}):"
        f" {m.output_rows['changes']} changes",
    ]
