"""Kafka's classic `RangeAssignor` (`range`), with KIP-881 racks.

Each topic is assigned on its own, over that topic's subscribers only, in `member_order`
(static members by group.instance.id, then dynamic ones by member.id). With q = partitions //
subscribers and r = partitions % subscribers, the subscriber at position i gets the contiguous
block of q + (1 if i < r) partitions starting at i*q + min(i, r). The first members therefore
take the extras of every topic: range keeps co-partitioned topics together but is not globally
balanced, and only static membership makes it sticky.

Worked example (one topic of 7 partitions, members c0..c4):
c0: p0,p1; c1: p2,p3; c2: p4; c3: p5; c4: p6.

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> spec = GroupSpec("g", tuple(Member(f"c{i}", frozenset({"t"})) for i in range(5)),
...                  {"t": TopicMetadata("t", 7)})
>>> {m: [p for _, p in tps] for m, tps in RangeAssignor().assign(spec).items()}
{'c0': [0, 1], 'c1': [2, 3], 'c2': [4], 'c3': [5], 'c4': [6]}

Rack-aware range (KIP-881, `RangeAssignor.assignWithRackMatching`): a topic needs rack logic
when its subscribers' racks meet its replica racks and not every partition is on the same
racks (`assignors.racks.use_rack_aware`). If any topic does, then before the plain pass:

* topics with the same subscribers (and racks) and the same partition count are
  co-partitioned: partition p of all of them goes to the first subscriber, in member order,
  that matches the racks of p in every one of them and still has room in each;
* a topic alone in its key that needs rack logic: each subscriber in order takes, up to its
  room, the still-free partitions on its rack.

Then the plain pass (each subscriber takes its room from the free partitions, in order) and
each member's list is sorted by (topic, partition). "Room" is Kafka's `maxAssignable`: q plus
one while extras remain, minus what the member has; so every member still ends with q or q+1
partitions of each topic, only which member gets which partition (and the extras) changes.
A member without a rack matches every partition.

Kafka's RangeAssignorTest (testRackAwareAssignmentWithUniformSubscription, replication 1 on
racks a, b, c): t1 (6), t2 (7), t3 (2), consumers on racks a, b, c:

>>> racks = "abc"
>>> def layout(n, off):
...     return tuple(frozenset(racks[(p + off) % 3]) for p in range(n))
>>> topics = {"t1": TopicMetadata("t1", 6, layout(6, 0)),
...           "t2": TopicMetadata("t2", 7, layout(7, 6)),
...           "t3": TopicMetadata("t3", 2, layout(2, 13))}
>>> subs = frozenset(topics)
>>> spec = GroupSpec("g", tuple(Member(f"consumer{i}", subs, rack=racks[i]) for i in range(3)),
...                  topics)
>>> {m: ", ".join(f"{t}-{p}" for t, p in tps) for m, tps in RangeAssignor().assign(spec).items()}
{'consumer0': 't1-0, t1-3, t2-0, t2-3, t2-6', 'consumer1': 't1-1, t1-4, t2-1, t2-4, t3-0', \
'consumer2': 't1-2, t1-5, t2-2, t2-5, t3-1'}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from mypy_extensions import mypyc_attr

from assignors.model import (
    Assignment,
    GroupSpec,
    Member,
    Rebalance,
    empty_assignment,
    member_order,
    needs_java_order,
    partitions_of,
    sort_partitions,
)
from assignors.protocol import EAGER_ONLY, RebalanceProtocol
from assignors.racks import member_rack, partition_racks, topic_racks, use_rack_aware


class _TopicState:
    """Kafka's `RangeAssignor.TopicAssignmentState`: one topic's range bookkeeping."""

    def __init__(
        self,
        topic: str,
        count: int,
        consumers: list[str],
        racks: dict[str, str | None],
        replica_racks: Sequence[frozenset[str]],
    ) -> None:
        self.topic = topic
        self.count = count
        self.consumers = consumers
        self.racks = racks
        self.quota, self.extras = divmod(count, len(consumers))
        self.assigned = dict.fromkeys(consumers, 0)
        self.free: dict[int, None] = dict.fromkeys(range(count))
        consumer_racks = {r for r in racks.values() if r is not None}
        self.replica_racks = replica_racks if consumer_racks else ()
        parts = [partition_racks(self.replica_racks, p) for p in range(count)]
        self.needs_racks = use_rack_aware(consumer_racks, parts)
        # Kafka groups co-partitioned topics by (consumers with racks, partitionRacks.size()),
        # and partitionRacks is only filled when some consumer has a rack.
        self.key = (tuple((c, racks[c]) for c in consumers), count if consumer_racks else 0)

    def racks_match(self, consumer: str, p: int) -> bool:
        rack = self.racks[consumer]
        return rack is None or rack in partition_racks(self.replica_racks, p)

    def room(self, consumer: str) -> int:
        """Kafka's maxAssignable."""
        extra = 1 if self.extras > 0 else 0
        return max(0, self.quota + extra - self.assigned[consumer])

    def give(self, consumer: str, parts: list[int], out: Assignment) -> None:
        """Kafka's onAssigned: a member crossing the quota uses up one extra."""
        out[consumer].extend((self.topic, p) for p in parts)
        n = self.assigned[consumer] + len(parts)
        self.assigned[consumer] = n
        if n > self.quota:
            self.extras -= 1
        for p in parts:
            del self.free[p]

    def assign_ranges(self, may_assign: Callable[[str, int], bool], out: Assignment) -> None:
        """Kafka's assignRanges: each consumer in order takes its room of the allowed ones."""
        for c in self.consumers:
            if not self.free:
                return
            room = self.room(c)
            take: list[int] = []
            for p in self.free:
                if len(take) >= room:
                    break
                if may_assign(c, p):
                    take.append(p)
            if take:
                self.give(c, take, out)


