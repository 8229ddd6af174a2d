"""The group model every assignor works on: plain, immutable Python data.

A `GroupSpec` is what Kafka's group leader (classic protocol) or group coordinator (KIP-848)
knows when it assigns: the members with their subscriptions and what they report owning, and
the metadata of the topics they subscribe to. Assignors are pure functions
`GroupSpec -> Assignment`; nothing here knows about Spark or pandas.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import wraps
from typing import ClassVar, Final, Generic, TypeVar

R = TypeVar("R")

TopicPartition = tuple[str, int]
"""A partition as Kafka's `TopicPartition`: (topic, partition number)."""

Assignment = dict[str, list[TopicPartition]]
"""member_id -> the partitions it is assigned. Every member of the group is a key."""

PartitionNumbers = tuple[dict[str, int], list[TopicPartition]]
"""`numbered_partitions`: each topic's first number, and the partition of each number."""

CLASSIC: Final = "classic"
CONSUMER: Final = "consumer"
GROUP_PROTOCOLS: Final = (CLASSIC, CONSUMER)
"""`subscriptions.group_protocol` values: the consumer's `group.protocol` (null = classic)."""


# The hot classes spell out `__init__` (init=False): mypyc compiles it, while the one the
# dataclass decorator generates at import time runs as interpreted Python (much slower, and
# a group's rebalances build thousands of these; docs/performance.md has the figure). Same
# signature, defaults and fields. A frozen one calls `object.__setattr__(self, ...)` itself:
# mypyc compiles that to a store, but a call through an alias to a generic attribute set.
@dataclass(frozen=True, slots=True, init=False)
class Member:
    """One member of a consumer group, as its JoinGroup subscription describes it.

    `topics` is the resolved subscription (a pattern subscription has already been matched
    against the topic names). `owned` are the partitions the member reports owning, in
    `generation` (None when the member reports no generation, Kafka's "absent").
    `assignment_strategies` is the member's `partition.assignment.strategy` in preference
    order (None: the configured default), what it votes with in the strategy election.
    """

    member_id: str
    topics: frozenset[str]
    group_instance_id: str | None = None
    rack: str | None = None
    owned: tuple[TopicPartition, ...] = ()
    generation: int | None = None
    assignment_strategies: tuple[str, ...] | None = None

    def __init__(
        self,
        member_id: str,
        topics: frozenset[str],
        group_instance_id: str | None = None,
        rack: str | None = None,
        owned: tuple[TopicPartition, ...] = (),
        generation: int | None = None,
        assignment_strategies: tuple[str, ...] | None = None,
    ) -> None:
        object.__setattr__(self, "member_id", member_id)
        object.__setattr__(self, "topics", topics)
        object.__setattr__(self, "group_instance_id", group_instance_id)
        object.__setattr__(self, "rack", rack)
        object.__setattr__(self, "owned", owned)
        object.__setattr__(self, "generation", generation)
        object.__setattr__(self, "assignment_strategies", assignment_strategies)

    def owning(self, owned: tuple[TopicPartition, ...], generation: int | None) -> Member:
        """This member reporting `owned` at `generation` (a cooperative round, a simulated
        rebalance)."""
        return Member(
            self.member_id,
            self.topics,
            self.group_instance_id,
            self.rack,
            owned,
            generation,
            self.assignment_strategies,
        )

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None


@dataclass(frozen=True, slots=True, init=False)
class TopicMetadata:
    """A topic as the cluster metadata describes it.

    `replica_racks[p]` holds the racks of all replicas of partition p (rack-aware strategies);
    it is empty when no rack information is known.
    """

    name: str
    partition_count: int
    replica_racks: tuple[frozenset[str], ...] = ()

    def __init__(
        self, name: str, partition_count: int, replica_racks: tuple[frozenset[str], ...] = ()
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "partition_count", partition_count)
        object.__setattr__(self, "replica_racks", replica_racks)


