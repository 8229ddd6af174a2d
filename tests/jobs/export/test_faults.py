"""What a live cluster does to an export while it runs, against a real broker (noida-db): a
group deleted between listing and describing, a coordinator that moves, a missing ACL, a
KIP-848 group on a broker without ConsumerGroupDescribe.

noida-db is one broker without ACLs or KIP-848 groups: a moved coordinator, a refused ACL
and a ListGroups v5 "consumer" row are stood in for at the client boundary (the rest of each
export, ApiVersions included, is the broker's own)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jobs.cli import export as export_snapshot
from jobs.export.client import Client, RawGroup
from tests.jobs.export import estate
from tests.jobs.export.brokers import Noida, have, noida

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not (have("confluent_kafka") and have("kafka")),
        reason="confluent-kafka and kafka-python are needed (pip install -e '.[dev,export]')",
    ),
]

# A consumer subscription v0 with no topics and null user data; an empty assignment.
EMPTY_SUBSCRIPTION = bytes.fromhex("000000000000ffffffff")


def hold(broker: Noida, group_id: str) -> Any:
    """A live one-member classic consumer group (close the result to let it go)."""
    return estate.raw_member(
        broker.bootstrap, group_id, "consumer", "range", EMPTY_SUBSCRIPTION, b""
    )


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Noida]:
    with noida(tmp_path_factory.mktemp("faults")) as b:
        yield b


def export(broker: Noida, out: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    code = export_snapshot.main(
        ["--bootstrap-servers", broker.bootstrap, "--output", str(out), "--timeout-s", "5", *extra]
    )
    meta = json.loads((out / "_snapshot.json").read_text()) if out.exists() else {}
    return code, meta


def test_group_deleted_between_listing_and_describing_is_skipped(
    broker: Noida, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic
    from kafka.admin import KafkaAdminClient

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic("vanish-t", 1, 1)]).values():
        f.result(30)
    # A group with committed offsets and no members: listed, then deleted before describing.
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "g-vanish"})
    c.commit(offsets=[TopicPartition("vanish-t", 0, 0)], asynchronous=False)
    c.close()
    stays = hold(broker, "g-stays")
    real = Client.describe_groups
    deleted: list[Any] = []

    def delete_then_describe(self: Client, *args: Any, **kwargs: Any) -> Any:
        if not deleted:
            killer = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
            try:
                deleted.append(killer.delete_groups(["g-vanish"]))
            finally:
                killer.close()
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Client, "describe_groups", delete_then_describe)
    try:
        code, meta = export(broker, tmp_path / "snap", "--groups", "g-vanish|g-stays")
    finally:
        stays.close()
    assert deleted, "the group was never deleted"
    assert code == 3
    assert meta["groups_exported"] == ["g-stays"]
    assert meta["groups_skipped"] == {
        "g-vanish": "the group disappeared between ListGroups and DescribeGroups"
    }
    assert meta["groups_failed"] == {}


def test_moved_coordinator_is_looked_up_and_asked_again(
    broker: Noida, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    member = hold(broker, "g-move")
    real_describe, real_fetch = Client.describe_groups, Client.fetch_offsets
    moved = {"describe": 0, "fetch": 0}

    # First answers of a coordinator that handed the group over: NOT_COORDINATOR (16).
    def describe(self: Client, by_coordinator: dict[int, list[str]], *a: Any) -> Any:
        if not moved["describe"]:
            moved["describe"] += 1
            return {
                g: RawGroup(g, 16, "", "", "", []) for gs in by_coordinator.values() for g in gs
            }
        return real_describe(self, by_coordinator, *a)

    def fetch(self: Client, by_coordinator: dict[int, list[str]], *a: Any) -> Any:
        if not moved["fetch"]:
            moved["fetch"] += 1
            return {}, {}, {g for gs in by_coordinator.values() for g in gs}
        return real_fetch(self, by_coordinator, *a)

    monkeypatch.setattr(Client, "describe_groups", describe)
    monkeypatch.setattr(Client, "fetch_offsets", fetch)
    try:
        code, meta = export(broker, tmp_path / "snap", "--groups", "g-move")
    finally:
        member.close()
    assert code == 0, caplog.text
    assert meta["groups_exported"] == ["g-move"]
    # Looked up three times: at the start, after DescribeGroups, after OffsetFetch.
    assert meta["requests"]["FindCoordinator"] == 3
    assert meta["requests"]["DescribeGroups"] == 1
    assert meta["requests"]["OffsetFetch"] == 1
    assert "coordinator moved" in caplog.text


def test_missing_group_acl_is_named(
    broker: Noida, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = [hold(broker, g) for g in ("payments", "g-allowed")]
    real = Client.describe_groups

    # What a broker without Describe on Group:payments answers: GROUP_AUTHORIZATION_FAILED.
    def describe(self: Client, *args: Any, **kwargs: Any) -> Any:
        out = real(self, *args, **kwargs)
        if "payments" in out:
            out["payments"] = RawGroup("payments", 30, "", "", "", [])
        return out

    monkeypatch.setattr(Client, "describe_groups", describe)
    try:
        code, meta = export(broker, tmp_path / "snap", "--groups", "payments|g-allowed")
    finally:
        for h in held:
            h.close()
    assert code == 3
    assert meta["groups_exported"] == ["g-allowed"]
    assert meta["groups_failed"] == {
        "payments": "DescribeGroups: GROUP_AUTHORIZATION_FAILED: missing ACL Describe on"
        " Group:payments"
    }


def test_kip848_group_on_a_broker_without_consumer_group_describe(
    broker: Noida, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    member = hold(broker, "g-classic")
    real = Client.list_groups

    # A ListGroups v5 row for a KIP-848 group (noida-db answers v4 and runs none).
    def list_groups(self: Client, broker_ids: Any) -> Any:
        return sorted([*real(self, broker_ids), ("g-new", "consumer", "consumer")])

    monkeypatch.setattr(Client, "list_groups", list_groups)
    try:
        code, meta = export(broker, tmp_path / "snap", "--groups", "g-new|g-classic")
    finally:
        member.close()
    assert code == 3
    assert meta["groups_exported"] == ["g-classic"]
    assert meta["groups_skipped"] == {
        "g-new": "a KIP-848 consumer group (group.protocol=consumer): the broker does not serve"
        " ConsumerGroupDescribe"
    }
    assert "ConsumerGroupDescribe" not in meta["requests"]


def test_group_filters_that_leave_nothing_exit_3_and_keep_the_previous_snapshot(
    broker: Noida, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    held = hold(broker, "g-filtered")
    try:
        out = tmp_path / "snap"
        code, _ = export(broker, out, "--groups", "g-filtered")
        assert code == 0
        before = (out / "_snapshot.json").read_bytes()
        for flags in (["--groups", "g-filterd"], ["--exclude-groups", ".*"]):
            caplog.clear()
            code, _ = export(broker, out, *flags)
            assert code == 3
            assert "no group to export, nothing written" in caplog.text
            assert f"the cluster lists passes {flags[0]} {flags[1]!r}" in caplog.text
            assert "g-filtered" in caplog.text  # among the groups the cluster lists
            assert (out / "_snapshot.json").read_bytes() == before
    finally:
        held.close()
