"""One group as an operator reads it: the view `describe` and `plan_group` print.

`build_view` gathers the group's rows of the output tables (read from a planner output, or
planned on the spot) into one structure, which is also the `--format json` document
(stable: keys are only ever added). `render_table` prints it in the terminal's width,
`render_csv` one row per (strategy, member, partition) with the `assignments` columns.

The table is for people: a reason repeated more than `REPEATED_REASON` times in the group's
`rejected` rows (100,000 owned partitions of a deleted topic are 100,000 warnings) is one
line, its count and its first `EXAMPLES` details. JSON and CSV are for programs and keep
every row.

Member columns are named as `kafka-consumer-groups.sh --describe --members --verbose` names
the same things (`CONSUMER-ID`, `GROUP-INSTANCE-ID`, `HOST`, `CLIENT-ID`, `#PARTITIONS`,
`ASSIGNMENT`), and a missing value is shown as `-`, as it shows one.
"""

from __future__ import annotations

import csv
import io
import json
import shlex
import shutil
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

from assignors.whatif.recommend import members_sentence

Row = dict[str, Any]
FORMAT_VERSION = 1
CSV_COLUMNS = (
    "group_id",
    "strategy",
    "member_id",
    "group_instance_id",
    "topic",
    "partition",
    "previous_member_id",
    "rebalance_round",
    "lag",
)
MEMBER_COLUMNS = (
    "member_id",
    "group_instance_id",
    "client_id",
    "client_host",
    "client_rack",
    "topics",
    "topic_pattern",
    "assignment_strategies",
    "generation",
)
# The MEMBERS table and each strategy's table of members, headed as kafka-consumer-groups.sh
# heads its `--members --verbose` columns (then the planner's own).
MEMBERS_HEADERS = (
    "CONSUMER-ID",
    "GROUP-INSTANCE-ID",
    "HOST",
    "CLIENT-ID",
    "RACK",
    "GENERATION",
    "STRATEGIES",
    "SUBSCRIPTION",
)
ASSIGNED_HEADERS = (
    "CONSUMER-ID",
    "HOST",
    "CLIENT-ID",
    "#PARTITIONS",
    "LAG",
    "RACK-MISMATCH",
    "ASSIGNMENT",
)
# The metrics an operator reads first (the full row is in the JSON document).
SHOWN_METRICS = (
    ("members", "member_count"),
    ("partitions", "partition_count"),
    ("max/member", "max_partitions_per_member"),
    ("spread", "partition_spread"),
    ("balance gap", "balance_gap"),
    ("moved", "moved_partition_count"),
    ("idle", "idle_member_count"),
    ("rack mismatches", "rack_mismatch_count"),
    ("total lag", "total_lag"),
    ("lag imbalance", "lag_imbalance"),
)
# A reason with more rejected rows than this is shown as one line of the table.
REPEATED_REASON = 5
EXAMPLES = 3
COST_COLUMNS = (
    ("strategy", "strategy"),
    ("scenario", "scenario"),
    ("rebalances", "rebalances"),
    ("moved", "moved_partition_count"),
    ("paused", "paused_partition_count"),
    ("lag moved", "lag_moved"),
    ("max after", "max_partitions_per_member_after"),
    ("gap after", "balance_gap_after"),
)


CAPACITY_COLUMNS = (
    ("strategy", "strategy"),
    ("members", "members"),
    ("active", "active_members"),
    ("max useful", "max_useful_members"),
    ("for target", "members_for_target"),
    ("target", "target"),
    ("detail", "detail"),
)


