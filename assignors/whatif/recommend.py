"""Which strategy should this group run? One `recommendations` row per group (docs/whatif.md).

The candidates are the strategies the group's clients can run (`recommend_from` in the
config, default Kafka's classic built-ins; `balanced` or a plugin only where listed) that were
planned for the group. They are ranked lexicographically, best first:

1. balance: the smallest `balance_gap` (max partitions per member minus the best any valid
   assignment reaches). The bound is the same for every strategy of a group, so when a
   `balance_gap` is missing the order of `max_partitions_per_member` is used, which is the
   same order. With lag or weights (`load_aware`), the smallest load imbalance instead:
   `lag_imbalance` (max member lag / mean, Burrow's lag) when the metrics have it, else
   `weight_imbalance`; compared to 9 significant digits so that float sums in a different
   order still tie;
2. the fewest partitions paused over a `rolling_restart` (`rebalance_costs`);
3. the fewest partitions moved on a `member_join`;
4. the current (elected) strategy, so a full tie never recommends a change for nothing;
   then the caller's `prefer` (a KIP-848 group prefers the broker-side assignors: no
   change of group protocol);
5. Kafka's default order: range, roundrobin, sticky, cooperative-sticky, then the others by
   name.

A figure that is missing for a candidate (its scenario was not run) ranks it last on that
criterion.

Worked example: 3 members of one topic of 12 partitions, elected `range` (max 4 partitions
per member, a rolling restart pausing 72 partitions); cooperative-sticky balances as well and
pauses only 16 partitions over the restart:

>>> metrics = {"range": {"max_partitions_per_member": 4, "balance_gap": 0},
...            "cooperative-sticky": {"max_partitions_per_member": 4, "balance_gap": 0}}
>>> costs = {"range": [{"scenario": "rolling_restart", "paused_partition_count": 72}],
...          "cooperative-sticky": [{"scenario": "rolling_restart",
...                                  "paused_partition_count": 16}]}
>>> row = recommend("g", "range", ["range", "cooperative-sticky"], metrics, costs,
...                 load_aware=False)
>>> row["recommended_strategy"], row["reason"]
('cooperative-sticky', 'cooperative-sticky: a rolling restart pauses 16 partitions instead \
of 72')
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_RECOMMEND_FROM",
    "KAFKA_ORDER",
    "RECOMMENDATION_COLUMNS",
    "Figures",
    "RecommendationRow",
    "figures",
    "members_sentence",
    "rank",
    "recommend",
]

KAFKA_ORDER: Final = ("range", "roundrobin", "sticky", "cooperative-sticky")
"""The last tie-break: Kafka's built-in classic assignors in its documentation's order."""

DEFAULT_RECOMMEND_FROM: Final = KAFKA_ORDER
"""The default `recommend_from`: what a classic client can run without a plugin."""

RECOMMENDATION_COLUMNS: Final[tuple[tuple[str, type, bool], ...]] = (
    ("group_id", str, False),
    ("current_strategy", str, True),
    ("recommended_strategy", str, True),
    ("reason", str, False),
    ("current_max_partitions_per_member", int, True),
    ("recommended_max_partitions_per_member", int, True),
    ("current_balance_gap", int, True),
    ("recommended_balance_gap", int, True),
    ("current_load_imbalance", float, True),
    ("recommended_load_imbalance", float, True),
    ("current_restart_paused", int, True),
    ("recommended_restart_paused", int, True),
    ("current_join_moved", int, True),
    ("recommended_join_moved", int, True),
)
"""(name, python type, nullable) of `recommendations`, in output order (docs/data-contract.md).
`*_load_imbalance` is filled only when load decides (`load_aware`)."""

RecommendationRow = dict[str, str | int | float | None]


@dataclass(frozen=True, slots=True, init=False)
class Figures:
    """What the rule compares for one strategy of one group (None: not known)."""

    strategy: str
    max_partitions_per_member: int | None
    balance_gap: int | None
    load_imbalance: float | None
    restart_paused: int | None
    join_moved: int | None

    def __init__(
        self,
        strategy: str,
        max_partitions_per_member: int | None,
        balance_gap: int | None,
        load_imbalance: float | None,
        restart_paused: int | None,
        join_moved: int | None,
    ) -> None:
        object.__setattr__(self, "strategy", strategy)
        object.__setattr__(self, "max_partitions_per_member", max_partitions_per_member)
        object.__setattr__(self, "balance_gap", balance_gap)
        object.__setattr__(self, "load_imbalance", load_imbalance)
        object.__setattr__(self, "restart_paused", restart_paused)
        object.__setattr__(self, "join_moved", join_moved)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _scenario_figure(
    rows: Sequence[Mapping[str, object]], scenario: str, column: str
) -> int | None:
    return next((_int(r.get(column)) for r in rows if r.get("scenario") == scenario), None)


def figures(
    strategy: str,
    metrics: Mapping[str, object],
    costs: Sequence[Mapping[str, object]],
    *,
    load_aware: bool,
) -> Figures:
    """The compared figures of one strategy from its `balance_metrics` and cost rows."""
    load: float | None = None
    if load_aware:
        load = _float(metrics.get("lag_imbalance"))
        if load is None:
            load = _float(metrics.get("weight_imbalance"))
    return Figures(
        strategy,
        _int(metrics.get("max_partitions_per_member")),
        _int(metrics.get("balance_gap")),
        load,
        _scenario_figure(costs, "rolling_restart", "paused_partition_count"),
        _scenario_figure(costs, "member_join", "moved_partition_count"),
    )


def _kafka_rank(strategy: str) -> tuple[int, str]:
    return (
        (KAFKA_ORDER.index(strategy), "")
        if strategy in KAFKA_ORDER
        else (len(KAFKA_ORDER), strategy)
    )


def _first(figs: Sequence[Figures]) -> str:
    """Which figure decides balance for these candidates: load, balance_gap or max."""
    if any(f.load_imbalance is not None for f in figs):
        return "load"
    if figs and all(f.balance_gap is not None for f in figs):
        return "gap"
    return "max"


def _first_value(f: Figures, which: str) -> float:
    value: float | int | None = {
        "load": f.load_imbalance,
        "gap": f.balance_gap,
        "max": f.max_partitions_per_member,
    }[which]
    if value is None:
        return math.inf
    return float(f"{value:.9g}") if which == "load" else float(value)


def rank(
    figs: Sequence[Figures], current: str | None, prefer: Collection[str] = ()
) -> list[Figures]:
    """The candidates best first, by the module's rule."""
    which = _first(figs)

    def key(f: Figures) -> tuple[float, float, float, int, int, tuple[int, str]]:
        return (
            _first_value(f, which),
            math.inf if f.restart_paused is None else f.restart_paused,
            math.inf if f.join_moved is None else f.join_moved,
            0 if f.strategy == current else 1,
            0 if f.strategy in prefer else 1,
            _kafka_rank(f.strategy),
        )

    return sorted(figs, key=key)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _describe(f: Figures, load: bool) -> str:
    """The figures of one strategy, for a sentence."""
    parts = []
    if load and f.load_imbalance is not None:
        parts.append(f"load imbalance {f.load_imbalance:.2f}")
    if f.max_partitions_per_member is not None:
        gap = "" if f.balance_gap is None else f" (balance gap {f.balance_gap})"
        parts.append(f"max {f.max_partitions_per_member} partitions per member{gap}")
    if f.restart_paused is not None:
        parts.append(f"a rolling restart pauses {_plural(f.restart_paused, 'partition')}")
    if f.join_moved is not None:
        parts.append(f"a member join moves {_plural(f.join_moved, 'partition')}")
    return "; ".join(parts) if parts else "no figures"


