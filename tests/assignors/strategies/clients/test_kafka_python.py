"""`range@kafka-python`, `roundrobin@kafka-python`, `sticky@kafka-python` and
`cooperative-sticky@kafka-python` give exactly what kafka-python's own assignors (3.0.12, run
here in process) give on the same groups, and report where kafka-python's leader fails;
`cooperative-sticky@kafka-python`'s rounds are those of kafka-python's members (their own
subscription state and assignor, rejoining until none revokes anything)."""

from __future__ import annotations

import itertools
import random
import types
from collections import Counter, defaultdict
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
from assignors.ownership import received_rounds
from assignors.planner import plan_group
from assignors.problems import WARNING, Reason
from assignors.protocol import COOPERATIVE_ONLY, EAGER_AND_COOPERATIVE
from assignors.strategies.clients import ClientAssignorFailure
from assignors.strategies.clients.kafka_python import (
    KafkaPythonCooperativeStickyAssignor,
    KafkaPythonRangeAssignor,
    KafkaPythonRoundRobinAssignor,
    KafkaPythonStickyAssignor,
)
from assignors.strategies.range import RangeAssignor
from assignors.strategies.roundrobin import RoundRobinAssignor
from assignors.strategies.sticky.assignor import CooperativeStickyAssignor, StickyAssignor

kafka = pytest.importorskip("kafka")
from kafka.consumer.subscription_state import SubscriptionState  # noqa: E402
from kafka.coordinator.assignors import cooperative_sticky as kp_cooperative  # noqa: E402
from kafka.coordinator.assignors import roundrobin as kp_roundrobin  # noqa: E402
from kafka.coordinator.assignors.abstract import RebalanceProtocol as KpProtocol  # noqa: E402
from kafka.coordinator.assignors.range import RangePartitionAssignor  # noqa: E402
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor  # noqa: E402
from kafka.coordinator.assignors.sticky import partition_movements  # noqa: E402
from kafka.coordinator.assignors.sticky import sticky_assignor as kp_sticky  # noqa: E402
from kafka.coordinator.consumer import ConsumerCoordinator  # noqa: E402
from kafka.errors import KafkaConfigurationError  # noqa: E402
from kafka.protocol.consumer import JoinGroupResponse  # noqa: E402
from kafka.protocol.consumer.metadata import (  # noqa: E402
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka.structs import TopicPartition as KafkaTopicPartition  # noqa: E402

JoinMember = JoinGroupResponse.JoinGroupResponseMember
KpCoop = kp_cooperative.CooperativeStickyAssignor


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


# --- cooperative-sticky ---


def cooperative_subscription(m: Member) -> Any:
    """What kafka-python's leader decodes of `m`'s JoinGroup metadata. A kafka-python member
    sends its assignor's version 1 subscription: its last assignment as owned partitions and
    no generation. A member that reports a generation sends version 2 (a Java or librdkafka
    member in a group that a kafka-python member leads)."""
    owned = sorted(set(m.owned))
    if m.generation is None:
        sub = member_assignor(m).metadata(set(m.topics))
    else:
        by_topic: dict[str, list[int]] = defaultdict(list)
        for t, p in owned:
            by_topic[t].append(p)
        sub = ConsumerProtocolSubscription(
            version=2,
            topics=sorted(m.topics),
            user_data=b"",
            owned_partitions=[
                ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=ps)
                for t, ps in by_topic.items()
            ],
            generation_id=m.generation,
        )
    return ConsumerProtocolSubscription.decode(sub.encode())


def member_assignor(m: Member) -> Any:
    """A kafka-python member's `CooperativeStickyAssignor`, last assigned what `m` owns."""
    assignor = KpCoop()
    if m.owned:
        assignor.member_assignment = [KafkaTopicPartition(t, p) for t, p in sorted(set(m.owned))]
    return assignor


def kafka_python_cooperative_leader(spec: GroupSpec, subscriptions: dict[str, Any]) -> Any:
    members = [
        JoinMember(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            metadata=subscriptions[m.member_id],
        )
        for m in spec.members
    ]
    return KpCoop().assign(FakeCluster(spec), members)


def kafka_python_cooperative(spec: GroupSpec) -> Assignment | str:
    """One round: what kafka-python's leader assigns, or the name of what it raises."""
    subscriptions = {m.member_id: cooperative_subscription(m) for m in spec.members}
    try:
        result = kafka_python_cooperative_leader(spec, subscriptions)
    except Exception as exc:
        return type(exc).__name__
    return {
        member_id: sorted((tp.topic, tp.partition) for tp in a.partitions())
        for member_id, a in result.items()
    }


