"""Kafka's KIP-848 server-side `UniformAssignor` (`uniform`).

`org.apache.kafka.coordinator.group.assignor.UniformAssignor` (`.api.assignor` in Kafka 4).

The group coordinator runs this assignor for `group.protocol=consumer` groups. Its input is the
group's *current target assignment* (here: each member's `owned` partitions), and it returns
the next target. Racks are ignored (removed from the server assignors in Kafka 3.8). Two
builders exist; the coordinator picks one from the subscription type:

* **homogeneous** (every member subscribes to the same topic names,
  `UniformHomogeneousAssignmentBuilder`): every member gets ``minQ = total // M`` partitions
  and ``total % M`` of them one more. Each member keeps its
  current partitions up to its quota; the rest are handed out in contiguous slices of the
  partition list (topics in order, partitions ascending), so a fresh group gets contiguous
  chunks. We implement the rule *after* KAFKA-18688 (Kafka 4.1): the extra slots go first to
  members that already hold more than ``minQ``, so an already balanced target never moves.
* **heterogeneous** (subscriptions differ, `UniformHeterogeneousAssignmentBuilder`, Kafka 4.0):
  every member keeps all its still-subscribed partitions; unassigned partitions go, topic by
  topic, to the least-loaded subscribers; then each topic is rebalanced over its own
  subscribers by moving the highest-numbered partitions of the most-loaded owners to the
  least-loaded subscribers. Balance is only per topic: overlapping subscriptions can end as
  e.g. 9/10/11.

Where Kafka's order comes from hash iteration or random topic UUIDs, this module fixes one:

* members in Java string order of `member_id` (the coordinator iterates a HashMap; Kafka's own
  tests use sorted ids). `group_instance_id` plays no part in the order;
* topics in Java string order of their name, wherever Kafka uses HashSet order (homogeneous)
  or `Uuid.compareTo` (heterogeneous tie-break);
* within a member's current target, topics in name order and partitions ascending, so when a
  member is over quota it keeps its lowest partitions and gives up its highest.

Input semantics (what the coordinator effectively computes):

* Subscribed topics without metadata are dropped (a KIP-848 subscription resolves topic names
  to topic ids, and names that do not exist resolve to nothing); the subscription *type* is
  still decided on the subscribed names, as `ModernGroup.subscriptionType` does.
* `owned` partitions that do not exist, or whose topic the member no longer subscribes to,
  are dropped. A partition claimed by several members (impossible in a real target
  assignment) is settled by `ownership.valid_owned` (the highest generation keeps it; a tie
  frees it).
* `GroupSpec.departed` is invisible: those partitions are simply unassigned.
* Static members: the coordinator lets a new member that replaces a departed static member
  (same `group.instance.id`) inherit the departed member's target *before* the assignor runs.
  Our input carries the live member with its own `owned` partitions and no departed static
  target keyed by instance id, so there is nothing to inherit: `owned` is the target.
* Unlike Kafka (which returns an empty map when nobody subscribes to anything), every member
  appears in the output, as with every assignor of this package.

Worked example (fresh group; topic a has 3 partitions, b has 2; members m1, m2 subscribe to
both): the partition list is a0 a1 a2 b0 b1, quotas are 3 and 2, slices are contiguous.

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> topics = {"a": TopicMetadata("a", 3), "b": TopicMetadata("b", 2)}
>>> spec = GroupSpec("g", (Member("m1", frozenset("ab")), Member("m2", frozenset("ab"))), topics)
>>> UniformAssignor().assign(spec)
{'m1': [('a', 0), ('a', 1), ('a', 2)], 'm2': [('b', 0), ('b', 1)]}
"""

from __future__ import annotations

import bisect
import heapq
from fractions import Fraction
from typing import ClassVar

from mypy_extensions import mypyc_attr

from assignors.model import (
    Assignment,
    GroupSpec,
    Member,
    Rebalance,
    TopicPartition,
    java_key,
    java_sorted,
    needs_java_order,
    numbered_partitions,
    sort_partitions,
)
from assignors.ownership import valid_owned
from assignors.protocol import COOPERATIVE_ONLY, RebalanceProtocol

# The heterogeneous builder gives up balancing after this many passes over the topics.
MAX_BALANCE_PASSES = 16


