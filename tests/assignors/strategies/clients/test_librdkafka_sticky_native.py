"""`cooperative-sticky@librdkafka`'s `assign_cb` against librdkafka 2.16.0's own, the one
confluent-kafka bundles, called at its symbols (`helpers.librdkafka_native`): on random
groups the same partitions, in the same list order, and a crash wherever librdkafka's leader
dies (its process killed by SIGSEGV or SIGABRT)."""

from __future__ import annotations

import json
import random
import signal
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.librdkafka_native import NativeSticky, available

from assignors.strategies.clients import ClientAssignorFailure
from assignors.strategies.clients.librdkafka_sticky import RdMember, RdTopic, assign_cb

why_not = available()
pytestmark = pytest.mark.skipif(why_not is not None, reason=why_not or "")

RACKS = ["a", "b", "c", "d"]
CRASHES = {-signal.SIGSEGV, -signal.SIGABRT}


@pytest.fixture(scope="module")
def native() -> Iterator[NativeSticky]:
    child = NativeSticky()
    yield child
    child.close()


def _topics(case: dict[str, Any]) -> list[RdTopic]:
    """The eligible topics as the native case's mock metadata places their replicas."""
    replication = case.get("replication", 0)
    broker_racks = case.get("broker_racks", 0)
    racks = case.get("racks", [])
    brokers = replication * broker_racks if broker_racks > 0 else replication
    wanted = {t for m in case["members"] for t in m["topics"]}
    out = []
    first = 0
    for name, n in case["topics"]:
        on_racks: list[frozenset[str]] = []
        for j in range(n):
            on = {(j + k + first) % brokers for k in range(replication)}
            on_racks.append(
                frozenset(racks[b % broker_racks] for b in on) if broker_racks else frozenset()
            )
        if brokers:
            first = (first + n) % brokers
        if name in wanted and n:
            out.append(RdTopic(name, n, tuple(on_racks)))
    return out


def ported(case: dict[str, Any]) -> dict[str, list[tuple[str, int]]] | None:
    """The port's `assign_cb` on a native case; None where it says librdkafka crashes."""
    members = [
        RdMember(
            m["id"],
            frozenset(m["topics"]),
            [(t, p) for t, p in m.get("owned") or []],
            m.get("generation", 1),
            m.get("rack"),
        )
        for m in case["members"]
    ]
    try:
        return assign_cb(members, _topics(case))
    except ClientAssignorFailure:
        return None


def random_case(rng: random.Random) -> dict[str, Any]:
    """Members with random subscriptions (sometimes all equal), owning random partitions of
    their topics (now and then another topic's, or one claimed twice) at random generations;
    half of the groups on racks."""
    topics = [[f"t{i}", rng.randint(1, 10)] for i in range(rng.randint(1, 5))]
    names = [t for t, _ in topics]
    equal = rng.random() < 0.3
    common = rng.sample(names, rng.randint(1, len(names)))
    ids = list(dict.fromkeys(f"m{rng.randint(0, 99):02d}" for _ in range(rng.randint(1, 8))))
    generations = rng.choice([[1], [1], [-1, 1, 2, 3]])
    members: list[dict[str, Any]] = [
        {
            "id": m,
            "topics": common if equal else rng.sample(names, rng.randint(1, len(names))),
            "owned": [],
            "generation": rng.choice(generations),
        }
        for m in ids
    ]
    for t, n in topics:
        for p in range(n):
            if rng.random() < 0.7:
                claimants = [m for m in members if t in m["topics"] or rng.random() < 0.05]
                twice = 2 if rng.random() < 0.05 else 1
                for m in rng.sample(claimants, min(twice, len(claimants))):
                    m["owned"].append([t, p])
    for m in members:
        if rng.random() < 0.3:
            rng.shuffle(m["owned"])
    case: dict[str, Any] = {"topics": topics, "members": members}
    if rng.random() < 0.5:
        broker_racks = rng.randint(1, 4)
        case.update(
            replication=rng.randint(1, 3), broker_racks=broker_racks, racks=RACKS[:broker_racks]
        )
        for m in members:
            m["rack"] = rng.choice([*RACKS[: broker_racks + 1], None])
    return case


def test_the_ports_assign_cb_is_librdkafkas(native: NativeSticky) -> None:
    rng = random.Random(20160)
    crashed = 0
    for _ in range(2000):
        case = random_case(rng)
        got = native.run(case)
        mine = ported(case)
        if isinstance(got, int):
            assert got in CRASHES, got
            assert mine is None, json.dumps(case)
            crashed += 1
        else:
            assert mine == got, json.dumps(case)
    assert 0 < crashed < 200  # rare, and tried


def test_the_three_member_crash(native: NativeSticky) -> None:
    # c1 owns all of t1 (12), c2 all of t0 (2), c3 joins subscribing to both: seen live too
    case = {
        "topics": [["t0", 2], ["t1", 12]],
        "members": [
            {"id": "c1", "topics": ["t1"], "owned": [["t1", p] for p in range(12)]},
            {"id": "c2", "topics": ["t0"], "owned": [["t0", 0], ["t0", 1]]},
            {"id": "c3", "topics": ["t0", "t1"], "generation": -1},
        ],
    }
    assert native.run(case) in CRASHES
    assert ported(case) is None
