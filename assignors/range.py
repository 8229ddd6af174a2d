"""Kafka's classic `RangeAssignor` (`range`), reference §2.1.

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
"""

from __future__ import annotations

from assignors.model import Assignment, GroupSpec, Member, empty_assignment, member_order


class RangeAssignor:
    name = "range"
    java_class = "org.apache.kafka.clients.consumer.RangeAssignor"

    def assign(self, spec: GroupSpec) -> Assignment:
        out = empty_assignment(spec)
        rank = {m.member_id: i for i, m in enumerate(member_order(spec.members))}
        subscribers = spec.subscribers()
        for topic in spec.subscribed_topics():
            members: list[Member] = sorted(subscribers[topic], key=lambda m: rank[m.member_id])
            n = spec.partition_count(topic)
            q, r = divmod(n, len(members))
            start = 0
            for i, m in enumerate(members):
                size = q + (1 if i < r else 0)
                out[m.member_id].extend((topic, p) for p in range(start, start + size))
                start += size
        return out
