"""Conformance tests for `sticky` and `cooperative-sticky` (Kafka's sticky assignor tests).

Expected values are Kafka's test facts (AbstractStickyAssignorTest,
StickyAssignorTest, CooperativeStickyAssignorTest), never outputs of our own code. As in
Kafka's Cooperative test variant, assertions on the final assignment apply to the converged
result of the cooperative rounds (`rebalance`); "round 1" assertions use `assign`. Where
Java's result depends on hash iteration order, properties are asserted instead.

Rows that cannot be expressed in our model are left out: rack-aware rows (in
tests/assignors/strategies/sticky/test_sticky_racks.py), userData-versus-field decoding (our
model has one `owned` field), and the rack tests' eager rows with owned partitions (Kafka's
helper passes owned partitions only in the subscription field, which eager StickyAssignor
ignores, so those rows are fresh assignments, already covered).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import permutations

import pytest
from helpers.sticky import assert_valid_and_balanced

from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.ownership import valid_owned
from assignors.strategies.sticky.assignor import CooperativeStickyAssignor, StickyAssignor

Assignor = StickyAssignor | CooperativeStickyAssignor
BOTH = [StickyAssignor, CooperativeStickyAssignor]
GEN = 1  # Kafka's fixture generation

# --------------------------------------------------------------------------------- builders


def tp(text: str) -> TopicPartition:
    """'t1-0' -> ('t1', 0), Kafka's TopicPartition.toString."""
    topic, _, p = text.strip().rpartition("-")
    return (topic, int(p))


def tps(text: str) -> list[TopicPartition]:
    return [tp(x) for x in text.split(",") if x.strip()]


def mem(
    member_id: str,
    topics: Iterable[str],
    owned: str | Sequence[TopicPartition] = "",
    gen: int | None = GEN,
) -> Member:
    own = tuple(tps(owned)) if isinstance(owned, str) else tuple(owned)
    return Member(member_id, frozenset(topics), owned=own, generation=gen if own else None)


def group(topics: Mapping[str, int], members: Iterable[Member]) -> GroupSpec:
    return GroupSpec("g", tuple(members), {t: TopicMetadata(t, n) for t, n in topics.items()})


def final(cls: type[Assignor], spec: GroupSpec) -> Assignment:
    """The assignment the group ends with (cooperative: after all rounds)."""
    if cls is CooperativeStickyAssignor:
        return CooperativeStickyAssignor().rebalance(spec).assignment
    return StickyAssignor().assign(spec)


def as_sets(a: Assignment) -> dict[str, set[TopicPartition]]:
    return {m: set(v) for m, v in a.items()}


def sizes(a: Assignment) -> list[int]:
    return sorted(len(v) for v in a.values())


def fully_balanced(a: Assignment) -> bool:
    s = sizes(a)
    return not s or s[-1] - s[0] <= 1


def assert_no_transfers(spec: GroupSpec) -> None:
    """Kafka's `Tr empty`: round 1 of the cooperative assignor is already the target."""
    target = StickyAssignor().assign(spec)
    assert as_sets(CooperativeStickyAssignor().assign(spec)) == as_sets(target)
    assert CooperativeStickyAssignor().rebalance(spec).rounds == 1


def with_owned(spec: GroupSpec, a: Assignment, gen: int = GEN) -> GroupSpec:
    """Every member reports what `a` gave it (members not in `a` own nothing)."""
    return GroupSpec(
        spec.group_id,
        tuple(
            Member(m.member_id, m.topics, owned=tuple(a.get(m.member_id, ())), generation=gen)
            for m in spec.members
        ),
        spec.topics,
    )


def stickiness_2cycles(spec: GroupSpec, a: Assignment) -> list[tuple[str, str, str]]:
    """Kafka's isSticky: per topic, no partition moved A->B while another moved B->A."""
    prev = {tp_: m for m, owned in valid_owned(spec).items() for tp_ in owned}
    moves: set[tuple[str, str, str]] = set()
    for m, parts in a.items():
        for t, p in parts:
            old = prev.get((t, p))
            if old is not None and old != m:
                moves.add((t, old, m))
    return sorted((t, x, y) for t, x, y in moves if (t, y, x) in moves)


# ------------------------------------------------------------------------------ worked examples


@pytest.mark.parametrize("cls", BOTH)
def test_javadoc_example_fresh_then_member_leaves(cls: type[Assignor]) -> None:
    topics = {"t0": 2, "t1": 2, "t2": 2, "t3": 2}
    spec = group(topics, [mem(c, topics) for c in ("C0", "C1", "C2")])
    first = final(cls, spec)
    assert first == {
        "C0": tps("t0-0, t1-1, t3-0"),
        "C1": tps("t0-1, t2-0, t3-1"),
        "C2": tps("t1-0, t2-1"),
    }
    again = group(topics, [mem(c, topics, first[c]) for c in ("C0", "C2")])
    assert as_sets(final(cls, again)) == {
        "C0": set(tps("t0-0, t0-1, t1-1, t3-0")),
        "C2": set(tps("t1-0, t2-0, t2-1, t3-1")),
    }
    assert_no_transfers(again)  # C1's partitions are free: nobody has to revoke anything