def _compare(cur: Figures, rec: Figures, load: bool) -> list[str]:
    """The figures that differ between current and recommended, as sentence parts."""
    out = []
    if load and cur.load_imbalance != rec.load_imbalance and rec.load_imbalance is not None:
        was = "?" if cur.load_imbalance is None else f"{cur.load_imbalance:.2f}"
        out.append(f"load imbalance {was} → {rec.load_imbalance:.2f}")
    a, b = cur.max_partitions_per_member, rec.max_partitions_per_member
    if a != b and b is not None:
        out.append(f"max {'?' if a is None else a} → {b} partitions per member")
    a, b = cur.restart_paused, rec.restart_paused
    if a != b and b is not None:
        out.append(f"a rolling restart pauses {_plural(b, 'partition')} instead of {a}")
    a, b = cur.join_moved, rec.join_moved
    if a != b and b is not None:
        out.append(f"a member join moves {_plural(b, 'partition')} instead of {a}")
    return out


def _reason(current: str | None, cur: Figures | None, best: Figures, n: int, load: bool) -> str:
    name = best.strategy
    if current is None:
        return f"{name}: no strategy is elected (the members share none); {_describe(best, load)}"
    if cur is None:
        return f"{name}: the current {current} was not planned; {_describe(best, load)}"
    if name == current:
        return f"{name} is already the best of {_plural(n, 'candidate')}: {_describe(best, load)}"
    diffs = _compare(cur, best, load)
    if not diffs:
        return (
            f"{name}: the same figures as {current}, which is not among the candidates;"
            f" {_describe(best, load)}"
        )
    return f"{name}: " + "; ".join(diffs)


