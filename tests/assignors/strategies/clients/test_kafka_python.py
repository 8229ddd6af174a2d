"""`range@kafka-python`, `roundrobin@kafka-python`, `sticky@kafka-python` give exactly what
kafka-python's own assignors (3.0.12, run here in process) give on the same groups, and
report where kafka-python's leader fails."""

from __future__ import annotations

import itertools
import random
import types
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from assignors.catalog.catalog import StrategyCatalog
from assignors.catalog.registry import (
    UnknownStrategyError,
    canonical_name,
    client_variant_names,
    get_assignor,
)
from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.planner import plan_group
from assignors.problems import WARNING, Reason
from assignors.strategies.clients import ClientAssignorFailure
from assignors.strategies.clients.kafka_python import (
    KafkaPythonRangeAssignor,
    KafkaPythonRoundRobinAssignor,
    KafkaPythonStickyAssignor,
)
from assignors.strategies.range import RangeAssignor
from assignors.strategies.roundrobin import RoundRobinAssignor
from assignors.strategies.sticky.assignor import StickyAssignor

kafka = pytest.importorskip("kafka")
from kafka.coordinator.assignors import roundrobin as kp_roundrobin  # noqa: E402
from kafka.coordinator.assignors.range import RangePartitionAssignor  # noqa: E402
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor  # noqa: E402
from kafka.coordinator.assignors.sticky import partition_movements  # noqa: E402
from kafka.coordinator.assignors.sticky import sticky_assignor as kp_sticky  # noqa: E402
from kafka.protocol.consumer import JoinGroupResponse  # noqa: E402
from kafka.structs import TopicPartition as KafkaTopicPartition  # noqa: E402

JoinMember = JoinGroupResponse.JoinGroupResponseMember


class FakeCluster:
    """What kafka-python's assignors read of `ClusterMetadata`: the leader's topics (the
    group's subscribed topics that exist) and their partitions."""

    def __init__(self, spec: GroupSpec) -> None:
        self.counts = {t: spec.partition_count(t) for t in spec.subscribed_topics()}

    def topics(self) -> set[str]:
        return set(self.counts)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        n = self.counts.get(topic)
        return None if n is None else set(range(n))


class SmallestFirst(set):  # type: ignore[type-arg]
    """A set that iterates and pops in sorted order: kafka-python's sticky takes "an" element
    of a set (string-hash order, salted per process); the variant takes the smallest."""

    def __iter__(self) -> Iterator[Any]:
        return iter(sorted(set.__iter__(self)))

    def pop(self) -> Any:
        x = min(set.__iter__(self))
        self.remove(x)
        return x

    def intersection(self, *others: Iterable[Any]) -> SmallestFirst:
        return SmallestFirst(set.intersection(self, *others))


class Spins(Exception):
    """kafka-python's roundrobin went round its member cycle far more often than it can
    need to: it would never return."""


def bounded_cycle(items: list[Any]) -> Iterator[Any]:
    for _ in range(10_000):
        yield from items
    raise Spins


@pytest.fixture(autouse=True)
def _deterministic_kafka_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kp_sticky, "set", SmallestFirst, raising=False)
    monkeypatch.setattr(partition_movements, "set", SmallestFirst, raising=False)
    bounded = types.SimpleNamespace(groupby=itertools.groupby, cycle=bounded_cycle)
    monkeypatch.setattr(kp_roundrobin, "itertools", bounded)


def join_members(spec: GroupSpec, sticky: bool) -> list[Any]:
    out = []
    for m in spec.members:
        topics = sorted(m.topics)
        if sticky:
            owned = [KafkaTopicPartition(t, p) for t, p in sorted(set(m.owned))]
            generation = -1 if m.generation is None else m.generation
            metadata = kp_sticky.StickyPartitionAssignor._metadata(
                topics, owned if m.owned or m.generation is not None else None, generation
            )
        else:
            metadata = RangePartitionAssignor.metadata(topics)
        out.append(
            JoinMember(
                member_id=m.member_id, group_instance_id=m.group_instance_id, metadata=metadata
            )
        )
    return out