def kafka_python_cooperative_rounds(spec: GroupSpec, cap: int = 16) -> list[Assignment] | str:
    """The whole rebalance of a kafka-python group: what the members hold after each round
    (a round whose holdings repeat the round before's not listed), or the name of what the
    leader raises, or "spins" when members still rejoin after `cap` rounds.

    Each member is kafka-python's own: a `SubscriptionState` holding what it owns of the
    topics it subscribes to (what `_on_join_prepare_async` leaves it), and its assignor,
    whose `metadata` is its next subscription. It takes an assignment as
    `_on_join_complete_async` does: `assign_from_subscribed` (which rejects an assignment
    with a partition of a topic it does not subscribe to), then `on_assignment`; it rejoins
    when it was rejected or revoked something."""
    states: dict[str, SubscriptionState] = {}
    assignors: dict[str, Any] = {}
    subscriptions: dict[str, Any] = {}
    for m in spec.members:
        state = SubscriptionState()
        state.subscribe(topics=sorted(m.topics))
        state.assign_from_subscribed(
            sorted(KafkaTopicPartition(t, p) for t, p in set(m.owned) if t in m.topics)
        )
        states[m.member_id] = state
        assignors[m.member_id] = member_assignor(m)
        subscriptions[m.member_id] = cooperative_subscription(m)
    history: list[Assignment] = []
    for generation in range(1, cap + 1):
        try:
            result = kafka_python_cooperative_leader(spec, subscriptions)
        except Exception as exc:
            return type(exc).__name__
        rejoin = False
        for m in spec.members:
            state, assignor = states[m.member_id], assignors[m.member_id]
            assignment = ConsumerProtocolAssignment.decode(result[m.member_id].encode())
            new = set(assignment.partitions())
            owned = set(state.assigned_partitions())
            try:
                state.assign_from_subscribed(sorted(new))
            except ValueError:
                rejoin = True
            else:
                assignor.on_assignment(assignment, generation)
                rejoin = rejoin or bool(owned - new)
            metadata = assignor.metadata(set(m.topics))
            subscriptions[m.member_id] = ConsumerProtocolSubscription.decode(metadata.encode())
        held = {
            m.member_id: sorted(
                (tp.topic, tp.partition)
                for tp in states[m.member_id].assigned_partitions()
                if tp.partition < spec.partition_count(tp.topic)
            )
            for m in spec.members
        }
        if not history or held != history[-1]:
            history.append(held)
        if not rejoin:
            return history
    return "spins"


def random_cooperative_group(rng: random.Random, kind: str) -> GroupSpec:
    """`random_group`, owning as `kind` says: "fresh" (nothing), "kafka-python" (what
    kafka-python members report: no generation; the same partition claimed twice, by a
    member that lost its membership, or of a topic a member left), "generations" (members
    that report generations, 0 and ties included, next to ones that report none; now and
    then a partition that no longer exists)."""
    spec = random_group(rng, kind != "fresh")
    if kind == "fresh":
        return spec
    members = []
    for m in spec.members:
        owned = m.owned
        if kind == "kafka-python":
            generation = None
        else:
            generation = rng.choice([None, None, 0, 1, 2, 2, 3])
            if owned and rng.random() < 0.1:
                owned = (*owned, (owned[0][0], 99))
        members.append(m.owning(owned, generation) if owned or generation is not None else m)
    return GroupSpec(spec.group_id, tuple(members), spec.topics)


COOPERATIVE = KafkaPythonCooperativeStickyAssignor()


def subscribed_partitions(spec: GroupSpec) -> set[TopicPartition]:
    return {(t, p) for m in spec.members for t in m.topics for p in range(spec.partition_count(t))}


