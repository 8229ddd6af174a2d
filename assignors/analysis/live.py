"""Live truth: does the cluster hold what the group's assignor would have given it?

Two pure steps of one group (docs/live.md):

- `group_library`: which client library leads the group, from the members'
  `subscriptions.client_library` and the run's `[clients] library_by_group` patterns (a
  pattern that matches the group id wins over the column), and `library_variant`: the
  strategy `elected` plans with, the elected strategy's variant of that library
  (`range@kafka-python`) where the registry has one, else Java's;
- `live_check`: the group's `live_check` row, the current assignment (or a KIP-848 group's
  target assignment) against the `elected` plan, with one verdict of `VERDICTS`, decided in
  that order of precedence (the first that applies):

  1. REBALANCING: the snapshot caught the group in a rebalance (`group_state`), its members
     report different generations, or a KIP-848 group's members still hold something else
     than their target;
  2. MATCHES_ELECTED: what the group holds (its target, for a KIP-848 group with one) is
     exactly the plan;
  3. SAME_SIZES: not exact, but every member holds as many partitions as the plan gives it
     (the ties the sticky family breaks by history);
  4. STALE_OWNERS: departed members hold partitions, or subscribed partitions nobody holds;
  5. UNEXPLAINED: none of these (a custom assignor, a client the planner does not model, or
     a bug).

  A group mid-rebalance is judged as such before anything else: what it holds then is no
  assignment any rebalance settled on, so neither a match nor a mismatch means anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Final

from assignors.catalog.registry import JAVA, LIBRARIES, canonical_name
from assignors.inputs.validation import REBALANCING_STATES
from assignors.model import CONSUMER, Assignment, GroupSpec, TopicPartition
from assignors.problems import WARNING, Problem, Reason

MATCHES_ELECTED: Final = "MATCHES_ELECTED"
SAME_SIZES: Final = "SAME_SIZES"
REBALANCING: Final = "REBALANCING"
STALE_OWNERS: Final = "STALE_OWNERS"
UNEXPLAINED: Final = "UNEXPLAINED"
VERDICTS: Final = (REBALANCING, MATCHES_ELECTED, SAME_SIZES, STALE_OWNERS, UNEXPLAINED)
"""The verdicts, in their order of precedence (the module docstring)."""

LIVE_CHECK_COLUMNS: Final[tuple[tuple[str, type, bool], ...]] = (
    ("group_id", str, False),
    ("elected_strategy", str, True),
    ("client_library", str, True),
    ("verdict", str, False),
    ("differing_partition_count", int, False),
    ("detail", str, False),
)
"""(name, python type, nullable) of `live_check`, in output order (docs/data-contract.md)."""

LiveRow = dict[str, str | int | None]

_EXAMPLES: Final = 3  # partitions or members named in a detail, at most


# ---- which library leads the group ------------------------------------------------------------


def normalise_library(value: str | None) -> str | None:
    """A `client_library` value as the planner reads it: a known library's name in lower
    case, another name stripped and kept as given, None for null or blank (Java).

    >>> [normalise_library(v) for v in (" LibRdKafka ", "sarama", "", None)]
    ['librdkafka', 'sarama', None, None]
    """
    if value is None:
        return None
    name = value.strip()
    if not name:
        return None
    return name.lower() if name.lower() in LIBRARIES else name


def group_library(
    group_id: str,
    libraries: Iterable[str | None],
    by_group: Sequence[tuple[str, str]] = (),
) -> tuple[str, list[Problem]]:
    """The client library whose leader assigns the group, and its warnings.

    Precedence: the first `by_group` pattern (a glob, `fnmatch` rules, case-sensitive as
    group ids are) that matches `group_id`; else the members' `client_library` when they
    agree, a null being no evidence (the exporter names a library only where it has some);
    none named: Java; different names: Java, with a MIXED_CLIENT_LIBRARY warning: a snapshot
    does not say which member leads, and a group in a rolling change of client may be led
    by either.

    >>> group_library("pay-1", ["librdkafka", None], [("pay-*", "kafka-python")])
    ('kafka-python', [])
    >>> group_library("g", [None, "java"])
    ('java', [])
    >>> group_library("g", ["kafka-python", None])
    ('kafka-python', [])
    """
    for pattern, library in by_group:
        if fnmatchcase(group_id, pattern):
            return normalise_library(library) or JAVA, []
    named = (normalise_library(v) for v in libraries)
    seen = sorted({v for v in named if v is not None})
    if len(seen) <= 1:
        return (seen[0] if seen else JAVA), []
    listed = ", ".join(seen)
    problem = Problem(
        group_id,
        None,
        None,
        WARNING,
        Reason.MIXED_CLIENT_LIBRARY,
        f"group {group_id!r}: members run different client libraries ({listed}); the snapshot"
        f" does not say which one leads, so `elected` is planned with Java's assignor; name"
        f" the group's library in [clients] library_by_group",
    )
    return JAVA, [problem]


def library_variant(strategy: str, library: str | None) -> str:
    """The strategy `elected` plans with for a group whose leader runs `library`: the
    elected strategy's variant of that library where one exists (or is an alias of Java's),
    else the strategy itself (Java's; a plugin is its own).

    >>> [library_variant("range", lib) for lib in ("kafka-python", "java", "sarama", None)]
    ['range@kafka-python', 'range', 'range', 'range']
    """
    if library is None or library == JAVA or library not in LIBRARIES:
        return strategy
    found = canonical_name(f"{strategy}@{library}")
    return found if found is not None else strategy


# ---- the verdict ------------------------------------------------------------------------------


def _tp(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def _some(items: Sequence[str], total: int | None = None) -> str:
    """The first few of `items`, and how many more."""
    n = len(items) if total is None else total
    shown = ", ".join(items[:_EXAMPLES])
    return shown + (f" and {n - _EXAMPLES} more" if n > _EXAMPLES else "")


def _owners(holdings: Mapping[str, Iterable[TopicPartition]]) -> dict[TopicPartition, list[str]]:
    out: dict[TopicPartition, list[str]] = {}
    for member, tps in holdings.items():
        for tp in tps:
            out.setdefault(tp, []).append(member)
    return out


def _differing(
    held: Mapping[str, Iterable[TopicPartition]], planned: Assignment
) -> list[tuple[TopicPartition, list[str], str | None]]:
    """(partition, who holds it, the plan's owner) for every partition whose holders are not
    exactly the plan's owner, in partition order."""
    holders = _owners(held)
    plan_owner = {tp: m for m, tps in planned.items() for tp in tps}
    out = []
    for tp in sorted(set(holders) | set(plan_owner)):
        who = sorted(holders.get(tp, []))
        owner = plan_owner.get(tp)
        if who != ([] if owner is None else [owner]):
            out.append((tp, who, owner))
    return out


def _differences(
    differing: Sequence[tuple[TopicPartition, list[str], str | None]], planned_with: str
) -> str:
    """How many partitions differ from the plan, and the first few."""
    shown = [
        f"{_tp(tp)} on {'+'.join(who) or 'nobody'} (plan: {owner or 'nobody'})"
        for tp, who, owner in differing[:_EXAMPLES]
    ]
    return f"{len(differing)} partition(s) differ from the {planned_with} plan: " + _some(
        shown, len(differing)
    )


def _rebalancing(
    spec: GroupSpec,
    states: Iterable[str | None],
    target: Mapping[str, Sequence[TopicPartition]] | None,
) -> list[str]:
    """Why the group is mid-rebalance (empty: it is not)."""
    why: list[str] = []
    known = {s.strip() for s in states if s and s.strip()}
    found = sorted(s for s in known if s.lower() in REBALANCING_STATES)
    if found:
        why.append(f"group state {'/'.join(found)}")
    generations: dict[int, list[str]] = {}
    for m in spec.members:
        if m.generation is not None:
            generations.setdefault(m.generation, []).append(m.member_id)
    # A member's `generation` is that of the partitions it reported owning when it joined: in
    # a group its coordinator calls Stable, members that joined in different rounds differ
    # (seen on live kafka-python groups), so only a snapshot without the state goes by them.
    stable = bool(known) and all(s.lower() == "stable" for s in known)
    if len(generations) > 1 and not stable:
        parts = [f"{_some(ids)} at {g}" for g, ids in sorted(generations.items(), reverse=True)]
        why.append("members report different generations (" + "; ".join(parts) + ")")
    if target is not None:
        behind = [
            f"{m.member_id} holds {len(m.owned)} (target {len(target.get(m.member_id, ()))})"
            for m in spec.members
            if sorted(m.owned) != sorted(target.get(m.member_id, ()))
        ]
        if behind:
            why.append(
                f"{len(behind)} member(s) still reconcile towards the target: {_some(behind)}"
            )
    return why


def _stale(spec: GroupSpec, held: Mapping[str, Sequence[TopicPartition]]) -> list[str]:
    """The departed members that hold partitions, and the subscribed partitions nobody
    holds (empty: neither)."""
    why: list[str] = []
    departed = {m: tps for m, tps in spec.departed.items() if tps}
    if departed:
        count = sum(len(tps) for tps in departed.values())
        members = [f"{m} ({len(tps)})" for m, tps in sorted(departed.items())]
        first = min(tp for tps in departed.values() for tp in tps)
        why.append(
            f"{count} partition(s) held by {len(departed)} departed member(s): {_some(members)},"
            f" e.g. {_tp(first)}"
        )
    holders = _owners(held)
    nobody = [
        (t, p)
        for t in spec.subscribed_topics()
        for p in range(spec.partition_count(t))
        if (t, p) not in holders
    ]
    if nobody:
        why.append(
            f"{len(nobody)} subscribed partition(s) held by nobody: "
            + _some([_tp(tp) for tp in nobody])
        )
    return why


def _settled(
    spec: GroupSpec,
    compared: Mapping[str, Sequence[TopicPartition]],
    planned: Assignment,
    differing: Sequence[tuple[TopicPartition, list[str], str | None]],
    what: str,
    classic: bool,
    planned_with: str,
) -> tuple[str, list[str]]:
    """The verdict of a group that is not mid-rebalance, against its plan, and its evidence."""
    if not differing:
        total = sum(len(tps) for tps in planned.values())
        return MATCHES_ELECTED, [
            f"the {what} ({total} partition(s) over {len(planned)} member(s)) is exactly the"
            f" {planned_with} plan"
        ]
    same = all(len(compared.get(m, ())) == len(tps) for m, tps in planned.items())
    if same and all(m in planned or not tps for m, tps in compared.items()):
        sizes = [f"{m}: {len(tps)}" for m, tps in planned.items()]
        return SAME_SIZES, [
            _differences(differing, planned_with),
            f"every member holds as many partitions as the plan gives it ({_some(sizes)})",
        ]
    stale = _stale(spec, compared) if classic else []
    if stale:
        return STALE_OWNERS, [*stale, _differences(differing, planned_with)]
    evidence = [_differences(differing, planned_with)]
    sizes = [
        f"{m} holds {len(compared.get(m, ()))} (plan {len(tps)})"
        for m, tps in planned.items()
        if len(compared.get(m, ())) != len(tps)
    ]
    if sizes:
        evidence.append("sizes differ: " + _some(sizes))
    return UNEXPLAINED, evidence


def live_check(
    spec: GroupSpec,
    planned: Assignment | None,
    elected: str | None,
    client_library: str | None,
    states: Iterable[str | None] = (),
    target: Mapping[str, Sequence[TopicPartition]] | None = None,
    not_planned: str | None = None,
) -> LiveRow | None:
    """The group's `live_check` row; None when it has no current assignment (no member,
    live or departed, holds anything) and no target.

    `planned`: the `elected` plan (None: not planned, `not_planned` says why); `elected`: the
    strategy it was planned with (a library's variant: `range@kafka-python`);
    `states`: the members' `group_state` values; `target`: a KIP-848 group's target
    assignment (member -> partitions; None: none given, or a classic group), compared
    instead of what the members hold. `differing_partition_count` counts the partitions of
    the compared assignment whose holders are not exactly the plan's owner."""
    holds = {m.member_id: tuple(m.owned) for m in spec.members}
    live_held = any(holds.values()) or any(spec.departed.values())
    if target is not None and spec.group_protocol != CONSUMER:
        target = None  # only the broker of a KIP-848 group computes a target
    if not live_held and not target:
        return None
    compared: dict[str, Sequence[TopicPartition]]
    if target is not None:
        compared = {m.member_id: tuple(target.get(m.member_id, ())) for m in spec.members}
        for other, tps in target.items():
            compared.setdefault(other, tuple(tps))
        what = "target assignment"
    else:
        compared = {**holds, **spec.departed}
        what = "current assignment"
    planned_with = elected or "elected"
    differing = _differing(compared, planned) if planned is not None else []
    why = _rebalancing(spec, states, target)
    if why:
        verdict, evidence = REBALANCING, why
        if planned is not None:
            evidence.append(
                f"the {what} is exactly the {planned_with} plan"
                if not differing
                else _differences(differing, planned_with)
            )
    elif planned is not None:
        verdict, evidence = _settled(
            spec, compared, planned, differing, what, target is None, planned_with
        )
        if verdict == UNEXPLAINED:
            evidence.append(
                f"the leader ran neither {planned_with} nor a modelled client's variant of it"
                f" (client_library {client_library or JAVA}): a custom assignor, a client the"
                " planner does not model, or a bug"
            )
    else:
        stale = _stale(spec, compared) if target is None else []
        verdict = STALE_OWNERS if stale else UNEXPLAINED
        evidence = stale or [f"`elected` is not planned ({not_planned or 'no common strategy'})"]
    return {
        "group_id": spec.group_id,
        "elected_strategy": elected,
        "client_library": client_library,
        "verdict": verdict,
        "differing_partition_count": len(differing),
        "detail": "; ".join(evidence),
    }