def kafka_python(name: str, spec: GroupSpec) -> Assignment | str:
    """kafka-python's assignment of `spec`, or "spins" when it never returns, or the name of
    the exception it raises."""
    cluster = FakeCluster(spec)
    sticky = name == "sticky"
    members = join_members(spec, sticky)
    try:
        if name == "range":
            result = RangePartitionAssignor.assign(cluster, members)
        elif name == "roundrobin":
            result = RoundRobinPartitionAssignor.assign(cluster, members)
        else:
            result = kp_sticky.StickyPartitionAssignor().assign(cluster, members)
    except Spins:
        return "spins"
    except Exception as exc:
        return type(exc).__name__
    return {
        member_id: sorted((tp.topic, tp.partition) for tp in a.partitions())
        for member_id, a in result.items()
    }


def variant(name: str, spec: GroupSpec) -> Assignment | str:
    try:
        return get_assignor(f"{name}@kafka-python").assign(spec)
    except ClientAssignorFailure as exc:
        return exc.what


def random_group(rng: random.Random, owned: bool) -> GroupSpec:
    topics = {f"t{i}": TopicMetadata(f"t{i}", rng.randint(1, 6)) for i in range(rng.randint(1, 3))}
    names = list(topics)
    equal = rng.random() < 0.4
    everyone = frozenset(rng.sample(names, rng.randint(1, len(names))))
    n = rng.randint(1, 6)
    ids = rng.sample([f"c{i}" for i in range(10)], n)
    members = []
    for member_id in ids:
        subs = everyone if equal else frozenset(rng.sample(names, rng.randint(1, len(names))))
        if rng.random() < 0.15:
            subs = subs | {"missing"}  # no metadata: skipped
        instance = f"i{rng.randint(0, 9)}" if rng.random() < 0.5 else None
        members.append(Member(member_id, subs, group_instance_id=instance))
    # instance ids are unique in a group
    seen: set[str] = set()
    unique = []
    for m in members:
        if m.group_instance_id in seen:
            m = Member(m.member_id, m.topics)
        if m.group_instance_id is not None:
            seen.add(m.group_instance_id)
        unique.append(m)
    members = unique
    if owned:
        every: list[TopicPartition] = [
            (t, p) for t in names for p in range(topics[t].partition_count)
        ]
        with_owned = []
        for m in members:
            if rng.random() < 0.25:
                with_owned.append(m)  # a new member
                continue
            mine = tuple(tp for tp in every if rng.random() < 0.4)
            generation = rng.choice([1, 2, 2, 3, None])
            with_owned.append(m.owning(mine, generation))
        members = with_owned
    return GroupSpec("g", tuple(members), topics)


@pytest.mark.parametrize("name", ["range", "roundrobin", "sticky"])
@pytest.mark.parametrize("owned", [False, True])
def test_variant_equals_kafka_python_on_random_groups(name: str, owned: bool) -> None:
    rng = random.Random(f"{name}/{owned}")
    outcomes: dict[str, int] = {}
    for _ in range(400):
        spec = random_group(rng, owned)
        expected = kafka_python(name, spec)
        got = variant(name, spec)
        if isinstance(expected, str):
            assert isinstance(got, str), (spec, expected, got)
            assert got.startswith("raises"), (spec, expected, got)
            assert f" {expected}" in got, (spec, expected, got)
            outcomes[expected] = outcomes.get(expected, 0) + 1
        else:
            assert got == expected, spec
            outcomes["ok"] = outcomes.get("ok", 0) + 1
    assert outcomes.get("ok", 0) > 100, outcomes


def tps(assignment: Assignment) -> dict[str, list[str]]:
    return {m: [f"{t}-{p}" for t, p in sorted(ps)] for m, ps in assignment.items()}


