"""`python -m jobs.plan_group`: plan one group straight from a snapshot, with the pure core
and pyarrow (no Spark), and try an operator's change on it.

    kafka-planner plan-group --input DIR --group G [--config FILE] [--strategies a,b]
        [--format table|json|csv] [--what-if EXPR ...]   # or: python -m jobs.plan_group ...

The group is planned exactly as the estate job plans it (`jobs.plan.one_group`): same config,
same strategies and plugins, same rows. `--what-if` (repeatable; see `assignors.whatif.changes`)
applies a change to each strategy's plan and shows the next rebalance and its cost.
Exit codes: 0 planned; 2 not a planner input, configuration error, no such group, or a
what-if that does not parse or apply.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

import pyarrow.dataset as ds

from assignors.analysis.bounds import best_balance
from assignors.analysis.load import OffsetRow
from assignors.inputs.patterns import PatternResolver
from assignors.inputs.validation import OwnedRow
from assignors.model import TopicMetadata
from assignors.whatif.changes import Change, change_cost, change_topics, check_changes, parse_change
from assignors.whatif.group import strategy_plans
from jobs.cli.common import add_verbose, guarded
from jobs.cli.exit_codes import EXIT_BAD_INPUT, EXIT_OK
from jobs.plan.one_group import (
    GroupResult,
    member_rows,
    plan_one,
    table_rows,
    topic_catalog,
)
from jobs.settings.config import ConfigError
from jobs.settings.run import load_settings
from jobs.tables import group_read
from jobs.tables.group_view import build_view, compact, render


class UsageError(Exception):
    """Exit 2 with this message."""


def parse_args(argv: list[str] | None, prog: str = "plan_group") -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Plan one group straight from a snapshot, with the pure core and pyarrow"
        " (no Spark), exactly as the estate job plans it, and try an operator's change on it.",
    )
    p.add_argument("--input", required=True, help="the snapshot: one Parquet dataset per table")
    p.add_argument("--group", required=True, help="the consumer group id")
    p.add_argument("--config", default=None, help="planner TOML (default: conf/planner.toml)")
    p.add_argument("--strategies", default=None, help="comma-separated, overrides the config")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table")
    p.add_argument(
        "--what-if",
        dest="what_if",
        action="append",
        default=[],
        metavar="EXPR",
        help="a change to try (repeatable, applied together): member_join[:ID],"
        " member_leave[:ID], partition_growth[:TOPIC=N], subscription_change[:ID=T1,T2]",
    )
    add_verbose(p)
    args = p.parse_args(argv)
    args.prog = prog
    return args


def main(argv: list[str] | None = None, prog: str = "plan_group") -> int:
    args = parse_args(argv, prog)
    return guarded(prog, lambda: plan_and_show(args), verbose=args.verbose)


def plan_and_show(args: argparse.Namespace) -> int:
    try:
        view = plan(args)
    except (UsageError, ConfigError, group_read.NotFoundError, ValueError) as exc:
        print(f"{getattr(args, 'prog', 'plan_group')}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    sys.stdout.write(render(view, args.format))
    if args.format == "table" and view.get("what_if"):
        sys.stdout.write(render_changes(view["what_if"]))
    return EXIT_OK


def _has_weights(paths: dict[str, str | None]) -> bool:
    """Whether the job would see weights: some usable partition has a non-null weight."""
    data = group_read.input_dataset(paths, "topic_partitions")
    assert data is not None
    given = ds.field("weight").is_valid() & ds.field("topic").is_valid()
    for batch in data.to_batches(columns=["topic"], filter=given):
        topics = set(batch.column("topic").to_pylist())
        if not topics:
            continue
        catalog, _ = topic_catalog(group_read.read_topics(paths, topics))
        if any(status.weights for status in catalog.values()):
            return True
    return False


def read_group(
    args: argparse.Namespace, changes: list[Change]
) -> tuple[GroupResult, dict[str, Any]]:
    """Plan the group; the result and the extra topics' metadata the changes name."""
    _, settings = load_settings(args.config, args.strategies)
    paths = group_read.check_input(args.input)
    gid = args.group
    by_group = ds.field("group_id") == gid
    members = group_read.read_members(paths, gid)
    owned_data = group_read.input_dataset(paths, "current_assignment")
    offsets_data = group_read.input_dataset(paths, "offsets")
    owned = group_read.rows(owned_data, by_group) if owned_data is not None else []
    target_data = group_read.input_dataset(paths, "target_assignment")
    targets = group_read.rows(target_data, by_group) if target_data is not None else None
    offsets = group_read.rows(offsets_data, by_group) if offsets_data is not None else []
    if not members and not owned:
        known = group_read.distinct_groups(paths["subscriptions"] or "")
        near = group_read.closest(gid, known)
        hint = f"; closest group ids: {', '.join(near)}" if near else ""
        raise UsageError(f"group {gid!r} is not in {args.input} ({len(known)} groups){hint}")
    wanted = {t for m in members for t in (m.get("topics") or ()) if t}
    wanted |= {r["topic"] for r in owned if r.get("topic")} | change_topics(changes)
    resolver = None
    if any(m.get("topic_pattern") is not None for m in members):
        resolver = PatternResolver(sorted(group_read.all_topic_names(paths)))
        for m in members:
            # an invalid pattern is build_group's to report (INVALID_PATTERN)
            with contextlib.suppress(ValueError):
                wanted.update(resolver(m["topic_pattern"]) if m.get("topic_pattern") else ())
    topic_rows = group_read.read_topics(paths, wanted)
    catalog, _ = topic_catalog(topic_rows)
    settings = settings.for_inputs(
        has_current_assignment=paths["current_assignment"] is not None,
        has_offsets=paths["offsets"] is not None,
        has_weights=_has_weights(paths),
        has_target_assignment=target_data is not None,
    )
    result = plan_one(
        gid,
        member_rows(members),
        [OwnedRow(r["member_id"], r["topic"], r["partition"]) for r in owned],
        [
            OffsetRow(r["topic"], r["partition"], r["committed_offset"], r["log_end_offset"])
            for r in offsets
        ],
        catalog,
        settings,
        resolver,
        targets=None
        if targets is None
        else [OwnedRow(r["member_id"], r["topic"], r["partition"]) for r in targets],
    )
    extra = {t: s.metadata(t) for t, s in catalog.items() if s.error is None}
    return result, {
        "members": members,
        "topic_rows": topic_rows,
        "known": extra,
        "settings": settings,
    }