@pytest.mark.parametrize("kind", ["fresh", "kafka-python", "generations"])
def test_cooperative_sticky_equals_kafka_python_on_random_groups(kind: str) -> None:
    rng = random.Random(f"cooperative-sticky/{kind}")
    outcomes: Counter[str] = Counter()
    for _ in range(400):
        spec = random_cooperative_group(rng, kind)
        expected = kafka_python_cooperative(spec)
        got = variant("cooperative-sticky", spec)
        if isinstance(expected, str):
            assert isinstance(got, str), (spec, expected, got)
            assert got.startswith("raises"), (spec, expected, got)
            assert f" {expected}" in got, (spec, expected, got)
            with pytest.raises(ClientAssignorFailure, match=f" {expected}"):
                COOPERATIVE.rebalance(spec)
            outcomes[expected] += 1
            continue
        assert got == expected, spec
        rounds = kafka_python_cooperative_rounds(spec)
        assert isinstance(rounds, list), (spec, rounds)
        rebalance = COOPERATIVE.rebalance(spec)
        assert rebalance.assignment == rounds[-1], spec
        assert rebalance.rounds == len(rounds), spec
        assert rebalance.received_round == received_rounds(rounds), spec
        outcomes["ok"] += 1
        outcomes[f"rounds={len(rounds)}"] += 1
        if any(t not in m.topics for m in spec.members for t, _ in got[m.member_id]):
            outcomes["rejected"] += 1
        subscribed = subscribed_partitions(spec)
        if subscribed - {tp for tps in rounds[-1].values() for tp in tps}:
            outcomes["stranded"] += 1
        java = CooperativeStickyAssignor().rebalance(spec)
        assert subscribed == {tp for tps in java.assignment.values() for tp in tps}, spec
        if {m: sorted(t) for m, t in java.assignment.items()} != rebalance.assignment:
            outcomes["settles unlike Java"] += 1
        if kind == "fresh":
            assert {m: sorted(t) for m, t in java.assignment.items()} == got, spec
            assert rebalance.rounds == java.rounds == 1, spec
    assert outcomes["ok"] > 350, outcomes
    if kind != "fresh":
        assert outcomes["rounds=2"] > 100, outcomes
        assert outcomes["settles unlike Java"] > 100, outcomes
    if kind == "kafka-python":
        # no generations: kafka-python's executor never moves a partition back to an older
        # claimant, the one move that can fail or go to a member not subscribed to it
        assert outcomes["ok"] == 400, outcomes
        assert outcomes["rejected"] == 0, outcomes
        assert outcomes["stranded"] > 0, outcomes
    if kind == "generations":
        # a member given a partition of a topic it left (moved back to it as its previous
        # owner) rejects its assignment; the executor's KeyError is rarer (a test below)
        assert outcomes["rejected"] > 0, outcomes


def test_cooperative_sticky_members_send_no_generation() -> None:
    # kafka-python's own members: version 1, owned partitions, no generation
    assignor = KpCoop()
    assignor.member_assignment = [KafkaTopicPartition("t", 1), KafkaTopicPartition("t", 0)]
    sent = ConsumerProtocolSubscription.decode(assignor.metadata({"t"}).encode())
    assert sent.version == 1
    assert sent.generation_id == -1
    assert KpCoop.parse_member_metadata(sent).partitions == [
        KafkaTopicPartition("t", 0),
        KafkaTopicPartition("t", 1),
    ]


def test_cooperative_sticky_runs_only_the_cooperative_protocol() -> None:
    assert KafkaPythonCooperativeStickyAssignor.supported_protocols == COOPERATIVE_ONLY
    assert KpCoop().supported_protocols() == [KpProtocol.COOPERATIVE]
    assert CooperativeStickyAssignor.supported_protocols == EAGER_AND_COOPERATIVE
    # a kafka-python consumer refuses cooperative-sticky next to an eager assignor, where a
    # Java consumer runs both eagerly
    consumer = types.SimpleNamespace(
        _assignors={"cooperative-sticky": KpCoop(), "range": RangePartitionAssignor()}
    )
    with pytest.raises(KafkaConfigurationError, match="do not support a common"):
        ConsumerCoordinator._validate_rebalance_protocol(consumer)


def test_cooperative_sticky_fresh_group_is_java() -> None:
    spec = GroupSpec("g", (Member("c1", frozenset(T1T2)), Member("c2", frozenset(T1T2))), T1T2)
    got = COOPERATIVE.rebalance(spec)
    assert got.assignment == kafka_python_cooperative(spec)
    assert tps(got.assignment) == {"c1": ["t1-0", "t1-2", "t2-1"], "c2": ["t1-1", "t2-0", "t2-2"]}
    java = CooperativeStickyAssignor().rebalance(spec)
    assert {m: sorted(t) for m, t in java.assignment.items()} == got.assignment
    assert got.rounds == java.rounds == 1


