"""`cooperative-sticky@librdkafka`: librdkafka 2.16.0's sticky assignor.

Three kinds of facts: steps librdkafka's leader took live (real confluent-kafka 2.16.1
consumers on librdkafka's mock cluster, `tests/jobs/export/test_librdkafka_assignors.py`);
librdkafka's own unit tests (`ut_test*` in `src/rdkafka_sticky_assignor.c`, which run its
`assign_cb` alone, without the cooperative step, members `consumer1`, ... with generation 1
unless set); and properties of random groups."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from assignors.catalog.registry import get_assignor
from assignors.model import GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.strategies.clients import ClientAssignorFailure
from assignors.strategies.clients.librdkafka_sticky import (
    LibrdkafkaCooperativeStickyAssignor,
    RdMember,
    RdTopic,
    adjust_cooperative,
    assign_cb,
)

TP = TopicPartition
Lists = dict[str, list[TP]]

# --- the live steps ---------------------------------------------------------------------

TOPICS = {"ta": 5, "tb": 3, "tc": 4}
EVERY = frozenset(TOPICS)


def _tps(text: str) -> list[TP]:
    """'ta-0 tb-2' -> [('ta', 0), ('tb', 2)]."""
    out = []
    for item in text.split():
        topic, p = item.rsplit("-", 1)
        out.append((topic, int(p)))
    return sorted(out)


def _live_spec(owned: dict[str, str], joining: Sequence[str]) -> GroupSpec:
    members = [Member(m, EVERY, owned=tuple(_tps(tps)), generation=1) for m, tps in owned.items()]
    members += [Member(m, EVERY) for m in joining]
    return GroupSpec("g", tuple(members), {t: TopicMetadata(t, n) for t, n in TOPICS.items()})


def _settled(spec: GroupSpec) -> dict[str, list[TP]]:
    got = LibrdkafkaCooperativeStickyAssignor().rebalance(spec).assignment
    return {m: sorted(tps) for m, tps in got.items()}


ALL12 = "ta-0 ta-1 ta-2 ta-3 ta-4 tb-0 tb-1 tb-2 tc-0 tc-1 tc-2 tc-3"
# (what the earlier members own, who joins, what the group settled on), member ids sorting
# c1 < c2 < c3 as the mock's did
LIVE_STEPS = [
    ({}, ["c1"], {"c1": ALL12}),
    (
        {"c1": ALL12},
        ["c2"],
        {"c1": "tb-1 tb-2 tc-0 tc-1 tc-2 tc-3", "c2": "ta-0 ta-1 ta-2 ta-3 ta-4 tb-0"},
    ),
    (
        {"c1": "tb-1 tb-2 tc-0 tc-1 tc-2 tc-3", "c2": "ta-0 ta-1 ta-2 ta-3 ta-4 tb-0"},
        ["c3"],
        {"c1": "tc-0 tc-1 tc-2 tc-3", "c2": "ta-2 ta-3 ta-4 tb-0", "c3": "ta-0 ta-1 tb-1 tb-2"},
    ),
]


@pytest.mark.parametrize(("owned", "joining", "live"), LIVE_STEPS)
def test_the_steps_seen_live(
    owned: dict[str, str], joining: list[str], live: dict[str, str]
) -> None:
    spec = _live_spec(owned, joining)
    assert _settled(spec) == {m: _tps(tps) for m, tps in live.items()}


def test_java_settles_the_join_otherwise() -> None:
    spec = _live_spec({"c1": ALL12}, ["c2"])
    java = get_assignor("cooperative-sticky").rebalance(spec).assignment
    assert sorted(java["c1"]) == _tps("ta-0 ta-1 tb-0 tb-1 tc-0 tc-1")


def test_the_join_takes_two_rounds() -> None:
    # round 1 withholds what c1 must revoke first; round 2 hands it to c2
    spec = _live_spec({"c1": ALL12}, ["c2"])
    first = LibrdkafkaCooperativeStickyAssignor().assign(spec)
    assert sorted(first["c1"]) == _tps("tb-1 tb-2 tc-0 tc-1 tc-2 tc-3")
    assert first["c2"] == []
    rebalance = LibrdkafkaCooperativeStickyAssignor().rebalance(spec)
    assert rebalance.rounds == 2
    assert set(rebalance.received_round) == set(_tps("ta-0 ta-1 ta-2 ta-3 ta-4 tb-0"))


# --- librdkafka's unit tests ------------------------------------------------------------

ALL_RACKS: list[str | None] = ["a", "b", "c", "d", "e", "f", None]
RACKS_INITIAL = [0, 1, 2]
RACKS_NULL = [6, 6, 6]
RACKS_FINAL = [4, 5, 6]
RACKS_ONE_NULL = [6, 4, 5]


def metadata(
    topics: Sequence[tuple[str, int]], replication: int = 0, broker_racks: int = 0
) -> list[RdTopic]:
    """`rd_kafka_metadata_new_topic_mock` and `ut_populate_internal_*_metadata`: partition j
    of a topic on brokers (j + k + first) % brokers, k < replication, `first` advancing by
    each topic's partition count; broker b on rack b % broker_racks (none if 0)."""
    brokers = replication * broker_racks if broker_racks > 0 else replication
    out = []
    first = 0
    for name, n in topics:
        racks: list[frozenset[str]] = []
        for j in range(n):
            on = {(j + k + first) % brokers for k in range(replication)} if replication else set()
            names = {ALL_RACKS[b % broker_racks] for b in on} if broker_racks else set()
            racks.append(frozenset(r for r in names if r is not None))
        if brokers:
            first = (first + n) % brokers
        out.append(RdTopic(name, n, tuple(racks)))
    return out