@pytest.mark.parametrize("cls", BOTH)
def test_javadoc_example_unequal_subscriptions(cls: type[Assignor]) -> None:
    spec = group(
        {"t0": 1, "t1": 2, "t2": 3},
        [mem("C0", ["t0"]), mem("C1", ["t1"]), mem("C2", ["t0", "t1", "t2"])],
    )
    assert as_sets(final(cls, spec)) == {
        "C0": set(tps("t0-0")),
        "C1": set(tps("t1-0, t1-1")),
        "C2": set(tps("t2-0, t2-1, t2-2")),
    }


# ----------------------------------------------------------------- AbstractStickyAssignorTest


@pytest.mark.parametrize("cls", BOTH)
def test_one_consumer_no_topic(cls: type[Assignor]) -> None:
    spec = group({}, [mem("consumer", [])])
    assert final(cls, spec) == {"consumer": []}
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_one_consumer_nonexistent_topic(cls: type[Assignor]) -> None:
    for topics in ({"topic": 0}, {}):
        spec = group(topics, [mem("consumer", ["topic"])])
        assert final(cls, spec) == {"consumer": []}


@pytest.mark.parametrize("cls", BOTH)
def test_one_consumer_one_topic(cls: type[Assignor]) -> None:
    spec = group({"topic": 3}, [mem("consumer", ["topic"])])
    assert final(cls, spec) == {"consumer": tps("topic-0, topic-1, topic-2")}


@pytest.mark.parametrize("cls", BOTH)
@pytest.mark.parametrize("other_exists", [False, True])
def test_only_assigns_partitions_from_subscribed_topics(
    cls: type[Assignor], other_exists: bool
) -> None:
    topics = {"topic": 2, "other": 2} if other_exists else {"topic": 2}
    owned = "topic-0, topic-1, other-0, other-1"
    spec = group(topics, [mem("consumer", ["topic"], owned)])
    assert final(cls, spec) == {"consumer": tps("topic-0, topic-1")}
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_one_consumer_multiple_topics(cls: type[Assignor]) -> None:
    spec = group({"topic1": 1, "topic2": 2}, [mem("consumer", ["topic1", "topic2"])])
    assert final(cls, spec) == {"consumer": tps("topic1-0, topic2-0, topic2-1")}


@pytest.mark.parametrize("cls", BOTH)
def test_two_consumers_one_topic_one_partition(cls: type[Assignor]) -> None:
    spec = group({"topic": 1}, [mem("consumer1", ["topic"]), mem("consumer2", ["topic"])])
    a = final(cls, spec)
    assert_valid_and_balanced(spec, a)
    assert fully_balanced(a)
    assert a == {"consumer1": tps("topic-0"), "consumer2": []}  # fresh: by member id


@pytest.mark.parametrize("cls", BOTH)
def test_two_consumers_one_topic_two_partitions(cls: type[Assignor]) -> None:
    spec = group({"topic": 2}, [mem("consumer1", ["topic"]), mem("consumer2", ["topic"])])
    assert final(cls, spec) == {"consumer1": tps("topic-0"), "consumer2": tps("topic-1")}


@pytest.mark.parametrize("cls", BOTH)
def test_multiple_consumers_mixed_topic_subscriptions(cls: type[Assignor]) -> None:
    spec = group(
        {"topic1": 3, "topic2": 2},
        [
            mem("consumer1", ["topic1"]),
            mem("consumer2", ["topic1", "topic2"]),
            mem("consumer3", ["topic1"]),
        ],
    )
    assert final(cls, spec) == {
        "consumer1": tps("topic1-0, topic1-2"),
        "consumer2": tps("topic2-0, topic2-1"),
        "consumer3": tps("topic1-1"),
    }


@pytest.mark.parametrize("cls", BOTH)
def test_two_consumers_two_topics_six_partitions(cls: type[Assignor]) -> None:
    spec = group({"t1": 3, "t2": 3}, [mem("c1", ["t1", "t2"]), mem("c2", ["t1", "t2"])])
    assert final(cls, spec) == {"c1": tps("t1-0, t1-2, t2-1"), "c2": tps("t1-1, t2-0, t2-2")}


@pytest.mark.parametrize("cls", BOTH)
def test_consumer_owning_min_quota_expected_max_quota(cls: type[Assignor]) -> None:
    subs = ["t1", "t2"]
    spec = group({"t1": 2, "t2": 3}, [mem("c1", subs, "t1-0, t2-1"), mem("c2", subs, "t1-1, t2-2")])
    assert final(cls, spec) == {"c1": tps("t1-0, t2-1, t2-0"), "c2": tps("t1-1, t2-2")}
    assert_no_transfers(spec)


