"""A broker that stops in the middle of an export: a clear error, exit 2, no snapshot (and a
previous snapshot left as it was)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jobs.cli import export as export_snapshot
from jobs.export.client import Client
from tests.jobs.export import estate
from tests.jobs.export.brokers import have, noida

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not have("kafka"), reason="kafka-python is needed (.[export])"),
]


def test_broker_stopped_mid_export_leaves_no_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with noida(tmp_path) as broker:
        out = tmp_path / "snap"
        member = estate.raw_member(
            broker.bootstrap,
            "g-one",
            "consumer",
            "range",
            bytes.fromhex("000000000000ffffffff"),
            b"",
        )
        try:
            first = export_snapshot.main(
                ["--bootstrap-servers", broker.bootstrap, "--output", str(out)]
            )
            assert first == 0
            before = (out / "_snapshot.json").read_text()
            real = Client.describe_groups

            def stop_then_describe(self: Client, *args: Any, **kwargs: Any) -> Any:
                broker.stop()  # after ListGroups and FindCoordinator, before DescribeGroups
                return real(self, *args, **kwargs)

            monkeypatch.setattr(Client, "describe_groups", stop_then_describe)
            code = export_snapshot.main(
                ["--bootstrap-servers", broker.bootstrap, "--output", str(out), "--timeout-s", "2"]
            )
        finally:
            member.close()
    assert code == 2
    assert "DescribeGroups failed" in caplog.text
    assert "nothing written" in caplog.text
    assert (out / "_snapshot.json").read_text() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".snap.")] == []
