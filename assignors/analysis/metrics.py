"""Balance metrics of one group under one strategy (the `balance_metrics` table).

Names follow what operators read in `kafka-consumer-groups.sh`, Burrow and Cruise Control.
"Member" counts every member of the group, idle ones included; statistics are over the
member sizes (partitions per member), the standard deviation is the population one
(Cruise Control's ST_DEV).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from assignors.analysis.bounds import rack_and_balance_metrics
from assignors.analysis.flow import subscription_classes
from assignors.analysis.load import LOAD_METRIC_COLUMNS
from assignors.model import (
    Assignment,
    GroupSpec,
    LastSeen,
    TopicPartition,
    per_group,
)
from assignors.ownership import Owners, PreviousOwners, claims_by_topic, owned_claims

# (name, type) in output order; the Spark layer maps the types to Spark SQL types.
METRIC_COLUMNS: Final[tuple[tuple[str, type], ...]] = (
    ("member_count", int),
    ("topic_count", int),
    ("partition_count", int),
    ("assigned_partition_count", int),
    ("unassigned_partition_count", int),
    ("min_partitions_per_member", int),
    ("max_partitions_per_member", int),
    ("avg_partitions_per_member", float),
    ("stddev_partitions_per_member", float),
    ("partition_spread", int),
    ("is_fully_balanced", bool),
    ("idle_member_count", int),
    ("max_topic_spread", int),
    ("moved_partition_count", int),
    ("is_valid", bool),
    ("rebalance_rounds", int),
    ("revoked_partition_count", int),
    ("elected_strategy", str),
    # racks (KIP-881) and the best achievable balance: assignors.analysis.bounds
    ("rack_mismatch_count", int),
    ("best_max_partitions_per_member", int),
    ("balance_gap", int),
    ("bottleneck_topics", list),
    # load (offsets, weights): assignors.analysis.load, merged in by assignors.planner
    *LOAD_METRIC_COLUMNS,
)

Metrics = dict[str, int | float | bool | str | list[str] | None]


ELECTED_STRATEGY: Final = "elected_strategy"
"""The metric the planner fills in on `elected` rows only."""
REBALANCE_ROUNDS: Final = "rebalance_rounds"
"""The only metric that depends on the rounds, not on the assignment alone."""
_SHOWN = 5  # how many missing partitions a violation message lists


@dataclass(slots=True, init=False)
class Scan:
    """One pass over an assignment: its validity and what every metric needs (this runs for
    every group and strategy).

    `violation` is None for a valid assignment, else the first rule it breaks, as a sentence
    (what a plugin's INVALID_ASSIGNMENT row says).
    """

    violation: str | None
    assigned: int  # distinct existing partitions of subscribed topics
    topic_counts: dict[str, dict[str, int]]  # member_id -> topic -> partitions

    def __init__(
        self,
        violation: str | None,
        assigned: int,
        topic_counts: dict[str, dict[str, int]],
    ) -> None:
        self.violation = violation
        self.assigned = assigned
        self.topic_counts = topic_counts

    @property
    def valid(self) -> bool:
        return self.violation is None


def scan_assignment(spec: GroupSpec, assignment: Mapping[str, Sequence[TopicPartition]]) -> Scan:
    """The one definition of a valid assignment, as Kafka's group leader would accept it.

    Valid means: only members of the group; every partition of a subscribed, existing topic
    assigned exactly once, and only to a member that subscribes to its topic.

    >>> from assignors.model import Member, TopicMetadata
    >>> spec = GroupSpec("g", (Member("a", frozenset({"t"})), Member("b", frozenset({"t"}))),
    ...                  {"t": TopicMetadata("t", 2)})
    >>> scan_assignment(spec, {"a": [("t", 0)], "b": [("t", 1)]}).valid
    True
    >>> scan_assignment(spec, {"a": [("t", 0)], "b": [("t", 0)]}).violation
    "partition t-0 assigned to both 'a' and 'b'"
    """
    subs = {m.member_id: m.topics for m in spec.members}
    subscribed = set(spec.subscribed_topics())
    meta = spec.topics
    violation: str | None = None
    owner: dict[TopicPartition, str] = {}
    topic_counts: dict[str, dict[str, int]] = {}
    for member_id, tps in assignment.items():
        mine = subs.get(member_id)
        if mine is None:
            violation = violation or f"unknown member {member_id!r}"
            mine = frozenset()
        counts: dict[str, int] = {}
        topic_counts[member_id] = counts
        for tp in tps:
            topic, p = tp
            counts[topic] = counts.get(topic, 0) + 1
            if topic not in subscribed or not 0 <= p < meta[topic].partition_count:
                # not an existing partition of a subscribed topic: invalid, and not counted
                violation = violation or _violation(spec, member_id, tp, None, mine)
                continue
            first = owner.get(tp)
            if first is None:
                owner[tp] = member_id
                if topic in mine:
                    continue
            violation = violation or _violation(spec, member_id, tp, first, mine)
    expected = sum(meta[t].partition_count for t in subscribed)
    if violation is None and len(owner) < expected:
        missing = [(t, p) for t in spec.subscribed_topics() for p in range(meta[t].partition_count)
                   if (t, p) not in owner]  # fmt: skip
        shown = ", ".join(f"{t}-{p}" for t, p in missing[:_SHOWN])
        more = f" (and {len(missing) - _SHOWN} more)" if len(missing) > _SHOWN else ""
        violation = f"{len(missing)} partition(s) left unassigned: {shown}{more}"
    return Scan(violation, len(owner), topic_counts)


def _violation(
    spec: GroupSpec, member: str, tp: TopicPartition, first: str | None, mine: frozenset[str]
) -> str:
    """Why giving `tp` to `member` breaks the rules (`first`: its earlier owner, if any)."""
    topic, p = tp
    count = spec.partition_count(topic)
    if count == 0:
        return f"{member!r} got {topic}-{p} of a topic that does not exist"
    if not 0 <= p < count:
        return f"{member!r} got {topic}-{p}, but {topic} has partitions 0..{count - 1}"
    if topic not in mine or first is None:
        return f"{member!r} got {topic}-{p} but does not subscribe to {topic}"
    detail = "twice" if first == member else f"to both {first!r} and {member!r}"
    return f"partition {topic}-{p} assigned {detail}"


def is_valid(spec: GroupSpec, assignment: Assignment) -> bool:
    """Every existing subscribed partition assigned exactly once, and only to a subscriber."""
    return scan_assignment(spec, assignment).valid


def balance_metrics(
    spec: GroupSpec,
    assignment: Assignment,
    previous: Owners | None,
    rebalance_rounds: int = 1,
) -> Metrics:
    """The metrics row for `assignment`; `previous` is None when no current assignment is known.

    `rebalance_rounds` is how many rounds the strategy's protocol took (1 for eager);
    `elected_strategy` is filled in by the planner on the `elected` pseudo-strategy only.
    `moved_partition_count` counts assigned partitions whose previous owner (see
    `assignors.ownership.previous_owners`) is another member; partitions nobody owned before,
    or whose double claim was invalidated, have not moved. Only existing partitions of
    subscribed topics count as assigned, so an invalid assignment (a bogus or unsubscribed
    partition) cannot push unassigned_partition_count below zero.
    """
    facts = _facts(spec)
    topics = facts.topics
    partition_count = facts.partition_count
    sizes = [len(assignment.get(m.member_id, ())) for m in spec.members]
    n = len(sizes)
    lo = min(sizes, default=0)
    hi = max(sizes, default=0)
    avg, std = mean_and_stddev(sizes)

    counted = _count_valid(spec, facts, assignment, previous)
    if counted is not None:
        scan, moved, revoked = counted.scan, counted.moved, counted.revoked
    else:
        scan = scan_assignment(spec, assignment)
        moved = revoked = None
        if previous is not None:  # (most groups own nothing: skip the scans then)
            moved = _moved(assignment, previous) if previous else 0
            revoked = revoked_partition_count(spec, assignment) if facts.owns else 0
    return {
        "member_count": n,
        "topic_count": len(topics),
        "partition_count": partition_count,
        "assigned_partition_count": scan.assigned,
        "unassigned_partition_count": partition_count - scan.assigned,
        "min_partitions_per_member": lo,
        "max_partitions_per_member": hi,
        "avg_partitions_per_member": avg,
        "stddev_partitions_per_member": std,
        "partition_spread": hi - lo,
        "is_fully_balanced": hi - lo <= 1,
        "idle_member_count": sum(1 for s in sizes if s == 0),
        "max_topic_spread": _spread(facts, scan.topic_counts),
        "moved_partition_count": moved,
        "is_valid": scan.valid,
        REBALANCE_ROUNDS: rebalance_rounds,
        "revoked_partition_count": revoked,
        ELECTED_STRATEGY: None,
        **rack_and_balance_metrics(spec, assignment, hi, scan.violation is None),
    }


@dataclass(slots=True, init=False)
class _Facts:
    """What every metrics row of a group needs from the group alone, computed once per group
    (`per_group`: it is planned under several strategies in a row).

    A valid assignment is then checked and counted in one pass over its partitions, marking
    them in one byte each and reading their previous and live owners from per-topic lists:
    compact, where the sets and dicts of a million partition tuples (Kafka's large test)
    would miss the cache on every lookup.
    """

    topics: list[str]  # subscribed, existing topics (Java order)
    sizes: dict[str, int]  # those topics -> partition count
    partition_count: int
    subscriptions: dict[str, frozenset[str]]  # member_id -> its topics
    spread: list[tuple[list[str], list[str]]]  # (topics, their subscribers' ids), by subscribers
    owns: bool  # some member reports owning partitions
    # topic -> its partitions' live owners, when no partition is claimed by two live
    # members (None when one is: then `revoked_partition_count` counts them)
    owners: dict[str, list[str | None]] | None
    owned_total: int  # existing partitions live members own

    def __init__(
        self,
        topics: list[str],
        sizes: dict[str, int],
        partition_count: int,
        subscriptions: dict[str, frozenset[str]],
        spread: list[tuple[list[str], list[str]]],
        owns: bool,
        owners: dict[str, list[str | None]] | None,
        owned_total: int,
    ) -> None:
        self.topics = topics
        self.sizes = sizes
        self.partition_count = partition_count
        self.subscriptions = subscriptions
        self.spread = spread
        self.owns = owns
        self.owners = owners
        self.owned_total = owned_total


@per_group
def _facts(spec: GroupSpec) -> _Facts:
    topics = spec.subscribed_topics()
    sizes = {t: spec.partition_count(t) for t in topics}
    # topics with the same subscribers share their list (one per topic class)
    sc = subscription_classes(spec)
    spread = [
        (list(ts), [spec.members[i].member_id for j in js for i in sc.members[j]])
        for ts, js in zip(sc.topics, sc.subscribers, strict=True)
    ]
    owns = any(m.owned for m in spec.members)
    owners: dict[str, list[str | None]] | None = None
    owned_total = 0
    if owns:
        live = claims_by_topic(spec)
        if live is not None:  # also `previous_owners`' lists when no member departed
            owners = _each_topic(live, sizes)
            owned_total = sum(map(len, owned_claims(spec)[0]))
    return _Facts(
        topics,
        sizes,
        sum(sizes.values()),
        {m.member_id: m.topics for m in spec.members},
        spread,
        owns,
        owners,
        owned_total,
    )


def _each_topic(
    rows: dict[str, list[str | None]], sizes: dict[str, int]
) -> dict[str, list[str | None]]:
    """Per-topic owner lists for the topics of `sizes` only (the group's): the list of `rows`
    itself (shared, not copied), or one of None for a topic `rows` lacks."""
    return {t: rows.get(t) or [None] * n for t, n in sizes.items()}


# `previous` by partition (`_previous_rows`), for the last group and mapping seen
_PREVIOUS: LastSeen[tuple[_Facts, dict[str, list[str | None]], int]] = LastSeen()


def _previous_rows(facts: _Facts, previous: Owners) -> tuple[dict[str, list[str | None]], int]:
    """topic -> each partition's previous owner (the group's partitions only), and how many
    of the group's partitions have one; computed once per group and `previous`."""
    hit = _PREVIOUS.get(previous)
    if hit is not None and hit[0] is facts:
        return hit[1], hit[2]
    if isinstance(previous, PreviousOwners):  # the planner's: its lists, shared
        shared = _each_topic(previous.rows, facts.sizes)
        found = sum(previous.counts.get(t, 0) for t in facts.sizes)
        _PREVIOUS.put(previous, None, (facts, shared, found))
        return shared, found
    rows: dict[str, list[str | None]] = {t: [None] * n for t, n in facts.sizes.items()}
    count = 0
    for tp, owner in previous.items():
        row = rows.get(tp[0])
        p = tp[1]
        if row is not None and 0 <= p < len(row):
            row[p] = owner
            count += 1
    _PREVIOUS.put(previous, None, (facts, rows, count))
    return rows, count


def previous_by_topic(spec: GroupSpec, previous: Owners) -> dict[str, list[str | None]]:
    """topic -> each partition's previous owner, for the group's subscribed topics (the other
    partitions of `previous` are left out): a list index per partition where a million
    partition tuples would each be hashed for a lookup. Shared with the metrics; callers must
    not modify it."""
    return _previous_rows(_facts(spec), previous)[0]


@dataclass(slots=True, init=False)
class _Counted:
    """A valid assignment's `Scan` with its moved and revoked partitions (None without a
    current assignment)."""

    scan: Scan
    moved: int | None
    revoked: int | None

    def __init__(self, scan: Scan, moved: int | None, revoked: int | None) -> None:
        self.scan = scan
        self.moved = moved
        self.revoked = revoked


def _count_valid(
    spec: GroupSpec,
    facts: _Facts,
    assignment: Assignment,
    previous: Owners | None,
) -> _Counted | None:
    """The scan, moved and revoked counts of a valid assignment in one pass; None when it may
    be invalid (the exact `scan_assignment` then says why, and the counts are taken one by
    one).

    Valid: every partition lands on an unmarked byte of a subscribed topic of its member,
    and as many were assigned as the group has. Then each partition of the group is
    assigned once: it moved when its previous owner is another member, and a live member's
    owned partition is revoked unless that member keeps it.
    """
    subscriptions = facts.subscriptions
    marks = {t: bytearray(n) for t, n in facts.sizes.items()}
    before: dict[str, list[str | None]] | None = None
    with_owner = 0
    if previous:
        before, with_owner = _previous_rows(facts, previous)
    owners = facts.owners
    total = moved = kept = 0
    topic_counts: dict[str, dict[str, int]] = {}
    for member_id, tps in assignment.items():
        mine = subscriptions.get(member_id)
        if mine is None:
            return None
        counts: dict[str, int] = {}
        for tp in tps:
            topic = tp[0]
            p = tp[1]
            counts[topic] = counts.get(topic, 0) + 1
            seen = marks.get(topic)
            if seen is None or not 0 <= p < len(seen) or seen[p]:
                return None
            seen[p] = 1
            if before is not None and before[topic][p] == member_id:
                moved -= 1  # kept by its previous owner
            if owners is not None and owners[topic][p] == member_id:
                kept += 1
        if not mine.issuperset(counts):
            return None
        topic_counts[member_id] = counts
        total += len(tps)
    if total != facts.partition_count:
        return None
    scan = Scan(None, total, topic_counts)
    if previous is None:
        return _Counted(scan, None, None)
    return _Counted(scan, moved + with_owner, _revoked(spec, facts, assignment, kept))


def _revoked(spec: GroupSpec, facts: _Facts, assignment: Assignment, kept: int) -> int:
    """`revoked_partition_count` of a valid assignment whose live owners keep `kept`."""
    if not facts.owns:
        return 0
    if facts.owners is None:  # a partition claimed twice: counted one by one
        return revoked_partition_count(spec, assignment)
    return facts.owned_total - kept


def _moved(assignment: Assignment, previous: Owners) -> int:
    """Assigned partitions whose previous owner is another member (repeats count)."""
    return sum(
        1
        for member_id, tps in assignment.items()
        for tp in tps
        if (owner := previous.get(tp)) is not None and owner != member_id
    )


def _spread(facts: _Facts, topic_counts: dict[str, dict[str, int]]) -> int:
    """`_max_topic_spread` over the group's subscriber classes (`_Facts.spread`)."""
    empty: dict[str, int] = {}
    worst = 0
    for topics, member_ids in facts.spread:
        counters = [topic_counts.get(m, empty) for m in member_ids]
        for topic in topics:
            counts = [c.get(topic, 0) for c in counters]
            worst = max(worst, max(counts) - min(counts))
    return worst


def mean_and_stddev(sizes: Sequence[int]) -> tuple[float, float]:
    """Mean and population standard deviation of integer sizes, from exact integer sums.

    Var = (n·Σs² − (Σs)²) / n², computed in integers and divided once, so the result is
    bit-for-bit the same whatever order the sizes come in (float sums are not associative).

    >>> mean_and_stddev([1, 2, 3, 4]), mean_and_stddev([4, 3, 2, 1])
    ((2.5, 1.118033988749895), (2.5, 1.118033988749895))
    >>> mean_and_stddev([])
    (0.0, 0.0)
    """
    n = len(sizes)
    if not n:
        return 0.0, 0.0
    total = sum(sizes)
    squares = sum(s * s for s in sizes)
    return total / n, math.sqrt((n * squares - total * total) / (n * n))


def revoked_partition_count(spec: GroupSpec, assignment: Assignment) -> int:
    """Existing partitions that a live member reports owning but does not keep.

    These are what the members give up (revoke) in this rebalance: with an eager protocol
    every member revokes everything anyway, so this is the number of partitions whose
    processing actually pauses. Partitions of departed members are not revoked by anyone;
    a partition two members claim counts once.
    """
    keeps = {m: set(tps) for m, tps in assignment.items()}
    revoked: set[TopicPartition] = set()
    for m in spec.members:
        mine = keeps.get(m.member_id, set())
        for tp in m.owned:
            if tp not in mine and 0 <= tp[1] < spec.partition_count(tp[0]):
                revoked.add(tp)
    return len(revoked)


def max_topic_spread(spec: GroupSpec, assignment: Assignment) -> int:
    """The worst per-topic spread: max - min of a topic's partitions across its subscribers.

    Range gives 0 or 1 here by construction; sticky strategies can give a whole topic to one
    member (count-balanced but not topic-balanced), which this metric exposes.
    """
    scan = scan_assignment(spec, assignment)
    return _max_topic_spread(spec, scan.topic_counts)


def _max_topic_spread(spec: GroupSpec, topic_counts: dict[str, dict[str, int]]) -> int:
    empty: dict[str, int] = {}
    worst = 0
    for topic, members in spec.subscribers().items():
        counts = [topic_counts.get(m.member_id, empty).get(topic, 0) for m in members]
        worst = max(worst, max(counts) - min(counts))
    return worst
