"""Groups caught mid-rebalance: their members are known, their partitions are not settled, so
every movement figure computed from them would be wrong. Each member row carries its group's
state (`subscriptions.group_state`), and the rebalancing groups are named in the log and in
`_snapshot.json`."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jobs.cli import export as export_snapshot
from jobs.export.client import RawGroup, RawMember
from jobs.export.protocol import Assignment, Subscription, encode_assignment, encode_subscription
from jobs.export.snapshot import Options, Snapshot, _classify, collect
from tests.jobs.export import estate
from tests.jobs.export.brokers import Noida, have, noida
from tests.jobs.export.test_consumer_groups_export import FakeClient, answer

SUBSCRIPTION = encode_subscription(Subscription(1, ["rb-t"], None, []))
OWNS_BOTH = encode_assignment(Assignment(1, [("rb-t", [0, 1])]))


def rejoin(bootstrap: str, group_id: str) -> Any:
    """A second member's JoinGroup, left pending: the coordinator holds the answer until the
    first member rejoins, and the group stays in PreparingRebalance meanwhile. Returns the
    admin client that sent it (close it to give up)."""
    from kafka.admin import KafkaAdminClient
    from kafka.protocol.consumer.group import JoinGroupRequest

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)

    async def join() -> None:
        coordinator = await admin._find_coordinator_id(group_id)
        member_id = ""
        for _ in range(2):
            request = JoinGroupRequest(
                group_id=group_id,
                session_timeout_ms=60000,
                rebalance_timeout_ms=60000,
                member_id=member_id,
                group_instance_id=None,
                protocol_type="consumer",
                protocols=[
                    JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)
                ],
            )
            pending = admin._manager.send(request, node_id=coordinator, request_timeout_ms=120000)
            if member_id:
                return  # sent; its answer would come only when the rebalance completes
            first = await pending
            assert first.error_code == 79, first  # MEMBER_ID_REQUIRED: join with this id
            member_id = first.member_id

    admin._manager.run(join)
    return admin


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Noida]:
    if not (have("confluent_kafka") and have("kafka")):
        pytest.skip("confluent-kafka and kafka-python are needed (pip install -e '.[dev,export]')")
    with noida(tmp_path) as b:
        yield b


@pytest.mark.live
def test_a_group_mid_rebalance_is_exported_with_its_state_and_named(
    broker: Noida, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import time

    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic("rb-t", 2, 1)]).values():
        f.result(30)
    held = [
        estate.raw_member(broker.bootstrap, g, "consumer", "range", SUBSCRIPTION, OWNS_BOTH)
        for g in ("g-settled", "g-moving")
    ]
    try:
        held.append(rejoin(broker.bootstrap, "g-moving"))
        time.sleep(0.5)
        out = tmp_path / "snap"
        code = export_snapshot.main(
            ["--bootstrap-servers", broker.bootstrap, "--output", str(out), "--timeout-s", "10"]
        )
    finally:
        for h in held:
            h.close()
    assert code == 0, caplog.text  # exported: the state tells the planner what it can trust
    subs = pd.read_parquet(out / "subscriptions")
    states = subs.groupby("group_id")["group_state"].unique().map(list).to_dict()
    assert states == {"g-settled": ["Stable"], "g-moving": ["PreparingRebalance"]}
    assert len(subs[subs.group_id == "g-moving"]) == 2  # both members, joined and joining
    owned = pd.read_parquet(out / "current_assignment")
    assert set(owned.group_id) == {"g-settled"}  # mid-rebalance nobody owns anything
    meta = json.loads((out / "_snapshot.json").read_text())
    assert meta["groups_rebalancing"] == {"g-moving": "PreparingRebalance"}
    assert meta["groups_exported"] == ["g-moving", "g-settled"]
    warnings = [r.getMessage() for r in caplog.records if "rebalancing" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].startswith("1 group was rebalancing when the snapshot was taken:")
    assert "g-moving (PreparingRebalance)" in warnings[0]


def _group(gid: str, state: str, metadata: bytes, assignment: bytes) -> RawGroup:
    member = RawMember("m-1", None, "c", "/127.0.0.1", metadata, assignment)
    return RawGroup(gid, 0, state, "consumer", "range" if metadata else "", [member])


def test_every_member_row_carries_its_groups_state() -> None:
    snap = Snapshot()
    groups = {
        "a-stable": _group("a-stable", "Stable", SUBSCRIPTION, OWNS_BOTH),
        "b-completing": _group("b-completing", "CompletingRebalance", SUBSCRIPTION, b""),
    }
    assert _classify(groups, snap) == ["a-stable", "b-completing"]
    rows = snap.subscription_rows()
    assert [(r["group_id"], r["group_state"]) for r in rows] == [
        ("a-stable", "Stable"),
        ("b-completing", "CompletingRebalance"),
    ]
    assert snap.rebalancing() == {"b-completing": "CompletingRebalance"}


def test_a_rebalancing_group_described_without_subscriptions_is_skipped_naming_it() -> None:
    """Kafka describes a group that is not Stable without its members' metadata: nothing to
    decode, and no garbage either."""
    snap = Snapshot()
    groups = {"g": _group("g", "PreparingRebalance", b"", b"")}
    assert _classify(groups, snap) == []
    assert snap.skipped == {
        "g": "rebalancing (PreparingRebalance): the coordinator describes its members without"
        " their subscriptions until the rebalance completes"
    }


@pytest.mark.parametrize("state", ["Assigning", "Reconciling", "Stable"])
def test_kip848_group_state_is_written_and_rebalancing_named(state: str) -> None:
    reply = answer()
    reply = dataclasses.replace(
        reply, groups=[dataclasses.replace(g, group_state=state) for g in reply.groups]
    )
    snap = collect(FakeClient([reply]), Options())  # type: ignore[arg-type]
    rows = [r for r in snap.subscription_rows() if r["group_id"] == "payments"]
    assert len(rows) == 2
    assert {r["group_state"] for r in rows} == {state}
    assert snap.rebalancing() == ({} if state == "Stable" else {"payments": state})