def test_max_quota_consumer_more_than_num_expected_max_capacity_members() -> None:
    # Hash-order dependent in Java (it iterates c3, c2, c1, so c2 keeps both): properties,
    # plus our documented order (the smallest member id, c1, keeps maxQuota).
    subs = ["t1", "t2"]
    spec = group(
        {"t1": 2, "t2": 2},
        [mem("c1", subs, "t1-0, t2-0"), mem("c2", subs, "t1-1, t2-1"), mem("c3", subs)],
    )
    target = StickyAssignor().assign(spec)
    assert sizes(target) == [1, 1, 2]
    assert len(target["c3"]) == 1
    (moved,) = target["c3"]
    keeper, loser = ("c1", "c2") if len(target["c1"]) == 2 else ("c2", "c1")
    assert set(target[keeper]) == set(spec.members[int(keeper[1]) - 1].owned)
    assert moved in spec.members[int(loser[1]) - 1].owned
    assert set(target[loser]) < set(spec.members[int(loser[1]) - 1].owned)
    assert target == {"c1": tps("t1-0, t2-0"), "c2": tps("t1-1"), "c3": tps("t2-1")}
    round1 = CooperativeStickyAssignor().assign(spec)
    assert round1["c3"] == []
    assert moved not in {x for v in round1.values() for x in v}
    assert as_sets(final(CooperativeStickyAssignor, spec)) == as_sets(target)


@pytest.mark.parametrize("cls", BOTH)
def test_all_consumers_are_under_min_quota(cls: type[Assignor]) -> None:
    subs = ["t1", "t2"]
    spec = group(
        {"t1": 2, "t2": 3}, [mem("c1", subs, "t1-0"), mem("c2", subs, "t1-1"), mem("c3", subs)]
    )
    assert final(cls, spec) == {"c1": tps("t1-0, t2-1"), "c2": tps("t1-1, t2-2"), "c3": tps("t2-0")}
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_add_remove_consumer_one_topic(cls: type[Assignor]) -> None:
    topics = {"topic": 3}
    spec = group(topics, [mem("consumer1", topics)])
    a = final(cls, spec)
    assert a == {"consumer1": tps("topic-0, topic-1, topic-2")}

    spec = group(topics, [mem("consumer1", topics, a["consumer1"]), mem("consumer2", topics)])
    b = final(cls, spec)
    assert b == {"consumer1": tps("topic-0, topic-1"), "consumer2": tps("topic-2")}
    assert CooperativeStickyAssignor().assign(spec) == {
        "consumer1": tps("topic-0, topic-1"),
        "consumer2": [],
    }

    spec = group(topics, [mem("consumer2", topics, b["consumer2"])])
    assert as_sets(final(cls, spec)) == {"consumer2": set(tps("topic-0, topic-1, topic-2"))}
    assert_no_transfers(spec)  # a departed owner's partitions are not transferring


@pytest.mark.parametrize("cls", BOTH)
def test_topic_balance_after_reassignment(cls: type[Assignor]) -> None:
    topics = {"t1": 12, "t2": 12}

    def per_topic(a: Assignment, m: str) -> dict[str, int]:
        return {t: sum(1 for x, _ in a[m] if x == t) for t in topics}

    spec = group(topics, [mem("c1", topics)])
    a = final(cls, spec)
    assert len(a["c1"]) == 24
    for step in (["c1", "c2"], ["c1", "c2", "c3", "c4"], ["c3", "c4"]):
        spec = group(topics, [mem(m, topics, a.get(m, ())) for m in step])
        if step == ["c3", "c4"]:
            assert_no_transfers(spec)
        a = final(cls, spec)
        assert fully_balanced(a)
        each = 24 // len(step) // 2
        assert all(per_topic(a, m) == {"t1": each, "t2": each} for m in step), a


@pytest.mark.parametrize("cls", BOTH)
def test_add_remove_two_consumers_two_topics(cls: type[Assignor]) -> None:
    topics = {"t1": 3, "t2": 4}
    spec = group(topics, [mem("c1", topics), mem("c2", topics)])
    a = final(cls, spec)
    assert a == {"c1": tps("t1-0, t1-2, t2-1, t2-3"), "c2": tps("t1-1, t2-0, t2-2")}

    spec = group(
        topics,
        [
            mem("c1", topics, a["c1"]),
            mem("c2", topics, a["c2"]),
            mem("c3", topics),
            mem("c4", topics),
        ],
    )
    b = final(cls, spec)
    assert b == {
        "c1": tps("t1-0, t2-1"),
        "c2": tps("t2-0, t1-1"),
        "c3": tps("t1-2, t2-3"),
        "c4": tps("t2-2"),
    }
    round1 = CooperativeStickyAssignor().assign(spec)
    assert round1["c3"] == []
    assert round1["c4"] == []

    spec = group(topics, [mem("c3", topics, b["c3"]), mem("c4", topics, b["c4"])])
    assert final(cls, spec) == {
        "c3": tps("t1-2, t2-3, t1-0, t2-1"),
        "c4": tps("t2-2, t1-1, t2-0"),
    }
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_poor_round_robin_assignment_scenario(cls: type[Assignor]) -> None:
    topics = {"topic1": 2, "topic2": 1, "topic3": 2, "topic4": 1, "topic5": 2}
    some = ["topic1", "topic3", "topic5"]
    spec = group(topics, [mem("c1", topics), mem("c2", some), mem("c3", some), mem("c4", topics)])
    a = final(cls, spec)
    assert_valid_and_balanced(spec, a)
    assert a == {
        "c1": tps("topic2-0, topic3-0"),
        "c2": tps("topic1-0, topic3-1"),
        "c3": tps("topic1-1, topic5-0"),
        "c4": tps("topic4-0, topic5-1"),
    }