@mypyc_attr(native_class=False)  # an ordinary class: tests and plugins may patch it
class UniformAssignor:
    name: ClassVar[str] = "uniform"
    java_class: ClassVar[str] = "org.apache.kafka.coordinator.group.assignor.UniformAssignor"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = COOPERATIVE_ONLY
    stateless: ClassVar[bool] = False
    balances_load: ClassVar[bool] = False

    def assign(self, spec: GroupSpec) -> Assignment:
        by_id = {m.member_id: m for m in spec.members}
        order = java_sorted(by_id)
        members = [by_id[mid] for mid in order]
        current = _current_targets(spec, members)
        first = members[0].topics if members else frozenset()
        if all(m.topics == first for m in members):
            topics = java_sorted(t for t in first if spec.partition_count(t) > 0)
            result = _homogeneous(spec, order, topics, current)
        else:
            result = _heterogeneous(spec, members, current)
        # Every member present, in input order; each member's partitions sorted.
        java = needs_java_order(spec.subscribed_topics())
        out: Assignment = {}
        for m in spec.members:
            tps = list(result[m.member_id])
            sort_partitions(tps, java)
            out[m.member_id] = tps
        return out

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        """KIP-848: the coordinator computes one target per group epoch (no JoinGroup rounds);
        members revoke what moves before it is assigned."""
        return Rebalance(self.assign(spec))


def _current_targets(spec: GroupSpec, members: list[Member]) -> dict[str, list[TopicPartition]]:
    """member_id -> its current target restricted to existing, still-subscribed partitions.

    Sorted by (topic in Java order, partition), the order in which a member keeps partitions.
    """
    owned = valid_owned(spec)
    java = needs_java_order(spec.subscribed_topics())
    out: dict[str, list[TopicPartition]] = {}
    for m in members:
        kept = [tp for tp in owned[m.member_id] if tp[0] in m.topics]
        sort_partitions(kept, java)
        out[m.member_id] = kept
    return out


def _homogeneous(
    spec: GroupSpec,
    order: list[str],
    topics: list[str],
    current: dict[str, list[TopicPartition]],
) -> Assignment:
    """`UniformHomogeneousAssignmentBuilder` with the KAFKA-18688 quota rule.

    >>> from assignors.model import GroupSpec, Member, TopicMetadata
    >>> ms = (Member("A", frozenset("t"), owned=(("t", 0),)),
    ...       Member("B", frozenset("t"), owned=(("t", 1), ("t", 2))))
    >>> spec = GroupSpec("g", ms, {"t": TopicMetadata("t", 3)})
    >>> UniformAssignor().assign(spec)  # balanced already: B keeps its extra partition
    {'A': [('t', 0)], 'B': [('t', 1), ('t', 2)]}
    """
    if not topics or not order:
        return {mid: [] for mid in order}
    offsets, table = numbered_partitions(spec, topics)
    # Current targets are in (topic, partition) order: their numbers ascend.
    held = [[offsets[t] + p for t, p in current[mid]] for mid in order]
    lists = homogeneous_numbered(len(table), held)
    return {mid: [table[g] for g in lst] for mid, lst in zip(order, lists, strict=True)}


def homogeneous_numbered(total: int, held: list[list[int]]) -> list[list[int]]:
    """`UniformHomogeneousAssignmentBuilder` on partition numbers (0..total-1 in (topic,
    partition) order): `held[i]` is member i's current target (members in Java order of
    member id), ascending; returns each member's new target, kept partitions first.

    >>> homogeneous_numbered(5, [[], [0, 1, 2, 3, 4]])  # B keeps its lowest 3, A takes 3, 4
    [[3, 4], [0, 1, 2]]
    """
    n = len(held)
    out: list[list[int]] = []
    if n == 0:
        return out
    min_quota, extra = divmod(total, n)
    held_before = bytearray(total)
    revoked: list[int] = []
    has_extra = [False] * n
    # Keep up to minQ; a member that holds more claims one of the extra slots while they last
    # (members in order), so a balanced target keeps every partition where it is.
    for i, mine in enumerate(held):
        quota = min_quota
        if len(mine) > min_quota and extra > 0:
            quota += 1
            extra -= 1
            has_extra[i] = True
        out.append(mine[:quota])
        revoked.extend(mine[quota:])
        for g in mine:
            held_before[g] = 1
    # Kafka's unassigned list: never-assigned partitions in topic order, then the revoked ones.
    unassigned = [g for g in range(total) if not held_before[g]]
    unassigned.extend(revoked)
    # Remaining extra slots go to the other members in order; everyone takes a contiguous slice.
    pos = 0
    for i in range(n):
        quota = min_quota + (1 if has_extra[i] else 0)
        if not has_extra[i] and extra > 0:
            quota += 1
            extra -= 1
        need = quota - len(out[i])
        if need > 0:
            out[i].extend(unassigned[pos : pos + need])
            pos += need
    if pos != len(unassigned):  # cannot happen: the quotas add up to the total
        raise AssertionError("uniform: partitions were left unassigned")
    return out