T1T2 = {"t1": TopicMetadata("t1", 3), "t2": TopicMetadata("t2", 3)}
INTERLEAVED = GroupSpec(
    "g",
    (
        Member("consumer-b", frozenset(T1T2), "instance1"),
        Member("consumer-a", frozenset(T1T2)),
        Member("consumer-c", frozenset(T1T2), "instance2"),
    ),
    T1T2,
)


def test_range_drops_interleaved_static_members() -> None:
    # JoinGroup order static, dynamic, static: the first static run is overwritten
    assert tps(KafkaPythonRangeAssignor().assign(INTERLEAVED)) == {
        "consumer-b": [],
        "consumer-a": ["t1-2", "t2-2"],
        "consumer-c": ["t1-0", "t1-1", "t2-0", "t2-1"],
    }
    assert tps(RangeAssignor().assign(INTERLEAVED)) == {
        "consumer-b": ["t1-0", "t2-0"],
        "consumer-c": ["t1-1", "t2-1"],
        "consumer-a": ["t1-2", "t2-2"],
    }
    assert kafka_python("range", INTERLEAVED) == KafkaPythonRangeAssignor().assign(INTERLEAVED)


def test_roundrobin_drops_interleaved_static_members() -> None:
    got = tps(KafkaPythonRoundRobinAssignor().assign(INTERLEAVED))
    assert got == {
        "consumer-b": [],
        "consumer-a": ["t1-1", "t2-0", "t2-2"],
        "consumer-c": ["t1-0", "t1-2", "t2-1"],
    }
    assert kafka_python("roundrobin", INTERLEAVED) == KafkaPythonRoundRobinAssignor().assign(
        INTERLEAVED
    )


def test_roundrobin_raises_where_java_skips_a_member() -> None:
    # The roundrobin Javadoc example: Java gives C0 t0-0, C1 t1-0, C2 t1-1, then skips C0 for
    # t2-0; kafka-python's skip loop raises KeyError there.
    topics = {
        "t0": TopicMetadata("t0", 1),
        "t1": TopicMetadata("t1", 2),
        "t2": TopicMetadata("t2", 3),
    }
    spec = GroupSpec(
        "g",
        (
            Member("C0", frozenset({"t0"})),
            Member("C1", frozenset({"t0", "t1"})),
            Member("C2", frozenset({"t0", "t1", "t2"})),
        ),
        topics,
    )
    assert tps(RoundRobinAssignor().assign(spec)) == {
        "C0": ["t0-0"],
        "C1": ["t1-0"],
        "C2": ["t1-1", "t2-0", "t2-1", "t2-2"],
    }
    assert kafka_python("roundrobin", spec) == "KeyError"
    with pytest.raises(ClientAssignorFailure, match="raises KeyError: it must skip 'C0'"):
        KafkaPythonRoundRobinAssignor().assign(spec)


def test_roundrobin_unequal_subscriptions_without_a_skip_are_java() -> None:
    topics = {"t0": TopicMetadata("t0", 1), "t1": TopicMetadata("t1", 1)}
    spec = GroupSpec(
        "g", (Member("C0", frozenset({"t0"})), Member("C1", frozenset({"t0", "t1"}))), topics
    )
    expected = RoundRobinAssignor().assign(spec)
    assert KafkaPythonRoundRobinAssignor().assign(spec) == expected
    assert kafka_python("roundrobin", spec) == expected


def test_sticky_rebalance_differs_from_java() -> None:
    topics = {"t1": TopicMetadata("t1", 3), "t2": TopicMetadata("t2", 4)}
    subs = frozenset(topics)
    spec = GroupSpec(
        "g",
        (
            Member("c1", subs, owned=(("t1", 0), ("t1", 2), ("t2", 1), ("t2", 3)), generation=1),
            Member("c2", subs, owned=(("t1", 1), ("t2", 0), ("t2", 2)), generation=1),
            Member("c3", subs),
            Member("c4", subs),
        ),
        topics,
    )
    got = KafkaPythonStickyAssignor().assign(spec)
    assert got == kafka_python("sticky", spec)
    assert tps(got) == {
        "c1": ["t1-0", "t1-2"],
        "c2": ["t1-1", "t2-0"],
        "c3": ["t2-1", "t2-3"],
        "c4": ["t2-2"],
    }
    assert tps(StickyAssignor().assign(spec)) == {
        "c1": ["t1-0", "t2-1"],
        "c2": ["t1-1", "t2-0"],
        "c3": ["t1-2", "t2-3"],
        "c4": ["t2-2"],
    }