def member(
    name: str,
    *topics: str,
    owned: Sequence[TP] = (),
    generation: int = 1,
    rack: str | None = None,
) -> RdMember:
    return RdMember(name, frozenset(topics), owned, generation, rack)


def run(members: Sequence[RdMember], topics: Sequence[RdTopic]) -> Lists:
    """`rd_kafka_assignor_run`: the eligible topics are those of the metadata some member
    subscribes to, in metadata order."""
    wanted = set().union(*(m.topics for m in members)) if members else set()
    return assign_cb(list(members), [t for t in topics if t.name in wanted and t.partitions])


def verify(members: Sequence[RdMember], got: Lists) -> None:
    """`verifyValidityAndBalance`, which also makes each member own what it got."""
    for i, m in enumerate(members):
        mine = got[m.member_id]
        assert all(t in m.topics for t, _ in mine), (m.member_id, mine)
        m.owned = list(mine)
        for other in members[i + 1 :]:
            theirs = got[other.member_id]
            assert not set(mine) & set(theirs), (m.member_id, other.member_id)
            if abs(len(mine) - len(theirs)) > 1:
                their_topics = {t for t, _ in theirs}
                assert not any(t in their_topics for t, _ in mine), (m.member_id, other.member_id)


def fully_balanced(got: Lists) -> None:
    sizes = [len(v) for v in got.values()]
    assert max(sizes) - min(sizes) <= 1, got


def same(got: list[TP], *expected: TP) -> None:
    """`verifyAssignment`: the same partitions (in any order)."""
    assert sorted(got) == sorted(expected)


def c(*names: str) -> list[str]:
    return list(names)


def t(topic: str, *partitions: int) -> list[TP]:
    return [(topic, p) for p in partitions]


def test_one_consumer_no_topic() -> None:
    members = [member("consumer1", "topic1")]
    got = run(members, metadata([]))
    assert got == {"consumer1": []}


def test_one_consumer_nonexistent_topic() -> None:
    members = [member("consumer1", "topic1")]
    assert run(members, metadata([("topic1", 0)])) == {"consumer1": []}


def test_one_consumer_one_topic() -> None:
    members = [member("consumer1", "topic1")]
    got = run(members, metadata([("topic1", 3)]))
    same(got["consumer1"], *t("topic1", 0, 1, 2))


def test_only_assigns_partitions_from_subscribed_topics() -> None:
    members = [member("consumer1", "topic1")]
    got = run(members, metadata([("topic1", 3), ("topic2", 3)]))
    same(got["consumer1"], *t("topic1", 0, 1, 2))


def test_one_consumer_multiple_topics() -> None:
    members = [member("consumer1", "topic1", "topic2")]
    got = run(members, metadata([("topic1", 1), ("topic2", 2)]))
    same(got["consumer1"], ("topic1", 0), ("topic2", 0), ("topic2", 1))


def test_two_consumers_one_topic_one_partition() -> None:
    members = [member("consumer1", "topic1"), member("consumer2", "topic1")]
    got = run(members, metadata([("topic1", 1)]))
    assert got == {"consumer1": [("topic1", 0)], "consumer2": []}


def test_two_consumers_one_topic_two_partitions() -> None:
    members = [member("consumer1", "topic1"), member("consumer2", "topic1")]
    got = run(members, metadata([("topic1", 2)]))
    assert got == {"consumer1": [("topic1", 0)], "consumer2": [("topic1", 1)]}


def test_multiple_consumers_mixed_topic_subscriptions() -> None:
    members = [
        member("consumer1", "topic1"),
        member("consumer2", "topic1", "topic2"),
        member("consumer3", "topic1"),
    ]
    got = run(members, metadata([("topic1", 3), ("topic2", 2)]))
    same(got["consumer1"], *t("topic1", 0, 2))
    same(got["consumer2"], *t("topic2", 0, 1))
    same(got["consumer3"], ("topic1", 1))
    verify(members, got)
    fully_balanced(got)


def test_two_consumers_two_topics_six_partitions() -> None:
    members = [member(m, "topic1", "topic2") for m in c("consumer1", "consumer2")]
    got = run(members, metadata([("topic1", 3), ("topic2", 3)]))
    same(got["consumer1"], *t("topic1", 0, 2), ("topic2", 1))
    same(got["consumer2"], ("topic1", 1), *t("topic2", 0, 2))


