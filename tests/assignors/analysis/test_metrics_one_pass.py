"""`balance_metrics` counts a valid assignment in one pass (`_count_valid`): the same row as
the per-partition definitions (`scan_assignment`, the moved and revoked scans), on random
groups with repeated and contested ownership, departed owners, unknown partitions, and valid
as well as broken assignments."""

from __future__ import annotations

import random

import pytest

from assignors.analysis.metrics import (
    balance_metrics,
    max_topic_spread,
    revoked_partition_count,
    scan_assignment,
)
from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.ownership import owned_claims, previous_owners, valid_owned


def _reference(
    spec: GroupSpec, assignment: Assignment, previous: dict[TopicPartition, str] | None
) -> dict[str, object]:
    """The counts as defined partition by partition."""
    scan = scan_assignment(spec, assignment)
    moved = revoked = None
    if previous is not None:
        moved = sum(
            1
            for m, tps in assignment.items()
            for tp in tps
            if (owner := previous.get(tp)) is not None and owner != m
        )
        revoked = (
            revoked_partition_count(spec, assignment) if any(m.owned for m in spec.members) else 0
        )
    return {
        "assigned_partition_count": scan.assigned,
        "is_valid": scan.valid,
        "moved_partition_count": moved,
        "revoked_partition_count": revoked,
        "max_topic_spread": max_topic_spread(spec, assignment),
    }


def _group(rng: random.Random) -> GroupSpec:
    topics = {f"t{i}": TopicMetadata(f"t{i}", rng.randint(0, 6)) for i in range(rng.randint(1, 4))}
    names = [*topics, "gone"]  # "gone": subscribed, not in the metadata
    members = []
    for i in range(rng.randint(1, 5)):
        subs = frozenset(rng.sample(names, rng.randint(1, len(names))))
        owned = tuple(
            (rng.choice(names), rng.randint(-1, 7)) for _ in range(rng.randint(0, 6))
        )  # repeats, unknown partitions and contested claims included
        members.append(Member(f"m{i}", subs, owned=owned, generation=rng.choice((None, 1, 2))))
    departed = {"d0": tuple((rng.choice(names), rng.randint(0, 6)) for _ in range(3))}
    return GroupSpec("g", tuple(members), topics, departed if rng.random() < 0.5 else None)


def _assignment(rng: random.Random, spec: GroupSpec) -> Assignment:
    out: Assignment = {m.member_id: [] for m in spec.members}
    for t in spec.subscribed_topics():
        subscribers = [m.member_id for m in spec.members if t in m.topics]
        for p in range(spec.partition_count(t)):
            out[rng.choice(subscribers)].append((t, p))
    for tps in out.values():
        rng.shuffle(tps)
    breakage = rng.randrange(6)
    member = rng.choice(list(out))
    if breakage == 1:  # a partition twice
        everything = [tp for tps in out.values() for tp in tps]
        if everything:
            out[member].append(rng.choice(everything))
    elif breakage == 2:  # one left out
        if out[member]:
            out[member].pop()
    elif breakage == 3:  # a partition that does not exist
        out[member].append(("t0", 99))
    elif breakage == 4:  # an unknown member
        out["stranger"] = []
    return out


@pytest.mark.parametrize("seed", range(400))
def test_one_pass_equals_the_definitions(seed: int) -> None:
    rng = random.Random(seed)
    spec = _group(rng)
    for previous in (None, {}, previous_owners(spec), {("t0", 0): "m0", ("zz", 1): "d9"}):
        for _ in range(3):
            assignment = _assignment(rng, spec)
            row = balance_metrics(spec, assignment, previous, 2)
            expected = _reference(spec, assignment, previous)
            assert {k: row[k] for k in expected} == expected
            assert row["rebalance_rounds"] == 2


def test_owned_claims_mark_each_existing_partition_once() -> None:
    topics = {"t": TopicMetadata("t", 2)}
    spec = GroupSpec(
        "g",
        (
            Member(
                "a", frozenset("t"), owned=(("t", 0), ("t", 0), ("t", 5), ("u", 0)), generation=2
            ),
            Member("b", frozenset("t"), owned=(("t", 1),), generation=1),
        ),
        topics,
    )
    assert owned_claims(spec) == ([[("t", 0)], [("t", 1)]], False)
    contested = GroupSpec(
        "g", (spec.members[0], Member("b", frozenset("t"), owned=(("t", 0),), generation=2)), topics
    )
    assert owned_claims(contested)[1] is True
    assert valid_owned(contested) == {"a": [], "b": []}
