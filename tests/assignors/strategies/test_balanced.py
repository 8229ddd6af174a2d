"""The `balanced` strategy: a brute-force oracle, facts and properties."""

from __future__ import annotations

import random

import pytest
from helpers.balanced import brute_force, check_valid, objective, random_group

from assignors.analysis.bounds import best_balance
from assignors.analysis.metrics import balance_metrics
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.ownership import valid_owned
from assignors.strategies.balanced import BalancedAssignor, _by_class_flow, _ExactFlow, _Problem


@pytest.mark.parametrize("chunk", range(25))
def test_oracle_over_5000_tiny_groups(chunk: int) -> None:
    """Every assignment enumerated: best load vector, then fewest mismatches, then most kept."""
    for seed in range(chunk * 200, (chunk + 1) * 200):
        spec = random_group(random.Random(seed))
        target = BalancedAssignor().target(spec)
        check_valid(spec, target)
        assert objective(spec, target) == brute_force(spec), seed


def test_issue_facts() -> None:
    topics = {"a": TopicMetadata("a", 3), "b": TopicMetadata("b", 3)}
    owned = {"X": (("a", 0),), "Y": (("a", 1), ("a", 2)), "Z": (("b", 0), ("b", 1), ("b", 2))}
    subs = {"X": "a", "Y": "ab", "Z": "b"}
    spec = GroupSpec(
        "g",
        tuple(Member(m, frozenset(s), owned=owned[m], generation=1) for m, s in subs.items()),
        topics,
    )
    target = BalancedAssignor().target(spec)
    assert sorted(len(v) for v in target.values()) == [2, 2, 2]
    row = balance_metrics(spec, target, {tp: m for m, tps in owned.items() for tp in tps})
    assert row["moved_partition_count"] == 2
    assert row["balance_gap"] == 0

    topics = {t: TopicMetadata(t, n) for t, n in (("a", 3), ("b", 3), ("c", 1))}
    subs = {"X": "ab", "Y": "ab", "Z1": "c", "Z2": "c", "Z3": "c"}
    spec = GroupSpec("g", tuple(Member(m, frozenset(s)) for m, s in subs.items()), topics)
    target = BalancedAssignor().target(spec)
    assert max(len(v) for v in target.values()) == best_balance(spec).best_max == 3


@pytest.mark.parametrize("seed", range(300))
def test_closed_form_equals_flow_for_equal_subscriptions(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 5)
    topics = {f"t{i}": TopicMetadata(f"t{i}", rng.randint(1, 5)) for i in range(rng.randint(1, 3))}
    every = frozenset(topics)
    members = tuple(
        Member(
            f"c{i}",
            every,
            owned=tuple((t, p) for t in topics for p in range(5) if rng.random() < 0.3),
            generation=rng.choice([1, 2]),
        )
        for i in range(n)
    )
    spec = GroupSpec("g", members, topics)
    prob = _Problem(spec)
    closed = prob.decode(_by_class_flow(prob))
    flow = prob.decode(_ExactFlow(prob).solve())
    assert objective(spec, closed) == objective(spec, flow)
    assert BalancedAssignor().target(spec) == closed


@pytest.mark.parametrize("seed", range(300))
def test_closed_form_path_on_the_edges_of_equal_subscriptions(seed: int) -> None:
    """The direct closed form (no `_Problem`) against the class flow, item for item and in
    the same member order, where its shortcuts could go wrong: members that subscribe to
    nothing that exists, or to a missing topic besides, member racks without partition
    racks (racks then do not matter), topics that sort differently in Java, and owned
    partitions that are out of range, of an unsubscribed topic or claimed twice."""
    rng = random.Random(seed)
    names = rng.sample(["a", "b", "\ue000x", "\U0001f600", "zz"], rng.randint(1, 3))
    topics = {t: TopicMetadata(t, rng.randint(1, 6)) for t in names}
    every = frozenset(names)
    members = []
    for i in range(rng.randint(1, 6)):
        kind = rng.random()
        subs = frozenset() if kind < 0.1 else every | {"missing"} if kind < 0.3 else every
        owned = tuple((t, p) for t in [*names, "other"] for p in range(-1, 8) if rng.random() < 0.2)
        members.append(
            Member(
                f"c{rng.randint(0, 9)}{i}",
                subs,
                rack=rng.choice([None, "", "r1", "r2"]),
                owned=owned,
                generation=rng.choice([None, 1, 2]),
            )
        )
    spec = GroupSpec("g", tuple(members), topics)
    target = BalancedAssignor().target(spec)
    prob = _Problem(spec)
    if not prob.parts:
        return
    closed = prob.decode(_by_class_flow(prob))
    assert list(target.items()) == list(closed.items())


