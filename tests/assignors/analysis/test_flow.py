"""The shared class graph and max-flow (assignors.analysis.flow): seeded properties."""

from __future__ import annotations

import random

import pytest

from assignors.analysis.flow import FlowNetwork, subscription_classes
from assignors.model import GroupSpec, Member, TopicMetadata


def _random_group(rng: random.Random) -> GroupSpec:
    topics = {
        f"t{i}": TopicMetadata(f"t{i}", rng.choice([0, 1, 3])) for i in range(rng.randint(0, 6))
    }
    names = [*topics, "absent"]
    members = tuple(
        Member(f"m{i}", frozenset(rng.sample(names, rng.randint(0, len(names)))))
        for i in range(rng.randint(0, 7))
    )
    return GroupSpec("g", members, topics)


@pytest.mark.parametrize("seed", range(200))
def test_classes_are_exactly_the_subscriber_and_subscription_sets(seed: int) -> None:
    spec = _random_group(random.Random(seed))
    sc = subscription_classes(spec)
    scope = set(spec.subscribed_topics())
    subscription = [m.topics & scope for m in spec.members]

    def subscribers(topic: str) -> frozenset[int]:
        return frozenset(i for i, s in enumerate(subscription) if topic in s)

    # Topic classes partition the topics in scope by subscriber set, numbered by first
    # appearance in `subscribed_topics` order.
    order = spec.subscribed_topics().index
    assert sorted(t for ts in sc.topics for t in ts) == sorted(scope)
    assert all(list(ts) == sorted(ts, key=order) for ts in sc.topics)
    assert [ts[0] for ts in sc.topics] == sorted((ts[0] for ts in sc.topics), key=order)
    keys = [{subscribers(t) for t in ts} for ts in sc.topics]
    assert all(len(k) == 1 for k in keys)
    assert len({next(iter(k)) for k in keys}) == len(sc.topics)
    # Member classes partition the members subscribed to something in scope, by subscription.
    assert sorted(i for ms in sc.members for i in ms) == [
        i for i, s in enumerate(subscription) if s
    ]
    assert all(len({subscription[i] for i in ms}) == 1 for ms in sc.members)
    assert len({subscription[ms[0]] for ms in sc.members}) == len(sc.members)
    # The edges: member class j subscribes to topic class c exactly when j is listed for c.
    for ts, js in zip(sc.topics, sc.subscribers, strict=True):
        assert subscribers(ts[0]) == frozenset(i for j in js for i in sc.members[j])
        assert list(js) == sorted(js)


def test_empty_group_has_no_classes() -> None:
    sc = subscription_classes(GroupSpec("g", (), {"t": TopicMetadata("t", 2)}))
    assert (sc.topics, sc.subscribers, sc.members) == ((), (), ())


def test_min_cut_side_after_a_short_flow() -> None:
    # source 0 -> 1 (cap 5) -> sink 2 (cap 2): the flow is 2 and only 0 and 1 stay reachable.
    net = FlowNetwork(3)
    net.add_edge(0, 1, 5)
    net.add_edge(1, 2, 2)
    assert net.max_flow(0, 2) == 2
    assert net.reachable(0) == {0, 1}
