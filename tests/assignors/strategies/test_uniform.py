"""The KIP-848 `uniform` assignor: Kafka's test facts (`UniformHomogeneousAssignmentBuilderTest`,
`UniformHeterogeneousAssignmentBuilderTest`) and properties."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

import pytest

from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.strategies.uniform import UniformAssignor, _current_targets, _heterogeneous


def tps(spec: Mapping[str, Sequence[int]]) -> list[TopicPartition]:
    return [(t, p) for t, ps in spec.items() for p in ps]


def group(
    topics: Mapping[str, int],
    members: Mapping[str, AbstractSet[str]],
    owned: Mapping[str, Mapping[str, Sequence[int]]] | None = None,
) -> GroupSpec:
    owned = owned or {}
    ms = tuple(
        Member(mid, frozenset(subs), owned=tuple(tps(owned.get(mid, {}))))
        for mid, subs in members.items()
    )
    return GroupSpec("g", ms, {t: TopicMetadata(t, n) for t, n in topics.items()})


def run(spec: GroupSpec) -> dict[str, dict[str, list[int]]]:
    out: dict[str, dict[str, list[int]]] = {}
    for mid, parts in UniformAssignor().assign(spec).items():
        per: dict[str, list[int]] = {}
        for t, p in parts:
            per.setdefault(t, []).append(p)
        out[mid] = {t: sorted(ps) for t, ps in per.items()}
    return out


ALL3 = {"T1", "T2", "T3"}


# --- homogeneous facts that do not depend on Kafka's hash order ---


def test_no_subscription_every_member_present() -> None:
    # Kafka returns {} here; our contract keeps every member.
    assert run(group({"T1": 3}, {"A": set()})) == {"A": {}}


def test_unknown_topic_is_dropped_not_raised() -> None:
    # Kafka's assignor would throw; the coordinator never resolves an unknown name to an id.
    assert run(group({"T1": 3}, {"A": {"T2"}})) == {"A": {}}
    assert run(group({"T1": 3}, {"A": {"T1", "T2"}})) == {"A": {"T1": [0, 1, 2]}}


def test_more_members_than_partitions() -> None:
    spec = group({"T3": 2}, {"A": {"T3"}, "B": {"T3"}, "C": {"T3"}})
    assert run(spec) == {"A": {"T3": [0]}, "B": {"T3": [1]}, "C": {}}


def test_first_assignment_is_contiguous_slices_in_topic_name_order() -> None:
    # Kafka's order is HashSet order (T3 before T1 there); ours is topic name order.
    spec = group({"T1": 3, "T3": 2}, {"A": {"T1", "T3"}, "B": {"T1", "T3"}})
    assert run(spec) == {"A": {"T1": [0, 1, 2]}, "B": {"T3": [0, 1]}}


def test_unbalanced_previous_assignment() -> None:
    spec = group(
        {"T1": 3, "T2": 3},
        {"A": {"T1", "T2"}, "B": {"T1", "T2"}},
        {"A": {"T1": [0, 1], "T2": [0, 1]}, "B": {"T1": [2], "T2": [2]}},
    )
    assert run(spec) == {"A": {"T1": [0, 1], "T2": [0]}, "B": {"T1": [2], "T2": [1, 2]}}


def test_member_added() -> None:
    spec = group(
        {"T1": 3, "T2": 3},
        {"A": {"T1", "T2"}, "B": {"T1", "T2"}, "C": {"T1", "T2"}},
        {"A": {"T1": [0, 2], "T2": [0]}, "B": {"T1": [1], "T2": [1, 2]}},
    )
    assert run(spec) == {"A": {"T1": [0, 2]}, "B": {"T1": [1], "T2": [1]}, "C": {"T2": [0, 2]}}


def test_subscription_removed() -> None:
    spec = group(
        {"T1": 2, "T2": 2},
        {"A": {"T2"}, "B": {"T2"}},
        {"A": {"T1": [0], "T2": [0]}, "B": {"T1": [1], "T2": [1]}},
    )
    assert run(spec) == {"A": {"T2": [0]}, "B": {"T2": [1]}}


def test_kafka_18688_balanced_target_does_not_move() -> None:
    # The snapshot rule gave A (first in order) the extra slot and moved a partition from B.
    spec = group({"t": 3}, {"A": {"t"}, "B": {"t"}}, {"A": {"t": [0]}, "B": {"t": [1, 2]}})
    assert run(spec) == {"A": {"t": [0]}, "B": {"t": [1, 2]}}


def test_extra_slots_first_to_members_over_min_quota() -> None:
    # 7 partitions, 3 members: minQ 2, one extra slot. C holds 4, so C keeps 3; B's new
    # partitions come from C's highest one and the never-assigned ones.
    spec = group(
        {"t": 7},
        {"A": {"t"}, "B": {"t"}, "C": {"t"}},
        {"A": {"t": [0, 1]}, "C": {"t": [2, 3, 4, 5]}},
    )
    assert run(spec) == {"A": {"t": [0, 1]}, "B": {"t": [5, 6]}, "C": {"t": [2, 3, 4]}}


def test_departed_members_are_invisible() -> None:
    base = group({"t": 4}, {"A": {"t"}, "B": {"t"}}, {"A": {"t": [0, 1]}})
    spec = GroupSpec("g", base.members, base.topics, departed={"Z": (("t", 2), ("t", 3))})
    assert run(spec) == run(base) == {"A": {"t": [0, 1]}, "B": {"t": [2, 3]}}


def test_double_claim_settled_by_generation() -> None:
    ms = (
        Member("A", frozenset("t"), owned=(("t", 0), ("t", 1)), generation=5),
        Member("B", frozenset("t"), owned=(("t", 1),), generation=4),
    )
    spec = GroupSpec("g", ms, {"t": TopicMetadata("t", 2)})
    assert UniformAssignor().assign(spec) == {"A": [("t", 0)], "B": [("t", 1)]}


def test_output_keys_follow_input_order_and_instance_ids_do_not_matter() -> None:
    ms = (
        Member("b", frozenset("t"), group_instance_id="i1"),
        Member("a", frozenset("t"), group_instance_id="i2"),
    )
    out = UniformAssignor().assign(GroupSpec("g", ms, {"t": TopicMetadata("t", 3)}))
    assert list(out) == ["b", "a"]
    assert out == {"a": [("t", 0), ("t", 1)], "b": [("t", 2)]}


def test_subscription_type_uses_names_even_for_unknown_topics() -> None:
    # Names differ (X does not exist), so Kafka runs the heterogeneous builder on equal ids.
    spec = group({"t": 4}, {"A": {"t"}, "B": {"t", "X"}}, {"A": {"t": [0, 1, 2]}})
    assert run(spec) == {"A": {"t": [0, 1]}, "B": {"t": [2, 3]}}


def test_empty_group() -> None:
    assert UniformAssignor().assign(GroupSpec("g", (), {"t": TopicMetadata("t", 1)})) == {}


# --- heterogeneous facts: member order = sorted ids, topic order = name order ---

HETERO_FACTS = [
    pytest.param(
        {"T1": 3, "T3": 6},
        {"A": {"T1", "T3"}, "B": {"T3"}},
        {},
        {"A": {"T1": [0, 1, 2], "T3": [4]}, "B": {"T3": [0, 1, 2, 3, 5]}},
        id="first-assignment-two-members-two-topics",
    ),
    pytest.param(
        {"T3": 1, "T1": 2},
        {"A": {"T3"}, "B": {"T3"}, "C": {"T1"}},
        {},
        {"A": {"T3": [0]}, "B": {}, "C": {"T1": [0, 1]}},
        id="more-members-than-partitions",
    ),
    pytest.param(
        {"T1": 6, "T2": 4, "T3": 4},
        {"A": {"T1"}, "B": {"T1", "T2"}, "C": ALL3},
        {
            "A": {"T1": [0, 1, 2]},
            "B": {"T1": [3], "T2": [0]},
            "C": {"T1": [4, 5], "T2": [1, 2, 3], "T3": [0, 1, 2, 3]},
        },
        {
            "A": {"T1": [0, 1, 2, 5]},
            "B": {"T1": [3], "T2": [0, 1, 2, 3]},
            "C": {"T1": [4], "T3": [0, 1, 2, 3]},
        },
        id="unbalanced-previous-assignment",
    ),
    pytest.param(
        {"T1": 6, "T2": 5, "T3": 3, "T4": 3},
        {"A": {"T1", "T3"}, "B": {"T1", "T2", "T3", "T4"}},
        {"A": {"T1": range(4), "T3": [0, 1]}, "B": {"T2": [0, 1, 2], "T4": [0, 1, 2]}},
        {
            "A": {"T1": list(range(6)), "T3": [0, 1, 2]},
            "B": {"T2": list(range(5)), "T4": [0, 1, 2]},
        },
        id="partitions-added",
    ),
    pytest.param(
        {"T1": 6, "T2": 7},
        {"A": {"T1"}, "B": {"T1", "T2"}, "C": {"T1", "T2"}},
        {"A": {"T1": [0, 2], "T2": [0]}, "B": {"T1": [1], "T2": [1, 2]}},
        {
            "A": {"T1": [0, 2, 3, 4, 5]},
            "B": {"T1": [1], "T2": [1, 2, 6]},
            "C": {"T2": [0, 3, 4, 5]},
        },
        id="member-and-partitions-added",
    ),
    pytest.param(
        {"T1": 3, "T2": 8, "T3": 3},
        {"A": {"T1", "T3"}, "B": {"T2"}},
        {"A": {"T1": [0, 1, 2], "T3": [0, 1]}, "B": {"T2": [3, 4, 5, 6]}},
        {"A": {"T1": [0, 1, 2], "T3": [0, 1, 2]}, "B": {"T2": list(range(8))}},
        id="member-removed",
    ),
    pytest.param(
        {"T1": 3, "T2": 5},
        {"A": {"T1"}, "B": {"T1", "T2"}},
        {"A": {"T1": [0, 2], "T2": [1, 3]}, "B": {"T1": [1], "T2": [0, 2, 4]}},
        {"A": {"T1": [0, 1, 2]}, "B": {"T2": list(range(5))}},
        id="subscription-removed",
    ),
    pytest.param(
        {"T1": 3},
        {"A": {"T1"}, "B": set()},
        {},
        {"A": {"T1": [0, 1, 2]}, "B": {}},
        id="one-member-without-subscriptions",
    ),
    pytest.param(
        {"T1": 3},
        {"A": {"T3"}, "B": {"T2"}},
        {},
        {"A": {}, "B": {}},
        id="unknown-topics-dropped",
    ),
]


@pytest.mark.parametrize(("topics", "members", "owned", "expected"), HETERO_FACTS)
def test_heterogeneous_facts(
    topics: dict[str, int],
    members: dict[str, set[str]],
    owned: dict[str, dict[str, list[int]]],
    expected: dict[str, dict[str, list[int]]],
) -> None:
    assert run(group(topics, members, owned)) == expected


def test_heterogeneous_builder_when_partitions_run_out() -> None:
    # Kafka's heterogeneous test class feeds equal subscriptions to the builder directly.
    spec = group(
        {"T1": 2, "T2": 2, "T3": 2},
        {"A": ALL3, "B": ALL3},
        {"A": {"T1": [0, 1], "T2": [0, 1], "T3": [0, 1]}},
    )
    members = list(spec.members)
    out = _heterogeneous(spec, members, _current_targets(spec, members))
    assert sorted(out["A"]) == [("T2", 0), ("T3", 0), ("T3", 1)]
    assert sorted(out["B"]) == [("T1", 0), ("T1", 1), ("T2", 1)]


# --- properties ---


def sizes(out: Assignment) -> dict[str, int]:
    return {m: len(ps) for m, ps in out.items()}


def assert_valid(spec: GroupSpec, out: Assignment) -> None:
    assert set(out) == set(spec.member_ids)
    subs = {m.member_id: m.topics for m in spec.members}
    seen = Counter(tp for ps in out.values() for tp in ps)
    assert all(n == 1 for n in seen.values()), "duplicate partition"
    for m, ps in out.items():
        assert all(t in subs[m] for t, _ in ps), "assigned to a non-subscriber"
    wanted = {(t, p) for t in spec.subscribed_topics() for p in range(spec.partition_count(t))}
    assert set(seen) == wanted


def random_group(rng: random.Random, homogeneous: bool) -> GroupSpec:
    topics = {f"t{i}": rng.randint(1, 12) for i in range(rng.randint(1, 6))}
    names = [*sorted(topics), "ghost"]  # ghost has no metadata
    n_members = rng.randint(1, 9)
    common = frozenset(rng.sample(names, rng.randint(1, len(names))))
    members = []
    for i in range(n_members):
        subs = common if homogeneous else frozenset(rng.sample(names, rng.randint(0, len(names))))
        # Random previous target: some partitions of any topic, possibly stale or bogus.
        owned = [
            (t, p)
            for t in rng.sample(names, rng.randint(0, len(names)))
            for p in range(topics.get(t, 3) + 1)
            if rng.random() < 0.3
        ]
        members.append(Member(f"m{i:02d}", subs, owned=tuple(owned)))
    rng.shuffle(members)
    # Make the previous targets disjoint, as a real target assignment is.
    claimed: set[TopicPartition] = set()
    clean = []
    for m in members:
        mine = tuple(tp for tp in m.owned if tp not in claimed)
        claimed.update(mine)
        clean.append(Member(m.member_id, m.topics, owned=mine))
    meta = {t: TopicMetadata(t, n) for t, n in topics.items()}
    return GroupSpec("g", tuple(clean), meta)


SEEDS = range(40)


@pytest.mark.parametrize("seed", SEEDS)
def test_homogeneous_properties(seed: int) -> None:
    spec = random_group(random.Random(seed), homogeneous=True)
    out = UniformAssignor().assign(spec)
    assert_valid(spec, out)
    counts = sizes(out).values()
    assert max(counts) - min(counts) <= 1
    # Owned partitions are retained up to the quotas.
    total = sum(spec.partition_count(t) for t in spec.subscribed_topics())
    min_q, extra = divmod(total, len(spec.members))
    current = _current_targets(spec, list(spec.members))
    over = 0
    for m in spec.members:
        held = current[m.member_id]
        kept = set(held) & set(out[m.member_id])
        assert len(kept) >= min(len(held), min_q)
        over += len(kept) > min_q
        if len(held) <= min_q:
            assert kept == set(held)
    assert over == min(extra, sum(len(h) > min_q for h in current.values()))


@pytest.mark.parametrize("seed", SEEDS)
def test_heterogeneous_properties(seed: int) -> None:
    spec = random_group(random.Random(seed), homogeneous=False)
    out = UniformAssignor().assign(spec)
    assert_valid(spec, out)
    size = sizes(out)
    owners: dict[str, set[str]] = {}
    for m, ps in out.items():
        for t, _ in ps:
            owners.setdefault(t, set()).add(m)
    # Per-topic balance: no owner of a topic exceeds any subscriber of it by more than one.
    for t, subscribers in spec.subscribers().items():
        lowest = min(size[s.member_id] for s in subscribers)
        assert all(size[o] - lowest <= 1 for o in owners.get(t, ()))


@pytest.mark.parametrize("homogeneous", [True, False])
@pytest.mark.parametrize("seed", SEEDS)
def test_result_is_stable(seed: int, homogeneous: bool) -> None:
    # KAFKA-18688 generalised: feeding the result back as the target moves nothing.
    spec = random_group(random.Random(seed), homogeneous)
    out = UniformAssignor().assign(spec)
    again = GroupSpec(
        "g",
        tuple(Member(m.member_id, m.topics, owned=tuple(out[m.member_id])) for m in spec.members),
        spec.topics,
    )
    assert UniformAssignor().assign(again) == out


@pytest.mark.parametrize("seed", SEEDS)
def test_any_balanced_target_does_not_move(seed: int) -> None:
    # KAFKA-18688 regression: a balanced target (any member may hold the extra partitions).
    rng = random.Random(seed)
    topics = {f"t{i}": rng.randint(1, 20) for i in range(rng.randint(1, 5))}
    parts = [(t, p) for t, n in topics.items() for p in range(n)]
    rng.shuffle(parts)
    ids = [f"m{i}" for i in range(rng.randint(1, 12))]
    rng.shuffle(ids)  # who gets the extra partitions is random
    dealt: dict[str, list[TopicPartition]] = {m: [] for m in ids}
    for k, tp in enumerate(parts):
        dealt[ids[k % len(ids)]].append(tp)
    spec = GroupSpec(
        "g",
        tuple(Member(m, frozenset(topics), owned=tuple(dealt[m])) for m in ids),
        {t: TopicMetadata(t, n) for t, n in topics.items()},
    )
    out = UniformAssignor().assign(spec)
    assert {m: set(ps) for m, ps in out.items()} == {m: set(ps) for m, ps in dealt.items()}


def test_large_homogeneous_group_valid_and_balanced() -> None:
    # Kafka's testValidityAndBalanceForLargeSampleSet: 99 topics x 3 partitions, 49 members.
    topics = {f"topic{i}": 3 for i in range(99)}
    spec = group(topics, {f"member{i}": set(topics) for i in range(49)})
    out = UniformAssignor().assign(spec)
    assert_valid(spec, out)
    assert max(sizes(out).values()) - min(sizes(out).values()) <= 1
