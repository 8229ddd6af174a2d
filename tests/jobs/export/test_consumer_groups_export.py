"""KIP-848 consumer groups into the input tables, as docs/data-contract.md and docs/kafka4.md
define them (`group_protocol = consumer`, `topic_pattern` for a regex subscription, the
broker's assignor in `assignment_strategies`). No broker here serves ConsumerGroupDescribe
(noida-db and librdkafka's mock lack it), so the cluster is a fake at the client boundary
answering with the bytes Kafka's schema defines (decoded by the exporter's own decoder)."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any

from jobs.export.client import Broker, ClusterInfo, PartitionInfo, Stats
from jobs.export.protocol import (
    ConsumerGroup,
    ConsumerGroupDescribeResponse,
    TopicIdPartitions,
    decode_consumer_group_describe_response,
)
from jobs.export.snapshot import Options, collect
from tests.jobs.export.test_consumer_group_describe import AUDIT_ID, ORDERS_ID, response_bytes

EU_ID = "11111111-2222-3333-4444-555555555555"
GONE_ID = "99999999-9999-9999-9999-999999999999"


def cluster() -> ClusterInfo:
    def parts(n: int) -> list[PartitionInfo]:
        return [PartitionInfo(i, 1 + i % 2, [1, 2]) for i in range(n)]

    return ClusterInfo(
        "c1",
        1,
        {1: Broker(1, "h1", 9092, "az1"), 2: Broker(2, "h2", 9092, "az2")},
        {
            "orders": parts(3),
            "audit": parts(2),
            "orders-eu": parts(2),
            "__consumer_offsets": parts(1),
        },
        {"__consumer_offsets"},
        {ORDERS_ID: "orders", AUDIT_ID: "audit", EU_ID: "orders-eu"},
    )


class FakeClient:
    """The calls collect() makes, answered for one KIP-848 group ("payments") and one that
    is gone by the time it is described; `answers` are successive ConsumerGroupDescribe
    answers (a coordinator that moved answers NOT_COORDINATOR first)."""

    retries = 5

    def __init__(self, answers: list[ConsumerGroupDescribeResponse], serves_69: bool = True):
        self.answers = answers
        self.serves_69 = serves_69
        self.stats = Stats()
        self.cgd_calls: list[dict[int, list[str]]] = []
        self.coordinator_calls: list[list[str]] = []
        self.fallback: dict[str, list[tuple[str, int]]] = {}
        self.leaders: dict[int, list[tuple[str, int]]] = {}

    def metadata(self) -> ClusterInfo:
        return cluster()

    def list_groups(self, broker_ids: Any) -> list[tuple[str, str, str | None]]:
        return [("gone", "consumer", "consumer"), ("payments", "consumer", "consumer")]

    def serves(self, api_key: int) -> tuple[int, int] | None:
        return (0, 1) if api_key == 69 and self.serves_69 else None

    def coordinators(self, group_ids: list[str]) -> tuple[dict[str, int], dict[str, str]]:
        self.coordinator_calls.append(list(group_ids))
        return dict.fromkeys(group_ids, 1), {}

    def describe_groups(self, by_coordinator: dict[int, list[str]]) -> dict[str, Any]:
        raise AssertionError("a KIP-848 group is not read with DescribeGroups")

    def consumer_group_describe(self, by_coordinator: dict[int, list[str]]) -> dict[str, Any]:
        self.cgd_calls.append(by_coordinator)
        asked = {g for gs in by_coordinator.values() for g in gs}
        return {g.group_id: g for g in self.answers.pop(0).groups if g.group_id in asked}

    def fetch_offsets(
        self, by_coordinator: Any, explicit: Any, fallback: Any
    ) -> tuple[dict[str, Any], dict[str, str], set[str]]:
        self.fallback = fallback
        return {"payments": {("orders", 0): 4}}, {}, set()

    def end_offsets(self, leaders: dict[int, list[tuple[str, int]]]) -> tuple[Any, Any]:
        self.leaders = leaders
        return {tp: 10 for tps in leaders.values() for tp in tps}, {}


def answer(version: int = 1) -> ConsumerGroupDescribeResponse:
    return decode_consumer_group_describe_response(response_bytes(version), version)


def test_members_map_to_the_contract_columns() -> None:
    client = FakeClient([answer()])
    snap = collect(client, Options())  # type: ignore[arg-type]
    subs = {r["member_id"]: r for r in snap.subscriptions}
    assert subs["m-a"] == {
        "group_id": "payments",
        "member_id": "m-a",
        "group_instance_id": "static-a",
        "client_rack": "rack-1",
        "topics": ["orders", "audit"],
        "topic_pattern": None,
        "assignment_strategies": ["uniform"],
        "generation": 7,
        "group_protocol": "consumer",
        "client_id": "client-a",
        "client_host": "/10.0.0.1",
    }
    assert subs["m-b"] == {
        "group_id": "payments",
        "member_id": "m-b",
        "group_instance_id": None,
        "client_rack": None,
        "topics": None,  # names or a pattern, never both
        "topic_pattern": "orders.*",
        "assignment_strategies": ["uniform"],
        "generation": 6,
        # ConsumerGroupDescribe v1's MemberType 0: a classic member of a group being migrated
        "group_protocol": "classic",
        "client_id": "client-b",
        "client_host": "/10.0.0.2",
    }
    owned = defaultdict(set)
    for r in snap.current_assignment:
        owned[r["member_id"]].add((r["topic"], r["partition"]))
    # The current assignment, not the target one.
    assert owned == {"m-a": {("orders", 0), ("orders", 2), ("audit", 1)}, "m-b": {("orders", 1)}}
    assert "disappeared" in snap.skipped["gone"]
    assert "Group gone is not a consumer group." in snap.skipped["gone"]
    assert snap.failed == {}


def test_a_pattern_reaches_every_matching_topic() -> None:
    client = FakeClient([answer()])
    snap = collect(client, Options())  # type: ignore[arg-type]
    topics = {r["topic"] for r in snap.topic_partitions}
    assert topics == {"orders", "audit", "orders-eu"}  # orders.* also matches orders-eu
    offsets = {(r["topic"], r["partition"]): r for r in snap.offsets}
    assert set(offsets) == {
        (t, p) for t, n in (("orders", 3), ("audit", 2), ("orders-eu", 2)) for p in range(n)
    }
    assert offsets[("orders", 0)]["committed_offset"] == 4
    assert offsets[("orders-eu", 1)]["committed_offset"] is None
    assert all(r["log_end_offset"] == 10 for r in snap.offsets)
    # Partitions to name in OffsetFetch if the broker lists none for the group.
    assert set(client.fallback["payments"]) == set(offsets)


def test_topic_ids_are_named_by_metadata() -> None:
    """The id, not the name in the answer, says which topic: a name the answer spells
    differently is Metadata's; an id Metadata does not know (deleted since) is left out."""
    base = answer()
    payments = base.groups[0]
    a = payments.members[0]
    renamed = [
        TopicIdPartitions(ORDERS_ID, "orders-before-rename", [0]),
        TopicIdPartitions(GONE_ID, "deleted", [0, 1]),
        TopicIdPartitions(EU_ID, "orders-eu", [1]),
    ]
    a2 = type(a)(**{**a.__dict__, "assignment": renamed})
    group = ConsumerGroup(**{**payments.__dict__, "members": [a2]})
    client = FakeClient([ConsumerGroupDescribeResponse(0, [group])])
    snap = collect(client, Options(groups="payments"))  # type: ignore[arg-type]
    assert {(r["topic"], r["partition"]) for r in snap.current_assignment} == {
        ("orders", 0),
        ("orders-eu", 1),
    }


