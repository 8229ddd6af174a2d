"""Conformance and property tests for the classic RangeAssignor (Kafka's RangeAssignorTest).

Expected values come from Kafka's RangeAssignorTest (restated as facts) and from hand-checked
worked examples, never from running our code. Range results are compared as sets per
member, as Kafka's tests do.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence

import pytest
from helpers.classic import (
    SEEDS,
    check_valid,
    kafka_order,
    mem,
    random_members,
    renamed_copy,
    tp_list,
)

from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.strategies.range import RangeAssignor

RACKS = ("a", "b", "c")

# --------------------------------------------------------------------------------- builders


def group(topics: Mapping[str, int], members: Iterable[Member], racks: str = "none") -> GroupSpec:
    """A group; `racks` = none | consumer | broker | both (every partition on every rack).

    Kafka's RangeAssignorTest runs each fact under these variants with every partition
    replicated on every rack, where rack awareness cannot change anything (RangeAssignorTest).
    """
    ms = list(members)
    if racks in ("consumer", "both"):
        ms = [
            Member(m.member_id, m.topics, m.group_instance_id, rack=RACKS[i % 3])
            for i, m in enumerate(ms)
        ]
    all_racks = frozenset(RACKS) if racks in ("broker", "both") else None
    meta = {
        t: TopicMetadata(t, n, tuple(all_racks for _ in range(n)) if all_racks else ())
        for t, n in topics.items()
    }
    return GroupSpec("g", tuple(ms), meta)


def tps(text: str) -> set[TopicPartition]:
    """'t1-0, t1-1' -> {('t1', 0), ('t1', 1)} (Kafka's TopicPartition.toString)."""
    return set(tp_list(text))


def as_sets(assignment: Assignment) -> dict[str, set[TopicPartition]]:
    return {m: set(v) for m, v in assignment.items()}


def assign(spec: GroupSpec) -> Assignment:
    return RangeAssignor().assign(spec)


RACK_VARIANTS = ["none", "consumer", "broker", "both"]

# ----------------------------------------------------------- RangeAssignorTest, rows 1-13

T1, T2 = "topic1", "topic2"

ROW_FACTS: list[tuple[str, dict[str, int], list[Member], dict[str, str]]] = [
    ("testOneConsumerNoTopic", {}, [mem("consumer1", [])], {"consumer1": ""}),
    (
        "testOneConsumerNonexistentTopic",
        {},
        [mem("consumer1", [T1])],
        {"consumer1": ""},
    ),
    (
        "testOneConsumerOneTopic",
        {T1: 3},
        [mem("consumer1", [T1])],
        {"consumer1": "topic1-0, topic1-1, topic1-2"},
    ),
    (
        "testOnlyAssignsPartitionsFromSubscribedTopics",
        {T1: 3, "other": 3},
        [mem("consumer1", [T1])],
        {"consumer1": "topic1-0, topic1-1, topic1-2"},
    ),
    (
        "testOneConsumerMultipleTopics",
        {T1: 1, T2: 2},
        [mem("consumer1", [T1, T2])],
        {"consumer1": "topic1-0, topic2-0, topic2-1"},
    ),
    (
        "testTwoConsumersOneTopicOnePartition",
        {T1: 1},
        [mem("consumer1", [T1]), mem("consumer2", [T1])],
        {"consumer1": "topic1-0", "consumer2": ""},
    ),
    (
        "testTwoConsumersOneTopicTwoPartitions",
        {T1: 2},
        [mem("consumer1", [T1]), mem("consumer2", [T1])],
        {"consumer1": "topic1-0", "consumer2": "topic1-1"},
    ),
    (
        "testMultipleConsumersMixedTopics",
        {T1: 3, T2: 2},
        [mem("consumer1", [T1]), mem("consumer2", [T1, T2]), mem("consumer3", [T1])],
        {
            "consumer1": "topic1-0",
            "consumer2": "topic1-1, topic2-0, topic2-1",
            "consumer3": "topic1-2",
        },
    ),
    (
        "testTwoConsumersTwoTopicsSixPartitions",
        {T1: 3, T2: 3},
        [mem("consumer1", [T1, T2]), mem("consumer2", [T1, T2])],
        {
            "consumer1": "topic1-0, topic1-1, topic2-0, topic2-1",
            "consumer2": "topic1-2, topic2-2",
        },
    ),
    (
        "testTwoStaticConsumersTwoTopicsSixPartitions",
        {T1: 3, T2: 3},
        [mem("consumer-b", [T1, T2], "instance1"), mem("consumer-a", [T1, T2], "instance2")],
        {
            "consumer-b": "topic1-0, topic1-1, topic2-0, topic2-1",
            "consumer-a": "topic1-2, topic2-2",
        },
    ),
    (
        "testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions",
        {T1: 3, T2: 3},
        [mem("consumer-b", [T1, T2], "instance1"), mem("consumer-a", [T1, T2])],
        {
            "consumer-b": "topic1-0, topic1-1, topic2-0, topic2-1",
            "consumer-a": "topic1-2, topic2-2",
        },
    ),
]


@pytest.mark.parametrize("racks", RACK_VARIANTS)
@pytest.mark.parametrize(
    ("topics", "members", "expected"),
    [pytest.param(t, m, e, id=name) for name, t, m, e in ROW_FACTS],
)
def test_range_assignor_test_facts(
    topics: dict[str, int], members: list[Member], expected: dict[str, str], racks: str
) -> None:
    result = assign(group(topics, members, racks))
    assert as_sets(result) == {m: tps(v) for m, v in expected.items()}


@pytest.mark.parametrize("racks", RACK_VARIANTS)
def test_static_member_range_assignment_persistent(racks: str) -> None:
    """Row 12, testStaticMemberRangeAssignmentPersistent (exact map equality)."""
    topics = {"t1": 5, "t2": 4}
    statics = [mem(f"consumer{i}", ["t1", "t2"], f"instance{i}") for i in (1, 2, 3)]
    expected_static = {
        "consumer1": tps("t1-0, t1-1, t2-0"),
        "consumer2": tps("t1-2, t2-1"),
        "consumer3": tps("t1-3, t2-2"),
    }
    first = assign(group(topics, [*statics, mem("consumer4", ["t1", "t2"])], racks))
    assert as_sets(first) == {**expected_static, "consumer4": tps("t1-4, t2-3")}

    second = assign(group(topics, [*statics, mem("consumer5", ["t1", "t2"])], racks))
    assert as_sets(second) == {**expected_static, "consumer5": tps("t1-4, t2-3")}


@pytest.mark.parametrize("racks", RACK_VARIANTS)
def test_static_member_range_assignment_persistent_after_member_id_changes(racks: str) -> None:
    """Row 13: per-instance result is unchanged when member ids are renamed."""
    topics = {"t1": 5, "t2": 5}
    expected = {
        "instance1": tps("t1-0, t1-1, t2-0, t2-1"),
        "instance2": tps("t1-2, t1-3, t2-2, t2-3"),
        "instance3": tps("t1-4, t2-4"),
    }
    before = {"consumer1": "instance1", "consumer2": "instance2", "consumer3": "instance3"}
    after = {"consumer1": "instance1", "consumer5": "instance2", "consumer4": "instance3"}
    for ids in (before, after):
        spec = group(topics, [mem(m, ["t1", "t2"], i) for m, i in ids.items()], racks)
        result = assign(spec)
        assert {ids[m]: set(v) for m, v in result.items()} == expected


# ---------------------------------------------- RangeAssignorTest R1-R6, non-rack expectations


def consumers(subs: Sequence[Sequence[str]]) -> list[Member]:
    return [mem(f"consumer{i}", s) for i, s in enumerate(subs)]


ALL3 = ["t1", "t2", "t3"]
ALL4 = ["t1", "t2", "t3", "t4"]
T1_9 = [f"t{i}" for i in range(1, 10)]

R_FACTS: list[tuple[str, dict[str, int], list[list[str]], list[str]]] = [
    (
        "R1-testRackAwareAssignmentWithUniformSubscription",
        {"t1": 6, "t2": 7, "t3": 2},
        [ALL3, ALL3, ALL3],
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0",
            "t1-2, t1-3, t2-3, t2-4, t3-1",
            "t1-4, t1-5, t2-5, t2-6",
        ],
    ),
    (
        "R2-testRackAwareAssignmentWithNonEqualSubscription",
        {"t1": 6, "t2": 7, "t3": 2},
        [ALL3, ALL3, ["t1", "t3"]],
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0",
            "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1",
            "t1-4, t1-5",
        ],
    ),
    (
        "R3-testRackAwareAssignmentWithUniformPartitions",
        {"t1": 5, "t2": 5, "t3": 5},
        [ALL3, ALL3, ALL3],
        [
            "t1-0, t1-1, t2-0, t2-1, t3-0, t3-1",
            "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
            "t1-4, t2-4, t3-4",
        ],
    ),
    (
        "R4-testRackAwareAssignmentWithUniformPartitionsNonEqualSubscription",
        {"t1": 5, "t2": 5, "t3": 5},
        [ALL3, ALL3, ["t1", "t3"]],
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
            "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3",
            "t1-4, t3-4",
        ],
    ),
    (
        "R5a-testRackAwareAssignmentWithCoPartitioning",
        {"t1": 6, "t2": 6, "t3": 2, "t4": 2},
        [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]],
        [
            "t1-0, t1-1, t1-2, t2-0, t2-1, t2-2",
            "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
            "t3-0, t4-0",
            "t3-1, t4-1",
        ],
    ),
    (
        "R5b-testRackAwareAssignmentWithCoPartitioning-all-subscribe-all",
        {"t1": 6, "t2": 6, "t3": 2, "t4": 2},
        [ALL4, ALL4, ALL4, ALL4],
        [
            "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0",
            "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
            "t1-4, t2-4",
            "t1-5, t2-5",
        ],
    ),
    (
        "R6-testCoPartitionedAssignmentWithSameSubscription",
        {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4},
        [T1_9, T1_9, T1_9],
        [
            "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
            "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
            "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3",
        ],
    ),
]


