"""Balance metrics of one group under one strategy (DESIGN §4).

Names follow what operators read in `kafka-consumer-groups.sh`, Burrow and Cruise Control.
"Member" counts every member of the group, idle ones included; statistics are over the
member sizes (partitions per member), the standard deviation is the population one
(Cruise Control's ST_DEV).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Final

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
)

Metrics = dict[str, int | float | bool | None]


def is_valid(spec: GroupSpec, assignment: Assignment) -> bool:
    """Every existing subscribed partition assigned exactly once, and only to a subscriber."""
    subs = {m.member_id: m.topics for m in spec.members}
    if set(assignment) - set(subs):
        return False
    seen: set[TopicPartition] = set()
    for member_id, tps in assignment.items():
        topics = subs[member_id]
        for tp in tps:
            topic, p = tp
            if topic not in topics or not 0 <= p < spec.partition_count(topic) or tp in seen:
                return False
            seen.add(tp)
    expected = sum(spec.partition_count(t) for t in spec.subscribed_topics())
    return len(seen) == expected


def balance_metrics(
    spec: GroupSpec,
    assignment: Assignment,
    previous: Mapping[TopicPartition, str] | None,
) -> Metrics:
    """The metrics row for `assignment`; `previous` is None when no current assignment is known.

    `moved_partition_count` counts assigned partitions whose previous owner (see
    `assignors.ownership.previous_owners`) is another member; partitions nobody owned before,
    or whose double claim was invalidated, have not moved.
    """
    topics = spec.subscribed_topics()
    partition_count = sum(spec.partition_count(t) for t in topics)
    sizes = [len(assignment.get(m.member_id, ())) for m in spec.members]
    n = len(sizes)
    # Only existing partitions of subscribed topics count as assigned, so an invalid assignment
    # (a bogus or unsubscribed partition) cannot push unassigned_partition_count below zero.
    subscribed = set(topics)
    assigned = {
        tp
        for tps in assignment.values()
        for tp in tps
        if tp[0] in subscribed and 0 <= tp[1] < spec.partition_count(tp[0])
    }
    lo = min(sizes, default=0)
    hi = max(sizes, default=0)
    avg = sum(sizes) / n if n else 0.0
    std = math.sqrt(sum((s - avg) ** 2 for s in sizes) / n) if n else 0.0

    moved: int | None = None
    if previous is not None:
        moved = sum(
            1
            for member_id, tps in assignment.items()
            for tp in tps
            if (owner := previous.get(tp)) is not None and owner != member_id
        )
    return {
        "member_count": n,
        "topic_count": len(topics),
        "partition_count": partition_count,
        "assigned_partition_count": len(assigned),
        "unassigned_partition_count": partition_count - len(assigned),
        "min_partitions_per_member": lo,
        "max_partitions_per_member": hi,
        "avg_partitions_per_member": avg,
        "stddev_partitions_per_member": std,
        "partition_spread": hi - lo,
        "is_fully_balanced": hi - lo <= 1,
        "idle_member_count": sum(1 for s in sizes if s == 0),
        "max_topic_spread": max_topic_spread(spec, assignment),
        "moved_partition_count": moved,
        "is_valid": is_valid(spec, assignment),
    }


def max_topic_spread(spec: GroupSpec, assignment: Assignment) -> int:
    """The worst per-topic spread: max - min of a topic's partitions across its subscribers.

    Range gives 0 or 1 here by construction; sticky strategies can give a whole topic to one
    member (count-balanced but not topic-balanced), which this metric exposes.
    """
    per_member_topic: Counter[tuple[str, str]] = Counter()
    for member_id, tps in assignment.items():
        for topic, _ in tps:
            per_member_topic[(member_id, topic)] += 1
    worst = 0
    for topic, members in spec.subscribers().items():
        counts = [per_member_topic[(m.member_id, topic)] for m in members]
        worst = max(worst, max(counts) - min(counts))
    return worst
