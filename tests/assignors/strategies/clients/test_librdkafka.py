"""`range@librdkafka` and `roundrobin@librdkafka`: Java's algorithms over librdkafka's member
order. The orders below are what librdkafka 2.16.1's leader produced for real consumers on its
mock cluster (tests/jobs/export/test_librdkafka_assignors.py runs such groups live), member ids as
the mock gave them, members in JoinGroup order."""

from __future__ import annotations

import pytest

from assignors.catalog.registry import get_assignor
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.strategies.clients.librdkafka import (
    LibrdkafkaRangeAssignor,
    LibrdkafkaRoundRobinAssignor,
    librdkafka_order,
)
from assignors.strategies.range import RangeAssignor
from assignors.strategies.roundrobin import RoundRobinAssignor

# (JoinGroup order as (member id, instance id), the order librdkafka's range gave them)
LIVE = [
    (
        [
            ("0x7f4340010910", "z"),
            ("0x7f4340011370", "b"),
            ("0x7f4340012b80", "q"),
            ("0x7f43400131d0", None),
            ("0x7f4340012c20", None),
        ],
        ["0x7f4340011370", "0x7f4340012b80", "0x7f4340010910", "0x7f4340012c20", "0x7f43400131d0"],
    ),
    (
        [("0x7f434001cb10", "q"), ("0x7f4340006a30", "m"), ("0x7f4340012eb0", None)],
        ["0x7f4340006a30", "0x7f4340012eb0", "0x7f434001cb10"],
    ),
    (
        # not transitive: y < 0350 (member ids) < a < y (instance ids); the merge sort
        # decides, and a sort of another shape (Python's) gives another order
        [("0x7f4340006a30", "y"), ("0x7f4340016410", "a"), ("0x7f4340010350", None)],
        ["0x7f4340006a30", "0x7f4340010350", "0x7f4340016410"],
    ),
    (
        [("0x7f4340010910", "m"), ("0x7f4340012560", "b"), ("0x7f4340014ed0", "a")],
        ["0x7f4340014ed0", "0x7f4340012560", "0x7f4340010910"],
    ),
]


def _spec(members: list[tuple[str, str | None]], partitions: int) -> GroupSpec:
    return GroupSpec(
        "g",
        tuple(Member(m, frozenset({"tz"}), i) for m, i in members),
        {"tz": TopicMetadata("tz", partitions)},
    )


@pytest.mark.parametrize(("join", "order"), LIVE)
def test_the_order_librdkafka_gave(join: list[tuple[str, str | None]], order: list[str]) -> None:
    spec = _spec(join, 12)
    assert [m.member_id for m in librdkafka_order(spec.members)] == order
    got = LibrdkafkaRangeAssignor().assign(spec)
    firsts = sorted((tps[0][1], m) for m, tps in got.items())
    assert [m for _, m in firsts] == order


def test_mixed_members_differ_from_java() -> None:
    # Java puts static members first; librdkafka compares a static and a dynamic member by
    # member id
    spec = _spec([("m2", "a"), ("m1", None)], 3)
    assert RangeAssignor().assign(spec) == {"m2": [("tz", 0), ("tz", 1)], "m1": [("tz", 2)]}
    assert LibrdkafkaRangeAssignor().assign(spec) == {
        "m2": [("tz", 2)],
        "m1": [("tz", 0), ("tz", 1)],
    }
    assert LibrdkafkaRoundRobinAssignor().assign(spec) == {
        "m2": [("tz", 1)],
        "m1": [("tz", 0), ("tz", 2)],
    }


@pytest.mark.parametrize("static", [False, True])
def test_only_dynamic_or_only_static_members_are_java(static: bool) -> None:
    topics = {"a": TopicMetadata("a", 5), "b": TopicMetadata("b", 3)}
    members = tuple(
        Member(
            f"m{k}",
            frozenset(topics) if k % 2 else frozenset({"a"}),
            f"i{9 - k}" if static else None,
        )
        for k in (3, 1, 4, 0, 2)
    )
    spec = GroupSpec("g", members, topics)
    assert get_assignor("range@librdkafka").assign(spec) == RangeAssignor().assign(spec)
    assert get_assignor("roundrobin@librdkafka").assign(spec) == RoundRobinAssignor().assign(spec)