def test_add_remove_consumer_one_topic() -> None:
    md = metadata([("topic1", 3)])
    c1, c2 = member("consumer1", "topic1"), member("consumer2", "topic1")
    got = run([c1], md)
    same(got["consumer1"], *t("topic1", 0, 1, 2))
    verify([c1], got)
    got = run([c1, c2], md)
    same(got["consumer1"], *t("topic1", 1, 2))
    same(got["consumer2"], ("topic1", 0))
    verify([c1, c2], got)
    got = run([c2], md)
    same(got["consumer2"], *t("topic1", 0, 1, 2))


def test_poor_round_robin_assignment_scenario() -> None:
    every = ("topic1", "topic2", "topic3", "topic4", "topic5")
    odd = ("topic1", "topic3", "topic5")
    members = [
        member("consumer1", *every),
        member("consumer2", *odd),
        member("consumer3", *odd),
        member("consumer4", *every),
    ]
    md = metadata([("topic1", 2), ("topic2", 1), ("topic3", 2), ("topic4", 1), ("topic5", 2)])
    got = run(members, md)
    same(got["consumer1"], ("topic2", 0), ("topic3", 0))
    same(got["consumer2"], ("topic1", 0), ("topic3", 1))
    same(got["consumer3"], ("topic1", 1), ("topic5", 0))
    same(got["consumer4"], ("topic4", 0), ("topic5", 1))
    verify(members, got)
    fully_balanced(got)


def test_add_remove_topic_two_consumers() -> None:
    members = [member(m, "topic1", "topic2") for m in c("consumer1", "consumer2")]
    got = run(members, metadata([("topic1", 3)]))
    same(got["consumer1"], *t("topic1", 0, 2))
    same(got["consumer2"], ("topic1", 1))
    verify(members, got)
    got = run(members, metadata([("topic1", 3), ("topic2", 3)]))
    same(got["consumer1"], *t("topic1", 0, 2), ("topic2", 1))
    same(got["consumer2"], ("topic1", 1), ("topic2", 2), ("topic2", 0))
    verify(members, got)
    got = run(members, metadata([("topic2", 3)]))
    same(got["consumer1"], ("topic2", 1))
    same(got["consumer2"], *t("topic2", 0, 2))
    verify(members, got)
    fully_balanced(got)


def test_reassignment_after_one_consumer_leaves() -> None:
    md = metadata([(f"topic{i}", i) for i in range(1, 20)])
    members = [
        member(f"consumer{i}", *(f"topic{j}" for j in range(1, i + 1))) for i in range(1, 20)
    ]
    verify(members, run(members, md))
    del members[9]
    verify(members, run(members, md))


def test_reassignment_after_one_consumer_added() -> None:
    md = metadata([("topic1", 20)])
    members = [member(f"consumer{i}", "topic1") for i in range(1, 10)]
    verify(members[:-1], run(members[:-1], md))
    verify(members, run(members, md))


def test_same_subscriptions() -> None:
    topics = [(f"topic{i}", i) for i in range(1, 16)]
    md = metadata(topics)
    members = [member(f"consumer{i}", *(n for n, _ in topics)) for i in range(1, 10)]
    verify(members, run(members, md))
    del members[5]
    verify(members, run(members, md))


def test_large_assignment_with_multiple_consumers_leaving() -> None:
    topics = [(f"topic{i}", i) for i in range(1, 41)]
    md = metadata(topics)
    members = [
        member(f"consumer{i + 1}", *(n for n, _ in topics[: ((i + 1) * 17) % 40]))
        for i in range(200)
    ]
    verify(members, run(members, md))
    for i in range(len(members) - 1, -1, -4):
        del members[i]
    verify(members, run(members, md))


def test_new_subscription() -> None:
    topics = [(f"topic{i}", i) for i in range(1, 6)]
    md = metadata(topics)
    names = [n for n, _ in topics]
    members = [member(f"consumer{i}", *names[: 5 - i]) for i in range(3)]
    got = run(members, md)
    verify(members, got)
    fully_balanced(got)
    members[0].topics = members[0].topics | {"topic1"}
    got = run(members, md)
    verify(members, got)
    fully_balanced(got)


def test_move_existing_assignments() -> None:
    md = metadata([("topic1", 3)])
    members = [member(f"consumer{i}", "topic1") for i in range(1, 5)]
    got = run(members, md)
    verify(members, got)
    assert all(len(v) <= 1 for v in got.values())
    before = dict(got)
    got = run(members[1:], md)
    verify(members[1:], got)
    for m in members[1:]:
        assert len(got[m.member_id]) == 1
        assert not before[m.member_id] or got[m.member_id] == before[m.member_id]


def test_move_existing_assignments_j() -> None:
    md = metadata([(f"topic{i}", 1) for i in range(1, 7)])
    members = [
        member("consumer1", "topic1", "topic2", owned=[("topic1", 0)]),
        member(
            "consumer2",
            "topic1",
            "topic2",
            "topic3",
            "topic4",
            owned=[("topic2", 0), ("topic3", 0)],
        ),
        member(
            "consumer3",
            "topic2",
            "topic3",
            "topic4",
            "topic5",
            "topic6",
            owned=[("topic4", 0), ("topic5", 0), ("topic6", 0)],
        ),
    ]
    verify(members, run(members, md))