@pytest.mark.parametrize("cls", BOTH)
def test_add_remove_topic_two_consumers(cls: type[Assignor]) -> None:
    spec = group({"topic": 3}, [mem("c1", ["topic"]), mem("c2", ["topic"])])
    a = final(cls, spec)
    assert sizes(a) == [1, 2]
    assert a == {"c1": tps("topic-0, topic-2"), "c2": tps("topic-1")}

    both = ["topic", "topic2"]
    spec = group({"topic": 3, "topic2": 3}, [mem("c1", both, a["c1"]), mem("c2", both, a["c2"])])
    b = final(cls, spec)
    assert sizes(b) == [3, 3]
    assert set(a["c1"]) <= set(b["c1"])
    assert set(a["c2"]) <= set(b["c2"])
    assert b == {
        "c1": tps("topic-0, topic-2, topic2-0"),
        "c2": tps("topic-1, topic2-1, topic2-2"),
    }
    assert_no_transfers(spec)

    spec = group({"topic2": 3}, [mem("c1", ["topic2"], b["c1"]), mem("c2", ["topic2"], b["c2"])])
    c = final(cls, spec)
    assert sizes(c) == [1, 2]
    assert set(c["c1"]) == {x for x in b["c1"] if x[0] == "topic2"}
    assert set(c["c2"]) == {x for x in b["c2"] if x[0] == "topic2"}
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_reassignment_after_one_consumer_leaves(cls: type[Assignor]) -> None:
    topics = {f"t{i:02d}": i for i in range(1, 20)}
    names = list(topics)
    members = [mem(f"c{i:02d}", names[:i]) for i in range(1, 20)]
    spec = group(topics, members)
    a = final(cls, spec)
    assert_valid_and_balanced(spec, a)

    spec = with_owned(group(topics, [m for m in members if m.member_id != "c10"]), a)
    b = final(cls, spec)
    assert_valid_and_balanced(spec, b)
    assert stickiness_2cycles(spec, StickyAssignor().assign(spec)) == []


@pytest.mark.parametrize("cls", BOTH)
def test_reassignment_after_one_consumer_added(cls: type[Assignor]) -> None:
    spec = group({"topic": 20}, [mem(f"c{i:02d}", ["topic"]) for i in range(1, 10)])
    a = final(cls, spec)
    assert_valid_and_balanced(spec, a)
    expected = {f"c{i:02d}": [i - 1, i + 8] for i in range(1, 10)}
    expected["c01"].append(18)
    expected["c02"].append(19)
    assert {m: [p for _, p in v] for m, v in a.items()} == expected

    # The others are given no owned partitions: a fresh assignment again.
    spec = group({"topic": 20}, [mem(f"c{i:02d}", ["topic"]) for i in range(1, 11)])
    b = final(cls, spec)
    assert {m: [p for _, p in v] for m, v in b.items()} == {
        f"c{i:02d}": [i - 1, i + 9] for i in range(1, 11)
    }
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_same_subscriptions(cls: type[Assignor]) -> None:
    topics = {f"t{i:02d}": i for i in range(1, 15)}
    spec = group(topics, [mem(f"c{i}", topics) for i in range(1, 9)])
    a = final(cls, spec)
    assert_valid_and_balanced(spec, a)
    assert fully_balanced(a)
    spec = group(topics, [mem(f"c{i}", topics, a[f"c{i}"]) for i in range(1, 9) if i != 5])
    assert_no_transfers(spec)
    b = final(cls, spec)
    assert_valid_and_balanced(spec, b)
    assert fully_balanced(b)


@pytest.mark.parametrize("cls", BOTH)
@pytest.mark.parametrize("gens", list(permutations((1, 2, 3))))
def test_subscription_not_equal_and_assign_same_partition_with_3_generation(
    cls: type[Assignor], gens: tuple[int, int, int]
) -> None:
    owned = ["topic-0, topic-2", "topic-1, topic-2, topic-3", "topic-2, topic-4, topic-5"]
    members = [mem(f"c{i + 1}", ["topic"], owned[i], gens[i]) for i in range(3)]
    members.append(mem("c4", ["topic1"], "topic1-0", 2))
    spec = group({"topic": 6, "topic1": 1}, members)
    a = final(cls, spec)
    assert_valid_and_balanced(spec, a)
    assert [len(a[f"c{i}"]) for i in range(1, 5)] == [2, 2, 2, 1]
    assert a["c4"] == tps("topic1-0")
    newest = f"c{gens.index(3) + 1}"
    if newest == "c3":
        assert set(tps("topic-4, topic-5")) == set(a["c3"])
        assert tp("topic-2") in a["c1"]
    else:
        assert tp("topic-2") in a[newest]