@pytest.mark.parametrize("racks", RACK_VARIANTS)
@pytest.mark.parametrize(
    ("topics", "subs", "expected"), [pytest.param(t, s, e, id=n) for n, t, s, e in R_FACTS]
)
def test_range_rack_tests_non_rack_results(
    topics: dict[str, int], subs: list[list[str]], expected: list[str], racks: str
) -> None:
    result = assign(group(topics, consumers(subs), racks))
    assert as_sets(result) == {f"consumer{i}": tps(e) for i, e in enumerate(expected)}


# ---------------------------------------------------------------------- worked examples


def test_example_one_topic_seven_partitions_five_members() -> None:
    spec = group({"t": 7}, [mem(f"c{i}", ["t"]) for i in range(5)])
    assert as_sets(assign(spec)) == {
        "c0": tps("t-0, t-1"),
        "c1": tps("t-2, t-3"),
        "c2": tps("t-4"),
        "c3": tps("t-5"),
        "c4": tps("t-6"),
    }


def test_example_t1_by_three_t2_by_five() -> None:
    members = [mem(f"c{i}", ["t1", "t2"] if i < 3 else ["t2"]) for i in range(5)]
    spec = group({"t1": 5, "t2": 7}, members)
    assert as_sets(assign(spec)) == {
        "c0": tps("t1-0, t1-1, t2-0, t2-1"),
        "c1": tps("t1-2, t1-3, t2-2, t2-3"),
        "c2": tps("t1-4, t2-4"),
        "c3": tps("t2-5"),
        "c4": tps("t2-6"),
    }