def test_stickiness_j() -> None:
    md = metadata([("topic1", 3)])
    members = [member(f"consumer{i}", "topic1") for i in range(1, 5)]
    got = run(members, md)
    verify(members, got)
    assert all(len(v) <= 1 for v in got.values())
    before = dict(got)
    got = run(members[1:], md)
    verify(members[1:], got)
    for m in members[1:]:
        assert len(got[m.member_id]) == 1
        assert not before[m.member_id] or got[m.member_id] == before[m.member_id]


def test_stickiness2() -> None:
    md = metadata([("topic1", 6)])
    c1, c2, c3 = (member(f"consumer{i}", "topic1") for i in range(1, 4))
    got = run([c1], md)
    verify([c1], got)
    same(got["consumer1"], *t("topic1", 0, 1, 2, 3, 4, 5))
    got = run([c1, c2], md)
    verify([c1, c2], got)
    same(got["consumer1"], *t("topic1", 3, 4, 5))
    same(got["consumer2"], *t("topic1", 0, 1, 2))
    for _ in range(2):  # stable
        got = run([c1, c2, c3], md)
        verify([c1, c2, c3], got)
        same(got["consumer1"], *t("topic1", 4, 5))
        same(got["consumer2"], *t("topic1", 1, 2))
        same(got["consumer3"], *t("topic1", 0, 3))
    got = run([c2, c3], md)
    verify([c2, c3], got)
    same(got["consumer2"], *t("topic1", 1, 2, 5))
    same(got["consumer3"], *t("topic1", 0, 3, 4))
    got = run([c3], md)
    same(got["consumer3"], *t("topic1", 0, 1, 2, 3, 4, 5))


def test_assignment_updated_for_deleted_topic() -> None:
    members = [member("consumer1", "topic1", "topic2", "topic3")]
    got = run(members, metadata([("topic1", 1), ("topic3", 100)]))
    assert len(got["consumer1"]) == 101


def test_no_exception_thrown_when_only_subscribed_topic_deleted() -> None:
    members = [member("consumer1", "topic1")]
    verify(members, run(members, metadata([("topic1", 3)])))
    assert run(members, metadata([])) == {"consumer1": []}


def test_conflicting_previous_assignments() -> None:
    # librdkafka's test sets the members' assignment, not what they own: a fresh group
    members = [member(m, "topic1") for m in c("consumer1", "consumer2")]
    got = run(members, metadata([("topic1", 2)]))
    assert [len(v) for v in got.values()] == [1, 1]
    assert got["consumer1"] != got["consumer2"]


def test_all_consumers_reach_expected_quota_and_are_considered_filled() -> None:
    members = [
        member("consumer1", "topic1", owned=t("topic1", 0, 1)),
        member("consumer2", "topic1", owned=t("topic1", 2)),
        member("consumer3", "topic1"),
    ]
    got = run(members, metadata([("topic1", 4)]))
    same(got["consumer1"], *t("topic1", 0, 1))
    same(got["consumer2"], ("topic1", 2))
    same(got["consumer3"], ("topic1", 3))


@pytest.mark.parametrize("older", [9, -1])
def test_owned_partitions_are_invalidated_for_stale_or_no_generation(older: int) -> None:
    owned = [("topic1", 0), ("topic1", 2), ("topic2", 1)]
    members = [
        member("consumer1", "topic1", "topic2", owned=owned, generation=10),
        member("consumer2", "topic1", "topic2", owned=owned, generation=older),
    ]
    got = run(members, metadata([("topic1", 3), ("topic2", 3)]))
    verify(members, got)
    same(got["consumer1"], *owned)
    same(got["consumer2"], ("topic1", 1), ("topic2", 0), ("topic2", 2))


@pytest.mark.parametrize(
    ("owned2", "expected"),
    [
        (t("topic1", 0, 2), {"consumer1": [1], "consumer2": [2], "consumer3": [0]}),
        (t("topic1", 1, 2), {"consumer1": [0], "consumer2": [2], "consumer3": [1]}),
    ],
)
def test_partition_claimed_by_two_members_in_one_generation_moves(
    owned2: list[TP], expected: dict[str, list[int]]
) -> None:
    members = [
        member("consumer1", "topic1", owned=t("topic1", 0, 1)),
        member("consumer2", "topic1", owned=owned2),
        member("consumer3", "topic1"),
    ]
    got = run(members, metadata([("topic1", 3)]))
    verify(members, got)
    assert got == {m: t("topic1", *ps) for m, ps in expected.items()}