def plan(args: argparse.Namespace) -> dict[str, Any]:
    changes = [parse_change(e) for e in args.what_if]
    result, ctx = read_group(args, changes)
    tables = table_rows(result)
    source = {"input": args.input, "planned": "now (plan_group)"}
    order = [r["strategy"] for r in tables["balance_metrics"]]  # as configured
    view = build_view(args.group, tables, ctx["members"], ctx["topic_rows"], source, None, order)
    if changes:
        if result.spec is None or result.plan is None:
            raise UsageError(
                f"group {args.group!r} is not planned (see its rejected rows): no what-if"
            )
        view["what_if"] = what_if(result, ctx, changes, args.what_if)
    return view


def what_if(
    result: GroupResult, ctx: dict[str, Any], changes: list[Change], texts: list[str]
) -> dict[str, Any]:
    spec, plan_ = result.spec, result.plan
    assert spec is not None
    assert plan_ is not None
    known: dict[str, TopicMetadata] = ctx["known"]
    check_changes(spec, changes, known)
    plans, _ = strategy_plans(plan_, ctx["settings"].catalog)
    lags = None
    if result.lags is not None:
        lags = {tp: v for tp, v in result.lags.items() if v is not None}
    label = " + ".join(texts)
    out = []
    for strategy, factory, planned in plans:
        got = change_cost(
            spec,
            strategy,
            factory,
            planned,
            changes,
            known=known,
            lags=lags,
            best_max=lambda s: best_balance(s).best_max,
            label=label,
        )
        out.append(
            {
                "strategy": strategy,
                "cost": got.cost,
                "assignment": {m: compact(tps) for m, tps in sorted(got.after.items())},
                "partitions": {m: sorted(tps) for m, tps in sorted(got.after.items())},
            }
        )
    return {"changes": texts, "strategies": out}


def render_changes(block: dict[str, Any]) -> str:
    lines = ["", f"WHAT-IF {' + '.join(block['changes'])}: the next rebalance"]
    for s in block["strategies"]:
        c = s["cost"]
        lines.append(
            f"  {s['strategy']}: moved {c['moved_partition_count']}, paused"
            f" {c['paused_partition_count']}, rounds {c['rounds']}, max/member after"
            f" {c['max_partitions_per_member_after']}, gap after {c['balance_gap_after']}"
        )
        for m, parts in s["assignment"].items():
            lines.append(f"    {m}  {parts}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