def compact(partitions: Iterable[tuple[str, int]]) -> str:
    """Partitions as compact ranges per topic, topics in name order.

    >>> compact([("orders", 9), ("orders", 0), ("orders", 1), ("orders", 2), ("audit", 4)])
    'audit[4] orders[0-2,9]'
    >>> compact([])
    '-'
    """
    by_topic: dict[str, list[int]] = {}
    for topic, p in partitions:
        by_topic.setdefault(topic, []).append(p)
    parts = []
    for topic in sorted(by_topic):
        nums = sorted(set(by_topic[topic]))
        spans: list[str] = []
        start = prev = nums[0]
        for n in [*nums[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            spans.append(str(start) if start == prev else f"{start}-{prev}")
            if n is not None:
                start = prev = n
        parts.append(f"{topic}[{','.join(spans)}]")
    return " ".join(parts) or "-"


def describe_command(output_dir: str, group_id: str) -> str:
    """The shell command that describes `group_id` of this output (quoted for a shell)."""
    return (
        f"python -m jobs.describe --output {shlex.quote(output_dir)}"
        f" --group {shlex.quote(group_id)}"
    )


def _racks(topic_rows: Iterable[Row]) -> dict[tuple[str, int], set[str]]:
    out: dict[tuple[str, int], set[str]] = {}
    for r in topic_rows:
        racks = {x for x in (r.get("replica_racks") or ()) if x}
        if r.get("topic") is not None and r.get("partition") is not None and racks:
            out.setdefault((r["topic"], int(r["partition"])), set()).update(racks)
    return out


def _members_of(
    rows: list[Row], members: list[Row] | None, racks: dict[tuple[str, int], set[str]]
) -> list[Row]:
    """Per member of one strategy: its partitions (ranges), counts, lag, rack mismatches."""
    by_member: dict[str, list[Row]] = {}
    instance: dict[str, Any] = {}
    rack: dict[str, Any] = {}
    client: dict[str, tuple[str | None, str | None]] = {}
    for m in members or []:
        by_member.setdefault(m["member_id"], [])
        instance[m["member_id"]] = m.get("group_instance_id")
        rack[m["member_id"]] = m.get("client_rack")
        client[m["member_id"]] = (_optional(m, "client_id"), _optional(m, "client_host"))
    for r in rows:
        by_member.setdefault(r["member_id"], []).append(r)
        instance.setdefault(r["member_id"], r.get("group_instance_id"))
    out = []
    for mid in sorted(by_member):
        mine = sorted(by_member[mid], key=lambda r: (r["topic"], r["partition"]))
        lags = [r.get("lag") for r in mine]
        known = [x for x in lags if x is not None]
        mismatches = None
        if members is not None and racks:
            mismatches = sum(
                1
                for r in mine
                if rack.get(mid)
                and racks.get((r["topic"], r["partition"]))
                and rack[mid] not in racks[(r["topic"], r["partition"])]
            )
        out.append(
            {
                "member_id": mid,
                "group_instance_id": instance.get(mid),
                "client_id": client.get(mid, (None, None))[0],
                "client_host": client.get(mid, (None, None))[1],
                "partition_count": len(mine),
                "partitions": compact((r["topic"], r["partition"]) for r in mine),
                "lag": sum(known) if known else None,
                "unknown_lag_partitions": len(lags) - len(known),
                "rack_mismatches": mismatches,
                "assigned": [
                    {
                        k: r.get(k)
                        for k in CSV_COLUMNS
                        if k not in ("group_id", "strategy", "member_id", "group_instance_id")
                    }
                    for r in mine
                ],
            }
        )
    return out


def _optional(member: Row, key: str) -> str | None:
    """An optional string column of `subscriptions` (`client_id`, `client_host`): None when
    the snapshot has no such column or the member no value."""
    value = member.get(key)
    return None if value is None else str(value)


def build_view(
    group_id: str,
    tables: dict[str, list[Row]],
    members: list[Row] | None,
    topic_rows: Sequence[Row] = (),
    source: Row | None = None,
    strategy: str | None = None,
    order: Sequence[str] = (),
) -> Row:
    """The group's view (the `--format json` document; see docs/one-group.md).

    Strategies are listed in `order` (the run's, as configured), others after them."""
    metrics = {r["strategy"]: r for r in tables.get("balance_metrics", [])}
    by_strategy: dict[str, list[Row]] = {}
    for r in tables.get("assignments", []):
        by_strategy.setdefault(r["strategy"], []).append(r)
    rank = {name: i for i, name in enumerate(order)}
    names = sorted(
        dict.fromkeys([*metrics, *by_strategy]), key=lambda s: (rank.get(s, len(rank)), s)
    )
    if strategy is not None:
        names = [s for s in names if s == strategy]
    racks = _racks(topic_rows)
    strategies = []
    for s in names:
        row = {k: v for k, v in metrics.get(s, {}).items() if k not in ("group_id", "strategy")}
        strategies.append(
            {
                "strategy": s,
                "metrics": row,
                "members": _members_of(by_strategy.get(s, []), members, racks),
            }
        )
    elections = tables.get("elections", [])
    recs = tables.get("recommendations", [])
    costs = [
        r
        for r in tables.get("rebalance_costs", [])
        if strategy is None or r["strategy"] == strategy
    ]
    capacity = _capacity_of(tables, None if strategy is None else [strategy], rank)
    rec = recs[0] if recs else None
    return {
        "format": "kafka-assignment-planner/group",
        "version": FORMAT_VERSION,
        "group_id": group_id,
        "source": source or {},
        "members": None
        if members is None
        else [
            {
                k: _optional(m, k) if k in ("client_id", "client_host") else m.get(k)
                for k in MEMBER_COLUMNS
            }
            for m in sorted(members, key=lambda m: str(m["member_id"]))
        ],
        "election": elections[0] if elections else None,
        "strategies": strategies,
        "rebalance_costs": sorted(costs, key=lambda r: (r["strategy"], r["scenario"])),
        "recommendation": rec,
        "rejected": tables.get("rejected", []),
        "capacity": capacity,
        "capacity_note": _capacity_note(rec, tables.get("capacity", [])),
        "live_check": _live_of(tables),
        # the group's paths to the consumer protocol (docs/migration.md)
        "migrations": sorted(tables.get("migrations", []), key=lambda r: str(r["path"])),
    }


# ---- live vs plan (`live_check`, docs/live.md) --------------------------------------------


def _live_of(tables: dict[str, list[Row]]) -> Row | None:
    """The group's `live_check` row (but `group_id`), with `differing_partitions`: the
    partitions of the `elected` plan whose current owner (`previous_member_id`) is another
    member, as (topic, partition, current owner, planned owner); None without a row."""
    rows = tables.get("live_check", [])
    if not rows:
        return None
    row = {k: v for k, v in rows[0].items() if k != "group_id"}
    elected = [r for r in tables.get("assignments", []) if r["strategy"] == "elected"]
    row["differing_partitions"] = [
        {
            "topic": r["topic"],
            "partition": r["partition"],
            "current_member_id": r["previous_member_id"],
            "planned_member_id": r["member_id"],
        }
        for r in sorted(elected, key=lambda r: (r["topic"], r["partition"]))
        if r["previous_member_id"] != r["member_id"]
    ]
    return row


def _live_lines(live: Row, width: int) -> list[str]:
    """The LIVE VS PLAN block: the verdict, its evidence, the differing partitions."""
    lines = ["", "LIVE VS PLAN (live_check)"]
    lines.append(
        f"  verdict: {live['verdict']}   planned with: {_text(live['elected_strategy'])}"
        f"   client library: {_text(live['client_library'])}"
        f"   differing partitions: {live['differing_partition_count']}"
    )
    lines += ["  " + w for w in textwrap.wrap(str(live.get("detail") or ""), width - 2)]
    moved = live.get("differing_partitions") or []
    if moved:
        shown = [
            (f"{m['topic']}-{m['partition']}", m["current_member_id"], m["planned_member_id"])
            for m in moved[:LIVE_PARTITIONS]
        ]
        lines += _indent(_table(("PARTITION", "HELD BY", "PLANNED FOR"), shown, width - 2))
        if len(moved) > LIVE_PARTITIONS:
            lines.append(
                f"  (the first {LIVE_PARTITIONS} of {len(moved)}: --format json lists them all)"
            )
    return lines


# The differing partitions the table shows (JSON lists them all).
LIVE_PARTITIONS = 20


# ---- since the previous run (`--previous`) ----------------------------------------------

# The figures `describe` shows then and now: (label, `Figures` field).
SINCE_FIGURES = (
    ("members", "members"),
    ("subscribed partitions", "partitions"),
    ("elected", "elected"),
    ("balance_gap (elected)", "balance_gap"),
    ("total_lag (elected)", "total_lag"),
    ("recommended", "recommended"),
    ("live check", "verdict"),
    ("highest generation", "max_generation"),
    ("members digest", "members_digest"),
)


def since_view(figures: Row, changes: Sequence[Row]) -> Row:
    """The view's `since`: the previous run, the group's figures in it and now (None: the
    group was not in that run), its `changes` rows, and why the previous side is missing."""
    before, after = figures.get("before"), figures.get("after")
    recorded = figures.get("previous") or {}
    return {
        "previous": {"path": recorded.get("path"), "ds": recorded.get("ds")},
        "figures": [
            {
                "figure": label,
                "previous": None if before is None else getattr(before, name),
                "today": None if after is None else getattr(after, name),
            }
            for label, name in SINCE_FIGURES
        ],
        "in_previous": before is not None,
        "changes": [
            {k: r.get(k) for k in ("change", "before", "after", "detail")} for r in changes
        ],
        "unusable": figures.get("unusable"),
    }


def _since_lines(since: Row, width: int) -> list[str]:
    prev = since["previous"]
    lines = ["", f"SINCE THE PREVIOUS RUN (ds {_text(prev.get('ds'))}, {_text(prev.get('path'))})"]
    if since.get("unusable"):
        lines.append(f"  previous figures not shown: {since['unusable']}")
    elif not since["in_previous"]:
        lines.append("  the group was not in the previous run")
    rows = [(f["figure"], f["previous"], f["today"]) for f in since["figures"]]
    lines += _indent(_table(("FIGURE", "PREVIOUS", "TODAY"), rows, width - 2))
    if since["changes"]:
        changed = [(c["change"], c["detail"]) for c in since["changes"]]
        lines += _indent(_table(("CHANGE", "DETAIL"), changed, width - 2))
    else:
        lines.append("  no change in the changes table")
    return lines


def _capacity_of(
    tables: dict[str, list[Row]], only: list[str] | None, rank: dict[str, int]
) -> list[Row]:
    """The group's `capacity` rows (but `group_id`), in the run's strategy order; with
    `only`, those strategies' rows."""
    rows = [
        {k: v for k, v in r.items() if k != "group_id"}
        for r in tables.get("capacity", [])
        if only is None or r["strategy"] in only
    ]
    return sorted(rows, key=lambda r: (rank.get(r["strategy"], len(rank)), r["strategy"]))


def _capacity_note(rec: Row | None, capacity: list[Row]) -> str | None:
    """The recommendation's member count where it matters (`members_sentence`)."""
    if rec is None or not capacity:
        return None
    by = {r["strategy"]: r for r in capacity}
    return members_sentence(rec.get("current_strategy"), rec.get("recommended_strategy"), by)


# ---- rendering ---------------------------------------------------------------------------


def _text(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}"
    if isinstance(v, list | tuple):
        return ",".join(str(x) for x in v) or "-"
    return str(v)


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], width: int) -> list[str]:
    """Columns padded to their widest cell; the last column wraps within `width`."""
    cells = [[_text(v) for v in r] for r in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    lead = sum(widths[:-1]) + 2 * (len(widths) - 1)
    last = max(20, width - lead)
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for r in cells:
        head = "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=False))
        wrapped = textwrap.wrap(r[-1], last, break_on_hyphens=False) or [""]
        pad = (head + "  ") if len(headers) > 1 else ""
        out.append((pad + wrapped[0]).rstrip())
        out += [(" " * len(pad) + w).rstrip() for w in wrapped[1:]]
    return out


def render_table(view: Row, width: int | None = None) -> str:
    width = width or shutil.get_terminal_size((120, 24)).columns
    lines = [f"GROUP {view['group_id']}"]
    src = view.get("source") or {}
    if src:
        lines.append("  " + ", ".join(f"{k}: {v}" for k, v in src.items() if v is not None))
    lines += ["", "MEMBERS"]
    if view["members"] is None:
        lines.append("  (the input snapshot is not reachable: pass --input DIR to see them)")
    else:
        rows = [
            (
                m["member_id"],
                m["group_instance_id"],
                m.get("client_host"),
                m.get("client_id"),
                m["client_rack"],
                m["generation"],
                m["assignment_strategies"],
                m["topic_pattern"] or _text(m["topics"]),
            )
            for m in view["members"]
        ]
        lines += _indent(_table(MEMBERS_HEADERS, rows, width - 2))
    election = view.get("election")
    if election:
        lines += ["", "ELECTION"]
        lines.append(
            f"  elected: {_text(election['elected_strategy'])}   candidates:"
            f" {_text(election['candidate_strategies'])}   error: {_text(election['error'])}"
        )
    if view.get("since"):
        lines += _since_lines(view["since"], width)
    for s in view["strategies"]:
        lines += _strategy_lines(s, width)
    if view["rebalance_costs"]:
        lines += ["", "WHAT-IF REBALANCES (rebalance_costs)"]
        costs = [[r.get(k) for _, k in COST_COLUMNS] for r in view["rebalance_costs"]]
        lines += _indent(_table([h.upper() for h, _ in COST_COLUMNS], costs, width - 2))
    rec = view.get("recommendation")
    if rec:
        lines += ["", "RECOMMENDATION"]
        lines.append(
            f"  current: {_text(rec['current_strategy'])}   recommended:"
            f" {_text(rec['recommended_strategy'])}"
        )
        lines += ["  " + w for w in textwrap.wrap(str(rec.get("reason") or ""), width - 2)]
        if view.get("capacity_note"):
            lines += ["  " + w for w in textwrap.wrap(str(view["capacity_note"]), width - 2)]
        figures = [
            (k[len("current_") :], rec.get(k), rec.get("recommended_" + k[len("current_") :]))
            for k in rec
            if k.startswith("current_") and k != "current_strategy"
        ]
        lines += _indent(_table(("FIGURE", "CURRENT", "RECOMMENDED"), figures, width - 2))
    lines += _capacity_lines(view, width)
    if view.get("live_check"):
        lines += _live_lines(view["live_check"], width)
    lines += _migration_lines(view, width)
    if view["rejected"]:
        lines += ["", "REJECTED"]
        rows, counted = _rejected_rows(view["rejected"])
        heads = ("SEVERITY", "REASON", "MEMBER", "TOPIC", "STRATEGY", "DETAIL")
        lines += _indent(_table(heads, rows, width - 2))
        if counted:
            lines.append(
                f"  (a reason with more than {REPEATED_REASON} rows is counted, with its first"
                f" {EXAMPLES}: --format json lists every row)"
            )
    return "\n".join(lines) + "\n"


def _capacity_lines(view: Row, width: int) -> list[str]:
    if not view.get("capacity"):
        return []
    capacity = [[r.get(k) for _, k in CAPACITY_COLUMNS] for r in view["capacity"]]
    heads = [h.upper() for h, _ in CAPACITY_COLUMNS]
    return ["", "CAPACITY (capacity)", *_indent(_table(heads, capacity, width - 2))]


MIGRATION_HEADERS: tuple[str, ...] = ("PATH", "READY", "BLOCKERS", "WARNINGS", "LANDS ON")
MIGRATION_HEADERS += ("RESTARTS", "MOVED AT CONVERSION", "BOUNCE MOVED", "BOUNCE PAUSED")


def _migration_lines(view: Row, width: int) -> list[str]:
    """The MIGRATION section: the next step, then each path with its steps and costs (none
    for a group without `migrations` rows)."""
    if not view.get("migrations"):
        return []
    lines = ["", "MIGRATION TO THE CONSUMER PROTOCOL (migrations)"]
    rec = view.get("recommendation") or {}
    if rec.get("migration_next_step"):
        text = str(rec["migration_next_step"])
        lines += ["  " + w for w in textwrap.wrap(text, width - 2, break_on_hyphens=False)]
    rows = [
        (
            r["path"],
            "yes" if r["ready"] else "no",
            ", ".join(r["blockers"] or []) or None,
            ", ".join(r["warnings"] or []) or None,
            r["landing_assignor"],
            r["steps"],
            r["moved_at_conversion"],
            r["bounce_moved"]
            if r["first_bounce_moved"] is None
            else f"{r['bounce_moved']} ({r['first_bounce_moved']} in bounce 1)",
            r["bounce_paused"]
            if r["first_bounce_paused"] is None
            else f"{r['bounce_paused']} ({r['first_bounce_paused']} in bounce 1)",
        )
        for r in view["migrations"]
    ]
    lines += _indent(_table(MIGRATION_HEADERS, rows, width - 2))
    for r in view["migrations"]:
        if r.get("detail"):
            text = f"{r['path']}: {r['detail']}"
            lines += ["  " + w for w in textwrap.wrap(text, width - 2, break_on_hyphens=False)]
    return lines


def _rejected_rows(rejected: Sequence[Row]) -> tuple[list[tuple[Any, ...]], bool]:
    """The REJECTED table's rows, in the rows' order: each row of a reason seen at most
    `REPEATED_REASON` times, else one row for the reason (where its first row was) with
    its count and first details. Also whether any reason was counted."""
    by_reason: dict[tuple[str, str], list[Row]] = {}
    for r in rejected:
        by_reason.setdefault((r["severity"], r["reason"]), []).append(r)
    out: list[tuple[Any, ...]] = []
    shown: set[tuple[str, str]] = set()
    for r in rejected:
        key = (r["severity"], r["reason"])
        same = by_reason[key]
        if len(same) <= REPEATED_REASON:
            out.append(
                (r["severity"], r["reason"], r.get("member_id"), r.get("topic"), r.get("strategy"),
                 r["detail"])
            )  # fmt: skip
        elif key not in shown:
            shown.add(key)
            first = " | ".join(str(x["detail"]) for x in same[:EXAMPLES])
            out.append(
                (
                    r["severity"],
                    f"{r['reason']} ×{len(same)}",
                    _common(same, "member_id", "members"),
                    _common(same, "topic", "topics"),
                    _common(same, "strategy", "strategies"),
                    f"(first {EXAMPLES}: {first})",
                )
            )
    return out, bool(shown)


def _common(rows: Sequence[Row], key: str, plural: str) -> Any:
    """The rows' shared value of `key`, else how many distinct values they have."""
    values = {r.get(key) for r in rows}
    return next(iter(values)) if len(values) == 1 else f"{len(values)} {plural}"


def _indent(lines: list[str]) -> list[str]:
    return ["  " + line for line in lines]


def _strategy_lines(s: Row, width: int) -> list[str]:
    m = s["metrics"]
    lines = [
        "",
        f"STRATEGY {s['strategy']}"
        + (f" (elected: {m['elected_strategy']})" if m.get("elected_strategy") else ""),
    ]
    shown = [f"{label} {_text(m.get(key))}" for label, key in SHOWN_METRICS if key in m]
    lines += ["  " + w for w in textwrap.wrap("   ".join(shown), width - 2)]
    rows = [
        (
            r["member_id"],
            r.get("client_host"),
            r.get("client_id"),
            r["partition_count"],
            r["lag"],
            r["rack_mismatches"],
            r["partitions"],
        )
        for r in s["members"]
    ]
    lines += _indent(_table(ASSIGNED_HEADERS, rows, width - 2))
    return lines


def render_csv(view: Row) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for s in view["strategies"]:
        for m in s["members"]:
            for a in m["assigned"]:
                row = {
                    "group_id": view["group_id"],
                    "strategy": s["strategy"],
                    "member_id": m["member_id"],
                    "group_instance_id": m["group_instance_id"],
                    **a,
                }
                w.writerow(["" if row[c] is None else row[c] for c in CSV_COLUMNS])
    return buf.getvalue()


def render_json(view: Row) -> str:
    return json.dumps(view, indent=2, sort_keys=False, allow_nan=False) + "\n"


def render(view: Row, fmt: str) -> str:
    if fmt == "json":
        return render_json(view)
    if fmt == "csv":
        return render_csv(view)
    return render_table(view)
