"""Rack awareness (KIP-881): which racks a member and a partition are on, and when it counts.

A member's rack is its `client.rack` (`Member.rack`); an empty string counts as absent, as
Kafka's `Subscription.rackId().filter(r -> !r.isEmpty())` treats it. A partition's racks are
the racks of all its replicas (`TopicMetadata.replica_racks[p]`); the Spark layer drops null
racks and duplicates, and an empty string is ignored here too (a broker without a rack), so
both sides agree that "" is "unknown", never a rack two parties can share.

Kafka's `AbstractPartitionAssignor.useRackAwareAssignment` decides whether rack logic runs:
only when some member has a rack, that rack is among the replica racks, and not every
partition sits on the same set of racks (if every partition is on every rack, locality cannot
depend on the choice). When it is off, the rack-aware assignors give exactly their non-rack
result.

>>> use_rack_aware({"a"}, [frozenset({"a"}), frozenset({"b"})])
True
>>> use_rack_aware({"a"}, [frozenset({"a", "b"}), frozenset({"a", "b"})])
False
>>> use_rack_aware({"d"}, [frozenset({"a"}), frozenset({"b"})])
False
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from assignors.model import Assignment, GroupSpec, LastSeen, Member, TopicMetadata

NO_RACKS: frozenset[str] = frozenset()


def member_rack(member: Member) -> str | None:
    """The member's rack, None when it has none (null or empty `client.rack`)."""
    return member.rack or None


def normalize_racks(values: Iterable[str | None] | None) -> frozenset[str]:
    """Replica racks as a set: null and empty racks dropped, duplicates merged.

    >>> sorted(normalize_racks(["a", None, "", "a", "b"]))
    ['a', 'b']
    """
    if values is None:
        return NO_RACKS
    return frozenset(v for v in values if v)


def replica_racks_by_partition(
    partition_count: int, rows: Iterable[tuple[int, Iterable[str | None] | None]]
) -> tuple[frozenset[str], ...]:
    """`TopicMetadata.replica_racks` from a topic's `topic_partitions` rows.

    `rows` are (partition, replica_racks) pairs; null and empty racks are dropped, duplicates
    merged, a partition listed twice gets the union of its rows, partitions outside
    0..count-1 are ignored. Empty tuple when no partition has a rack (the common case).

    >>> racks = replica_racks_by_partition(3, [(0, ["a", None, "a"]), (2, ["", "b"]), (2, ["c"])])
    >>> [sorted(r) for r in racks]
    [['a'], [], ['b', 'c']]
    >>> replica_racks_by_partition(2, [(0, None), (1, [])])
    ()
    """
    racks: list[frozenset[str]] = [NO_RACKS] * partition_count
    for p, values in rows:
        if 0 <= p < partition_count:
            found = normalize_racks(values)
            if found:
                racks[p] = racks[p] | found
    return tuple(racks) if any(racks) else ()


def topic_racks(meta: TopicMetadata | None) -> Sequence[frozenset[str]]:
    """Per partition, its replica racks (empty sets when the metadata carries none)."""
    if meta is None or not meta.replica_racks:
        return ()
    racks = meta.replica_racks
    hit = _CLEAN.get(id(racks))
    if hit is not None and hit[0] is racks:
        return hit[1]
    clean = tuple(r - {""} for r in racks) if any("" in r for r in racks) else racks
    if len(_CLEAN) >= _CACHE_SIZE:
        _CLEAN.clear()
    _CLEAN[id(racks)] = (racks, clean)  # holds `racks`, so its id cannot be reused
    return clean


# Every group of a bucket shares its topics' rack tuples (one catalog), and every strategy
# and cooperative round of a group asks again: the per-partition scans below run once per
# tuple (or per group) instead. Keys are object identities; each entry holds its key object
# (`_CLEAN`, bounded, for the catalog's many tuples; `LastSeen` for the group at hand).
_CACHE_SIZE = 4096
_CLEAN: dict[int, tuple[tuple[frozenset[str], ...], Sequence[frozenset[str]]]] = {}
_CONSUMERS_ON: LastSeen[list[int]] = LastSeen()
_GROUP_RACKS: LastSeen[tuple[list[frozenset[str]], frozenset[str]]] = LastSeen()


def partition_racks(racks: Sequence[frozenset[str]], p: int) -> frozenset[str]:
    return racks[p] if p < len(racks) else NO_RACKS


def use_rack_aware(consumer_racks: set[str], per_partition: Iterable[frozenset[str]]) -> bool:
    """Kafka's useRackAwareAssignment (without the test-only `preferRackAwareLogic` flag)."""
    parts = list(per_partition)
    return _rack_aware(consumer_racks, parts, frozenset().union(*parts))


