"""Rack-aware sticky and cooperative-sticky (KIP-881): Kafka's rack facts and properties.

Facts from Kafka's rack tests (AbstractStickyAssignorTest / CooperativeStickyAssignorTest), built
with Kafka's `verifyRackAssignment` layout (tests/helpers/racks.py). As in Kafka's
`verifyUniformSubscription` / `verifyNonEqualSubscription`, each case runs twice: fresh, and
with every member owning the expected result, which must then stay unchanged. Kafka's test-only
`preferRackAwareLogic` flag is left out: every fact below holds with the flag off.

Hash-order-dependent rows: none of the rack facts depend on Java's HashMap order (nobody owns
more than its quota); the seeded properties cover the rest.
"""

from __future__ import annotations

import random

import pytest
from helpers.classic import tp_list
from helpers.racks import nulls, printed, rack_group, racks
from helpers.sticky import assert_valid_and_balanced

from assignors.model import Assignment, GroupSpec, Member, TopicMetadata
from assignors.racks import rack_mismatch_count
from assignors.strategies.sticky.assignor import (
    MAX_ROUNDS,
    CooperativeStickyAssignor,
    StickyAssignor,
)

T3 = {"t1": 6, "t2": 7, "t3": 2}
ALL3 = [["t1", "t2", "t3"]] * 3
NONEQ = [["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]]

UNIFORM = [
    "t1-0, t1-3, t2-0, t2-3, t2-6",
    "t1-1, t1-4, t2-1, t2-4, t3-0",
    "t1-2, t1-5, t2-2, t2-5, t3-1",
]
NON_EQUAL = [
    "t1-5, t2-0, t2-2, t2-4, t2-6",
    "t1-3, t2-1, t2-3, t2-5, t3-0",
    "t1-0, t1-1, t1-2, t1-4, t3-1",
]
NE_RF1 = [
    "t1-3, t2-0, t2-2, t2-3, t2-6",
    "t1-4, t2-1, t2-4, t2-5, t3-0",
    "t1-0, t1-1, t1-2, t1-5, t3-1",
]
NE_RF2 = [
    "t1-3, t2-0, t2-2, t2-5, t2-6",
    "t1-0, t2-1, t2-3, t2-4, t3-0",
    "t1-1, t1-2, t1-4, t1-5, t3-1",
]
OWNED = [
    "t1-0, t1-1, t1-2, t1-3, t1-4",
    "t1-5, t2-0, t2-1, t2-2, t2-3",
    "t2-4, t2-5, t2-6, t3-0, t3-1",
]

# (id, subs, rf, broker racks, consumer racks, expected, mm or None when Kafka does not check)
CASES = [
    ("uniform-no-broker-racks", ALL3, 3, nulls(3), racks(3), UNIFORM, None),
    ("uniform-no-consumer-racks", ALL3, 3, racks(3), nulls(3), UNIFORM, None),
    ("uniform-all-racks", ALL3, 3, racks(3), racks(3), UNIFORM, 0),
    ("uniform-rf4", ALL3, 4, racks(4), racks(3), UNIFORM, None),
    ("uniform-disjoint", ALL3, 3, racks(3), list("def"), UNIFORM, None),
    ("uniform-partly-disjoint", ALL3, 3, racks(3), [None, "e", "f"], UNIFORM, None),
    ("uniform-rf1", ALL3, 1, racks(3), racks(3), UNIFORM, 0),
    ("uniform-rf2", ALL3, 2, racks(3), racks(3), UNIFORM, 0),
    ("uniform-2racks", ALL3, 3, racks(2), racks(3), UNIFORM, 5),
    ("nonequal-no-broker-racks", NONEQ, 3, nulls(3), racks(3), NON_EQUAL, None),
    ("nonequal-no-consumer-racks", NONEQ, 3, racks(3), nulls(3), NON_EQUAL, None),
    ("nonequal-all-racks", NONEQ, 3, racks(3), racks(3), NON_EQUAL, None),
    ("nonequal-rf4", NONEQ, 4, racks(4), racks(3), NON_EQUAL, None),
    ("nonequal-disjoint", NONEQ, 3, racks(3), list("def"), NON_EQUAL, None),
    ("nonequal-partly-disjoint", NONEQ, 3, racks(3), [None, "e", "f"], NON_EQUAL, None),
    ("nonequal-rf1", NONEQ, 1, racks(3), racks(3), NE_RF1, 4),
    ("nonequal-rf2", NONEQ, 2, racks(3), racks(3), NE_RF2, 0),
    ("nonequal-2racks", NONEQ, 3, racks(2), racks(3), NON_EQUAL, 5),
]

BOTH = [StickyAssignor, CooperativeStickyAssignor]


def run_final(cls: type, spec: GroupSpec) -> Assignment:
    if cls is CooperativeStickyAssignor:
        return CooperativeStickyAssignor().rebalance(spec).assignment
    return StickyAssignor().assign(spec)


@pytest.mark.parametrize("cls", BOTH)
@pytest.mark.parametrize(
    ("subs", "rf", "brokers", "consumers", "expected", "mm"),
    [pytest.param(*c[1:], id=c[0]) for c in CASES],
)
def test_rack_aware_sticky_facts(
    cls: type,
    subs: list[list[str]],
    rf: int,
    brokers: list[str | None],
    consumers: list[str | None],
    expected: list[str],
    mm: int | None,
) -> None:
    fresh = rack_group(T3, rf, brokers, consumers, subs)
    result = run_final(cls, fresh)
    assert printed(result, 3) == expected
    if mm is not None:
        assert rack_mismatch_count(fresh, result) == mm
    # Owning the expected result, every member keeps it.
    owned = [tp_list(e) for e in expected]
    again = rack_group(T3, rf, brokers, consumers, subs, owned, generation=1)
    assert printed(run_final(cls, again), 3) == expected


def test_uniform_owned_off_rack_moves_for_locality() -> None:
    spec = rack_group(T3, 1, racks(3), racks(3), ALL3, [tp_list(o) for o in OWNED], generation=1)
    sticky = StickyAssignor().assign(spec)
    assert printed(sticky, 3) == UNIFORM
    assert rack_mismatch_count(spec, sticky) == 0
    # Cooperative round 1 withholds every partition that must move.
    round1 = CooperativeStickyAssignor().assign(spec)
    assert printed(round1, 3) == ["t1-0, t1-3", "t2-1", "t2-5, t3-1"]


def test_non_equal_owned_off_rack_rf1() -> None:
    spec = rack_group(T3, 1, racks(3), racks(3), NONEQ, [tp_list(o) for o in OWNED], generation=1)
    sticky = StickyAssignor().assign(spec)
    assert printed(sticky, 3) == NE_RF1
    assert rack_mismatch_count(spec, sticky) == 4
    round1 = CooperativeStickyAssignor().assign(spec)
    assert printed(round1, 3) == ["t1-3", "t2-1", "t3-1"]
    assert rack_mismatch_count(spec, round1) == 0
    fed_back = rack_group(
        T3, 1, racks(3), racks(3), NONEQ, [tp_list(x) for x in printed(round1, 3)], generation=2
    )
    second = CooperativeStickyAssignor().assign(fed_back)
    assert printed(second, 3) == NE_RF1
    assert rack_mismatch_count(fed_back, second) == 4


def test_non_equal_owned_all_racks_match() -> None:
    """Cooperative only: Kafka's eager row here is a fresh assignment (its helper passes owned
    partitions in the subscription field only, which StickyAssignor ignores)."""
    spec = rack_group(T3, 3, racks(3), racks(3), NONEQ, [tp_list(o) for o in OWNED], generation=1)
    round1 = CooperativeStickyAssignor().assign(spec)
    assert printed(round1, 3) == ["t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1"]
    converged = CooperativeStickyAssignor().rebalance(spec).assignment
    assert printed(converged, 3) == [
        "t1-2, t1-3, t1-4, t2-4, t2-5",
        "t2-0, t2-1, t2-2, t2-3, t2-6",
        "t1-0, t1-1, t1-5, t3-0, t3-1",
    ]


def test_uniform_subscription_transfer_ownership_list_is_right() -> None:
    """CooperativeStickyAssignorTest: partition p on rack [a, b][p mod 2]."""
    meta = {"topic1": TopicMetadata("topic1", 4, tuple(frozenset("ab"[p % 2]) for p in range(4)))}
    members = (
        Member(
            "c0",
            frozenset({"topic1"}),
            rack="a",
            owned=(("topic1", 0), ("topic1", 1)),
            generation=1,
        ),
        Member(
            "c1",
            frozenset({"topic1"}),
            rack="b",
            owned=(("topic1", 2), ("topic1", 3)),
            generation=1,
        ),
    )
    spec = GroupSpec("g", members, meta)
    round1 = CooperativeStickyAssignor().assign(spec)
    assert {m: sorted(v) for m, v in round1.items()} == {
        "c0": [("topic1", 0)],
        "c1": [("topic1", 3)],
    }
    final = CooperativeStickyAssignor().rebalance(spec).assignment
    assert rack_mismatch_count(spec, final) == 0


# ------------------------------------------------------------------ seeded properties


def _random_group(rng: random.Random, equal: bool) -> GroupSpec:
    topics = {f"t{i}": rng.randint(1, 7) for i in range(rng.randint(1, 4))}
    names = list(topics)
    n = rng.randint(2, 5)
    subs = [names if equal else rng.sample(names, rng.randint(1, len(names))) for _ in range(n)]
    brokers: list[str | None] = [rng.choice("abc") for _ in range(rng.randint(2, 6))]
    rf = rng.randint(1, 2)
    consumer_racks = [rng.choice([None, "a", "b", "c"]) for _ in range(n)]
    return rack_group(topics, rf, brokers, consumer_racks, subs)


def _strip_racks(spec: GroupSpec) -> GroupSpec:
    return GroupSpec(
        "g",
        tuple(
            Member(m.member_id, m.topics, owned=m.owned, generation=m.generation)
            for m in spec.members
        ),
        spec.topics,
    )


def _owning(spec: GroupSpec, assignment: Assignment) -> GroupSpec:
    """`spec` with every member (rack kept) owning what `assignment` gave it, generation 1."""
    return GroupSpec(
        "g",
        tuple(
            Member(
                m.member_id,
                m.topics,
                rack=m.rack,
                owned=tuple(assignment[m.member_id]),
                generation=1,
            )
            for m in spec.members
        ),
        spec.topics,
    )


def _sizes(a: Assignment) -> list[int]:
    return sorted(len(v) for v in a.values())


@pytest.mark.parametrize("seed", range(200))
@pytest.mark.parametrize("equal", [True, False])
def test_balance_first(seed: int, equal: bool) -> None:
    """Balance beats racks: equal subscriptions keep the quotas' sizes; unequal ones pass
    Kafka's verifyValidityAndBalance."""
    spec = _random_group(random.Random(seed), equal)
    with_racks = StickyAssignor().assign(spec)
    plain = StickyAssignor().assign(_strip_racks(spec))
    assert_valid_and_balanced(spec, with_racks)
    if equal:
        assert _sizes(with_racks) == _sizes(plain)


@pytest.mark.parametrize("seed", range(300))
def test_no_more_mismatches_than_rack_blind_when_every_member_has_a_rack(seed: int) -> None:
    """Equal subscriptions, every member on a rack: rack awareness never hurts locality.

    Not a property of Kafka's algorithm in general: it is greedy, so a member without a rack
    (see the next test) or the general path's balancing moves can end with more mismatches
    than ignoring racks; Kafka calls rack alignment best effort.
    """
    rng = random.Random(seed)
    spec = _random_group(rng, True)
    spec = GroupSpec(
        "g",
        tuple(Member(m.member_id, m.topics, rack=rng.choice("abc")) for m in spec.members),
        spec.topics,
    )
    with_racks = StickyAssignor().assign(spec)
    plain = StickyAssignor().assign(_strip_racks(spec))
    assert (rack_mismatch_count(spec, with_racks) or 0) <= (rack_mismatch_count(spec, plain) or 0)


def test_greedy_rack_step_can_lose_to_rack_blind() -> None:
    """Worked by hand from Kafka's ConstrainedAssignmentBuilder: 13 partitions, c0 (no rack),
    c1 (rack a), quotas 6/7. The rack step gives c1 the 4 partitions on a (c0 has no rack, so
    nextRackConsumer never picks it); the round robin then alternates c0, c1 until c1 holds 6,
    and c1 (first at exactly minQ) takes the last one: 3 mismatches, where the rack-blind
    round robin has 2."""
    per = {"t0": "ca", "t1": "bcb", "t2": "ac", "t3": "abcbac"}
    meta = {t: TopicMetadata(t, len(r), tuple(frozenset(x) for x in r)) for t, r in per.items()}
    topics = frozenset(meta)
    spec = GroupSpec("g", (Member("c0", topics), Member("c1", topics, rack="a")), meta)
    result = StickyAssignor().assign(spec)
    assert sorted(result["c1"]) == [
        ("t0", 1),
        ("t1", 0),
        ("t1", 2),
        ("t2", 0),
        ("t3", 0),
        ("t3", 4),
        ("t3", 5),
    ]
    assert rack_mismatch_count(spec, result) == 3
    assert rack_mismatch_count(spec, StickyAssignor().assign(_strip_racks(spec))) == 2


@pytest.mark.parametrize("seed", range(100))
@pytest.mark.parametrize("equal", [True, False])
def test_identical_to_non_rack_when_racks_absent_or_disjoint(seed: int, equal: bool) -> None:
    rng = random.Random(seed)
    spec = _random_group(rng, equal)
    spec = _owning(spec, StickyAssignor().assign(spec))
    for cls in BOTH:
        plain = cls().assign(_strip_racks(spec))
        disjoint = GroupSpec(
            "g",
            tuple(
                Member(
                    m.member_id,
                    m.topics,
                    rack=rng.choice(["x", None]),
                    owned=m.owned,
                    generation=m.generation,
                )
                for m in spec.members
            ),
            spec.topics,
        )
        no_broker = GroupSpec(
            "g",
            spec.members,
            {t: TopicMetadata(t, m.partition_count) for t, m in spec.topics.items()},
        )
        all_racks = GroupSpec(
            "g",
            spec.members,
            {
                t: TopicMetadata(t, m.partition_count, (frozenset("abc"),) * m.partition_count)
                for t, m in spec.topics.items()
            },
        )
        for variant in (disjoint, no_broker, all_racks):
            assert cls().assign(variant) == plain


@pytest.mark.parametrize("seed", range(150))
@pytest.mark.parametrize("equal", [True, False])
def test_rack_aware_cooperative_rounds_are_safe(seed: int, equal: bool) -> None:
    """Owners from a rack-blind run, so locality forces revocations: round 1 never hands a
    partition to a member while another member still owns it, and the rounds converge to
    the eager target."""
    spec = _random_group(random.Random(seed), equal)
    first = StickyAssignor().assign(_strip_racks(spec))
    spec = _owning(spec, first)
    owner_before = {tp: m for m, v in first.items() for tp in v}
    round1 = CooperativeStickyAssignor().assign(spec)
    for m, v in round1.items():
        for tp in v:
            assert owner_before.get(tp, m) == m, (tp, m)
    reb = CooperativeStickyAssignor().rebalance(spec)
    if reb.rounds < MAX_ROUNDS:
        assert_valid_and_balanced(spec, reb.assignment)
    else:
        # Kafka-exact, and Kafka does the same: on the general path a member whose only
        # partitions sit on other racks loses its owned partitions every round (they
        # mismatch), balance hands it some back, and the rounds can cycle. Only unequal
        # subscriptions can do this.
        assert not equal


def test_constrained_rack_aware_cooperative_converges() -> None:
    """Equal subscriptions converge within Kafka's 4 extra rounds on every seed above."""
    for seed in range(150):
        spec = _random_group(random.Random(seed), True)
        spec = _owning(spec, StickyAssignor().assign(_strip_racks(spec)))
        assert CooperativeStickyAssignor().rebalance(spec).rounds <= 5