def test_example_two_members_two_topics_three_partitions() -> None:
    spec = group({"t0": 3, "t1": 3}, [mem("C0", ["t0", "t1"]), mem("C1", ["t0", "t1"])])
    assert as_sets(assign(spec)) == {
        "C0": tps("t0-0, t0-1, t1-0, t1-1"),
        "C1": tps("t0-2, t1-2"),
    }


def test_example_five_partitions_two_members() -> None:
    spec = group({"t": 5}, [mem("C0", ["t"]), mem("C1", ["t"])])
    assert as_sets(assign(spec)) == {"C0": tps("t-0, t-1, t-2"), "C1": tps("t-3, t-4")}


def test_example_four_partitions_two_members() -> None:
    spec = group({"t": 4}, [mem("C0", ["t"]), mem("C1", ["t"])])
    assert as_sets(assign(spec)) == {"C0": tps("t-0, t-1"), "C1": tps("t-2, t-3")}


# ----------------------------------------------------------- ordering and edge cases


def test_interleaved_static_and_dynamic_members() -> None:
    """Input order interleaves kinds; member ids sort against the instance-id order."""
    members = [
        mem("m3", ["t"]),
        mem("m9", ["t"], "b"),
        mem("m1", ["t"]),
        mem("m0", ["t"], "c"),
        mem("m5", ["t"], "a"),
    ]
    # Order: m5 (a), m9 (b), m0 (c), then dynamic m1, m3. 6 partitions over 5: q=1, r=1.
    assert as_sets(assign(group({"t": 6}, members))) == {
        "m5": tps("t-0, t-1"),
        "m9": tps("t-2"),
        "m0": tps("t-3"),
        "m1": tps("t-4"),
        "m3": tps("t-5"),
    }