def test_ensure_partitions_assigned_to_highest_generation() -> None:
    every = ("topic1", "topic2", "topic3")
    members = [
        member("consumer1", *every, owned=[(x, 0) for x in every], generation=10),
        member("consumer2", *every, owned=[(x, 1) for x in every], generation=9),
        member(
            "consumer3",
            *every,
            owned=[("topic2", 1), ("topic3", 0), ("topic3", 2)],
            generation=8,
        ),
    ]
    got = run(members, metadata([(x, 3) for x in every]))
    for i, m in enumerate(members):
        same(got[m.member_id], *[(x, i) for x in every])
    verify(members, got)


def test_no_reassignment_on_current_members() -> None:
    every = ("topic0", "topic1", "topic2", "topic3")
    members = [
        member("consumer1", *every, generation=-1),
        member(
            "consumer2",
            *every,
            owned=[("topic0", 0), ("topic2", 0), ("topic1", 0)],
            generation=9,
        ),
        member(
            "consumer3",
            *every,
            owned=[("topic3", 2), ("topic2", 2), ("topic1", 1)],
            generation=8,
        ),
        member(
            "consumer4",
            *every,
            owned=[("topic3", 1), ("topic0", 1), ("topic0", 2)],
            generation=7,
        ),
    ]
    got = run(members, metadata([(x, 3) for x in every]))
    verify(members, got)
    same(got["consumer1"], ("topic1", 2), ("topic2", 1), ("topic3", 0))


def test_owned_partitions_are_invalidated_for_consumer_with_multiple_generation() -> None:
    members = [
        member(
            "consumer1",
            "topic1",
            "topic2",
            owned=[("topic1", 0), ("topic2", 1), ("topic1", 1)],
            generation=10,
        ),
        member(
            "consumer2",
            "topic1",
            "topic2",
            owned=[("topic1", 0), ("topic2", 1), ("topic2", 2)],
            generation=8,
        ),
    ]
    got = run(members, metadata([("topic1", 3), ("topic2", 3)]))
    verify(members, got)
    same(got["consumer1"], ("topic1", 0), ("topic2", 1), ("topic1", 1))
    same(got["consumer2"], ("topic1", 2), ("topic2", 2), ("topic2", 0))


# setupRackAwareAssignment: consumer1..3 on racks ALL_RACKS[racks[i]], t1 (6), t2 (7), t3 (2)

RACK_TOPICS = [("t1", 6), ("t2", 7), ("t3", 2)]
Expected = tuple[list[TP], list[TP], list[TP]]


def rack_run(
    members: list[RdMember] | None,
    subscriptions: Sequence[Sequence[str]],
    replication: int,
    broker_racks: int,
    racks: Sequence[int],
    owned: Sequence[Sequence[TP]] | None = None,
) -> tuple[list[RdMember], Lists, list[RdTopic]]:
    """One `setupRackAwareAssignment0`: with `members` None, fresh members (owning `owned`);
    else the same members again, owning what they got last time."""
    md = metadata(RACK_TOPICS, replication, broker_racks)
    if members is None:
        members = [
            member(
                f"consumer{i + 1}", *subs, rack=ALL_RACKS[racks[i]], owned=owned[i] if owned else ()
            )
            for i, subs in enumerate(subscriptions)
        ]
    got = run(members, md)
    verify(members, got)
    return members, got, md


def mismatches(members: Sequence[RdMember], got: Lists, md: Sequence[RdTopic]) -> int:
    racks = {(x.name, p): x.racks[p] for x in md for p in range(x.partitions)}
    return sum(
        1
        for m in members
        if m.rack is not None
        for tp in got[m.member_id]
        if m.rack not in racks[tp]
    )


def expect(got: Lists, expected: Expected) -> None:
    for i, tps in enumerate(expected):
        same(got[f"consumer{i + 1}"], *tps)


def non_rack_aware(subscriptions: Sequence[Sequence[str]], expected: Expected) -> None:
    """`verifyNonRackAwareAssignment`: rack logic off, each setting run fresh, then again
    from what it gave."""
    for replication, broker_racks, racks in [
        (3, 0, RACKS_INITIAL),
        (3, 3, RACKS_NULL),
        (3, 3, RACKS_INITIAL),  # every partition on every rack
        (4, 4, RACKS_INITIAL),
        (3, 3, RACKS_FINAL),  # no rack in common
        (3, 3, RACKS_ONE_NULL),
    ]:
        members = None
        for _ in range(2):
            members, got, md = rack_run(members, subscriptions, replication, broker_racks, racks)
            expect(got, expected)
            if broker_racks and racks is RACKS_INITIAL:
                assert mismatches(members, got, md) == 0


def L(*items: str | int) -> list[TP]:
    """('t1', 0, 't2', 3) -> [('t1', 0), ('t2', 3)], as the C test lists them."""
    out = []
    for topic, p in zip(items[::2], items[1::2], strict=True):
        assert isinstance(topic, str)
        assert isinstance(p, int)
        out.append((topic, p))
    return out


UNIFORM: Expected = (
    L("t1", 0, "t1", 3, "t2", 0, "t2", 3, "t2", 6),
    L("t1", 1, "t1", 4, "t2", 1, "t2", 4, "t3", 0),
    L("t1", 2, "t1", 5, "t2", 2, "t2", 5, "t3", 1),
)
EVERY3 = [("t1", "t2", "t3")] * 3


