"""The broker-side range assignor (`server-range`): the facts of Kafka's own test class for it
(group-coordinator `RangeAssignorTest`, Kafka 3.9+) and properties over random groups."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

import pytest

from assignors.catalog.registry import (
    SERVER_SIDE,
    canonical_name,
    classic_protocol_name,
    get_assignor,
)
from assignors.model import GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.strategies.range import RangeAssignor
from assignors.strategies.server_range import ServerRangeAssignor

JAVA_CLASS = "org.apache.kafka.coordinator.group.assignor.RangeAssignor"


def group(
    topics: Mapping[str, int],
    members: Mapping[str, AbstractSet[str]],
    owned: Mapping[str, Sequence[TopicPartition]] | None = None,
    instances: Mapping[str, str] | None = None,
) -> GroupSpec:
    owned = owned or {}
    instances = instances or {}
    ms = tuple(
        Member(mid, frozenset(subs), instances.get(mid), owned=tuple(owned.get(mid, ())))
        for mid, subs in members.items()
    )
    return GroupSpec("g", ms, {t: TopicMetadata(t, n) for t, n in topics.items()})


def run(spec: GroupSpec) -> dict[str, dict[str, list[int]]]:
    """member -> topic -> partitions, as Kafka's tests state their expectations."""
    out: dict[str, dict[str, list[int]]] = {}
    for mid, parts in ServerRangeAssignor().assign(spec).items():
        per: dict[str, list[int]] = {}
        for t, p in parts:
            per.setdefault(t, []).append(p)
        out[mid] = per
    return out


ABC = ("A", "B", "C")


# --- Kafka's RangeAssignorTest, restated ---


def test_one_member_no_topic_is_present_with_nothing() -> None:
    assert run(group({"T1": 3}, {"A": set()})) == {"A": {}}


def test_subscribed_topic_that_does_not_exist_is_dropped() -> None:
    # The assignor throws; the coordinator never hands it a name that resolves to no topic id.
    assert run(group({"T1": 3}, {"A": {"T2"}})) == {"A": {}}
    assert run(group({"T1": 3}, {"A": {"T1", "T2"}})) == {"A": {"T1": [0, 1, 2]}}


def test_first_assignment_two_members_two_topics_same_subscriptions() -> None:
    spec = group({"T1": 3, "T3": 2}, {"A": {"T1", "T3"}, "B": {"T1", "T3"}})
    assert run(spec) == {"A": {"T1": [0, 1], "T3": [0]}, "B": {"T1": [2], "T3": [1]}}


def test_first_assignment_three_members_three_topics_different_subscriptions() -> None:
    spec = group(
        {"T1": 3, "T2": 3, "T3": 2},
        {"A": {"T1", "T2"}, "B": {"T3"}, "C": {"T2", "T3"}},
    )
    assert run(spec) == {
        "A": {"T1": [0, 1, 2], "T2": [0, 1]},
        "B": {"T3": [0]},
        "C": {"T2": [2], "T3": [1]},
    }


def test_more_members_than_partitions() -> None:
    spec = group({"T1": 3, "T3": 2}, {key: {"T1", "T3"} for key in ABC})
    assert run(spec) == {
        "A": {"T1": [0], "T3": [0]},
        "B": {"T1": [1], "T3": [1]},
        "C": {"T1": [2]},
    }


def test_static_membership_a_replacing_member_takes_the_same_range() -> None:
    before = group({"T1": 3}, {"A": {"T1"}, "B": {"T1"}}, instances={"A": "A", "B": "B"})
    after = group({"T1": 3}, {"A1": {"T1"}, "B": {"T1"}}, instances={"A1": "A", "B": "B"})
    assert run(before) == {"A": {"T1": [0, 1]}, "B": {"T1": [2]}}
    assert run(after) == {"A1": {"T1": [0, 1]}, "B": {"T1": [2]}}


def test_mixed_static_membership_static_members_first() -> None:
    instances = {"A": "instanceA", "C": "instanceC"}
    spec = group({"T1": 5}, {key: {"T1"} for key in ABC}, instances=instances)
    assert run(spec) == {"A": {"T1": [0, 1]}, "B": {"T1": [4]}, "C": {"T1": [2, 3]}}
    # A is replaced by memberA1 with the same instance id: nobody's partitions change.
    replaced = group(
        {"T1": 5},
        {"memberA1": {"T1"}, "B": {"T1"}, "C": {"T1"}},
        instances={"memberA1": "instanceA", "C": "instanceC"},
    )
    assert run(replaced) == {"memberA1": {"T1": [0, 1]}, "B": {"T1": [4]}, "C": {"T1": [2, 3]}}


def test_static_members_are_ordered_by_instance_id_not_member_id() -> None:
    spec = group({"T1": 3}, {"a": {"T1"}, "z": {"T1"}}, instances={"a": "y", "z": "x"})
    assert run(spec) == {"a": {"T1": [2]}, "z": {"T1": [0, 1]}}


def test_reassignment_one_member_added_more_members_than_partitions() -> None:
    owned = {"A": [("T1", 0), ("T2", 0)], "B": [("T1", 1), ("T2", 1)]}
    spec = group({"T1": 2, "T2": 2}, {key: {"T1", "T2"} for key in ABC}, owned)
    assert run(spec) == {"A": {"T1": [0], "T2": [0]}, "B": {"T1": [1], "T2": [1]}, "C": {}}


