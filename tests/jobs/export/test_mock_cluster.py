"""librdkafka's mock cluster: several brokers with racks and leaders on chosen brokers, which
noida-db (one broker) cannot show. The exporter reaches it with ApiVersions capped at v2 (the
mock serves no later version); the mock cannot list or describe groups, so a cluster like it
stops the export with exit 2 naming the missing API, and the whole-export test stands in for
ListGroups and DescribeGroups at the client boundary (everything else is the mock's)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jobs.cli import export as export_snapshot
from jobs.export.client import Client, RawGroup, RawMember
from jobs.export.protocol import Assignment, Subscription, encode_assignment, encode_subscription
from tests.jobs.export.brokers import have, run_module
from tests.jobs.export.mock_cluster import MockCluster

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not have("kafka"), reason="kafka-python is needed (.[export])"),
]

RACKS = {1: "az1", 2: "az2", 3: "az3"}


def test_unusable_cluster_exits_2_without_hanging(tmp_path: Path) -> None:
    mock = MockCluster(3)
    try:
        for broker, rack in ((1, "az1"), (2, "az2"), (3, "az3")):
            mock.set_rack(broker, rack)
        mock.create_topic("orders", 3, 3)
        result = run_module(
            "jobs.export_snapshot",
            "--bootstrap-servers",
            mock.bootstrap,
            "--output",
            str(tmp_path / "snap"),
            "--timeout-s",
            "3",
            timeout=120,
        )
    finally:
        mock.close()
    assert result.returncode == 2, result.stderr
    assert mock.bootstrap.split(",")[0] in result.stderr
    assert "nothing written" in result.stderr
    assert not (tmp_path / "snap").exists()


def test_missing_list_groups_is_named_within_the_timeout(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    mock = MockCluster(3)
    try:
        mock.create_topic("orders", 3, 3)
        started = time.monotonic()
        code = export_snapshot.main(
            [
                "--bootstrap-servers",
                mock.bootstrap,
                "--output",
                str(tmp_path / "snap"),
                "--timeout-s",
                "3",
            ]
        )
        elapsed = time.monotonic() - started
    finally:
        mock.close()
    assert code == 2
    # Connected (Metadata answered), then stopped at the first API the mock lacks.
    assert "3 brokers" in caplog.text
    assert "does not serve ListGroups" in caplog.text
    assert "nothing written" in caplog.text
    # No retry loop on a missing API: well inside one request timeout, not 5 x 3 s.
    assert elapsed < 3.0, elapsed
    assert not (tmp_path / "snap").exists()


def _member(member_id: str, topics: list[str], owned: list[tuple[str, list[int]]]) -> RawMember:
    return RawMember(
        member_id,
        None,
        "client",
        "/127.0.0.1",
        encode_subscription(Subscription(1, topics, None, owned)),
        encode_assignment(Assignment(1, owned)),
    )


def test_racks_and_one_list_offsets_per_leader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mock = MockCluster(3)
    try:
        for broker, rack in RACKS.items():
            mock.set_rack(broker, rack)
        mock.create_topic("orders", 3, 3)
        mock.create_topic("payments", 4, 2)
        for p, leader in ((0, 1), (1, 2), (2, 3)):
            mock.set_leader("orders", p, leader)
        produced = {("orders", p): 3 + p for p in range(3)}
        produced.update({("payments", p): 7 + 2 * p for p in range(4)})
        for (t, p), n in produced.items():
            mock.produce(t, p, n)
        committed = {("orders", 0): 2, ("orders", 2): 4, ("payments", 3): 13}
        mock.commit("g-mock", committed)
        layout = {t: mock.partitions(t) for t in ("orders", "payments")}

        members = [
            _member("m-1", ["orders", "payments"], [("orders", [0, 1]), ("payments", [0, 1])]),
            _member("m-2", ["orders", "payments"], [("orders", [2]), ("payments", [2, 3])]),
        ]
        asked: list[dict[int, list[str]]] = []

        # The mock has neither API: these two answer as a broker would for one live group.
        def list_groups(self: Client, broker_ids: Any) -> list[tuple[str, str, str | None]]:
            return [("g-mock", "consumer", None)]

        def describe_groups(
            self: Client, by_coordinator: dict[int, list[str]], chunk: int = 200
        ) -> dict[str, RawGroup]:
            asked.append(by_coordinator)
            return {"g-mock": RawGroup("g-mock", 0, "Stable", "consumer", "range", members)}

        monkeypatch.setattr(Client, "list_groups", list_groups)
        monkeypatch.setattr(Client, "describe_groups", describe_groups)
        out = tmp_path / "snap"
        code = export_snapshot.main(
            ["--bootstrap-servers", mock.bootstrap, "--output", str(out), "--timeout-s", "10"]
        )
    finally:
        mock.close()
    assert code == 0
    meta = json.loads((out / "_snapshot.json").read_text())
    assert {b["node_id"]: b["rack"] for b in meta["brokers"]} == RACKS
    # FindCoordinator was the mock's own answer: one coordinator for the group.
    assert len(asked) == 1
    assert [g for gs in asked[0].values() for g in gs] == ["g-mock"]
    leaders = {leader for parts in layout.values() for leader, _ in parts.values()}
    assert leaders == {1, 2, 3}
    assert meta["requests"]["ListOffsets"] == len(leaders)
    # The mock answers "all partitions" with a null array: the group is asked again for the
    # partitions it subscribes to and owns, by name.
    assert meta["requests"]["OffsetFetch"] == 2

    tp = pd.read_parquet(out / "topic_partitions")
    got_racks = {(r.topic, r.partition): list(r.replica_racks) for r in tp.itertuples()}
    want_racks = {
        (t, p): sorted({RACKS[b] for b in replicas})
        for t, parts in layout.items()
        for p, (_, replicas) in parts.items()
    }
    assert got_racks == want_racks
    assert any(len(r) == 2 for r in want_racks.values())  # replication 2: not every rack

    off = pd.read_parquet(out / "offsets")
    assert len(off) == len(produced)
    for r in off.itertuples():
        assert r.log_end_offset == produced[(r.topic, r.partition)]
        got = None if pd.isna(r.committed_offset) else int(r.committed_offset)
        assert got == committed.get((r.topic, r.partition))