def test_rack_aware_assignment_with_uniform_subscription() -> None:
    non_rack_aware(EVERY3, UNIFORM)
    for replication, broker_racks, mismatched in [(1, 3, 0), (2, 3, 0), (3, 2, 5)]:
        members = None
        for _ in range(2):
            members, got, md = rack_run(members, EVERY3, replication, broker_racks, RACKS_INITIAL)
            expect(got, UNIFORM)
            assert mismatches(members, got, md) == mismatched
    misaligned = [
        L("t1", 0, "t1", 1, "t1", 2, "t1", 3, "t1", 4),
        L("t1", 5, "t2", 0, "t2", 1, "t2", 2, "t2", 3),
        L("t2", 4, "t2", 5, "t2", 6, "t3", 0, "t3", 1),
    ]
    members, got, md = rack_run(None, EVERY3, 1, 3, RACKS_INITIAL, misaligned)
    expect(got, UNIFORM)
    assert mismatches(members, got, md) == 0
    # librdkafka's loop runs once: its inner loop reuses the counter (i = 1, then 3 after)
    members, got, md = rack_run(None, EVERY3, 1, 3, RACKS_INITIAL, list(UNIFORM))
    expect(got, UNIFORM)
    assert mismatches(members, got, md) == 0


UNEQUAL = [("t1", "t2", "t3"), ("t1", "t2", "t3"), ("t1", "t3")]


def test_rack_aware_assignment_with_non_equal_subscription() -> None:
    non_rack_aware(
        UNEQUAL,
        (
            L("t1", 5, "t2", 0, "t2", 2, "t2", 4, "t2", 6),
            L("t1", 3, "t2", 1, "t2", 3, "t2", 5, "t3", 0),
            L("t1", 0, "t1", 1, "t1", 2, "t1", 4, "t3", 1),
        ),
    )
    cases: list[tuple[int, int, Expected, int]] = [
        (
            1,
            3,
            (
                L("t1", 3, "t2", 0, "t2", 2, "t2", 3, "t2", 6),
                L("t1", 4, "t2", 1, "t2", 4, "t2", 5, "t3", 0),
                L("t1", 0, "t1", 1, "t1", 2, "t1", 5, "t3", 1),
            ),
            4,
        ),
        (
            2,
            3,
            (
                L("t1", 3, "t2", 0, "t2", 2, "t2", 5, "t2", 6),
                L("t1", 0, "t2", 1, "t2", 3, "t2", 4, "t3", 0),
                L("t1", 1, "t1", 2, "t1", 4, "t1", 5, "t3", 1),
            ),
            0,
        ),
        (
            3,
            2,
            (
                L("t1", 5, "t2", 0, "t2", 2, "t2", 4, "t2", 6),
                L("t1", 3, "t2", 1, "t2", 3, "t2", 5, "t3", 0),
                L("t1", 0, "t1", 1, "t1", 2, "t1", 4, "t3", 1),
            ),
            5,
        ),
    ]
    for replication, broker_racks, expected, mismatched in cases:
        members = None
        for _ in range(2):
            members, got, md = rack_run(members, UNEQUAL, replication, broker_racks, RACKS_INITIAL)
            expect(got, expected)
            assert mismatches(members, got, md) == mismatched
    misaligned = [
        L("t1", 0, "t1", 1, "t1", 2, "t1", 3, "t1", 4),
        L("t1", 5, "t2", 0, "t2", 1, "t2", 2, "t2", 3),
        L("t2", 4, "t2", 5, "t2", 6, "t3", 0, "t3", 1),
    ]
    members, got, md = rack_run(None, UNEQUAL, 1, 3, RACKS_INITIAL, misaligned)
    expect(got, cases[0][2])
    assert mismatches(members, got, md) == 4


def test_stickiness() -> None:
    # librdkafka's test sets the members' assignment, not what they own: a fresh group
    members = [
        member("consumer1", "topic1", "topic2"),
        member("consumer2", "topic1", "topic2", "topic3", "topic4"),
        member("consumer3", "topic4", "topic5", "topic6"),
    ]
    verify(members, run(members, metadata([(f"topic{i}", 1) for i in range(1, 7)])))


# --- where librdkafka is not Java (the assign_cb results are librdkafka's own, from
# test_librdkafka_sticky_native's harness) ------------------------------------------------

T4 = {"t": TopicMetadata("t", 4)}
ON_T = frozenset({"t"})


