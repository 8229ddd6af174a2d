"""Live groups of real clients on a noida-db broker on 127.0.0.1, exported with the exporter
(the real entry point), each checked against the one-group planner: librdkafka consumers with
static members under range and under roundrobin, kafka-python consumers under sticky (their
`elected` plan, with the leader's library's variant, is exactly what they hold), a group
caught mid-rebalance, and a kafka-python group whose leader runs a custom assignor under the
name `range` with an odd result (its plan differs from what it holds).

All groups share one broker and form at once; a kafka-python member that stops polling keeps
its group waiting in PreparingRebalance when another member joins (its rebalance timeout is
long, its session short and kept alive by its heartbeat thread).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.jobs.export import live_truth as lt
from tests.jobs.export.brokers import have, noida, run_module

pytestmark = [
    pytest.mark.live,
    pytest.mark.slow,
    pytest.mark.skipif(
        not (have("confluent_kafka") and have("kafka")),
        reason="confluent-kafka and kafka-python are needed (pip install -e '.[dev,export]')",
    ),
]

TOPICS = {"lt-orders": 5, "lt-payments": 3, "lt-audit": 2}


def odd_range() -> Any:
    """A custom assignor registered as `range` (as a fork of a client's range would be): the
    member with the highest member id gets every partition, the others nothing, and each
    assignment carries user data. Built on kafka-python's range (its name, its protocols)."""
    from kafka.coordinator.assignors.abstract import ConsumerProtocolAssignment
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    class OddRange(RangePartitionAssignor):  # type: ignore[misc]
        @classmethod
        def assign(cls, cluster: Any, members: Any) -> dict[str, Any]:
            topics = sorted({t for m in members for t in m.metadata.topics})
            everything = [(t, sorted(cluster.partitions_for_topic(t) or ())) for t in topics]
            last = max(m.member_id for m in members)
            return {
                m.member_id: ConsumerProtocolAssignment(
                    cls.version, everything if m.member_id == last else [], b"odd-assignor-v1"
                )
                for m in members
            }

    return OddRange


ORDERS, PAYMENTS, AUDIT = TOPICS
GROUPS = [
    # static members whose instance ids sort differently from their join order
    lt.LiveGroup(
        "lt-rd-range-static",
        "librdkafka",
        "range",
        (ORDERS, PAYMENTS),
        [lt.Member("i3"), lt.Member("i1"), lt.Member("i2")],
        lt.MATCHES_ELECTED,
    ),
    lt.LiveGroup(
        "lt-rd-roundrobin-static",
        "librdkafka",
        "roundrobin",
        (ORDERS, PAYMENTS, AUDIT),
        [lt.Member("z-static"), lt.Member("a-static", (ORDERS, AUDIT))],
        lt.MATCHES_ELECTED,
    ),
    lt.LiveGroup(
        "lt-kp-sticky",
        "kafka-python",
        "sticky",
        (ORDERS, PAYMENTS),
        [lt.Member(), lt.Member(), lt.Member()],
        lt.MATCHES_ELECTED,
    ),
    # A client.id of the team's: the sticky user data's layout names the library for the
    # members that owned partitions when they last joined (the third joins later, empty).
    lt.LiveGroup(
        "lt-kp-sticky-named",
        "kafka-python",
        "sticky",
        (ORDERS, AUDIT),
        [lt.Member(), lt.Member(), lt.Member()],
        lt.MATCHES_ELECTED,
        client_id="orders-app",
    ),
    lt.LiveGroup(
        "lt-kp-custom",
        "kafka-python",
        "range",
        (ORDERS, AUDIT),
        [lt.Member(), lt.Member()],
        lt.UNEXPLAINED,
        assignor=odd_range,
    ),
]
# Two members settle, then one stops polling and the third joins: the group waits for the
# held member to rejoin (up to its rebalance timeout) in PreparingRebalance.
REBALANCING = lt.LiveGroup(
    "lt-kp-rebalancing",
    "kafka-python",
    "range",
    (PAYMENTS,),
    [lt.Member(), lt.Member(), lt.Member()],
    lt.REBALANCING,
)
HOLD_MS = 120000


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from confluent_kafka.admin import AdminClient, NewTopic

    tmp = tmp_path_factory.mktemp("live-truth")
    everyone = [*GROUPS, REBALANCING]
    with noida(tmp) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for f in admin.create_topics([NewTopic(t, n, 1) for t, n in TOPICS.items()]).values():
            f.result(30)
        try:
            named = next(g for g in GROUPS if g.client_id)
            for g in GROUPS:
                lt.start(broker.bootstrap, g, 2 if g is named else None)
            lt.start(broker.bootstrap, REBALANCING, 2, max_poll_interval_ms=HOLD_MS)

            def complete(g: lt.LiveGroup, held: lt.Held) -> bool:
                if g.assignor is odd_range:  # everything to one member, the other none
                    flat = sorted(tp for tps in held.values() for tp in tps)
                    joined = len(held) == len(g.consumers) and all(held)
                    return joined and flat == sorted(g.wanted(TOPICS))
                return lt.whole(g, held, TOPICS)

            lt.settle(everyone, TOPICS, complete)
            lt.start(broker.bootstrap, named)
            lt.settle([named], TOPICS)
            held = {g.group_id: lt.holdings(g) for g in GROUPS}
            REBALANCING.consumers[0].hold()
            lt.start(broker.bootstrap, REBALANCING, max_poll_interval_ms=HOLD_MS)
            lt.wait_state(broker.bootstrap, REBALANCING.group_id, "PreparingRebalance")
            snap = tmp / "snapshot"
            result = run_module(
                "jobs.export_snapshot",
                "--bootstrap-server",
                broker.bootstrap,
                "--output",
                str(snap),
                "--groups",
                "lt-.*",
                "--timeout-s",
                "10",
            )
            yield {"snap": snap, "held": held, "export": result}
        finally:
            lt.stop(everyone)


def test_export_names_the_rebalancing_group(live: dict[str, Any]) -> None:
    result = live["export"]
    assert result.returncode in (0, 3), result.stderr[-2000:]
    meta = json.loads((live["snap"] / "_snapshot.json").read_text())
    stable = sorted(g.group_id for g in GROUPS)
    assert sorted(set(meta["groups_exported"]) - {REBALANCING.group_id}) == stable
    # Exported with its state, or (a coordinator that keeps a rebalancing group's
    # subscriptions back, as Kafka's does) skipped naming it.
    rebalancing = meta["groups_rebalancing"].get(REBALANCING.group_id)
    skipped = meta["groups_skipped"].get(REBALANCING.group_id, "")
    assert rebalancing == "PreparingRebalance" or "PreparingRebalance" in skipped, meta


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: g.group_id)
def test_stable_group_against_its_plan(live: dict[str, Any], group: lt.LiveGroup) -> None:
    lt.check_group(live["snap"], group, live["held"][group.group_id])


