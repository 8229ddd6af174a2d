"""Balance metrics of one group under one strategy (DESIGN §4).

Names follow what operators read in `kafka-consumer-groups.sh`, Burrow and Cruise Control.
"Member" counts every member of the group, idle ones included; statistics are over the
member sizes (partitions per member), the standard deviation is the population one
(Cruise Control's ST_DEV).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from assignors.balance import rack_and_balance_metrics
from assignors.model import Assignment, GroupSpec, TopicPartition

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
    # racks (KIP-881) and the best achievable balance: assignors.balance
    ("rack_mismatch_count", int),
    ("best_max_partitions_per_member", int),
    ("balance_gap", int),
    ("bottleneck_topics", list),
)

Metrics = dict[str, int | float | bool | str | list[str] | None]


@dataclass(slots=True)
class _Scan:
    """One pass over an assignment: what every metric needs (this runs for every group)."""

    valid: bool
    assigned: int  # distinct existing partitions of subscribed topics
    topic_counts: dict[str, dict[str, int]]  # member_id -> topic -> partitions


def _scan(spec: GroupSpec, assignment: Assignment, subscribed: set[str]) -> _Scan:
    subs = {m.member_id: m.topics for m in spec.members}
    meta = spec.topics
    valid = not (assignment.keys() - subs.keys())
    seen: set[TopicPartition] = set()
    total = 0
    topic_counts: dict[str, dict[str, int]] = {}
    for member_id, tps in assignment.items():
        mine = subs.get(member_id, frozenset())
        counts: dict[str, int] = {}
        topic_counts[member_id] = counts
        total += len(tps)
        for tp in tps:
            topic, p = tp
            counts[topic] = counts.get(topic, 0) + 1
            t = meta.get(topic)
            if t is None or not 0 <= p < t.partition_count or topic not in subscribed:
                valid = False
                continue
            if topic not in mine:
                valid = False
            seen.add(tp)
    expected = sum(meta[t].partition_count for t in subscribed)
    # Duplicates show as more assigned entries than distinct partitions.
    valid = valid and total == len(seen) == expected
    return _Scan(valid, len(seen), topic_counts)


def is_valid(spec: GroupSpec, assignment: Assignment) -> bool:
    """Every existing subscribed partition assigned exactly once, and only to a subscriber."""
    return _scan(spec, assignment, set(spec.subscribed_topics())).valid


def balance_metrics(
    spec: GroupSpec,
    assignment: Assignment,
    previous: Mapping[TopicPartition, str] | None,
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
    topics = spec.subscribed_topics()
    partition_count = sum(spec.partition_count(t) for t in topics)
    sizes = [len(assignment.get(m.member_id, ())) for m in spec.members]
    n = len(sizes)
    scan = _scan(spec, assignment, set(topics))
    lo = min(sizes, default=0)
    hi = max(sizes, default=0)
    avg = sum(sizes) / n if n else 0.0
    std = math.sqrt(sum((s - avg) ** 2 for s in sizes) / n) if n else 0.0

    moved: int | None = None
    revoked: int | None = None
    if previous is not None:  # (most groups own nothing: skip the scans then)
        moved = (
            sum(
                1
                for member_id, tps in assignment.items()
                for tp in tps
                if (owner := previous.get(tp)) is not None and owner != member_id
            )
            if previous
            else 0
        )
        owns = any(m.owned for m in spec.members)
        revoked = revoked_partition_count(spec, assignment) if owns else 0
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
        "max_topic_spread": _max_topic_spread(spec, scan.topic_counts),
        "moved_partition_count": moved,
        "is_valid": scan.valid,
        "rebalance_rounds": rebalance_rounds,
        "revoked_partition_count": revoked,
        "elected_strategy": None,
        **rack_and_balance_metrics(spec, assignment, hi, scan.valid),
    }


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
    scan = _scan(spec, assignment, set(spec.subscribed_topics()))
    return _max_topic_spread(spec, scan.topic_counts)


def _max_topic_spread(spec: GroupSpec, topic_counts: dict[str, dict[str, int]]) -> int:
    empty: dict[str, int] = {}
    worst = 0
    for topic, members in spec.subscribers().items():
        counts = [topic_counts.get(m.member_id, empty).get(topic, 0) for m in members]
        worst = max(worst, max(counts) - min(counts))
    return worst
