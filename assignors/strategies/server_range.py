"""Kafka's KIP-848 broker-side range assignor (`server-range`).

`org.apache.kafka.coordinator.group.assignor.RangeAssignor`, as the group coordinator runs it
since Kafka 3.9 (the rewrite that made it non-sticky; 3.8's sticky variant is not modelled).
A `group.protocol=consumer` group runs it when its members set `group.remote.assignor=range`
(see `assignors.catalog.election.elect_server_assignor`). Its protocol name in Kafka is
`range`; here it is `server-range`, because `range` already names the client-side
`RangeAssignor`.

The rule:

* members are ordered as Kafka's `MemberInfo` order (`assignors.model.member_order`): static
  members first, by `group.instance.id`, then the dynamic ones, by member id, both in Java
  string order;
* each subscribed topic is split on its own among its subscribers, in that order: with n
  partitions and k subscribers, every subscriber gets a contiguous range of n div k
  partitions and the first n mod k of them one partition more;
* the current target (`owned`) is not read: the result is not sticky, and the movement
  metrics against `current_assignment` show what a rebalance moves;
* racks are ignored (the broker assignors lost rack awareness in Kafka 3.8);
* a subscribed topic that does not exist is dropped: the coordinator resolves topic names to
  ids before it calls the assignor, and an unknown name resolves to nothing (the assignor
  itself would throw).

Every member appears in the result, an empty list when it gets nothing (Kafka leaves such a
member with an empty assignment too).

Worked examples, from Kafka's `RangeAssignorTest` (group-coordinator). Two members, both
subscribed to T1 (3 partitions) and T3 (2):

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> meta = {"T1": TopicMetadata("T1", 3), "T2": TopicMetadata("T2", 3),
...         "T3": TopicMetadata("T3", 2)}
>>> both = frozenset({"T1", "T3"})
>>> ServerRangeAssignor().assign(GroupSpec("g", (Member("A", both), Member("B", both)), meta))
{'A': [('T1', 0), ('T1', 1), ('T3', 0)], 'B': [('T1', 2), ('T3', 1)]}

Different subscriptions: A -> {T1, T2}, B -> {T3}, C -> {T2, T3}; each topic is split among
its own subscribers only:

>>> ms = (Member("A", frozenset({"T1", "T2"})), Member("B", frozenset({"T3"})),
...       Member("C", frozenset({"T2", "T3"})))
>>> for member, tps in ServerRangeAssignor().assign(GroupSpec("g", ms, meta)).items():
...     print(member, tps)
A [('T1', 0), ('T1', 1), ('T1', 2), ('T2', 0), ('T2', 1)]
B [('T3', 0)]
C [('T2', 2), ('T3', 1)]

Static members come first (A and C by instance id, then the dynamic B), T1 with 5
partitions:

>>> ms = (Member("A", frozenset({"T1"}), "instanceA"), Member("B", frozenset({"T1"})),
...       Member("C", frozenset({"T1"}), "instanceC"))
>>> ServerRangeAssignor().assign(GroupSpec("g", ms, {"T1": TopicMetadata("T1", 5)}))
{'A': [('T1', 0), ('T1', 1)], 'B': [('T1', 4)], 'C': [('T1', 2), ('T1', 3)]}
"""

from __future__ import annotations

from typing import ClassVar

from mypy_extensions import mypyc_attr

from assignors.model import (
    Assignment,
    GroupSpec,
    Rebalance,
    empty_assignment,
    member_order,
    partitions_of,
)
from assignors.protocol import COOPERATIVE_ONLY, RebalanceProtocol


@mypyc_attr(native_class=False)  # an ordinary class: tests and plugins may patch it
class ServerRangeAssignor:
    name: ClassVar[str] = "server-range"
    java_class: ClassVar[str] = "org.apache.kafka.coordinator.group.assignor.RangeAssignor"
    kafka_name: ClassVar[str] = "range"
    """What a KIP-848 member sets in `group.remote.assignor` to ask for this assignor."""
    # KIP-848: members revoke what moves before it is assigned; the result ignores ownership
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = COOPERATIVE_ONLY
    stateless: ClassVar[bool] = True
    balances_load: ClassVar[bool] = False

    def assign(self, spec: GroupSpec) -> Assignment:
        out = empty_assignment(spec)
        ordered = member_order(spec.members)
        subscribers = spec.subscribers()  # existing topics with at least one partition
        # Topics in Java order, members in Kafka's order: each member's list comes out sorted
        # by (topic, partition), and nothing depends on the order the rows arrived in.
        for topic in spec.subscribed_topics():
            wanted = {m.member_id for m in subscribers[topic]}
            members = [m.member_id for m in ordered if m.member_id in wanted]
            n = spec.partition_count(topic)
            parts = partitions_of(topic, n)
            quota, extra = divmod(n, len(members))
            start = 0
            for i, member_id in enumerate(members):
                size = quota + (1 if i < extra else 0)
                out[member_id].extend(parts[start : start + size])
                start += size
        return out

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        """KIP-848: the coordinator computes one target per group epoch (no JoinGroup rounds);
        members revoke what moves before it is assigned."""
        return Rebalance(self.assign(spec))