def test_cooperative_sticky_rebalance_differs_from_java() -> None:
    # sticky@kafka-python's example: the same target, reached in two rounds
    topics = {"t1": TopicMetadata("t1", 3), "t2": TopicMetadata("t2", 4)}
    subs = frozenset(topics)
    spec = GroupSpec(
        "g",
        (
            Member("c1", subs, owned=(("t1", 0), ("t1", 2), ("t2", 1), ("t2", 3))),
            Member("c2", subs, owned=(("t1", 1), ("t2", 0), ("t2", 2))),
            Member("c3", subs),
            Member("c4", subs),
        ),
        topics,
    )
    first = COOPERATIVE.assign(spec)
    assert first == kafka_python_cooperative(spec)
    assert tps(first) == {"c1": ["t1-0", "t1-2"], "c2": ["t1-1", "t2-0"], "c3": [], "c4": []}
    got = COOPERATIVE.rebalance(spec)
    assert [got.assignment] == kafka_python_cooperative_rounds(spec)[-1:]
    assert tps(got.assignment) == {
        "c1": ["t1-0", "t1-2"],
        "c2": ["t1-1", "t2-0"],
        "c3": ["t2-1", "t2-3"],
        "c4": ["t2-2"],
    }
    assert got.rounds == 2
    java = CooperativeStickyAssignor().rebalance(spec)
    assert tps(java.assignment) == {
        "c1": ["t1-0", "t2-1"],
        "c2": ["t1-1", "t2-0"],
        "c3": ["t1-2", "t2-3"],
        "c4": ["t2-2"],
    }


AB = {"a": TopicMetadata("a", 1), "b": TopicMetadata("b", 1)}


def test_cooperative_sticky_gives_a_partition_claimed_twice_to_its_last_claimant_at_once() -> None:
    # c1 and c2 both report a-0 (no generation: kafka-python members; one of them lost its
    # membership and still reports its last assignment). The executor keeps it with c1, the
    # first claimant, then moves it to c2; the cooperative step sees c2, the last claimant,
    # as its owner: c2 gets it in the first round while c1 still holds it.
    spec = GroupSpec(
        "g",
        (
            Member("c1", frozenset(AB), owned=(("a", 0),)),
            Member("c2", frozenset({"a"}), owned=(("a", 0),)),
        ),
        AB,
    )
    assert COOPERATIVE.assign(spec) == kafka_python_cooperative(spec)
    assert tps(COOPERATIVE.assign(spec)) == {"c1": ["b-0"], "c2": ["a-0"]}
    got = COOPERATIVE.rebalance(spec)
    assert [got.assignment] == kafka_python_cooperative_rounds(spec)
    assert got.rounds == 1
    # Java invalidates a partition claimed twice at one generation and withholds it a round
    assert tps(CooperativeStickyAssignor().assign(spec)) == {"c1": ["b-0"], "c2": []}
    assert CooperativeStickyAssignor().rebalance(spec).rounds == 2


def test_cooperative_sticky_gives_a_stale_claimant_its_partition_at_once() -> None:
    # c1 owns t-0, t-1 at generation 2; c2 still reports t-0 from generation 1. The executor
    # moves t-0 back to c2, its previous owner; the cooperative step takes c2, the last
    # claimant, for its owner, whatever the generations: c2 consumes t-0 at once.
    topics = {"t": TopicMetadata("t", 2)}
    subs = frozenset(topics)
    spec = GroupSpec(
        "g",
        (
            Member("c1", subs, owned=(("t", 0), ("t", 1)), generation=2),
            Member("c2", subs, owned=(("t", 0),), generation=1),
        ),
        topics,
    )
    assert COOPERATIVE.assign(spec) == kafka_python_cooperative(spec)
    got = COOPERATIVE.rebalance(spec)
    assert [got.assignment] == kafka_python_cooperative_rounds(spec)
    assert tps(got.assignment) == {"c1": ["t-1"], "c2": ["t-0"]}
    assert got.rounds == 1
    java = CooperativeStickyAssignor()
    assert tps(java.assign(spec)) == {"c1": ["t-0"], "c2": []}
    assert tps(java.rebalance(spec).assignment) == {"c1": ["t-0"], "c2": ["t-1"]}