@pytest.mark.parametrize("cls", BOTH)
def test_new_subscription(cls: type[Assignor]) -> None:
    topics = {f"t{i}": 1 for i in range(1, 5)}
    spec = group(topics, [mem("c0", []), mem("c1", ["t1"]), mem("c2", ["t2", "t3", "t4"])])
    a = final(cls, spec)
    assert_valid_and_balanced(spec, a)
    assert a["c0"] == []

    spec = group(topics, [mem("c0", ["t1"]), mem("c1", ["t1"]), mem("c2", ["t2", "t3", "t4"])])
    b = final(cls, spec)
    assert_valid_and_balanced(spec, b)
    assert b["c0"] == tps("t1-0")  # first in (size, member id) order


@pytest.mark.parametrize("cls", BOTH)
def test_move_existing_assignments(cls: type[Assignor]) -> None:
    topics = {f"topic{i}": 1 for i in range(1, 7)}
    spec = group(
        topics,
        [
            mem("c1", ["topic1", "topic2"], "topic1-0"),
            mem("c2", ["topic1", "topic2", "topic3", "topic4"], "topic2-0, topic3-0"),
            mem(
                "c3",
                ["topic2", "topic3", "topic4", "topic5", "topic6"],
                "topic4-0, topic5-0, topic6-0",
            ),
        ],
    )
    a = final(cls, spec)
    assert_valid_and_balanced(spec, a)
    assert as_sets(a) == {m.member_id: set(m.owned) for m in spec.members}  # nobody moves
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_stickiness(cls: type[Assignor]) -> None:
    topics = {"topic1": 3}
    spec = group(topics, [mem(f"c{i}", topics) for i in range(1, 5)])
    a = final(cls, spec)
    assert all(len(v) <= 1 for v in a.values())
    assert a == {"c1": tps("topic1-0"), "c2": tps("topic1-1"), "c3": tps("topic1-2"), "c4": []}

    spec = group(topics, [mem(f"c{i}", topics, a[f"c{i}"]) for i in range(2, 5)])
    b = final(cls, spec)
    assert all(len(v) == 1 for v in b.values())
    assert all(set(a[m]) <= set(b[m]) for m in b)
    assert b["c4"] == tps("topic1-0")
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_assignment_updated_for_deleted_topic(cls: type[Assignor]) -> None:
    spec = group({"topic1": 1, "topic3": 100}, [mem("consumer", ["topic1", "topic2", "topic3"])])
    a = final(cls, spec)
    assert len(a["consumer"]) == 101
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_no_exception_thrown_when_only_subscribed_topic_deleted(cls: type[Assignor]) -> None:
    spec = group({"topic": 3}, [mem("consumer", ["topic"])])
    a = final(cls, spec)
    assert a == {"consumer": tps("topic-0, topic-1, topic-2")}
    spec = group({}, [mem("consumer", ["topic"], a["consumer"])])
    assert final(cls, spec) == {"consumer": []}
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_all_consumers_reach_expected_quota_and_are_considered_filled(cls: type[Assignor]) -> None:
    spec = group(
        {"topic": 4},
        [
            mem("c1", ["topic"], "topic-0, topic-1"),
            mem("c2", ["topic"], "topic-2"),
            mem("c3", ["topic"]),
        ],
    )
    assert final(cls, spec) == {
        "c1": tps("topic-0, topic-1"),
        "c2": tps("topic-2"),
        "c3": tps("topic-3"),
    }
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
@pytest.mark.parametrize("stale_gen", [9, None])
def test_owned_partitions_invalidated_for_stale_or_missing_generation(
    cls: type[Assignor], stale_gen: int | None
) -> None:
    subs = ["topic", "topic2"]
    owned = "topic-0, topic-2, topic2-1"
    c2 = Member("c2", frozenset(subs), owned=tuple(tps(owned)), generation=stale_gen)
    spec = group({"topic": 3, "topic2": 3}, [mem("c1", subs, owned, 10), c2])
    assert as_sets(final(cls, spec)) == {
        "c1": set(tps("topic-0, topic-2, topic2-1")),
        "c2": set(tps("topic-1, topic2-0, topic2-2")),
    }
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_partition_claimed_by_multiple_consumers_in_same_generation(cls: type[Assignor]) -> None:
    spec = group(
        {"topic": 3},
        [
            mem("c1", ["topic"], "topic-0, topic-1"),
            mem("c2", ["topic"], "topic-0, topic-2"),
            mem("c3", ["topic"]),
        ],
    )
    assert final(cls, spec) == {
        "c1": tps("topic-1"),
        "c2": tps("topic-2"),
        "c3": tps("topic-0"),
    }
    assert CooperativeStickyAssignor().assign(spec)["c3"] == []