@dataclass(frozen=True, slots=True, init=False)
class GroupSpec:
    """Everything an assignor needs to assign one group.

    `topics` holds the metadata of topics that exist (at least the subscribed ones). A
    subscribed topic that is not in `topics` has no metadata and is skipped, as Kafka does.
    `departed` holds what members that have left the group still own in `current_assignment`:
    Kafka's assignors never see it (those partitions are simply free), the movement metrics do.
    `group_protocol` is `classic` or `consumer` (KIP-848: the broker picks the assignor); only
    the election reads it, the assignors never do. `classic_members` is set for a mixed group
    only (a `consumer` group some of whose members still use the classic protocol, as during
    an online migration): the ids of those members, in member order; empty otherwise.
    """

    group_id: str
    members: tuple[Member, ...]
    topics: Mapping[str, TopicMetadata] = field(default_factory=dict)
    departed: Mapping[str, tuple[TopicPartition, ...]] = field(default_factory=dict)
    group_protocol: str = CLASSIC
    classic_members: tuple[str, ...] = ()

    @property
    def member_ids(self) -> list[str]:
        return [m.member_id for m in self.members]

    _subscribed: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        group_id: str,
        members: tuple[Member, ...],
        topics: Mapping[str, TopicMetadata] | None = None,
        departed: Mapping[str, tuple[TopicPartition, ...]] | None = None,
        group_protocol: str = CLASSIC,
        classic_members: tuple[str, ...] = (),
    ) -> None:
        meta: Mapping[str, TopicMetadata] = {} if topics is None else topics
        object.__setattr__(self, "group_id", group_id)
        object.__setattr__(self, "members", members)
        object.__setattr__(self, "topics", meta)
        object.__setattr__(self, "departed", {} if departed is None else departed)
        object.__setattr__(self, "group_protocol", group_protocol)
        object.__setattr__(self, "classic_members", classic_members)
        # Every assignor and metric asks for this; compute it once per group.
        wanted: set[str] = set()
        last: frozenset[str] | None = None
        for m in members:
            if m.topics is not last:  # members listing the same topics share one set
                wanted.update(m.topics)
                last = m.topics
        subscribed = java_sorted(t for t in wanted if t in meta and meta[t].partition_count > 0)
        object.__setattr__(self, "_subscribed", tuple(subscribed))

    def subscribed_topics(self) -> list[str]:
        """Subscribed topics that exist, in Java string order (how Kafka iterates them)."""
        return list(self._subscribed)

    def partition_count(self, topic: str) -> int:
        meta = self.topics.get(topic)
        return meta.partition_count if meta is not None else 0

    def subscribers(self) -> dict[str, list[Member]]:
        """topic -> its subscribed members, for topics that exist with at least one partition."""
        out: dict[str, list[Member]] = {}
        meta = self.topics
        for m in self.members:
            for t in m.topics:
                if t in meta and meta[t].partition_count > 0:
                    out.setdefault(t, []).append(m)
        return out


def java_key(s: str) -> bytes:
    """Sort key giving Java's `String.compareTo` order (UTF-16 code units).

    Python compares code points; the two orders differ only between characters above U+FFFF
    (surrogate pairs in UTF-16) and U+E000..U+FFFF. Big-endian UTF-16 bytes compare exactly
    as Java compares the code units.
    """
    return s.encode("utf-16-be")


def _needs_java_key(s: str) -> bool:
    # str.isascii and max run in C: this is on the hot path of every group.
    return not s.isascii() and max(s) >= "\ue000"


def java_order_key(values: Iterable[str]) -> Callable[[str], bytes | str]:
    """A sort key giving Java order for `values`: plain strings when no character of them can
    sort differently (the fast path), else `java_key`."""
    return java_key if any(_needs_java_key(v) for v in values) else _identity


def needs_java_order(topics: Iterable[str]) -> bool:
    """Whether partitions of `topics` need `java_key` to sort in Java order (else plain tuple
    order is Java order: the usual case)."""
    return any(_needs_java_key(t) for t in topics)


class _Interned:
    """Partition tuples per topic (`partitions_of`), up to HELD of them (then it starts
    again: memory stays bounded whatever the estate)."""

    HELD: ClassVar[int] = 1_000_000

    def __init__(self) -> None:
        self.by_topic: dict[str, tuple[TopicPartition, ...]] = {}
        self.held = 0

    def get(self, topic: str, count: int) -> tuple[TopicPartition, ...]:
        known = self.by_topic.get(topic)
        if known is not None and len(known) >= count:
            return known if len(known) == count else known[:count]
        have = () if known is None else known
        grown = have + tuple((topic, p) for p in range(len(have), count))
        if self.held + count - len(have) > self.HELD:
            self.by_topic, self.held, have = {}, 0, ()
        self.by_topic[topic] = grown
        self.held += len(grown) - len(have)
        return grown


_INTERNED: Final = _Interned()


def partitions_of(topic: str, count: int) -> tuple[TopicPartition, ...]:
    """(topic, 0) .. (topic, count - 1): the same tuple objects on every call.

    The assignors and the what-if simulation build and compare millions of partition
    tuples; shared ones cost no allocation, and dict lookups and comparisons between them
    stop at identity.
    """
    return _INTERNED.get(topic, count)