def test_a_tie_below_the_top_generation_drops_the_partition() -> None:
    # c2 and c3 both claim t-0 at generation 1, under c1's claim at 2: librdkafka drops t-0
    # (Java keeps it with c1); the assignor then gives it to c1 again, but c3, its last
    # claimant, is its owner for the cooperative step: withheld for a round
    members = [
        member("c1", "t", owned=t("t", 0, 1), generation=2),
        member("c2", "t", owned=t("t", 0, 2), generation=1),
        member("c3", "t", owned=t("t", 0, 3), generation=1),
    ]
    got = run(members, metadata([("t", 4)]))
    assert got == {"c1": t("t", 1, 0), "c2": t("t", 2), "c3": t("t", 3)}
    assert adjust_cooperative(members, got) == {"c1": t("t", 1), "c2": t("t", 2), "c3": t("t", 3)}
    spec = GroupSpec(
        "g",
        (
            Member("c1", ON_T, owned=tuple(t("t", 0, 1)), generation=2),
            Member("c2", ON_T, owned=tuple(t("t", 0, 2)), generation=1),
            Member("c3", ON_T, owned=tuple(t("t", 0, 3)), generation=1),
        ),
        T4,
    )
    assert LibrdkafkaCooperativeStickyAssignor().rebalance(spec).rounds == 2
    assert get_assignor("cooperative-sticky").rebalance(spec).rounds == 1


def test_a_stale_claimant_is_the_partitions_current_member() -> None:
    # c2's stale claim on t-0 makes c2 t-0's current member while c1 keeps it: c1 ends with
    # t-0 and t-3 (Java: t-0 and t-1)
    members = [
        member("c1", "t", owned=t("t", 0, 1, 2, 3), generation=2),
        member("c2", "t", owned=t("t", 0), generation=1),
        member("c3", "t", generation=-1),
    ]
    assert run(members, metadata([("t", 4)])) == {
        "c1": t("t", 0, 3),
        "c2": t("t", 1),
        "c3": t("t", 2),
    }


# --- the cooperative step -----------------------------------------------------------------


def test_the_cooperative_step() -> None:
    members = [
        member("a", "t", owned=[("t", 0), ("t", 1), ("u", 0)]),
        member("b", "t", owned=[("t", 1)]),  # the last claimant of t-1 is its owner
        member("c", "t"),
    ]
    assigned = {"a": [("t", 1), ("t", 0)], "b": [("t", 2)], "c": [("t", 3)]}
    # a keeps t-0 and gets t-1 only after b revokes it... b is t-1's owner: withheld from a;
    # u-0, which nobody was assigned, goes back to a
    assert adjust_cooperative(members, assigned) == {
        "a": [("t", 0), ("u", 0)],
        "b": [("t", 2)],
        "c": [("t", 3)],
    }


def test_the_cooperative_step_keeps_owned_partitions_first() -> None:
    members = [member("a", "t", owned=[("t", 3), ("t", 1)]), member("b", "t")]
    assigned = {"a": [("t", 0), ("t", 1), ("t", 3)], "b": [("t", 2)]}
    assert adjust_cooperative(members, assigned) == {
        "a": [("t", 1), ("t", 3), ("t", 0)],
        "b": [("t", 2)],
    }


def test_a_member_without_topics_is_left_out() -> None:
    spec = GroupSpec(
        "g",
        (Member("a", ON_T), Member("b", frozenset(), owned=(("t", 0),), generation=1)),
        T4,
    )
    got = LibrdkafkaCooperativeStickyAssignor().rebalance(spec)
    assert got.assignment == {"a": t("t", 0, 1, 2, 3), "b": []}


# --- crashes ------------------------------------------------------------------------------


def test_the_leader_crashes_where_librdkafka_does() -> None:
    # seen live too (tests/jobs/export/test_librdkafka_assignors.py)
    spec = GroupSpec(
        "g",
        (
            Member("c1", frozenset({"t1"}), owned=tuple(t("t1", *range(12))), generation=3),
            Member("c2", frozenset({"t0"}), owned=tuple(t("t0", 0, 1)), generation=3),
            Member("c3", frozenset({"t0", "t1"})),
        ),
        {"t0": TopicMetadata("t0", 2), "t1": TopicMetadata("t1", 12)},
    )
    for call in (
        LibrdkafkaCooperativeStickyAssignor().assign,
        LibrdkafkaCooperativeStickyAssignor().rebalance,
    ):
        with pytest.raises(ClientAssignorFailure, match="freed") as failure:
            call(spec)
        assert failure.value.library == "librdkafka"
        assert failure.value.strategy == "cooperative-sticky"


# --- properties on random groups ----------------------------------------------------------


def _random_topics(rng: random.Random) -> dict[str, TopicMetadata]:
    return {f"t{i}": TopicMetadata(f"t{i}", rng.randint(1, 9)) for i in range(rng.randint(1, 5))}


def _random_subscription(rng: random.Random, names: list[str], equal: bool) -> frozenset[str]:
    return frozenset(names if equal else rng.sample(names, rng.randint(1, len(names))))


def test_fresh_groups_get_javas_plan() -> None:
    # every random fresh group tried, equal subscriptions (where Java takes its constrained
    # path) or not
    rng = random.Random(7)
    java = get_assignor("cooperative-sticky")
    for _ in range(300):
        topics = _random_topics(rng)
        names = sorted(topics)
        equal = rng.random() < 0.4
        ids = list(dict.fromkeys(f"m{rng.randint(0, 99):02d}" for _ in range(rng.randint(1, 8))))
        spec = GroupSpec(
            "g", tuple(Member(m, _random_subscription(rng, names, equal)) for m in ids), topics
        )
        mine = LibrdkafkaCooperativeStickyAssignor().rebalance(spec)
        theirs = java.rebalance(spec)
        assert {m: sorted(v) for m, v in mine.assignment.items()} == {
            m: sorted(v) for m, v in theirs.assignment.items()
        }, spec
        assert mine.rounds == 1


