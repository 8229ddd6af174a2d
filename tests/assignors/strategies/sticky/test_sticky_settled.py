"""cooperative-sticky stops without the check round only where that round cannot change
anything: the same result as replaying every round."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from helpers.sticky import churn, fresh_group

from assignors.model import GroupSpec, Member, Rebalance, TopicMetadata
from assignors.ownership import max_generation, received_rounds
from assignors.strategies.sticky.assignor import MAX_ROUNDS, CooperativeStickyAssignor, _same


def replay_every_round(spec: GroupSpec) -> Rebalance:
    """The reference: rounds replayed until one returns the previous assignment."""
    assignor = CooperativeStickyAssignor()
    history = [assignor.assign(spec)]
    generation = max_generation(spec.members)
    current = spec
    while len(history) < MAX_ROUNDS:
        generation += 1
        last = history[-1]
        current = replace(
            current,
            members=tuple(
                replace(m, owned=tuple(last[m.member_id]), generation=generation)
                for m in current.members
            ),
        )
        nxt = assignor.assign(current)
        if _same(nxt, last):
            break
        history.append(nxt)
    return Rebalance(history[-1], received_rounds(history), len(history))


def with_racks(rng: random.Random, spec: GroupSpec) -> GroupSpec:
    racks = ["r0", "r1", "r2"]
    topics = {
        t: replace(m, replica_racks=tuple(
            frozenset({rng.choice(racks)}) for _ in range(m.partition_count)
        ))
        for t, m in spec.topics.items()
    }  # fmt: skip
    members = tuple(replace(m, rack=rng.choice(racks)) for m in spec.members)
    return replace(spec, members=members, topics=topics)


@pytest.mark.parametrize("seed", range(300))
def test_same_result_as_replaying_every_round(seed: int) -> None:
    rng = random.Random(seed)
    spec = fresh_group(rng)
    if seed % 3 == 0:
        spec = with_racks(rng, spec)
    assignor = CooperativeStickyAssignor()
    current = assignor.rebalance(spec).assignment
    for generation in range(1, 4):
        spec = churn(rng, spec, current, generation)
        got, expected = assignor.rebalance(spec), replay_every_round(spec)
        assert got == expected
        current = got.assignment


def with_replica_racks(rng: random.Random, spec: GroupSpec) -> GroupSpec:
    """Racks on every member but some, 1-3 replica racks per partition: the rack-aware
    constrained path, where most targets are on-rack and some are not."""
    racks = ["r0", "r1", "r2", "r3"]
    topics = {
        t: replace(m, replica_racks=tuple(
            frozenset(rng.sample(racks, rng.randint(1, 3))) for _ in range(m.partition_count)
        ))
        for t, m in spec.topics.items()
    }  # fmt: skip
    members = tuple(
        replace(m, rack=rng.choice(racks) if rng.random() < 0.8 else None) for m in spec.members
    )
    return replace(spec, members=members, topics=topics)


@pytest.mark.parametrize("seed", range(300))
def test_rack_aware_groups_same_result_as_replaying_every_round(seed: int) -> None:
    rng = random.Random(10_000 + seed)
    spec = with_replica_racks(rng, fresh_group(rng))
    assignor = CooperativeStickyAssignor()
    current = replay_every_round(spec).assignment
    for generation in range(1, 4):
        spec = churn(rng, spec, current, generation)
        got, expected = assignor.rebalance(spec), replay_every_round(spec)
        assert got == expected
        current = got.assignment


def test_a_join_under_equal_subscriptions_takes_two_rounds() -> None:
    # c3 joins c0..c2 on one topic of 6 partitions; p5 is revoked from c2 first
    owned = {"c0": [0, 1], "c1": [2, 3], "c2": [4, 5], "c3": []}
    spec = GroupSpec(
        "g",
        tuple(
            Member(c, frozenset({"t"}), owned=tuple(("t", p) for p in ps), generation=1)
            for c, ps in owned.items()
        ),
        {"t": TopicMetadata("t", 6)},
    )
    result = CooperativeStickyAssignor().rebalance(spec)
    assert result == replay_every_round(spec)
    assert result.rounds == 2
    assert result.assignment["c3"] == [("t", 5)]