def test_sticky_same_generation_double_claim_keeps_the_first_claimant() -> None:
    topics = {"t": TopicMetadata("t", 3)}
    subs = frozenset(topics)
    spec = GroupSpec(
        "g",
        (
            Member("c1", subs, owned=(("t", 0), ("t", 1)), generation=1),
            Member("c2", subs, owned=(("t", 0), ("t", 2)), generation=1),
            Member("c3", subs),
        ),
        topics,
    )
    got = KafkaPythonStickyAssignor().assign(spec)
    assert got == kafka_python("sticky", spec)
    assert tps(got) == {"c1": ["t-0"], "c2": ["t-2"], "c3": ["t-1"]}
    assert tps(StickyAssignor().assign(spec)) == {"c1": ["t-1"], "c2": ["t-2"], "c3": ["t-0"]}


# --- names and the planner ---


def test_names_resolve() -> None:
    assert client_variant_names() == [
        "range@kafka-python",
        "roundrobin@kafka-python",
        "sticky@kafka-python",
        "range@librdkafka",
        "roundrobin@librdkafka",
        "cooperative-sticky@librdkafka",
    ]
    assert type(get_assignor("range@kafka-python")) is KafkaPythonRangeAssignor
    assert type(get_assignor(" org.apache.kafka.clients.consumer.RangeAssignor@kafka-python "))
    assert type(get_assignor("roundrobin@java")) is RoundRobinAssignor
    assert canonical_name("sticky@java") == "sticky"
    assert canonical_name("range@librdkafka") == "range@librdkafka"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "range@kafka-go",
            r"unknown client library 'kafka-go'.*known: java, kafka-python, librdkafka",
        ),
        ("cooperative-sticky@kafka-python", r"has no kafka-python variant.*range@kafka-python"),
        ("uniform@librdkafka", r"has no librdkafka variant"),
        ("sticky@librdkafka", r"has no librdkafka variant"),
        ("nosuch@kafka-python", r"has no kafka-python variant"),
    ],
)
def test_unknown_variants_raise_naming_the_known_ones(name: str, message: str) -> None:
    assert canonical_name(name) is None
    with pytest.raises(UnknownStrategyError, match=message):
        get_assignor(name)


def test_members_cannot_vote_for_a_variant() -> None:
    catalog = StrategyCatalog.build(["range", "range@kafka-python"])
    assert catalog.protocols == ["range", "range@kafka-python"]
    assert catalog.vote("range@kafka-python") is None
    assert catalog.vote("range@java") == "range"


def test_the_planner_warns_where_kafka_pythons_leader_fails() -> None:
    topics = {"t0": TopicMetadata("t0", 1), "t1": TopicMetadata("t1", 2)}
    spec = GroupSpec(
        "g", (Member("C0", frozenset({"t0"})), Member("C1", frozenset({"t1"}))), topics
    )
    catalog = StrategyCatalog.build(["roundrobin", "roundrobin@kafka-python", "range@kafka-python"])
    plan = plan_group(spec, catalog, False)
    assert [p.strategy for p in plan.plans] == ["roundrobin", "range@kafka-python"]
    [problem] = plan.problems
    assert (problem.severity, problem.reason, problem.strategy) == (
        WARNING,
        Reason.CLIENT_ASSIGNOR_FAILED,
        "roundrobin@kafka-python",
    )
    assert "kafka-python's roundrobin assignor raises KeyError" in problem.detail
    assert "no assignment" in problem.detail