def test_interleaved_static_and_dynamic_with_heterogeneous_subscriptions() -> None:
    """Per topic, only that topic's subscribers are ranked, still static-first."""
    members = [
        mem("a-dyn", ["x", "y"]),
        mem("z-static", ["x"], "i2"),
        mem("b-dyn", ["y"]),
        mem("y-static", ["x", "y"], "i1"),
    ]
    # x subscribers: y-static(i1), z-static(i2), a-dyn -> 5 = 2,2,1
    # y subscribers: y-static(i1), a-dyn, b-dyn -> 4 = 2,1,1
    assert as_sets(assign(group({"x": 5, "y": 4}, members))) == {
        "y-static": tps("x-0, x-1, y-0, y-1"),
        "z-static": tps("x-2, x-3"),
        "a-dyn": tps("x-4, y-2"),
        "b-dyn": tps("y-3"),
    }


def test_java_utf16_member_order_decides_extras() -> None:
    """U+1F600 is a surrogate pair (D83D ...) in UTF-16, so Java sorts it before U+FF21."""
    high, bmp = "\U0001f600", "\uff21"
    spec = group({"t": 3}, [mem(bmp, ["t"]), mem(high, ["t"])])
    assert as_sets(assign(spec)) == {high: tps("t-0, t-1"), bmp: tps("t-2")}
    static = group({"t": 3}, [mem("m1", ["t"], bmp), mem("m2", ["t"], high)])
    assert as_sets(assign(static)) == {"m2": tps("t-0, t-1"), "m1": tps("t-2")}


def test_empty_partition_topic_and_missing_topic_are_skipped() -> None:
    spec = group({"empty": 0, "t": 2}, [mem("c1", ["empty", "ghost", "t"]), mem("c2", ["ghost"])])
    assert as_sets(assign(spec)) == {"c1": tps("t-0, t-1"), "c2": set()}


def test_more_members_than_partitions() -> None:
    spec = group({"t": 2}, [mem(f"c{i}", ["t"]) for i in range(4)])
    assert as_sets(assign(spec)) == {
        "c0": tps("t-0"),
        "c1": tps("t-1"),
        "c2": set(),
        "c3": set(),
    }


def test_range_ignores_previous_ownership() -> None:
    base = [mem("c1", ["t"]), mem("c2", ["t"])]
    owning = [
        Member("c1", frozenset({"t"}), owned=(("t", 3), ("t", 2)), generation=5),
        Member("c2", frozenset({"t"}), owned=(("t", 0), ("t", 1)), generation=5),
    ]
    assert assign(group({"t": 4}, owning)) == assign(group({"t": 4}, base))
    assert as_sets(assign(group({"t": 4}, owning))) == {
        "c1": tps("t-0, t-1"),
        "c2": tps("t-2, t-3"),
    }


def test_no_members() -> None:
    assert assign(group({"t": 3}, [])) == {}


# ------------------------------------------------------------------- seeded properties


def random_group(rng: random.Random, all_static: bool = False) -> GroupSpec:
    names = [f"topic{i}" for i in range(rng.randint(1, 6))]
    # Some topics have no metadata, some have zero partitions.
    meta = {t: rng.randint(0, 12) for t in names if rng.random() < 0.85}
    members = random_members(rng, lambda: [t for t in names if rng.random() < 0.6], all_static)
    return group(meta, members)


@pytest.mark.parametrize("seed", SEEDS)
def test_property_valid_and_per_topic_blocks(seed: int) -> None:
    rng = random.Random(seed)
    spec = random_group(rng)
    result = assign(spec)
    check_valid(spec, result)
    order = kafka_order(spec.members)
    for topic, meta in spec.topics.items():
        subs = [m.member_id for m in order if topic in m.topics]
        n = meta.partition_count
        if not subs:
            continue
        q, r = divmod(n, len(subs))
        counts = []
        for i, member_id in enumerate(subs):
            got = sorted(p for t, p in result[member_id] if t == topic)
            counts.append(len(got))
            size = q + (1 if i < r else 0)
            start = i * q + min(i, r)
            assert got == list(range(start, start + size)), (topic, member_id)
        assert set(counts) <= {q, q + 1}
        assert counts.count(q + 1) == r


@pytest.mark.parametrize("seed", SEEDS)
def test_property_static_output_survives_member_id_renames(seed: int) -> None:
    rng = random.Random(seed)
    spec = random_group(rng, all_static=True)
    renamed = renamed_copy(rng, spec)

    def by_instance(s: GroupSpec) -> dict[str | None, set[TopicPartition]]:
        inst = {m.member_id: m.group_instance_id for m in s.members}
        return {inst[m]: set(v) for m, v in assign(s).items()}

    assert by_instance(spec) == by_instance(renamed)