def _anything(consumer: str, p: int) -> bool:
    return True


def _assign_co_partitioned(states: list[_TopicState], out: Assignment) -> None:
    """Kafka's assignCoPartitionedWithRackMatching: partition p of every topic to one member."""
    remaining = list(states[0].consumers)
    for p in range(states[0].key[1]):
        chosen = next(
            (c for c in remaining if all(s.racks_match(c, p) and s.room(c) > 0 for s in states)),
            None,
        )
        if chosen is None:
            continue
        for s in states:
            s.give(chosen, [p], out)
        if not any(s.room(chosen) > 0 for s in states):
            remaining.remove(chosen)
            if not remaining:
                return


def _assign_with_rack_matching(states: list[_TopicState], out: Assignment) -> None:
    by_key: dict[tuple[tuple[tuple[str, str | None], ...], int], list[_TopicState]] = {}
    for s in states:
        by_key.setdefault(s.key, []).append(s)
    # Groups never share a topic, so Kafka's HashMap order over them does not matter.
    for group in by_key.values():
        if len(group) > 1:
            _assign_co_partitioned(group, out)
        elif group[0].needs_racks:
            group[0].assign_ranges(group[0].racks_match, out)


def _subscribers_in_order(spec: GroupSpec) -> dict[str, list[Member]]:
    """Each subscribed topic's members in Java member-id order."""
    rank = {m.member_id: i for i, m in enumerate(member_order(spec.members))}
    subscribers = spec.subscribers()
    return {
        topic: sorted(subscribers[topic], key=lambda m: rank[m.member_id])
        for topic in spec.subscribed_topics()
    }


@mypyc_attr(native_class=False)  # an ordinary class: tests and plugins may patch it
class RangeAssignor:
    name: ClassVar[str] = "range"
    java_class: ClassVar[str] = "org.apache.kafka.clients.consumer.RangeAssignor"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = EAGER_ONLY
    stateless: ClassVar[bool] = True
    balances_load: ClassVar[bool] = False

    def assign(self, spec: GroupSpec) -> Assignment:
        out = empty_assignment(spec)
        ordered = self.subscribers_in_order(spec)
        if any(member_rack(m) for m in spec.members):
            states = self._states(spec, ordered)
            if any(s.needs_racks for s in states):
                return self._assign_rack_aware(states, out)
        for topic, members in ordered.items():
            n = spec.partition_count(topic)
            parts = partitions_of(topic, n)
            q, r = divmod(n, len(members))
            start = 0
            for i, m in enumerate(members):
                size = q + (1 if i < r else 0)
                out[m.member_id].extend(parts[start : start + size])
                start += size
        return out

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        """Eager: every member revokes everything and gets the assignment in one round."""
        return Rebalance(self.assign(spec))

    def subscribers_in_order(self, spec: GroupSpec) -> dict[str, list[Member]]:
        """Each topic's subscribers in the order the extras go (a client library's variant
        orders them its own way)."""
        return _subscribers_in_order(spec)

    @staticmethod
    def _states(spec: GroupSpec, ordered: dict[str, list[Member]]) -> list[_TopicState]:
        racks = {m.member_id: member_rack(m) for m in spec.members}
        return [
            _TopicState(
                topic,
                spec.partition_count(topic),
                [m.member_id for m in members],
                racks,
                topic_racks(spec.topics.get(topic)),
            )
            for topic, members in ordered.items()
        ]

    @staticmethod
    def _assign_rack_aware(states: list[_TopicState], out: Assignment) -> Assignment:
        _assign_with_rack_matching(states, out)
        for s in states:
            s.assign_ranges(_anything, out)
        java = needs_java_order(s.topic for s in states)
        for tps in out.values():
            sort_partitions(tps, java)
        return out