@pytest.mark.parametrize("cls", BOTH)
def test_ensure_partitions_assigned_to_highest_generation(cls: type[Assignor]) -> None:
    subs = ["topic", "topic2", "topic3"]
    spec = group(
        {"topic": 3, "topic2": 3, "topic3": 3},
        [
            mem("c1", subs, "topic-0, topic2-0, topic3-0", 10),
            mem("c2", subs, "topic-1, topic2-1, topic3-1", 9),
            mem("c3", subs, "topic2-1, topic3-0, topic3-2", 8),
        ],
    )
    assert as_sets(final(cls, spec)) == {
        "c1": set(tps("topic-0, topic2-0, topic3-0")),
        "c2": set(tps("topic-1, topic2-1, topic3-1")),
        "c3": set(tps("topic-2, topic2-2, topic3-2")),
    }
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_no_reassignment_on_current_members(cls: type[Assignor]) -> None:
    subs = ["topic", "topic1", "topic2", "topic3"]
    spec = group(
        dict.fromkeys(subs, 3),
        [
            Member("c1", frozenset(subs), generation=-1),
            mem("c2", subs, "topic-0, topic2-0, topic1-0", 9),
            mem("c3", subs, "topic3-2, topic2-2, topic1-1", 8),
            mem("c4", subs, "topic3-1, topic-1, topic-2", 7),
        ],
    )
    a = final(cls, spec)
    assert set(a["c1"]) == set(tps("topic1-2, topic2-1, topic3-0"))
    assert all(set(m.owned) <= set(a[m.member_id]) for m in spec.members)
    assert_no_transfers(spec)


@pytest.mark.parametrize("cls", BOTH)
def test_owned_partitions_invalidated_for_consumer_with_multiple_generation(
    cls: type[Assignor],
) -> None:
    subs = ["topic", "topic2"]
    spec = group(
        {"topic": 3, "topic2": 3},
        [
            mem("c1", subs, "topic-0, topic2-1, topic-1", 10),
            mem("c2", subs, "topic-0, topic2-1, topic2-2", 8),
        ],
    )
    assert as_sets(final(cls, spec)) == {
        "c1": set(tps("topic-0, topic2-1, topic-1")),
        "c2": set(tps("topic-2, topic2-2, topic2-0")),
    }
    assert_no_transfers(spec)


# --------------------------------------------------------- rack tests' non-rack rows


UNIFORM_RESULT = [
    "t1-0, t1-3, t2-0, t2-3, t2-6",
    "t1-1, t1-4, t2-1, t2-4, t3-0",
    "t1-2, t1-5, t2-2, t2-5, t3-1",
]
NON_EQUAL_RESULT = [
    "t1-5, t2-0, t2-2, t2-4, t2-6",
    "t1-3, t2-1, t2-3, t2-5, t3-0",
    "t1-0, t1-1, t1-2, t1-4, t3-1",
]
RACK_TOPICS = {"t1": 6, "t2": 7, "t3": 2}


def _rack_group(subs: Sequence[Sequence[str]], owned: Sequence[str] | None = None) -> GroupSpec:
    return group(
        RACK_TOPICS,
        [mem(f"consumer{i}", s, owned[i] if owned else "") for i, s in enumerate(subs)],
    )


def _as_strings(a: Assignment, n: int) -> list[str]:
    return [", ".join(sorted(f"{t}-{p}" for t, p in a[f"consumer{i}"])) for i in range(n)]