def recommend(
    group_id: str,
    elected: str | None,
    candidates: Sequence[str],
    metrics_by_strategy: Mapping[str, Mapping[str, object]],
    costs_by_strategy: Mapping[str, Sequence[Mapping[str, object]]],
    *,
    load_aware: bool,
    prefer: Collection[str] = (),
) -> RecommendationRow:
    """The `recommendations` row of one group (columns: RECOMMENDATION_COLUMNS).

    `elected` is the strategy the group runs (the election's result, None when there is
    none); `candidates` is `recommend_from`; only those with a metrics row (planned) compete.
    `metrics_by_strategy` holds each strategy's `balance_metrics` row and
    `costs_by_strategy` its `rebalance_costs` rows. `load_aware`: lag or weights were given,
    so load imbalance decides balance. The rule is in the module docstring.
    """
    planned = [s for s in dict.fromkeys(candidates) if s in metrics_by_strategy]

    def figs_of(s: str) -> Figures:
        return figures(
            s, metrics_by_strategy[s], costs_by_strategy.get(s, ()), load_aware=load_aware
        )

    cur = figs_of(elected) if elected is not None and elected in metrics_by_strategy else None
    ranked = rank([figs_of(s) for s in planned], elected, prefer)
    row: RecommendationRow = {name: None for name, _, _ in RECOMMENDATION_COLUMNS}
    row["group_id"] = group_id
    row["current_strategy"] = elected
    if not ranked:
        listed = ", ".join(candidates) or "none"
        row["reason"] = f"no candidate strategy ({listed}) was planned for this group"
        _fill(row, "current", cur, load_aware)
        return row
    best = ranked[0]
    load = _first(ranked) == "load"
    row["recommended_strategy"] = best.strategy
    row["reason"] = _reason(elected, cur, best, len(ranked), load)
    _fill(row, "current", cur, load)
    _fill(row, "recommended", best, load)
    return row


def _fill(row: RecommendationRow, prefix: str, f: Figures | None, load: bool) -> None:
    if f is None:
        return
    row[f"{prefix}_max_partitions_per_member"] = f.max_partitions_per_member
    row[f"{prefix}_balance_gap"] = f.balance_gap
    row[f"{prefix}_load_imbalance"] = f.load_imbalance if load else None
    row[f"{prefix}_restart_paused"] = f.restart_paused
    row[f"{prefix}_join_moved"] = f.join_moved


def members_sentence(
    current: str | None,
    recommended: str | None,
    capacity_by_strategy: Mapping[str, Mapping[str, object]],
) -> str | None:
    """The recommendation's member count, where it matters, from the group's `capacity` rows
    (by strategy; docs/capacity.md): members idle under the current strategy, how many it can
    use and whether the recommended one uses them; else members short of or beyond the
    configured target. None when the member count does not matter (every member busy and no
    target, or the target met by the members the group runs), or the current strategy has
    no row. Shown beside the `reason` (describe, the report), not in it.

    >>> rows = {"range": {"members": 12, "active_members": 8, "max_useful_members": 8},
    ...         "cooperative-sticky": {"members": 12, "active_members": 12,
    ...                                "max_useful_members": 36}}
    >>> members_sentence("range", "cooperative-sticky", rows)
    'runs 12 members, 4 of them idle under range: 8 are useful; cooperative-sticky uses all 12'
    >>> rows["cooperative-sticky"] = {"members": 12, "active_members": 8, "max_useful_members": 8}
    >>> members_sentence("range", "cooperative-sticky", rows)
    'runs 12 members, 4 of them idle under range: 8 are useful; cooperative-sticky cannot use \
more either'
    >>> target = {"range": {"members": 3, "active_members": 3, "max_useful_members": 12,
    ...                     "members_for_target": 5, "target": "max_member_lag:10000"}}
    >>> members_sentence("range", "range", target)
    'runs 3 members: range needs 5 for max_member_lag:10000'
    """
    cur = capacity_by_strategy.get(current) if current is not None else None
    if cur is None:
        return None
    n, active = _int(cur.get("members")), _int(cur.get("active_members"))
    if n is None or active is None:
        return None
    if active < n:
        useful = _int(cur.get("max_useful_members"))
        can = (
            f"{useful} {'is' if useful == 1 else 'are'} useful"
            if useful is not None and useful < n
            else f"{active} hold partitions"
        )
        text = f"runs {_plural(n, 'member')}, {n - active} of them idle under {current}: {can}"
        rec = capacity_by_strategy.get(recommended) if recommended not in (None, current) else None
        rec_active = None if rec is None else _int(rec.get("active_members"))
        if rec is not None and rec_active is not None:
            rec_useful = _int(rec.get("max_useful_members"))
            if rec_active == n:
                text += f"; {recommended} uses all {n}"
            elif rec_active > active:
                text += f"; {recommended} uses {rec_active}"
            elif rec_useful is not None and rec_useful <= (useful or active):
                text += f"; {recommended} cannot use more either"
        return text
    needed, target = _int(cur.get("members_for_target")), cur.get("target")
    if needed is not None and target is not None and needed > n:
        return f"runs {_plural(n, 'member')}: {current} needs {needed} for {target}"
    return None
