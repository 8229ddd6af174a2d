"""Rack-aware RangeAssignor (KIP-881): Kafka's RangeAssignorTest rack facts and properties.

Facts from Kafka's RangeAssignorTest (R1-R6, the useRackAwareAssignment truth table), built with
Kafka's `verifyRackAssignment` layout (tests/helpers/racks.py). Cases Kafka runs with its
test-only `preferRackAwareLogic` flag are kept where the flag cannot matter (some partition
sits on a strict subset of the racks, or the expected result is the non-rack one). "mm" is
Kafka's rack-mismatch count; -1 (not checked in Kafka) is left out.
"""

from __future__ import annotations

import random

import pytest
from helpers.racks import layout, nulls, printed, rack_group, racks

from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.racks import rack_mismatch_count, replica_racks_by_partition, use_rack_aware
from assignors.strategies.range import RangeAssignor

T3 = {"t1": 6, "t2": 7, "t3": 2}
T5 = {"t1": 5, "t2": 5, "t3": 5}
ALL3 = [["t1", "t2", "t3"]] * 3
NONEQ = [["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]]

# The non-rack variants Kafka runs every R test under: (rf, broker racks, consumer racks, mm).
NON_RACK_VARIANTS = [
    (3, nulls(3), racks(3), None),
    (3, racks(3), nulls(3), None),
    (3, racks(3), racks(3), 0),
    (4, racks(4), racks(3), 0),
    (3, racks(3), list("def"), None),
    (3, racks(3), [None, "e", "f"], None),
]

R1_NON = [
    "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0",
    "t1-2, t1-3, t2-3, t2-4, t3-1",
    "t1-4, t1-5, t2-5, t2-6",
]
R2_NON = [
    "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0",
    "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1",
    "t1-4, t1-5",
]
R3_NON = [
    "t1-0, t1-1, t2-0, t2-1, t3-0, t3-1",
    "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
    "t1-4, t2-4, t3-4",
]
R4_NON = [
    "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
    "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3",
    "t1-4, t3-4",
]

CASES = [
    # (id, topics, subs, rf, broker racks, consumer racks, expected, mm)
    *[
        (f"R1-non-{i}", T3, ALL3, rf, b, c, R1_NON, mm)
        for i, (rf, b, c, mm) in enumerate(NON_RACK_VARIANTS)
    ],
    (
        "R1-rf1",
        T3,
        ALL3,
        1,
        racks(3),
        racks(3),
        [
            "t1-0, t1-3, t2-0, t2-3, t2-6",
            "t1-1, t1-4, t2-1, t2-4, t3-0",
            "t1-2, t1-5, t2-2, t2-5, t3-1",
        ],
        0,
    ),
    (
        "R1-rf2",
        T3,
        ALL3,
        2,
        racks(3),
        racks(3),
        [
            "t1-0, t1-2, t2-0, t2-2, t2-3, t3-1",
            "t1-1, t1-3, t2-1, t2-4, t3-0",
            "t1-4, t1-5, t2-5, t2-6",
        ],
        1,
    ),
    ("R1-2racks", T3, ALL3, 3, racks(2), racks(3), R1_NON, 4),
    *[
        (f"R2-non-{i}", T3, NONEQ, rf, b, c, R2_NON, mm)
        for i, (rf, b, c, mm) in enumerate(NON_RACK_VARIANTS)
    ],
    (
        "R2-rf1",
        T3,
        NONEQ,
        1,
        racks(3),
        racks(3),
        [
            "t1-0, t1-3, t2-0, t2-2, t2-3, t2-6",
            "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0",
            "t1-2, t1-5, t3-1",
        ],
        2,
    ),
    (
        "R2-rf2",
        T3,
        NONEQ,
        2,
        racks(3),
        racks(3),
        [
            "t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1",
            "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0",
            "t1-4, t1-5",
        ],
        0,
    ),
    ("R2-2racks", T3, NONEQ, 3, racks(2), racks(3), R2_NON, 2),
    *[
        (f"R3-non-{i}", T5, ALL3, rf, b, c, R3_NON, mm)
        for i, (rf, b, c, mm) in enumerate(NON_RACK_VARIANTS)
    ],
    ("R3-rf1", T5, ALL3, 1, racks(3), racks(3), R3_NON, 10),
    ("R3-rf2", T5, ALL3, 2, racks(3), racks(3), R3_NON, 5),
    ("R3-2racks", T5, ALL3, 3, racks(2), racks(3), R3_NON, 3),
    *[
        (f"R4-non-{i}", T5, NONEQ, rf, b, c, R4_NON, mm)
        for i, (rf, b, c, mm) in enumerate(NON_RACK_VARIANTS)
    ],
    (
        "R4-rf1",
        T5,
        NONEQ,
        1,
        racks(3),
        racks(3),
        [
            "t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1",
            "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
            "t1-4, t3-4",
        ],
        9,
    ),
    (
        "R4-rf2",
        T5,
        NONEQ,
        2,
        racks(3),
        racks(3),
        [
            "t1-2, t2-0, t2-1, t2-3, t3-2",
            "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3",
            "t1-1, t1-4, t3-1, t3-4",
        ],
        0,
    ),
    ("R4-2racks", T5, NONEQ, 3, racks(2), racks(3), R4_NON, 2),
]

R5_TOPICS = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
R5_RACKS = ["a", "b", "b", "a"]
R5_SPLIT = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
R5_SPLIT_NON = [
    "t1-0, t1-1, t1-2, t2-0, t2-1, t2-2",
    "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
    "t3-0, t4-0",
    "t3-1, t4-1",
]
R5_ALL = [["t1", "t2", "t3", "t4"]] * 4
R5_ALL_NON = [
    "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0",
    "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
    "t1-4, t2-4",
    "t1-5, t2-5",
]
R6_TOPICS = {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}
R6_SUBS = [[f"t{i}" for i in range(1, 10)]] * 3  # t7..t9 do not exist
R6_NON = [
    "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
    "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
    "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3",
]

CASES += [
    ("R5-split-2racks", R5_TOPICS, R5_SPLIT, 3, racks(2), R5_RACKS, R5_SPLIT_NON, None),
    ("R5-split-rf2", R5_TOPICS, R5_SPLIT, 2, racks(2), R5_RACKS, R5_SPLIT_NON, 0),
    (
        "R5-split-rf1",
        R5_TOPICS,
        R5_SPLIT,
        1,
        racks(2),
        R5_RACKS,
        [
            "t1-0, t1-2, t1-4, t2-0, t2-2, t2-4",
            "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5",
            "t3-1, t4-1",
            "t3-0, t4-0",
        ],
        0,
    ),
    ("R5-all-rf3", R5_TOPICS, R5_ALL, 3, racks(2), R5_RACKS, R5_ALL_NON, None),
    ("R5-all-rf2", R5_TOPICS, R5_ALL, 2, racks(2), R5_RACKS, R5_ALL_NON, 0),
    (
        "R5-all-rf1",
        R5_TOPICS,
        R5_ALL,
        1,
        racks(2),
        R5_RACKS,
        [
            "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0",
            "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1",
            "t1-5, t2-5",
            "t1-4, t2-4",
        ],
        0,
    ),
    (
        "R5-all-rf1-3racks",
        R5_TOPICS,
        R5_ALL,
        1,
        racks(3),
        R5_RACKS,
        [
            "t1-0, t1-3, t2-0, t2-3, t3-0, t4-0",
            "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1",
            "t1-2, t2-2",
            "t1-5, t2-5",
        ],
        6,
    ),
    ("R6-no-broker-racks", R6_TOPICS, R6_SUBS, 3, nulls(3), racks(3), R6_NON, None),
    ("R6-all-racks", R6_TOPICS, R6_SUBS, 3, racks(3), racks(3), R6_NON, 0),
    # Kafka runs this one with preferRackAwareLogic; with replication 2 of 3 racks every
    # partition is on a strict subset, so rack logic runs without the flag too.
    (
        "R6-rf2",
        R6_TOPICS,
        R6_SUBS,
        2,
        racks(3),
        racks(3),
        [
            "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0, t5-1, t6-1",
            "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1, t5-2, t6-2",
            "t1-4, t1-5, t2-4, t2-5, t5-0, t5-3, t6-0, t6-3",
        ],
        0,
    ),
]


@pytest.mark.parametrize(
    ("topics", "subs", "rf", "brokers", "consumers", "expected", "mm"),
    [pytest.param(*c[1:], id=c[0]) for c in CASES],
)
def test_rack_aware_range_facts(
    topics: dict[str, int],
    subs: list[list[str]],
    rf: int,
    brokers: list[str | None],
    consumers: list[str | None],
    expected: list[str],
    mm: int | None,
) -> None:
    spec = rack_group(topics, rf, brokers, consumers, subs)
    result = RangeAssignor().assign(spec)
    assert printed(result, len(subs)) == expected
    if mm is not None:
        assert rack_mismatch_count(spec, result) == mm


ALL_ON = [frozenset("abc")] * 10
SUBSET = [frozenset("abc"[i % 3]) for i in range(10)]


# Kafka's truth table with the flag off. The flag-on rows belong to Kafka's test-only
# `preferRackAwareLogic` switch, which the planner does not model (production never sets it).
@pytest.mark.parametrize(
    ("consumer_racks", "parts", "expected"),
    [
        (set(), [], False),
        (set(), ALL_ON, False),
        (set("abc"), [], False),
        ({"d"}, ALL_ON, False),
        (set("abc"), ALL_ON, False),
        (set("ab"), ALL_ON, False),
        ({"a", "d"}, ALL_ON, False),
        (set("abc"), SUBSET, True),
        (set("ab"), SUBSET, True),
        ({"a", "d"}, SUBSET, True),
    ],
)
def test_use_rack_aware_truth_table(
    consumer_racks: set[str], parts: list[frozenset[str]], expected: bool
) -> None:
    assert use_rack_aware(consumer_racks, parts) is expected


def test_static_member_rack_assignment_persistent_after_member_id_changes() -> None:
    """RangeAssignorTest, rack case 14: replication 2 over brokers on racks a, b, c, a, b, c."""
    broker_racks: list[str | None] = list("abcabc")
    meta = layout({"t1": 5}, 2, broker_racks)
    # Kafka's fixture uses offset 0 for every topic here.
    meta["t2"] = TopicMetadata("t2", 5, meta["t1"].replica_racks)
    expected = {
        "instance1": "t1-0, t1-2, t2-0, t2-2",
        "instance2": "t1-1, t1-3, t2-1, t2-3",
        "instance3": "t1-4, t2-4",
    }
    for ids in (["consumer1", "consumer2", "consumer3"], ["consumer1", "consumer5", "consumer4"]):
        members = tuple(
            Member(mid, frozenset({"t1", "t2"}), f"instance{i + 1}", rack="abc"[i])
            for i, mid in enumerate(ids)
        )
        result = RangeAssignor().assign(GroupSpec("g", members, meta))
        by_instance = {
            m.group_instance_id: ", ".join(f"{t}-{p}" for t, p in sorted(result[m.member_id]))
            for m in members
        }
        assert by_instance == expected


# ------------------------------------------------------------------ seeded properties


def _random_rack_group(rng: random.Random) -> GroupSpec:
    topics = {f"t{i}": rng.randint(1, 8) for i in range(rng.randint(1, 4))}
    names = list(topics)
    n = rng.randint(1, 5)
    subs = [rng.sample(names, rng.randint(1, len(names))) for _ in range(n)]
    broker_racks: list[str | None] = [rng.choice("abcd") for _ in range(rng.randint(1, 6))]
    rf = rng.randint(1, len(broker_racks))
    consumer_racks = [rng.choice([None, "a", "b", "c", "e"]) for _ in range(n)]
    return rack_group(topics, rf, broker_racks, consumer_racks, subs)


def _without_racks(spec: GroupSpec) -> GroupSpec:
    return GroupSpec(
        spec.group_id,
        tuple(Member(m.member_id, m.topics, m.group_instance_id) for m in spec.members),
        spec.topics,
    )


def _per_topic_counts(spec: GroupSpec, result: dict[str, list[tuple[str, int]]]) -> list[int]:
    return sorted(
        sum(1 for t, _ in result[m.member_id] if t == topic)
        for topic in spec.subscribed_topics()
        for m in spec.members
        if topic in m.topics
    )


@pytest.mark.parametrize("seed", range(300))
def test_racks_keep_per_topic_counts_and_never_add_mismatches(seed: int) -> None:
    spec = _random_rack_group(random.Random(seed))
    plain_spec = _without_racks(spec)
    with_racks = RangeAssignor().assign(spec)
    plain = RangeAssignor().assign(plain_spec)
    # Every member gets q or q+1 of each topic either way (Kafka's per-topic quota) ...
    for topic in spec.subscribed_topics():
        subs = [m.member_id for m in spec.members if topic in m.topics]
        q, _ = divmod(spec.partition_count(topic), len(subs))
        counts = [sum(1 for t, _ in with_racks[s] if t == topic) for s in subs]
        assert all(c in (q, q + 1) for c in counts)
    assert _per_topic_counts(spec, with_racks) == _per_topic_counts(spec, plain)
    # ... and racks never make locality worse than ignoring them.
    mm_racks = rack_mismatch_count(spec, with_racks)
    mm_plain = rack_mismatch_count(spec, plain)
    assert (mm_racks or 0) <= (mm_plain or 0)


@pytest.mark.parametrize("seed", range(100))
def test_identical_to_non_rack_when_racks_absent_or_disjoint(seed: int) -> None:
    rng = random.Random(seed)
    spec = _random_rack_group(rng)
    plain = RangeAssignor().assign(_without_racks(spec))
    disjoint = GroupSpec(
        "g",
        tuple(
            Member(m.member_id, m.topics, rack=rng.choice(["x", "y", None])) for m in spec.members
        ),
        spec.topics,
    )
    no_broker = GroupSpec(
        "g", spec.members, {t: TopicMetadata(t, m.partition_count) for t, m in spec.topics.items()}
    )
    for variant in (disjoint, no_broker):
        result = RangeAssignor().assign(variant)
        assert {m: sorted(v) for m, v in result.items()} == {m: sorted(v) for m, v in plain.items()}


def test_bad_rack_input_is_planned() -> None:
    """Nulls, empty strings and duplicates in replica racks; a member rack no partition has."""
    meta = {
        "t": TopicMetadata(
            "t", 4, (frozenset({"a", ""}), frozenset({"b"}), frozenset(), frozenset({"a"}))
        )
    }
    members = (
        Member("m1", frozenset({"t"}), rack="b"),
        Member("m2", frozenset({"t"}), rack=""),
        Member("m3", frozenset({"t"}), rack="zz"),
    )
    spec = GroupSpec("g", members, meta)
    result = RangeAssignor().assign(spec)
    assert sorted(tp for v in result.values() for tp in v) == [("t", p) for p in range(4)]
    assert ("t", 1) in result["m1"]  # m1 (rack b) takes the one partition on b
    assert rack_mismatch_count(spec, result) == len(result["m3"]) + sum(
        1 for tp in result["m1"] if tp != ("t", 1)
    )


def test_replica_racks_from_rows() -> None:
    """What the Spark layer hands over: nulls, empty strings and duplicates inside."""
    racks = replica_racks_by_partition(
        4, [(0, ["a", "a", None]), (1, None), (2, ["", "b"]), (2, ["c"]), (7, ["x"])]
    )
    assert racks == (frozenset({"a"}), frozenset(), frozenset({"b", "c"}), frozenset())
    assert replica_racks_by_partition(2, [(0, [None, ""]), (1, None)]) == ()
