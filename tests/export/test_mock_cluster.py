"""librdkafka's mock cluster: several brokers with racks, which kafka-python 3.0.12 cannot
bootstrap from (it cannot parse the mock's answer to ApiVersions v4). The exporter must then
stop within its timeout, exit 2 naming the address, and write nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.export.brokers import run_module
from tests.export.mock_cluster import MockCluster

pytestmark = pytest.mark.live


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