def numbered_partitions(spec: GroupSpec, topics: Iterable[str]) -> PartitionNumbers:
    """The partitions of `topics` numbered 0..P-1 in that topic order, then by partition
    (the assignors that work on numbers give topics in Java order): each topic's first
    number, and the partition of each number.

    >>> spec = GroupSpec("g", (), {"a": TopicMetadata("a", 2), "b": TopicMetadata("b", 1)})
    >>> numbered_partitions(spec, ["a", "b"])
    ({'a': 0, 'b': 2}, [('a', 0), ('a', 1), ('b', 0)])
    """
    offsets: dict[str, int] = {}
    table: list[TopicPartition] = []
    for t in topics:
        offsets[t] = len(table)
        table.extend(partitions_of(t, spec.partition_count(t)))
    return offsets, table


def sort_partitions(tps: list[TopicPartition], java: bool) -> None:
    """Sort partitions in (topic in Java order, partition) order, in place; `java` as
    `needs_java_order` says for their topics (decided once per group, not per partition)."""
    if java:
        tps.sort(key=_java_partition_key)
    else:
        tps.sort()


def _java_partition_key(tp: TopicPartition) -> tuple[bytes, int]:
    return (java_key(tp[0]), tp[1])


def java_sorted(values: Iterable[str]) -> list[str]:
    """Sort strings in Java order; plain str sort when no character can disagree (fast path)."""
    vals = list(values)
    if any(_needs_java_key(v) for v in vals):
        return sorted(vals, key=java_key)
    return sorted(vals)


def member_order(members: Iterable[Member]) -> list[Member]:
    """Kafka's `AbstractPartitionAssignor.MemberInfo` order, used by range and roundrobin.

    Static members first, by `group.instance.id`; then dynamic members, by `member.id`; both
    in Java string order.

    >>> ms = [Member("a", frozenset(), "y"), Member("b", frozenset(), "z"),
    ...       Member("c", frozenset(), "x")]
    >>> [m.member_id for m in member_order(ms)]
    ['c', 'a', 'b']
    >>> ms = [Member("a", frozenset()), Member("b", frozenset(), "y"),
    ...       Member("c", frozenset(), "x")]
    >>> [m.member_id for m in member_order(ms)]
    ['c', 'b', 'a']
    """
    ms = list(members)
    slow = any(
        _needs_java_key(m.member_id) or _needs_java_key(m.group_instance_id or "") for m in ms
    )
    conv = java_key if slow else _identity

    def key(m: Member) -> tuple[int, bytes | str]:
        if m.group_instance_id is not None:
            return (0, conv(m.group_instance_id))
        return (1, conv(m.member_id))

    return sorted(ms, key=key)


def _identity(s: str) -> str:
    return s


def empty_assignment(spec: GroupSpec) -> Assignment:
    """Every member present with no partitions (Kafka puts every member in the result)."""
    return {m.member_id: [] for m in spec.members}


@dataclass(frozen=True, slots=True, init=False)
class Rebalance:
    """The outcome of a rebalance that may take several rounds (cooperative protocols).

    `assignment` is the final, converged assignment. `received_round[tp]` is the round (1, 2,
    ...) in which the final owner receives tp; partitions not listed arrive in round 1.
    `rounds` is how many JoinGroup/SyncGroup rounds the rebalance takes (1 for eager).
    """

    assignment: Assignment
    received_round: dict[TopicPartition, int] = field(default_factory=dict)
    rounds: int = 1

    def __init__(
        self,
        assignment: Assignment,
        received_round: dict[TopicPartition, int] | None = None,
        rounds: int = 1,
    ) -> None:
        object.__setattr__(self, "assignment", assignment)
        object.__setattr__(self, "received_round", {} if received_round is None else received_round)
        object.__setattr__(self, "rounds", rounds)


class LastSeen(Generic[R]):
    """A one-entry cache of derived data: the value computed last, for an object (matched by
    identity) and a key (matched by equality). A group is planned under several strategies
    and cooperative rounds in a row, each asking again for the same data of the same objects.
    The entry holds its object, so its id cannot be reused while cached; callers must not
    modify a cached value."""

    def __init__(self) -> None:
        self._entry: tuple[object, object, R] | None = None

    def get(self, obj: object, key: object = None) -> R | None:
        entry = self._entry
        if entry is not None and entry[0] is obj and entry[1] == key:
            return entry[2]
        return None

    def put(self, obj: object, key: object, value: R) -> R:
        self._entry = (obj, key, value)
        return value


def per_group(fn: Callable[[GroupSpec], R]) -> Callable[[GroupSpec], R]:
    """Cache `fn(spec)` for the last spec seen (`LastSeen`, by identity): a group is planned
    under several strategies in a row from one spec; callers must not modify the result."""
    last: LastSeen[R] = LastSeen()

    @wraps(fn)
    def cached(spec: GroupSpec) -> R:
        hit = last.get(spec)
        return hit if hit is not None else last.put(spec, None, fn(spec))

    return cached