def _rack_aware(
    consumer_racks: set[str], parts: Sequence[frozenset[str]], union: frozenset[str]
) -> bool:
    """`use_rack_aware` given the union of the partitions' racks (when it is at hand)."""
    if not consumer_racks or consumer_racks.isdisjoint(union):
        return False
    return any(r != union for r in parts)


def group_partition_racks(spec: GroupSpec, topics: Sequence[str]) -> list[frozenset[str]]:
    """Every partition's racks, topics in the order given, partitions ascending.

    The result is shared with later calls for the same topics metadata: do not modify it.
    """
    return _group_racks(spec, topics)[0]


def _group_racks(
    spec: GroupSpec, topics: Sequence[str]
) -> tuple[list[frozenset[str]], frozenset[str]]:
    """(`group_partition_racks`, the union of those racks), cached for the last group's
    metadata (successive strategies and rounds of one group share `spec.topics`)."""
    key = tuple(topics)
    hit = _GROUP_RACKS.get(spec.topics, key)
    if hit is not None:
        return hit
    out: list[frozenset[str]] = []
    for t in topics:
        meta = spec.topics.get(t)
        n = meta.partition_count if meta is not None else 0
        racks = topic_racks(meta)
        out.extend(partition_racks(racks, p) for p in range(n))
    return _GROUP_RACKS.put(spec.topics, key, (out, frozenset().union(*out)))


def sticky_rack_aware(spec: GroupSpec) -> bool:
    """Whether the sticky assignors use rack logic (`AbstractStickyAssignor.RackInfo`).

    Consumer racks of every member, replica racks of every partition of the subscribed
    topics: one decision for the whole group.
    """
    consumer_racks = {r for m in spec.members if (r := member_rack(m))}
    if not consumer_racks:
        return False
    return _rack_aware(consumer_racks, *_group_racks(spec, spec.subscribed_topics()))


def rack_mismatch_count(spec: GroupSpec, assignment: Assignment) -> int | None:
    """Assigned partitions whose member has a rack that none of its replicas is on.

    None when the group has no rack information (no member has a rack, or no partition of a
    subscribed topic has one). Members without a rack never count (they match everything, as
    in Kafka); a partition without known racks counts for a member with one, as Kafka's
    `racksMismatch` does.
    """
    racks_of = {m.member_id: r for m in spec.members if (r := member_rack(m))}
    if not racks_of:
        return None
    per_topic: dict[str, Sequence[frozenset[str]]] = {}
    for t in spec.subscribed_topics():
        racks = topic_racks(spec.topics.get(t))
        if any(racks):
            per_topic[t] = racks
    if not per_topic:
        return None
    return _count_mismatches(racks_of, per_topic, assignment)


def _count_mismatches(
    racks_of: Mapping[str, str],
    per_topic: Mapping[str, Sequence[frozenset[str]]],
    assignment: Assignment,
) -> int:
    count = 0
    for member_id, tps in assignment.items():
        rack = racks_of.get(member_id)
        if rack is None:
            continue
        for topic, p in tps:
            if rack not in partition_racks(per_topic.get(topic, ()), p):
                count += 1
    return count


@dataclass(frozen=True, slots=True, init=False)
class RackView:
    """Racks for the rack-aware step, int-encoded: `member[r]` (None: no rack) and `part[g]`."""

    member: Sequence[str | None]
    part: Sequence[frozenset[str]]

    def __init__(self, member: Sequence[str | None], part: Sequence[frozenset[str]]) -> None:
        object.__setattr__(self, "member", member)
        object.__setattr__(self, "part", part)

    def consumers_on(self) -> list[int]:
        """Per partition, how many members sit on one of its racks (Kafka's sort key).

        Cached for the last (partition racks, member racks) seen: every round of a
        cooperative rebalance, and both sticky strategies, ask it of the same group. The
        result is shared: do not modify it."""
        key = tuple(sorted(r for r in self.member if r is not None))
        hit = _CONSUMERS_ON.get(self.part, key)
        if hit is not None:
            return hit
        per_rack: dict[str, int] = {}
        for rack in key:
            per_rack[rack] = per_rack.get(rack, 0) + 1
        out = [sum(per_rack.get(r, 0) for r in racks) if racks else 0 for racks in self.part]
        return _CONSUMERS_ON.put(self.part, key, out)

    def next_on_rack(self, g: int, members: Sequence[int], first: int) -> int:
        """Kafka's nextRackConsumer: index of the next member on g's racks, circularly; -1."""
        racks = self.part[g]
        n = len(members)
        if not racks or not n:
            return -1
        for i in range(n):
            index = (first + i) % n
            rack = self.member[members[index]]
            if rack is not None and rack in racks:
                return index
        return -1