def test_the_rebalancing_group(live: dict[str, Any]) -> None:
    if not (live["snap"] / "subscriptions").exists():
        pytest.fail(live["export"].stderr[-2000:])
    rows = lt.members_of(live["snap"], REBALANCING.group_id)
    if rows.empty:
        pytest.skip("the broker describes a rebalancing group without its members' metadata")
    lt.check_group(live["snap"], REBALANCING, {})


def test_assignment_user_data(live: dict[str, Any]) -> None:
    for g in GROUPS:
        rows = lt.members_of(live["snap"], g.group_id)
        # Only the custom assignor writes user data into its assignments.
        assert set(rows.assignment_user_data) == {g.group_id == "lt-kp-custom"}, g.group_id


def test_librdkafka_static_members_follow_javas_order(live: dict[str, Any]) -> None:
    """With only static members, librdkafka's leader orders them by group.instance.id, as
    Java's does: the unqualified (Java) plan is the live assignment too."""
    snap = live["snap"]
    for g in (g for g in GROUPS if g.library == "librdkafka"):
        held = live["held"][g.group_id]
        java = lt.plan_of(snap, g.group_id, g.strategy)
        assert {m: java.get(m, set()) for m in held} == held, g.group_id


def test_the_layout_names_kafka_python_behind_a_chosen_client_id(live: dict[str, Any]) -> None:
    rows = lt.members_of(live["snap"], "lt-kp-sticky-named").set_index("member_id")
    assert set(rows.client_id) == {"orders-app"}
    # The two first members rejoined owning partitions: their sticky user data is
    # kafka-python's layout, with the generation of what they owned. The third owned nothing
    # when it joined (unless the group took another round after it).
    named = rows[rows.client_library.notna()]
    assert len(named) >= 2
    assert set(named.client_library) == {"kafka-python"}
    assert (named.generation >= 1).all()
    assert rows[rows.client_library.isna()].generation.isna().all()


def test_the_odd_assignors_result_is_what_the_members_hold(live: dict[str, Any]) -> None:
    """One member holds everything: a plan that only matched shares would still differ."""
    held = live["held"]["lt-kp-custom"]
    assert sorted(map(len, held.values())) == [0, 7]
