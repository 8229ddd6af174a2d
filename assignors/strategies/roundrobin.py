"""Kafka's classic `RoundRobinAssignor` (`roundrobin`).

All partitions of all subscribed topics (topics in Java string order, partitions ascending)
form one list. A single circular pointer walks the members in `member_order`; for each
partition it skips members not subscribed to that partition's topic, assigns, and advances.
The pointer is **not** reset between topics, and skipped members get no compensation, so
unequal subscriptions can leave the group unbalanced.

Worked example: T0 (3), T1 (2), T2 (4); C0 -> [T0, T1], C1 -> [T1, T2], C2 -> [T2, T0]:
C0: T0p0, T0p2, T1p1; C1: T1p0, T2p0, T2p2; C2: T0p1, T2p1, T2p3.

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> subs = {"C0": {"T0", "T1"}, "C1": {"T1", "T2"}, "C2": {"T2", "T0"}}
>>> spec = GroupSpec("g", tuple(Member(m, frozenset(t)) for m, t in subs.items()),
...                  {t: TopicMetadata(t, n) for t, n in {"T0": 3, "T1": 2, "T2": 4}.items()})
>>> RoundRobinAssignor().assign(spec)["C0"]
[('T0', 0), ('T0', 2), ('T1', 1)]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from mypy_extensions import mypyc_attr

from assignors.model import (
    Assignment,
    GroupSpec,
    Member,
    Rebalance,
    empty_assignment,
    member_order,
    partitions_of,
)
from assignors.protocol import EAGER_ONLY, RebalanceProtocol


@mypyc_attr(native_class=False)  # an ordinary class: tests and plugins may patch it
class RoundRobinAssignor:
    name: ClassVar[str] = "roundrobin"
    java_class: ClassVar[str] = "org.apache.kafka.clients.consumer.RoundRobinAssignor"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = EAGER_ONLY
    stateless: ClassVar[bool] = True
    balances_load: ClassVar[bool] = False

    def assign(self, spec: GroupSpec) -> Assignment:
        out = empty_assignment(spec)
        ordered = self.ordered_members(spec.members)
        if not ordered:
            return out
        ids = [m.member_id for m in ordered]
        subs = [m.topics for m in ordered]
        k = len(ordered)
        pointer = 0
        for topic in spec.subscribed_topics():
            for tp in partitions_of(topic, spec.partition_count(topic)):
                # A subscribed topic exists, so some member takes it within k steps.
                while topic not in subs[pointer]:
                    pointer = (pointer + 1) % k
                out[ids[pointer]].append(tp)
                pointer = (pointer + 1) % k
        return out

    def ordered_members(self, members: Iterable[Member]) -> list[Member]:
        """The order the pointer walks (a client library's variant orders members its own
        way)."""
        return member_order(members)

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        """Eager: every member revokes everything and gets the assignment in one round."""
        return Rebalance(self.assign(spec))
