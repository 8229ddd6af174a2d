"""What changed in the estate since a previous run: the `changes` table (docs/changes.md).

Plain Python over plain data: each run's small tables are first reduced to one `Figures` per
group (`jobs.tables.previous` reads them), and `compare` turns two runs' figures into the
table's rows. No Spark and no pyarrow here, so every rule is tested without a JVM.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

GROUP_NEW = "GROUP_NEW"
GROUP_GONE = "GROUP_GONE"
MEMBERS_CHANGED = "MEMBERS_CHANGED"
REBALANCED = "REBALANCED"
ELECTED_CHANGED = "ELECTED_CHANGED"
BALANCE_WORSE = "BALANCE_WORSE"
BALANCE_BETTER = "BALANCE_BETTER"
LAG_GREW = "LAG_GREW"
LAG_SHRANK = "LAG_SHRANK"
RECOMMENDATION_CHANGED = "RECOMMENDATION_CHANGED"
VERDICT_CHANGED = "VERDICT_CHANGED"
# The order of a group's rows in a comparison's result, and of the report's counts.
CHANGES = (
    GROUP_NEW,
    GROUP_GONE,
    MEMBERS_CHANGED,
    REBALANCED,
    ELECTED_CHANGED,
    BALANCE_WORSE,
    BALANCE_BETTER,
    LAG_GREW,
    LAG_SHRANK,
    RECOMMENDATION_CHANGED,
    VERDICT_CHANGED,
)
# What an operator looks at first: the groups that got worse.
WORSE = (BALANCE_WORSE, LAG_GREW)
DEFAULT_MIN_LAG_CHANGE = 1_000
COLUMNS = ("group_id", "change", "before", "after", "detail")
Row = dict[str, Any]


@dataclass(frozen=True)
class Figures:
    """One group as a run's small tables show it. `members` and `partitions` come from the
    elected strategy's `balance_metrics` row (any of the group's rows when none is elected:
    every row of a group counts the same members); null when the group was not planned."""

    group_id: str
    members: int | None = None
    partitions: int | None = None
    elected: str | None = None
    error: str | None = None
    balance_gap: int | None = None
    total_lag: int | None = None
    recommended: str | None = None
    verdict: str | None = None
    # `elections.max_generation` and `members_digest` (null: not planned, or a run written
    # before the planner had them)
    max_generation: int | None = None
    members_digest: str | None = None


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _row(group_id: str, change: str, before: object, after: object, detail: str) -> Row:
    return {
        "group_id": group_id,
        "change": change,
        "before": _text(before),
        "after": _text(after),
        "detail": detail,
    }


def _shown(value: object, none: str = "none") -> str:
    return none if value is None else str(value)


def _lag_moved(before: int, after: int, min_change: int) -> str | None:
    """LAG_GREW, LAG_SHRANK or None: at least doubled (halved), and by `min_change` messages."""
    if after >= 2 * before and after - before >= max(min_change, 1):
        return LAG_GREW
    if 2 * after <= before and before - after >= max(min_change, 1):
        return LAG_SHRANK
    return None


# REBALANCED's detail when the previous run has no member figures (an older planner's).
NO_MEMBER_FIGURES = (
    "the previous run has no member generations or ids (an older planner):"
    " from member counts, partitions and protocol only"
)


def _rebalanced(b: Figures, a: Figures) -> str | None:
    """Why the group went through a rebalance between the runs, as far as the small tables
    tell: each of these is a rebalance, or makes Kafka rebalance the group (docs/changes.md)."""
    why = []
    gb, ga = b.max_generation, a.max_generation
    if gb is not None and ga is not None and gb != ga:
        why.append(f"generation {gb} -> {ga}")
    db, da = b.members_digest, a.members_digest
    if b.members is not None and a.members is not None and b.members != a.members:
        why.append(f"members {b.members} -> {a.members}")
    elif db is not None and da is not None and db != da:
        why.append("members replaced (same count, other member ids)")
    if b.partitions is not None and a.partitions is not None and b.partitions != a.partitions:
        why.append(f"subscribed partitions {b.partitions} -> {a.partitions}")
    if b.elected is not None and a.elected is not None and b.elected != a.elected:
        why.append(f"protocol {b.elected} -> {a.elected}")
    return "; ".join(why) or None


def group_changes(
    b: Figures,
    a: Figures,
    min_lag_change: int,
    verdicts: bool = False,
    member_figures: bool = True,
) -> list[Row]:
    """The rows of one group present in both runs, in CHANGES order. `verdicts`: both runs
    have a live check. `member_figures`: both runs have `max_generation` and
    `members_digest` (else REBALANCED says it was told without them)."""
    g = a.group_id
    out: list[Row] = []
    if b.members is not None and a.members is not None and b.members != a.members:
        out.append(
            _row(g, MEMBERS_CHANGED, b.members, a.members, f"{b.members} -> {a.members} members")
        )
    why = _rebalanced(b, a)
    if why is not None:
        note = "" if member_figures else f" ({NO_MEMBER_FIGURES})"
        out.append(_row(g, REBALANCED, None, None, f"rebalanced: {why}{note}"))
    if b.elected != a.elected:
        before, after = _shown(b.elected, b.error or "none"), _shown(a.elected, a.error or "none")
        out.append(_row(g, ELECTED_CHANGED, b.elected, a.elected, f"elected {before} -> {after}"))
    if b.balance_gap is not None and a.balance_gap is not None and b.balance_gap != a.balance_gap:
        change = BALANCE_WORSE if a.balance_gap > b.balance_gap else BALANCE_BETTER
        out.append(
            _row(
                g,
                change,
                b.balance_gap,
                a.balance_gap,
                f"balance_gap of the elected strategy {b.balance_gap} -> {a.balance_gap}"
                f" ({_shown(a.elected)})",
            )
        )
    if b.total_lag is not None and a.total_lag is not None:
        lag = _lag_moved(b.total_lag, a.total_lag, min_lag_change)
        if lag is not None:
            out.append(
                _row(
                    g,
                    lag,
                    b.total_lag,
                    a.total_lag,
                    f"total_lag {b.total_lag:,} -> {a.total_lag:,} messages"
                    f" ({a.total_lag - b.total_lag:+,})",
                )
            )
    if b.recommended != a.recommended and (b.recommended or a.recommended):
        out.append(
            _row(
                g,
                RECOMMENDATION_CHANGED,
                b.recommended,
                a.recommended,
                f"recommended {_shown(b.recommended)} -> {_shown(a.recommended)}",
            )
        )
    if verdicts and b.verdict is not None and a.verdict is not None and b.verdict != a.verdict:
        out.append(
            _row(g, VERDICT_CHANGED, b.verdict, a.verdict, f"live check {b.verdict} -> {a.verdict}")
        )
    return out


def _described(f: Figures) -> str:
    if f.members is None:
        return f"not planned ({f.error})" if f.error else "not planned"
    return f"{f.members} members, elected {_shown(f.elected, f.error or 'none')}"


def compare(
    before: Mapping[str, Figures],
    after: Mapping[str, Figures],
    min_lag_change: int = DEFAULT_MIN_LAG_CHANGE,
    verdicts: bool = False,
    member_figures: bool = True,
) -> list[Row]:
    """The `changes` rows of two runs' figures, by group_id then change. A new or gone group
    has that one row (nothing to compare it with). `verdicts`: both runs have a live check;
    `member_figures`: both runs have the member figures (see `group_changes`)."""
    out: list[Row] = []
    for g in sorted(before.keys() | after.keys()):
        b, a = before.get(g), after.get(g)
        if b is None and a is not None:
            out.append(_row(g, GROUP_NEW, None, a.members, f"new group: {_described(a)}"))
        elif a is None and b is not None:
            out.append(_row(g, GROUP_GONE, b.members, None, f"gone: was {_described(b)}"))
        elif a is not None and b is not None:
            out.extend(group_changes(b, a, min_lag_change, verdicts, member_figures))
    out.sort(key=lambda r: (r["group_id"], r["change"]))  # the table's sort keys
    return out


def counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Rows per change, every change named (0 included), in CHANGES order."""
    found = Counter(str(r["change"]) for r in rows)
    return {c: found.get(c, 0) for c in CHANGES}


def worse_first(rows: Iterable[Mapping[str, Any]], limit: int) -> list[Mapping[str, Any]]:
    """The rows of groups that got worse, largest step first: balance_gap then lag, by how
    much it moved, then group_id."""

    def step(r: Mapping[str, Any]) -> tuple[int, int, str]:
        try:
            moved = int(r["after"]) - int(r["before"])
        except (TypeError, ValueError):
            moved = 0
        return (WORSE.index(r["change"]), -moved, str(r["group_id"]))

    return sorted((r for r in rows if r["change"] in WORSE), key=step)[:limit]