def _heterogeneous(
    spec: GroupSpec, members: list[Member], current: dict[str, list[TopicPartition]]
) -> Assignment:
    """`UniformHeterogeneousAssignmentBuilder`: keep what is still subscribed, fill the least
    loaded, then balance per topic.

    >>> from assignors.model import GroupSpec, Member, TopicMetadata
    >>> ms = (Member("A", frozenset({"T1", "T3"})), Member("B", frozenset({"T3"})))
    >>> topics = {"T1": TopicMetadata("T1", 3), "T3": TopicMetadata("T3", 6)}
    >>> for member, tps in UniformAssignor().assign(GroupSpec("g", ms, topics)).items():
    ...     print(member, tps)
    A [('T1', 0), ('T1', 1), ('T1', 2), ('T3', 4)]
    B [('T3', 0), ('T3', 1), ('T3', 2), ('T3', 3), ('T3', 5)]
    """
    index = {m.member_id: i for i, m in enumerate(members)}
    subscribers: dict[str, list[int]] = {}
    for i, m in enumerate(members):
        for t in m.topics:
            if spec.partition_count(t) > 0:
                subscribers.setdefault(t, []).append(i)
    owner: dict[TopicPartition, int] = {}
    size = [0] * len(members)
    for m in members:
        i = index[m.member_id]
        for tp in current[m.member_id]:
            owner[tp] = i
        size[i] = len(current[m.member_id])

    def topic_key(t: str) -> tuple[Fraction, int, bytes]:
        n_subs = len(subscribers[t])
        return (-Fraction(spec.partition_count(t), n_subs), n_subs, java_key(t))

    topic_order = sorted(subscribers, key=topic_key)
    for t in topic_order:
        free = [p for p in range(spec.partition_count(t)) if (t, p) not in owner]
        if free:
            _level_fill(t, free, subscribers[t], size, owner)
    _balance(spec, topic_order, subscribers, size, owner)

    out: Assignment = {m.member_id: [] for m in members}
    for tp in owner:
        out[members[owner[tp]].member_id].append(tp)
    return out


def _level_fill(
    topic: str,
    free: list[int],
    subs: list[int],
    size: list[int],
    owner: dict[TopicPartition, int],
) -> None:
    """Hand `free` partitions (ascending) to the least-loaded subscribers, Kafka's way.

    The subscribers are sorted once by (size, index); partitions go round robin to the prefix
    of members at the current level, and the prefix grows as the level rises (it is not a
    re-sort after every partition, which matters for ties).
    """
    ranked = sorted(subs, key=lambda i: (size[i], i))
    level = size[ranked[0]]
    width = sum(1 for i in ranked if size[i] == level)  # the prefix at the current level
    cursor = 0
    for p in free:
        if cursor == width:
            # A round over the prefix is complete: everyone in it is one level up, and the
            # members already at that level join the prefix (after it, in ranked order).
            level += 1
            while width < len(ranked) and size[ranked[width]] <= level:
                width += 1
            cursor = 0
        i = ranked[cursor]
        owner[(topic, p)] = i
        size[i] += 1
        cursor += 1


def _balance(
    spec: GroupSpec,
    topic_order: list[str],
    subscribers: dict[str, list[int]],
    size: list[int],
    owner: dict[TopicPartition, int],
) -> None:
    """Move partitions within each topic until its subscribers' sizes differ by at most 1.

    The partition moved is the highest-numbered one of the most-loaded subscriber that owns
    any (ties: lower member index); it goes to the least-loaded subscriber (ties: lower index).
    """
    multi = [t for t in topic_order if len(subscribers[t]) >= 2]
    for _ in range(MAX_BALANCE_PASSES):
        moved = False
        for t in multi:
            subs = subscribers[t]
            if max(size[i] for i in subs) - min(size[i] for i in subs) <= 1:
                continue
            held: dict[int, list[int]] = {i: [] for i in subs}
            for p in range(spec.partition_count(t)):
                held[owner[(t, p)]].append(p)
            # Lazy heaps: an entry is stale when its recorded size is no longer current.
            most = [(-size[i], i) for i in subs if held[i]]
            least = [(size[i], i) for i in subs]
            heapq.heapify(most)
            heapq.heapify(least)
            while most and least:
                neg, hi = most[0]
                if -neg != size[hi] or not held[hi]:
                    heapq.heappop(most)
                    continue
                lo_size, lo = least[0]
                if lo_size != size[lo]:
                    heapq.heappop(least)
                    continue
                if size[hi] - size[lo] <= 1:
                    break
                p = held[hi].pop()
                owner[(t, p)] = lo
                bisect.insort(held[lo], p)
                size[hi] -= 1
                size[lo] += 1
                moved = True
                for i in (hi, lo):
                    heapq.heappush(most, (-size[i], i))
                    heapq.heappush(least, (size[i], i))
        if not moved:
            return