def _assigned_once_to_subscribers(spec: GroupSpec, got: dict[str, list[TP]]) -> None:
    wanted = sorted(
        (t, p)
        for t in {t for m in spec.members for t in m.topics}
        if t in spec.topics
        for p in range(spec.topics[t].partition_count)
    )
    assert sorted(tp for tps in got.values() for tp in tps) == wanted, spec
    for m in spec.members:
        assert all(tp[0] in m.topics for tp in got[m.member_id]), spec


def test_joins_and_leaves_assign_every_partition_once_to_a_subscriber() -> None:
    """Groups that evolve as live ones do (members join and leave, each rebalance starts
    from what the last one gave, at one generation): every subscribed partition is assigned
    exactly once, to a subscriber, unless librdkafka's leader crashes (rarely)."""
    rng = random.Random(11)
    steps = crashes = 0
    for _ in range(120):
        topics = _random_topics(rng)
        names = sorted(topics)
        equal = rng.random() < 0.3
        subs: dict[str, frozenset[str]] = {}
        owned: dict[str, tuple[TP, ...]] = {}
        for _ in range(6):
            if subs and rng.random() < 0.35 and len(subs) > 1:
                gone = rng.choice(sorted(subs))
                del subs[gone], owned[gone]
            else:
                new = f"m{rng.randint(0, 999):03d}"
                subs.setdefault(new, _random_subscription(rng, names, equal))
                owned.setdefault(new, ())
            spec = GroupSpec(
                "g",
                tuple(
                    Member(m, subs[m], owned=owned[m], generation=4 if owned[m] else None)
                    for m in subs
                ),
                topics,
            )
            try:
                got = LibrdkafkaCooperativeStickyAssignor().rebalance(spec).assignment
            except ClientAssignorFailure:
                crashes += 1
                break
            _assigned_once_to_subscribers(spec, got)
            owned = {m: tuple(got[m]) for m in subs}
            steps += 1
    assert crashes < steps / 20


def test_registered() -> None:
    assignor = get_assignor("cooperative-sticky@librdkafka")
    assert type(assignor) is LibrdkafkaCooperativeStickyAssignor
    assert assignor.kafka_name == "cooperative-sticky"
    assert assignor.library == "librdkafka"
    assert [p.value for p in assignor.supported_protocols] == ["COOPERATIVE"]


def _random_run(
    rng: random.Random, equal: bool
) -> tuple[list[RdTopic], list[str], dict[str, frozenset[str]], dict[str, list[TP]]]:
    """Topics, members in JoinGroup order, their subscriptions, and what they own (disjoint,
    of their topics, at one generation)."""
    topics = [RdTopic(f"t{i}", rng.randint(1, 8), ()) for i in range(rng.randint(1, 5))]
    names = [x.name for x in topics]
    ids = list(dict.fromkeys(f"m{rng.randint(0, 99):02d}" for _ in range(rng.randint(2, 7))))
    common = frozenset(rng.sample(names, rng.randint(1, len(names))))
    subs = {
        m: common if equal else frozenset(rng.sample(names, rng.randint(1, len(names))))
        for m in ids
    }
    owned: dict[str, list[TP]] = {m: [] for m in ids}
    for x in topics:
        for p in range(x.partitions):
            takers = [m for m in ids if x.name in subs[m]]
            if takers and rng.random() < 0.6:
                owned[rng.choice(takers)].append((x.name, p))
    return topics, ids, subs, owned


def _as_sets(got: Lists) -> dict[str, list[TP]]:
    return {m: sorted(v) for m, v in got.items()}


def test_the_orders_the_spec_does_not_carry() -> None:
    """The variant fixes the topics' order (code point) and the members' (JoinGroup): no
    other member order changes what anyone gets (without double or stale claims), and no
    other topic order does unless every member subscribes to the same topics."""
    rng = random.Random(3)
    topic_order_mattered = 0
    for i in range(600):
        equal = i % 2 == 0
        topics, ids, subs, owned = _random_run(rng, equal)
        in_order = [RdMember(m, subs[m], owned[m], 3, None) for m in ids]
        try:
            base = _as_sets(assign_cb(in_order, topics))
        except ClientAssignorFailure:
            continue
        shuffled = [RdMember(m, subs[m], owned[m], 3, None) for m in rng.sample(ids, len(ids))]
        assert _as_sets(assign_cb(shuffled, topics)) == base
        other_order = _as_sets(assign_cb(in_order, rng.sample(topics, len(topics))))
        if len(set(subs.values())) > 1:
            assert other_order == base
        else:
            topic_order_mattered += other_order != base
    assert topic_order_mattered > 0
