"""cooperative-sticky@librdkafka against librdkafka's leader over longer stories: more joins,
a member leaving, static members, members on racks (a mock cluster of its own, brokers on
racks), and a leader that crashes. Real confluent-kafka consumers on librdkafka's mock
cluster (`librdkafka_live`); each step of a story settles and is compared with the plan of
the group as it was before the step."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.librdkafka_native import FREED_MEMORY_POISONED

from assignors.catalog.registry import get_assignor
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.strategies.clients import ClientAssignorFailure
from tests.jobs.export.librdkafka_live import (
    EQUAL,
    INITIAL_REBALANCE_DELAY_MS,
    TOPICS,
    Spec,
    Story,
    _story_differs,
    _told,
    mock_cluster,
)
from tests.jobs.export.mock_cluster import MockCluster

pytestmark = [pytest.mark.live, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster() -> Iterator[MockCluster]:
    yield from mock_cluster()


STORIES: dict[str, Story] = {
    "four-joins": [Spec(EQUAL)] * 4,
    "joins-then-a-leave": [Spec(EQUAL), Spec(EQUAL), Spec(EQUAL), 1],
    "static-joins": [Spec(EQUAL, "i3"), Spec(EQUAL, "i1"), Spec(EQUAL, "i2")],
    "unequal-joins-then-a-leave": [
        Spec(("ta", "tb")),
        Spec(EQUAL),
        Spec(("tb", "tc")),
        Spec(("ta",)),
        0,
    ],
    "mixed-unequal-joins": [Spec(("ta",), "z"), Spec(("ta", "tb")), Spec(EQUAL, "a")],
}
# a cluster of its own: brokers on racks r1..r3, each partition on one broker
RACK_TOPICS = {"ra": 6, "rb": 4}
BROKER_RACKS = {1: "r1", 2: "r2", 3: "r3"}
RACKED = ("ra", "rb")
RACK_STORIES: dict[str, Story] = {
    "racks": [Spec(RACKED, rack="r1"), Spec(RACKED, rack="r2"), Spec(RACKED, rack="r3")],
    # A member without client.rack (librdkafka sends the empty string) is not a live story:
    # joining a member on r1 that owns everything, it settles over four cooperative rounds,
    # and under load the rounds interleave with the members' rejoins otherwise (another
    # result, or none within the join timeout). The native differential test
    # (tests/assignors/strategies/clients/test_librdkafka_sticky_native.py) covers such members.
}


@pytest.fixture(scope="module")
def rack_cluster() -> Iterator[tuple[MockCluster, dict[str, TopicMetadata]]]:
    mock = MockCluster(3)
    mock.set_group_initial_rebalance_delay(INITIAL_REBALANCE_DELAY_MS)
    for broker, rack in BROKER_RACKS.items():
        mock.set_rack(broker, rack)
    meta = {}
    for topic, n in RACK_TOPICS.items():
        mock.create_topic(topic, n, 1)
        placed = mock.partitions(topic)
        racks = tuple(frozenset(BROKER_RACKS[b] for b in placed[p][1]) for p in range(n))
        meta[topic] = TopicMetadata(topic, n, racks)
    yield mock, meta
    mock.close()


@pytest.mark.stories
@pytest.mark.parametrize("story", sorted(STORIES))
def test_cooperative_sticky_story(cluster: MockCluster, story: str) -> None:
    topics = {t: TopicMetadata(t, n) for t, n in TOPICS.items()}
    differs = _story_differs(_told(cluster, STORIES[story], topics))
    assert not differs, differs


@pytest.mark.stories
@pytest.mark.parametrize("story", sorted(RACK_STORIES))
def test_cooperative_sticky_story_on_racks(
    rack_cluster: tuple[MockCluster, dict[str, TopicMetadata]], story: str
) -> None:
    mock, topics = rack_cluster
    differs = _story_differs(_told(mock, RACK_STORIES[story], topics))
    assert not differs, differs


# c1 owns all of t1 (12), c2 all of t0 (2), then c3 joins on both: librdkafka's leader (c1)
# reads a freed partition list. In a process of its own, since the crash takes the process with
# it, and with freed memory poisoned: a read after free is fatal only by what the allocator
# left there otherwise. A story: under load the leader has once run its assignor without
# dying (the main suite's test_librdkafka_sticky_native.py holds the crash at librdkafka's
# own assign_cb).
CRASHES = {-signal.SIGSEGV, -signal.SIGABRT}
CRASH_SCRIPT = """
import json, sys, time
import confluent_kafka as ck
from tests.jobs.export.mock_cluster import MockCluster
mock = MockCluster(3)
mock.set_group_initial_rebalance_delay(3000)
mock.create_topic("t0", 2, 1)
mock.create_topic("t1", 12, 1)
consumers = []
def join(topics):
    c = ck.Consumer({"bootstrap.servers": mock.bootstrap, "group.id": "crash",
                     "partition.assignment.strategy": "cooperative-sticky",
                     "enable.auto.commit": False, "session.timeout.ms": 6000,
                     "heartbeat.interval.ms": 500, "topic.metadata.refresh.interval.ms": 1000})
    c.subscribe(topics)
    consumers.append((c, topics))
def settle(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for c, _ in consumers:
            c.poll(0.05)
    print(json.dumps([[c.memberid(), t, sorted([p.topic, p.partition] for p in c.assignment())]
                      for c, t in consumers]), flush=True)
join(["t1"]); settle(12)
join(["t0"]); settle(12)
join(["t0", "t1"]); settle(20)
"""


@pytest.mark.stories
def test_cooperative_sticky_leader_crash() -> None:
    root = str(Path(__file__).resolve().parents[3])
    done = subprocess.run(
        [sys.executable, "-c", CRASH_SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        env=dict(os.environ, PYTHONPATH=root, **FREED_MEMORY_POISONED),
    )
    steps = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
    assert done.returncode in CRASHES, (done.returncode, steps, done.stderr[-2000:])
    assert len(steps) == 2, steps  # the two first members settled; the third join kills
    topics = {"t0": TopicMetadata("t0", 2), "t1": TopicMetadata("t1", 12)}
    before = [
        Member(m, frozenset(subscribed), owned=tuple((t, p) for t, p in held), generation=1)
        for m, subscribed, held in steps[-1]
    ]
    assert [len(m.owned) for m in before] == [12, 2]
    for joining in ("0", "0x" + "f" * 16):  # whichever way its member id sorts
        spec = GroupSpec("g", (*before, Member(joining, frozenset({"t0", "t1"}))), topics)
        with pytest.raises(ClientAssignorFailure):
            get_assignor("cooperative-sticky@librdkafka").rebalance(spec)