def test_moved_coordinator_is_looked_up_and_asked_again() -> None:
    moved = ConsumerGroup(16, None, "payments", "", -1, -1, "", [])  # NOT_COORDINATOR
    client = FakeClient([ConsumerGroupDescribeResponse(0, [moved]), answer()])
    snap = collect(client, Options(groups="payments"))  # type: ignore[arg-type]
    assert len(client.cgd_calls) == 2
    assert client.coordinator_calls == [["payments"], ["payments"]]
    assert {r["group_id"] for r in snap.subscriptions} == {"payments"}
    assert snap.failed == {}


def test_authorization_error_names_the_acl() -> None:
    denied = ConsumerGroup(30, None, "payments", "", -1, -1, "", [])  # GROUP_AUTHORIZATION
    client = FakeClient([ConsumerGroupDescribeResponse(0, [denied])])
    snap = collect(client, Options(groups="payments"))  # type: ignore[arg-type]
    assert snap.failed["payments"].endswith("missing ACL Describe on Group:payments")
    assert snap.failed["payments"].startswith("ConsumerGroupDescribe: ")
    assert snap.subscriptions == []


def test_without_api_69_the_groups_are_skipped_with_the_reason() -> None:
    client = FakeClient([], serves_69=False)
    snap = collect(client, Options())  # type: ignore[arg-type]
    assert client.cgd_calls == []
    for g in ("gone", "payments"):
        assert snap.skipped[g] == (
            "a KIP-848 consumer group (group.protocol=consumer): the broker does not serve"
            " ConsumerGroupDescribe"
        )