@pytest.mark.parametrize("cls", BOTH)
@pytest.mark.parametrize(
    ("subs", "expected"),
    [
        ([["t1", "t2", "t3"]] * 3, UNIFORM_RESULT),
        ([["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]], NON_EQUAL_RESULT),
    ],
    ids=["uniform", "non-equal"],
)
def test_rack_rows_without_racks(
    cls: type[Assignor], subs: list[list[str]], expected: list[str]
) -> None:
    # Run twice as Kafka's helper does: fresh, then owning the expected result (unchanged).
    assert _as_strings(final(cls, _rack_group(subs)), 3) == expected
    spec = _rack_group(subs, expected)
    assert _as_strings(final(cls, spec), 3) == expected
    assert_no_transfers(spec)


def test_non_equal_cooperative_rounds_with_owned_partitions() -> None:
    # Rack tests' "Same owned, RF3 racks(3) (all racks match), flag off": exactly the non-rack case.
    owned = [
        "t1-0, t1-1, t1-2, t1-3, t1-4",
        "t1-5, t2-0, t2-1, t2-2, t2-3",
        "t2-4, t2-5, t2-6, t3-0, t3-1",
    ]
    spec = _rack_group([["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]], owned)
    assert _as_strings(CooperativeStickyAssignor().assign(spec), 3) == [
        "t1-2, t1-3, t1-4",
        "t2-0, t2-1, t2-2, t2-3",
        "t3-0, t3-1",
    ]
    result = CooperativeStickyAssignor().rebalance(spec)
    assert _as_strings(result.assignment, 3) == [
        "t1-2, t1-3, t1-4, t2-4, t2-5",
        "t2-0, t2-1, t2-2, t2-3, t2-6",
        "t1-0, t1-1, t1-5, t3-0, t3-1",
    ]
    assert result.rounds == 2
    assert result.received_round == dict.fromkeys(tps("t2-4, t2-5, t2-6, t1-0, t1-1, t1-5"), 2)


# ------------------------------------------------------------------- cooperative-only facts


@pytest.mark.parametrize(
    ("n", "round1"),
    [
        (
            3,
            ["topic-1"],
        ),
        (4, ["topic-1", "topic-3"]),
    ],
)
def test_cooperative_withholds_partition_claimed_twice_in_same_generation(
    n: int, round1: list[str]
) -> None:
    spec = group(
        {"topic": n},
        [
            mem("c1", ["topic"], "topic-0, topic-1"),
            mem("c2", ["topic"], "topic-0, topic-2"),
            mem("c3", ["topic"]),
        ],
    )
    first = CooperativeStickyAssignor().assign(spec)
    assert first == {"c1": [tp(x) for x in round1], "c2": tps("topic-2"), "c3": []}
    result = CooperativeStickyAssignor().rebalance(spec)
    assert result.assignment["c3"] == tps("topic-0")
    assert result.rounds == 2
    assert result.received_round == {tp("topic-0"): 2}


@pytest.mark.parametrize("cls", BOTH)
def test_assignor_with_old_version_subscriptions(cls: type[Assignor]) -> None:
    # V0/V1 members carry owned partitions with a generation; the V2 member owns nothing.
    spec = group(
        {"topic1": 3},
        [
            mem("c1", ["topic1"], "topic1-0"),
            mem("c2", ["topic1"], "topic1-1"),
            mem("c3", ["topic1"]),
        ],
    )
    assert final(cls, spec) == {
        "c1": tps("topic1-0"),
        "c2": tps("topic1-1"),
        "c3": tps("topic1-2"),
    }


# ------------------------------------------------------------------------ sticky-only facts


@pytest.mark.parametrize(("n", "c1"), [(3, "topic-1"), (4, "topic-1, topic-3")])
def test_eager_gives_twice_claimed_partition_at_once(n: int, c1: str) -> None:
    spec = group(
        {"topic": n},
        [
            mem("c1", ["topic"], "topic-0, topic-1"),
            mem("c2", ["topic"], "topic-0, topic-2"),
            mem("c3", ["topic"]),
        ],
    )
    assert StickyAssignor().assign(spec) == {
        "c1": tps(c1),
        "c2": tps("topic-2"),
        "c3": tps("topic-0"),
    }
    assert StickyAssignor().rebalance(spec).rounds == 1


@pytest.mark.parametrize("cls", BOTH)
@pytest.mark.parametrize("equal", [True, False])
def test_assignment_with_multiple_generations_1(cls: type[Assignor], equal: bool) -> None:
    topics = {"topic": 6, "topic2": 6}
    every = ["topic", "topic2"]
    c2_topics = every if equal else ["topic"]
    spec = group(topics, [mem("c1", every), mem("c2", c2_topics), mem("c3", every)])
    r1 = final(cls, spec)
    assert sizes(r1) == [4, 4, 4]
    assert_valid_and_balanced(spec, r1)

    spec = group(topics, [mem("c1", every, r1["c1"], 1), mem("c2", c2_topics, r1["c2"], 1)])
    r2 = final(cls, spec)
    assert sizes(r2) == [6, 6]
    if equal:
        assert set(r1["c1"]) <= set(r2["c1"])
    assert set(r1["c2"]) <= set(r2["c2"])
    assert set(r2["c2"]) & set(r1["c3"])
    assert_valid_and_balanced(spec, r2)

    spec = group(topics, [mem("c2", c2_topics, r2["c2"], 2), mem("c3", every, r1["c3"], 1)])
    r3 = final(cls, spec)
    assert sizes(r3) == [6, 6]
    assert not set(r3["c2"]) & set(r3["c3"])
    assert_valid_and_balanced(spec, r3)
    assert fully_balanced(r3)


@pytest.mark.parametrize("cls", BOTH)
@pytest.mark.parametrize("equal", [True, False])
def test_assignment_with_multiple_generations_2(cls: type[Assignor], equal: bool) -> None:
    topics = {"topic": 4, "topic2": 4, "topic3": 4}
    every = list(topics)
    c1_topics = every if equal else ["topic"]
    c3_topics = every if equal else ["topic", "topic2"]
    spec = group(topics, [mem("c1", c1_topics), mem("c2", every), mem("c3", c3_topics)])
    r1 = final(cls, spec)
    assert sizes(r1) == [4, 4, 4]

    spec = group(topics, [mem("c2", every, r1["c2"], 1)])
    r2 = final(cls, spec)
    assert len(r2["c2"]) == 12
    assert set(r1["c2"]) <= set(r2["c2"])

    spec = group(
        topics,
        [
            mem("c1", c1_topics, r1["c1"], 1),
            mem("c2", every, r2["c2"], 2),
            mem("c3", c3_topics, r1["c3"], 1),
        ],
    )
    r3 = final(cls, spec)
    assert sizes(r3) == [4, 4, 4]
    assert_valid_and_balanced(spec, r3)
    assert fully_balanced(r3)


@pytest.mark.parametrize("cls", BOTH)
@pytest.mark.parametrize("equal", [True, False])
def test_assignment_with_conflicting_previous_generations(cls: type[Assignor], equal: bool) -> None:
    topics = {"topic": 4, "topic2": 4, "topic3": 4}
    every = list(topics)
    c1_owned = (
        "topic-0, topic-1, topic-2, topic2-2, topic2-3, topic3-0"
        if equal
        else "topic-0, topic-1, topic-2, topic-3"
    )
    c2_owned = "topic-0, topic-1, topic2-0, topic2-1, topic2-2, topic2-3"
    c3_owned = "topic-2, topic-3, topic3-0, topic3-1, topic3-2, topic3-3"
    spec = group(
        topics,
        [
            mem("c1", every if equal else ["topic"], c1_owned, 1),
            mem("c2", every if equal else ["topic", "topic2"], c2_owned, 2),
            mem("c3", every, c3_owned, 2),
        ],
    )
    a = final(cls, spec)
    assert sizes(a) == [4, 4, 4]
    assert set(a["c2"]) <= set(tps(c2_owned))
    assert set(a["c3"]) <= set(tps(c3_owned))
    assert_valid_and_balanced(spec, a)


@pytest.mark.parametrize("cls", BOTH)
def test_schema_backward_compatibility(cls: type[Assignor]) -> None:
    c2 = Member("c2", frozenset({"topic"}), owned=(tp("topic-1"),))  # V0: no generation
    spec = group(
        {"topic": 3}, [mem("c1", ["topic"], "topic-0, topic-2", 1), c2, mem("c3", ["topic"])]
    )
    a = final(cls, spec)
    assert a == {"c1": tps("topic-0"), "c2": tps("topic-1"), "c3": tps("topic-2")}


# ------------------------------------------------------------------ our deliberate differences


@pytest.mark.parametrize("cls", BOTH)
@pytest.mark.parametrize("order", [("A", "B"), ("B", "A")])
def test_member_with_empty_subscription_gets_nothing(
    cls: type[Assignor], order: tuple[str, str]
) -> None:
    # Java's quirk (AbstractStickyAssignor's owned-partition map): with A -> [] iterated first,
    # A gets t-0 and t-2. We never do that.
    subs = {"A": [], "B": ["t"]}
    spec = group({"t": 4}, [mem(m, subs[m]) for m in order])
    assert as_sets(final(cls, spec)) == {"A": set(), "B": set(tps("t-0, t-1, t-2, t-3"))}


def test_no_state_leaks_between_calls() -> None:
    # Java keeps maxGeneration in a field; a high generation seen earlier must not make the
    # next group's members look stale.
    assignor = StickyAssignor()
    big = group({"x": 2}, [mem("a", ["x"], "x-0", 100), mem("b", ["x"], "x-1", 100)])
    assignor.assign(big)
    topics = {"t": 4}
    spec = group(topics, [mem("c1", ["t"], "t-0, t-1", 1), mem("c2", ["t"]), mem("c3", ["u"])])
    assert assignor.assign(spec) == StickyAssignor().assign(spec)
    assert vars(assignor) == {}


def test_departed_members_are_invisible() -> None:
    topics = {"t": 3}
    spec = GroupSpec(
        "g",
        (mem("c1", ["t"], "t-0", 1), mem("c2", ["t"])),
        {"t": TopicMetadata("t", 3)},
        departed={"gone": (tp("t-1"), tp("t-2"))},
    )
    plain = group(topics, [mem("c1", ["t"], "t-0", 1), mem("c2", ["t"])])
    for cls in BOTH:
        assert cls().assign(spec) == cls().assign(plain)
    assert CooperativeStickyAssignor().rebalance(spec).rounds == 1


def test_names_and_class_names() -> None:
    assert StickyAssignor.name == "sticky"
    assert StickyAssignor.java_class == "org.apache.kafka.clients.consumer.StickyAssignor"
    assert CooperativeStickyAssignor.name == "cooperative-sticky"
    assert (
        CooperativeStickyAssignor.java_class
        == "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
    )


def test_member_order_ignores_instance_ids_and_input_order() -> None:
    topics = {"t": 5}
    a = [Member("m2", frozenset({"t"}), group_instance_id="a"), Member("m1", frozenset({"t"}))]
    spec1 = group(topics, a)
    spec2 = group(topics, list(reversed(a)))
    for cls in BOTH:
        out = cls().assign(spec1)
        assert out == cls().assign(spec2)
        assert [p for _, p in out["m1"]] == [0, 2, 4]  # by member id, not instance id


def test_general_path_hands_partition_back_to_lower_generation_previous_owner() -> None:
    # The general path, steps 1 and 7: b's stale claim on t-0 loses to a (generation 2), but when
    # a must shed partitions, t-0 goes back to b rather than to the least-loaded member c.
    spec = group(
        {"t": 4, "v": 1},
        [
            mem("a", ["t"], "t-0, t-1, t-2, t-3", 2),
            mem("b", ["t", "v"], "t-0, v-0", 1),
            mem("c", ["t"]),
        ],
    )
    assert as_sets(StickyAssignor().assign(spec)) == {
        "a": set(tps("t-2, t-3")),
        "b": set(tps("v-0, t-0")),
        "c": set(tps("t-1")),
    }
    # Cooperative: a still owns t-0 and t-1, so both wait for round 2.
    assert as_sets(CooperativeStickyAssignor().assign(spec)) == {
        "a": set(tps("t-2, t-3")),
        "b": set(tps("v-0")),
        "c": set(),
    }