def test_reassignment_one_partition_added_two_members_two_topics() -> None:
    owned = {"A": [("T1", 0), ("T1", 1), ("T2", 0), ("T2", 1)], "B": [("T1", 2), ("T2", 2)]}
    spec = group({"T1": 4, "T2": 4}, {"A": {"T1", "T2"}, "B": {"T1", "T2"}}, owned)
    assert run(spec) == {"A": {"T1": [0, 1], "T2": [0, 1]}, "B": {"T1": [2, 3], "T2": [2, 3]}}


def test_reassignment_one_member_added_two_topics() -> None:
    owned = {"A": [("T1", 0), ("T1", 1), ("T2", 0), ("T2", 1)], "B": [("T1", 2), ("T2", 2)]}
    spec = group({"T1": 3, "T2": 3}, {key: {"T1", "T2"} for key in ABC}, owned)
    expected = {m: {"T1": [i], "T2": [i]} for i, m in enumerate(ABC)}
    assert run(spec) == expected


def test_reassignment_member_and_partition_added_heterogeneous() -> None:
    owned = {"A": [("T1", 0), ("T1", 1), ("T2", 0), ("T2", 1)], "B": [("T1", 2), ("T2", 2)]}
    spec = group({"T1": 4, "T2": 3}, {"A": {"T1", "T2"}, "B": {"T1", "T2"}, "C": {"T1"}}, owned)
    assert run(spec) == {
        "A": {"T1": [0, 1], "T2": [0, 1]},
        "B": {"T1": [2], "T2": [2]},
        "C": {"T1": [3]},
    }


def test_reassignment_one_member_removed() -> None:
    owned = {"B": [("T1", 2), ("T2", 2)]}
    spec = group({"T1": 3, "T2": 3}, {"B": {"T1", "T2"}}, owned)
    assert run(spec) == {"B": {"T1": [0, 1, 2], "T2": [0, 1, 2]}}


def test_reassignment_subscriptions_changed_previous_targets_ignored() -> None:
    owned = {
        "A": [("T1", 0), ("T2", 0), ("T3", 0)],
        "B": [("T1", 1), ("T2", 1), ("T3", 1)],
        "C": [("T1", 2), ("T2", 2)],
    }
    spec = group(
        {"T1": 3, "T2": 3, "T3": 2},
        {"A": {"T1"}, "B": {"T1", "T2", "T3"}, "C": {"T2"}},
        owned,
    )
    assert run(spec) == {
        "A": {"T1": [0, 1]},
        "B": {"T1": [2], "T2": [0, 1], "T3": [0, 1]},
        "C": {"T2": [2]},
    }


# --- names ---


def test_registered_with_the_kafka_class_name_as_alias() -> None:
    assert canonical_name("server-range") == "server-range"
    assert canonical_name(JAVA_CLASS) == "server-range"
    assert isinstance(get_assignor(JAVA_CLASS), ServerRangeAssignor)
    assert "server-range" in SERVER_SIDE
    # never a classic member's vote: the broker runs it, not the group leader
    assert classic_protocol_name("server-range") is None
    assert classic_protocol_name(JAVA_CLASS) is None


# --- properties ---


def random_group(rng: random.Random) -> GroupSpec:
    topics = {f"t{i}": rng.randint(1, 12) for i in range(rng.randint(1, 5))}
    names = [*topics, "missing"]
    members = {}
    instances = {}
    owned: dict[str, list[TopicPartition]] = {}
    for i in range(rng.randint(1, 9)):
        mid = f"m{rng.randrange(1000):03d}-{i}"
        members[mid] = set(rng.sample(names, rng.randint(0, len(names))))
        if rng.random() < 0.4:
            instances[mid] = f"i{rng.randrange(1000):03d}-{i}"
        owned[mid] = [(t, p) for t, n in topics.items() for p in range(n) if rng.random() < 0.2]
    return group(topics, members, owned, instances)


def shuffled(spec: GroupSpec, rng: random.Random) -> GroupSpec:
    members = list(spec.members)
    rng.shuffle(members)
    topics = list(spec.topics.items())
    rng.shuffle(topics)
    return GroupSpec(spec.group_id, tuple(members), dict(topics))


@pytest.mark.parametrize("seed", range(300))
def test_properties(seed: int) -> None:
    rng = random.Random(seed)
    spec = random_group(rng)
    result = ServerRangeAssignor().assign(spec)
    assert set(result) == set(spec.member_ids)
    # every subscribed partition exactly once, only to a subscriber
    got = Counter(tp for tps in result.values() for tp in tps)
    wanted = {(t, p) for t in spec.subscribed_topics() for p in range(spec.partition_count(t))}
    assert set(got) == wanted
    assert all(n == 1 for n in got.values())
    topics_of = {m.member_id: m.topics for m in spec.members}
    assert all(t in topics_of[mid] for mid, tps in result.items() for t, _ in tps)
    # per topic, the subscribers' counts differ by at most one
    for t, subs in spec.subscribers().items():
        sizes = [sum(1 for tt, _ in result[m.member_id] if tt == t) for m in subs]
        assert max(sizes) - min(sizes) <= 1
    # the same output for any order of the input rows, and for any current assignment
    for _ in range(3):
        assert ServerRangeAssignor().assign(shuffled(spec, rng)) == result
    no_owned = GroupSpec(
        spec.group_id, tuple(m.owning((), None) for m in spec.members), spec.topics
    )
    assert ServerRangeAssignor().assign(no_owned) == result
    # without racks, it assigns as the client-side range does
    assert RangeAssignor().assign(spec) == result