def test_target_assignment_is_the_brokers_target_named_by_topic_id() -> None:
    snap = collect(FakeClient([answer()]), Options())  # type: ignore[arg-type]
    target = defaultdict(set)
    for r in snap.tables()["target_assignment"]:
        assert r["group_id"] == "payments"
        target[r["member_id"]].add((r["topic"], r["partition"]))
    # m-a's target is orders-0 (it still holds orders-2 and audit-1); m-b's is empty.
    assert target == {"m-a": {("orders", 0)}}


def test_v0_has_no_member_type_every_member_is_the_groups_protocol() -> None:
    snap = collect(FakeClient([answer(version=0)]), Options())  # type: ignore[arg-type]
    assert {r["group_protocol"] for r in snap.subscriptions} == {"consumer"}
    assert len(snap.target_assignment) == 1


def test_kip848_members_library_from_client_id_and_no_assignment_bytes() -> None:
    reply = answer()
    group = reply.groups[0]
    members = [
        dataclasses.replace(group.members[0], client_id="rdkafka"),
        dataclasses.replace(group.members[1], client_id="consumer-payments-3"),
    ]
    reply = dataclasses.replace(reply, groups=[dataclasses.replace(group, members=members)])
    snap = collect(FakeClient([reply]), Options())  # type: ignore[arg-type]
    rows = {r["member_id"]: r for r in snap.subscription_rows()}
    assert rows["m-a"]["client_library"] == "librdkafka"
    assert rows["m-b"]["client_library"] == "java"
    assert {r["assignment_user_data"] for r in rows.values()} == {None}


def test_every_table_is_written_with_the_contracts_schema(tmp_path: Any) -> None:
    import pyarrow.parquet as pq

    from jobs.export.writer import SCHEMAS, write_snapshot
    from jobs.tables.group_read import check_input

    snap = collect(FakeClient([answer()]), Options())  # type: ignore[arg-type]
    write_snapshot(str(tmp_path), snap.tables(), {})
    paths = check_input(str(tmp_path))
    for name, schema in SCHEMAS.items():
        assert paths[name] is not None, name
        assert pq.read_table(tmp_path / name).schema.equals(schema), name
    target = pq.read_table(tmp_path / "target_assignment").to_pylist()
    assert target == [
        {"group_id": "payments", "member_id": "m-a", "topic": "orders", "partition": 0}
    ]
    subs = {r["member_id"]: r for r in pq.read_table(tmp_path / "subscriptions").to_pylist()}
    assert {m: r["group_protocol"] for m, r in subs.items()} == {
        "m-a": "consumer",
        "m-b": "classic",
    }
    assert {r["client_library"] for r in subs.values()} == {None}  # client-a, client-b
