"""librdkafka 2.16.0's `range`, `roundrobin` and `cooperative-sticky`, as its group leader
runs them.

`range` and `roundrobin` are Java's algorithms (range with KIP-881 racks) over a different
member order. `cooperative-sticky` is librdkafka's own port of an older Java sticky
assignor, its general path only, with librdkafka's cooperative step: a module of its own
(`assignors.strategies.clients.librdkafka_sticky`), which does not use this member order.

For range and roundrobin librdkafka sorts members with `qsort` and
`rd_kafka_group_member_cmp`: two static members compare by `group.instance.id`, any other
pair by member id (bytes, as `memcmp`). There is no "static members first" rule, and with
static and dynamic members mixed the comparison is not even transitive (A < B < C < A
happens), so the order is whatever the sort makes of the input: glibc's `qsort`, a top-down
merge sort, over the members in JoinGroup order (the spec's member order); range sorts each
topic's subscribers, in that order, on their own. With only dynamic or only static members
this is Java's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from mypy_extensions import mypyc_attr

from assignors.model import GroupSpec, Member
from assignors.strategies.clients.librdkafka_sticky import LibrdkafkaCooperativeStickyAssignor
from assignors.strategies.range import RangeAssignor
from assignors.strategies.roundrobin import RoundRobinAssignor

LIBRARY = "librdkafka"


def _key(m: Member, other: Member) -> tuple[bytes, bytes]:
    if m.group_instance_id is not None and other.group_instance_id is not None:
        return m.group_instance_id.encode(), other.group_instance_id.encode()
    return m.member_id.encode(), other.member_id.encode()


def _after(a: Member, b: Member) -> bool:
    """`rd_kafka_group_member_cmp(a, b) > 0`."""
    x, y = _key(a, b)
    return x > y


def librdkafka_order(members: Iterable[Member]) -> list[Member]:
    """glibc's merge sort (`msort_with_tmp`: halves of n // 2 and the rest, the left element
    first on ties) with librdkafka's member comparator.

    A (m3, instance i1) < B (m1, i2) < C (m2, dynamic) < A: the JoinGroup order decides.

    >>> a, b, c = (Member("m3", frozenset(), "i1"), Member("m1", frozenset(), "i2"),
    ...            Member("m2", frozenset()))
    >>> [m.member_id for m in librdkafka_order([a, b, c])]
    ['m3', 'm1', 'm2']
    >>> [m.member_id for m in librdkafka_order([c, a, b])]
    ['m2', 'm3', 'm1']
    """
    return _msort(list(members))


def _msort(xs: Sequence[Member]) -> list[Member]:
    if len(xs) <= 1:
        return list(xs)
    half = len(xs) // 2
    left, right = _msort(xs[:half]), _msort(xs[half:])
    out: list[Member] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if _after(left[i], right[j]):
            out.append(right[j])
            j += 1
        else:
            out.append(left[i])
            i += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out


def _subscribers_in_order(spec: GroupSpec) -> dict[str, list[Member]]:
    subscribers = spec.subscribers()  # each topic's subscribers in JoinGroup order
    return {t: librdkafka_order(subscribers[t]) for t in spec.subscribed_topics()}


@mypyc_attr(native_class=False)
class LibrdkafkaRangeAssignor(RangeAssignor):
    """Java's range (racks included) over librdkafka's order of each topic's subscribers."""

    name: ClassVar[str] = "range@librdkafka"
    kafka_name: ClassVar[str] = "range"
    library: ClassVar[str] = LIBRARY

    def subscribers_in_order(self, spec: GroupSpec) -> dict[str, list[Member]]:
        return _subscribers_in_order(spec)


@mypyc_attr(native_class=False)
class LibrdkafkaRoundRobinAssignor(RoundRobinAssignor):
    """Java's roundrobin over librdkafka's order of the group's members."""

    name: ClassVar[str] = "roundrobin@librdkafka"
    kafka_name: ClassVar[str] = "roundrobin"
    library: ClassVar[str] = LIBRARY

    def ordered_members(self, members: Iterable[Member]) -> list[Member]:
        return librdkafka_order(members)


VARIANTS = (
    LibrdkafkaRangeAssignor,
    LibrdkafkaRoundRobinAssignor,
    LibrdkafkaCooperativeStickyAssignor,
)
