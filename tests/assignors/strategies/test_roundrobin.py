"""Conformance and property tests for the classic RoundRobinAssignor.

Expected values come from Kafka's RoundRobinAssignorTest (restated as facts; all exact list
equality) and hand-checked worked examples, never from running our code.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

import pytest
from helpers.classic import (
    SEEDS,
    check_valid,
    java_units,
    kafka_order,
    mem,
    rand_name,
    random_members,
    renamed_copy,
    tp_list,
)

from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.strategies.roundrobin import RoundRobinAssignor

# --------------------------------------------------------------------------------- builders


def group(topics: Mapping[str, int], members: Iterable[Member]) -> GroupSpec:
    return GroupSpec("g", tuple(members), {t: TopicMetadata(t, n) for t, n in topics.items()})


def tps(text: str) -> list[TopicPartition]:
    """'t1-0, t1-1' -> [('t1', 0), ('t1', 1)], order kept (Kafka's TopicPartition.toString)."""
    return tp_list(text)


def assign(spec: GroupSpec) -> Assignment:
    return RoundRobinAssignor().assign(spec)


# --------------------------------------------------------------- RoundRobinAssignorTest

T1, T2 = "topic1", "topic2"
BOTH = ["t1", "t2"]

FACTS: list[tuple[str, dict[str, int], list[Member], dict[str, str]]] = [
    ("testOneConsumerNoTopic", {}, [mem("consumer", [])], {"consumer": ""}),
    ("testOneConsumerNonexistentTopic", {}, [mem("consumer", ["topic"])], {"consumer": ""}),
    (
        "testOneConsumerOneTopic",
        {"topic": 3},
        [mem("consumer", ["topic"])],
        {"consumer": "topic-0, topic-1, topic-2"},
    ),
    (
        "testOnlyAssignsPartitionsFromSubscribedTopics",
        {"topic": 3, "other": 3},
        [mem("consumer", ["topic"])],
        {"consumer": "topic-0, topic-1, topic-2"},
    ),
    (
        "testOneConsumerMultipleTopics",
        {T1: 1, T2: 2},
        [mem("consumer", [T1, T2])],
        {"consumer": "topic1-0, topic2-0, topic2-1"},
    ),
    (
        "testTwoConsumersOneTopicOnePartition",
        {"topic": 1},
        [mem("consumer1", ["topic"]), mem("consumer2", ["topic"])],
        {"consumer1": "topic-0", "consumer2": ""},
    ),
    (
        "testTwoConsumersOneTopicTwoPartitions",
        {"topic": 2},
        [mem("consumer1", ["topic"]), mem("consumer2", ["topic"])],
        {"consumer1": "topic-0", "consumer2": "topic-1"},
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
        "testTwoDynamicConsumersTwoTopicsSixPartitions",
        {"t1": 3, "t2": 3},
        [mem("consumer1", BOTH), mem("consumer2", BOTH)],
        {"consumer1": "t1-0, t1-2, t2-1", "consumer2": "t1-1, t2-0, t2-2"},
    ),
    (
        "testTwoStaticConsumersTwoTopicsSixPartitions",
        {"t1": 3, "t2": 3},
        [mem("consumer-b", BOTH, "instance1"), mem("consumer-a", BOTH, "instance2")],
        {"consumer-b": "t1-0, t1-2, t2-1", "consumer-a": "t1-1, t2-0, t2-2"},
    ),
    (
        "testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions",
        {"t1": 3, "t2": 3},
        [mem("consumer-b", BOTH, "instance1"), mem("consumer-a", BOTH)],
        {"consumer-b": "t1-0, t1-2, t2-1", "consumer-a": "t1-1, t2-0, t2-2"},
    ),
    (
        "javadoc-example",
        {"t0": 1, "t1": 2, "t2": 3},
        [mem("C0", ["t0"]), mem("C1", ["t0", "t1"]), mem("C2", ["t0", "t1", "t2"])],
        {"C0": "t0-0", "C1": "t1-0", "C2": "t1-1, t2-0, t2-1, t2-2"},
    ),
]


@pytest.mark.parametrize(
    ("topics", "members", "expected"), [pytest.param(t, m, e, id=n) for n, t, m, e in FACTS]
)
def test_round_robin_assignor_test_facts(
    topics: dict[str, int], members: list[Member], expected: dict[str, str]
) -> None:
    assert assign(group(topics, members)) == {m: tps(v) for m, v in expected.items()}


def test_static_member_round_robin_assignment_persistent() -> None:
    topics = {"t1": 3, "t2": 3}
    statics = [mem(f"consumer{i}", BOTH, f"instance{i}") for i in (1, 2, 3)]
    expected_static = {
        "consumer1": tps("t1-0, t2-1"),
        "consumer2": tps("t1-1, t2-2"),
        "consumer3": tps("t1-2"),
    }
    first = assign(group(topics, [*statics, mem("consumer4", BOTH)]))
    assert first == {**expected_static, "consumer4": tps("t2-0")}
    second = assign(group(topics, [*statics, mem("consumer5", BOTH)]))
    assert second == {**expected_static, "consumer5": tps("t2-0")}


def test_static_member_round_robin_assignment_persistent_after_member_id_changes() -> None:
    topics = {"t1": 5, "t2": 5}
    expected = {
        "instance1": tps("t1-0, t1-3, t2-1, t2-4"),
        "instance2": tps("t1-1, t1-4, t2-2"),
        "instance3": tps("t1-2, t2-0, t2-3"),
    }
    before = {"consumer1": "instance1", "consumer2": "instance2", "consumer3": "instance3"}
    after = {"consumer1": "instance1", "consumer5": "instance2", "consumer4": "instance3"}
    for ids in (before, after):
        result = assign(group(topics, [mem(m, BOTH, i) for m, i in ids.items()]))
        assert {ids[m]: v for m, v in result.items()} == expected


# ---------------------------------------------------------------------- worked examples


def test_example_one_topic_seven_partitions_three_members() -> None:
    spec = group({"t": 7}, [mem(f"c{i}", ["t"]) for i in range(3)])
    assert assign(spec) == {
        "c0": tps("t-0, t-3, t-6"),
        "c1": tps("t-1, t-4"),
        "c2": tps("t-2, t-5"),
    }


def test_example_t1_by_three_t2_by_five_pointer_not_reset() -> None:
    members = [mem(f"c{i}", ["t1", "t2"] if i < 3 else ["t2"]) for i in range(5)]
    assert assign(group({"t1": 5, "t2": 7}, members)) == {
        "c0": tps("t1-0, t1-3, t2-3"),
        "c1": tps("t1-1, t1-4, t2-4"),
        "c2": tps("t1-2, t2-0, t2-5"),
        "c3": tps("t2-1, t2-6"),
        "c4": tps("t2-2"),
    }


def test_example_three_topics_circular_subscriptions() -> None:
    members = [mem("C0", ["T0", "T1"]), mem("C1", ["T1", "T2"]), mem("C2", ["T2", "T0"])]
    assert assign(group({"T0": 3, "T1": 2, "T2": 4}, members)) == {
        "C0": tps("T0-0, T0-2, T1-1"),
        "C1": tps("T1-0, T2-0, T2-2"),
        "C2": tps("T0-1, T2-1, T2-3"),
    }


def test_example_unequal_subscriptions_unbalanced() -> None:
    members = [mem("C0", ["t0"]), mem("C1", ["t1"]), mem("C2", ["t0", "t1", "t2"])]
    assert assign(group({"t0": 1, "t1": 2, "t2": 3}, members)) == {
        "C0": tps("t0-0"),
        "C1": tps("t1-0"),
        "C2": tps("t1-1, t2-0, t2-1, t2-2"),
    }


def test_example_two_members_two_topics_three_partitions() -> None:
    members = [mem("C0", ["t0", "t1"]), mem("C1", ["t0", "t1"])]
    assert assign(group({"t0": 3, "t1": 3}, members)) == {
        "C0": tps("t0-0, t0-2, t1-1"),
        "C1": tps("t0-1, t1-0, t1-2"),
    }


def test_example_five_partitions_two_members() -> None:
    spec = group({"t": 5}, [mem("C0", ["t"]), mem("C1", ["t"])])
    assert assign(spec) == {"C0": tps("t-0, t-2, t-4"), "C1": tps("t-1, t-3")}


# ----------------------------------------------------------- ordering and edge cases


def test_interleaved_static_and_dynamic_members() -> None:
    members = [
        mem("m3", ["t"]),
        mem("m9", ["t"], "b"),
        mem("m1", ["t"]),
        mem("m0", ["t"], "c"),
        mem("m5", ["t"], "a"),
    ]
    # Order: m5 (a), m9 (b), m0 (c), then dynamic m1, m3.
    assert assign(group({"t": 7}, members)) == {
        "m3": tps("t-4"),
        "m9": tps("t-1, t-6"),
        "m1": tps("t-3"),
        "m0": tps("t-2"),
        "m5": tps("t-0, t-5"),
    }


def test_topics_in_java_utf16_order() -> None:
    """U+10400 is D801 DC00 in UTF-16, so Java iterates it before U+FF41 (Python would not)."""
    high, bmp = "\U00010400", "\uff41"
    spec = group({bmp: 1, high: 1}, [mem("c0", [bmp, high]), mem("c1", [bmp, high])])
    assert assign(spec) == {"c0": [(high, 0)], "c1": [(bmp, 0)]}


def test_members_in_java_utf16_order() -> None:
    high, bmp = "\U0001f600", "\ue000"
    spec = group({"t": 3}, [mem(bmp, ["t"]), mem(high, ["t"])])
    assert assign(spec) == {high: tps("t-0, t-2"), bmp: tps("t-1")}
    static = group({"t": 3}, [mem("a", ["t"], high), mem("b", ["t"], bmp)])
    assert assign(static) == {"a": tps("t-0, t-2"), "b": tps("t-1")}


def test_empty_partition_topic_and_missing_topic_are_skipped() -> None:
    spec = group(
        {"a-empty": 0, "b": 3},
        [mem("c1", ["a-empty", "b", "ghost"]), mem("c2", ["ghost", "b"]), mem("c3", [])],
    )
    assert assign(spec) == {"c1": tps("b-0, b-2"), "c2": tps("b-1"), "c3": []}


def test_roundrobin_ignores_previous_ownership() -> None:
    owning = [
        Member("c1", frozenset({"t"}), owned=(("t", 1),), generation=3),
        Member("c2", frozenset({"t"}), owned=(("t", 0),), generation=3),
    ]
    assert assign(group({"t": 2}, owning)) == {"c1": tps("t-0"), "c2": tps("t-1")}


def test_no_members() -> None:
    assert assign(group({"t": 3}, [])) == {}


# ------------------------------------------------------------------- seeded properties


def random_group(
    rng: random.Random, all_static: bool = False, equal_subs: bool = False
) -> GroupSpec:
    names = [rand_name(rng, "t") for _ in range(rng.randint(1, 6))]
    meta = {t: rng.randint(0, 12) for t in names if rng.random() < 0.85}
    common = [t for t in names if rng.random() < 0.6]

    def pick_subs() -> list[str]:
        return common if equal_subs else [t for t in names if rng.random() < 0.6]

    return group(meta, random_members(rng, pick_subs, all_static))


@pytest.mark.parametrize("seed", SEEDS)
def test_property_valid_and_lists_in_topic_partition_order(seed: int) -> None:
    spec = random_group(random.Random(seed))
    result = assign(spec)
    check_valid(spec, result)
    for got in result.values():
        keys = [(java_units(t), p) for t, p in got]
        assert keys == sorted(keys)


@pytest.mark.parametrize("seed", SEEDS)
def test_property_equal_subscriptions_deal_in_member_order(seed: int) -> None:
    """Equal subscriptions: the k-th partition of the global list goes to member k mod n."""
    spec = random_group(random.Random(seed), equal_subs=True)
    result = assign(spec)
    check_valid(spec, result)
    order = [m.member_id for m in kafka_order(spec.members)]
    topics = sorted((t for t in spec.members[0].topics if t in spec.topics), key=java_units)
    flat = [(t, p) for t in topics for p in range(spec.topics[t].partition_count)]
    expected = {m: flat[i :: len(order)] for i, m in enumerate(order)}
    assert result == expected
    sizes = [len(v) for v in result.values()]
    assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("seed", SEEDS)
def test_property_static_output_survives_member_id_renames(seed: int) -> None:
    rng = random.Random(seed)
    spec = random_group(rng, all_static=True)
    renamed = renamed_copy(rng, spec)

    def by_instance(s: GroupSpec) -> dict[str | None, list[TopicPartition]]:
        inst = {m.member_id: m.group_instance_id for m in s.members}
        return {inst[m]: v for m, v in assign(s).items()}

    assert by_instance(spec) == by_instance(renamed)