def test_cooperative_sticky_leaves_a_topics_partitions_a_member_left_unassigned() -> None:
    # c2 left topic a and still reports a-1 (a kafka-python member revokes such partitions
    # before it joins, but its assignor's last assignment still lists them). The leader
    # withholds a-1 from c1 as c2's; nobody lost a partition it subscribes to, so nobody
    # rejoins: the group settles with a-1 unassigned.
    topics = {"a": TopicMetadata("a", 2), "b": TopicMetadata("b", 1)}
    spec = GroupSpec(
        "g",
        (
            Member("c1", frozenset({"a"}), owned=(("a", 0),)),
            Member("c2", frozenset({"b"}), owned=(("a", 1),)),
        ),
        topics,
    )
    got = COOPERATIVE.rebalance(spec)
    assert [got.assignment] == kafka_python_cooperative_rounds(spec)
    assert tps(got.assignment) == {"c1": ["a-0"], "c2": ["b-0"]}
    assert got.rounds == 1
    java = CooperativeStickyAssignor().rebalance(spec)
    assert tps(java.assignment) == {"c1": ["a-0", "a-1"], "c2": ["b-0"]}


def test_cooperative_sticky_assigns_a_partition_to_a_member_not_subscribed_to_it() -> None:
    # c3 left topic a and reports a-0 from generation 1, c1 owns it at generation 2: the
    # executor moves a-0 back to c3, its previous owner, without asking whether c3 may take
    # it. c3 rejects its whole assignment (`assign_from_subscribed` raises ValueError) and
    # rejoins; in the next round it reports a-0 still, and a-0 is withheld from c2 as c3's:
    # the group settles with a-0 unassigned.
    spec = GroupSpec(
        "g",
        (
            Member("c1", frozenset(AB), owned=(("a", 0), ("b", 0)), generation=2),
            Member("c2", frozenset(AB)),
            Member("c3", frozenset({"b"}), owned=(("a", 0),), generation=1),
        ),
        AB,
    )
    first = COOPERATIVE.assign(spec)
    assert first == kafka_python_cooperative(spec)
    assert tps(first) == {"c1": ["b-0"], "c2": [], "c3": ["a-0"]}
    got = COOPERATIVE.rebalance(spec)
    assert [got.assignment] == kafka_python_cooperative_rounds(spec)
    assert tps(got.assignment) == {"c1": ["b-0"], "c2": [], "c3": []}
    java = CooperativeStickyAssignor().rebalance(spec)
    assert tps(java.assignment) == {"c1": ["b-0"], "c2": ["a-0"], "c3": []}


def test_cooperative_sticky_raises_where_a_previous_owner_cannot_take_its_partition() -> None:
    # b-0's owner is c2 (generation 1), its previous owner c1 (no generation), which left
    # topic b and holds all it can get (a-0): the executor moves b-0 back to c1, which is not
    # in its sorted set of consumers, and raises KeyError.
    topics = {"a": TopicMetadata("a", 1), "b": TopicMetadata("b", 2)}
    spec = GroupSpec(
        "g",
        (
            Member("c1", frozenset({"a"}), owned=(("b", 0),)),
            Member("c2", frozenset({"b"}), owned=(("b", 0), ("b", 1)), generation=1),
            Member("c3", frozenset({"b"})),
        ),
        topics,
    )
    assert kafka_python_cooperative(spec) == "KeyError"
    with pytest.raises(ClientAssignorFailure, match=r"raises: SortedSet\.remove raises KeyError"):
        COOPERATIVE.rebalance(spec)
    catalog = StrategyCatalog.build(["cooperative-sticky", "cooperative-sticky@kafka-python"])
    plan = plan_group(spec, catalog, False)
    assert [p.strategy for p in plan.plans] == ["cooperative-sticky"]
    [problem] = plan.problems
    assert (problem.severity, problem.reason, problem.strategy) == (
        WARNING,
        Reason.CLIENT_ASSIGNOR_FAILED,
        "cooperative-sticky@kafka-python",
    )
    assert "kafka-python's cooperative-sticky assignor raises: SortedSet" in problem.detail


# --- names and the planner ---


def test_names_resolve() -> None:
    assert client_variant_names() == [
        "range@kafka-python",
        "roundrobin@kafka-python",
        "sticky@kafka-python",
        "cooperative-sticky@kafka-python",
        "range@librdkafka",
        "roundrobin@librdkafka",
        "cooperative-sticky@librdkafka",
    ]
    assert type(get_assignor("range@kafka-python")) is KafkaPythonRangeAssignor
    assert (
        type(
            get_assignor("org.apache.kafka.clients.consumer.CooperativeStickyAssignor@kafka-python")
        )
        is KafkaPythonCooperativeStickyAssignor
    )
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
        ("uniform@kafka-python", r"has no kafka-python variant.*range@kafka-python"),
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