@pytest.mark.parametrize("seed", range(200))
def test_shuffled_input_gives_identical_output(seed: int) -> None:
    rng = random.Random(seed)
    spec = random_group(rng)
    members = list(spec.members)
    rng.shuffle(members)
    topics = list(spec.topics.items())
    rng.shuffle(topics)
    shuffled = GroupSpec(
        "g",
        tuple(
            Member(
                m.member_id,
                m.topics,
                m.group_instance_id,
                m.rack,
                tuple(rng.sample(m.owned, len(m.owned))),
                m.generation,
            )
            for m in members
        ),
        dict(topics),
    )
    assert BalancedAssignor().target(shuffled) == BalancedAssignor().target(spec)


@pytest.mark.parametrize("seed", range(300))
def test_cooperative_rounds_never_revoke_and_assign_at_once(seed: int) -> None:
    """As a cooperative assignor: in every round, a partition that changes owner is either
    revoked (its owner loses it, nobody gets it) or assigned while unowned, never both."""
    spec = random_group(random.Random(seed))
    reb = BalancedAssignor().rebalance(spec)
    assert reb.rounds <= 3
    assert (
        objective(spec, reb.assignment)[:2] == objective(spec, BalancedAssignor().target(spec))[:2]
    )
    owners = {tp: m for m, tps in valid_owned(spec).items() for tp in tps}
    round1 = BalancedAssignor().assign(spec)
    for m, tps in round1.items():
        for tp in tps:
            assert owners.get(tp, m) == m


@pytest.mark.parametrize("seed", range(300))
def test_rebalance_hands_out_the_first_target_in_at_most_two_rounds(seed: int) -> None:
    """The target is computed once: round 1 gives what is free, round 2 the rest, and the
    rebalance ends on exactly the target of the members as they joined; what arrives in
    round 2 is what round 1 withheld."""
    spec = random_group(random.Random(seed))
    target = BalancedAssignor().target(spec)
    round1 = BalancedAssignor().assign(spec)
    reb = BalancedAssignor().rebalance(spec)
    assert reb.assignment == target
    withheld = {tp for m, tps in target.items() for tp in tps if tp not in round1[m]}
    assert reb.rounds == (2 if withheld else 1)
    assert set(reb.received_round) == withheld
    assert set(reb.received_round.values()) <= {2}


@pytest.mark.parametrize("seed", range(400))
def test_class_flow_reaches_the_optimal_load_vector(seed: int) -> None:
    """The class-level path (large groups, or no owners and no racks) is exact for the load
    vector: the same sorted loads as the exact flow, on unequal subscriptions too."""
    rng = random.Random(seed)
    topics = {f"t{i}": TopicMetadata(f"t{i}", rng.randint(0, 9)) for i in range(rng.randint(1, 5))}
    members = tuple(
        Member(f"c{i}", frozenset(t for t in topics if rng.random() < 0.5))
        for i in range(rng.randint(1, 7))
    )
    spec = GroupSpec("g", members, topics)
    prob = _Problem(spec)
    by_class = prob.decode(_by_class_flow(prob))
    exact = prob.decode(_ExactFlow(prob).solve())
    check_valid(spec, by_class)
    assert objective(spec, by_class)[0] == objective(spec, exact)[0]
    assert max(len(v) for v in by_class.values()) == best_balance(spec).best_max
