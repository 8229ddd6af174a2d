"""How an export ends when it cannot finish: another export holds the snapshot (exit 4, the
DAG retries), SIGTERM (what the DAG's timeout sends: exit 143, one line), always without a
lock or a temporary left behind and with the previous snapshot untouched."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from jobs.cli import export as export_snapshot
from jobs.export import writer
from jobs.export.client import Broker, ClusterInfo, Stats
from jobs.export.snapshot import Snapshot
from tests.jobs.export.brokers import fake_broker, free_port, have

pytestmark = pytest.mark.skipif(not have("kafka"), reason="kafka-python is needed (.[export])")

ROOT = Path(__file__).resolve().parents[3]


def previous_snapshot(out: Path) -> dict[str, str]:
    """A previous snapshot (it holds _snapshot.json); returns its files' contents."""
    (out / "subscriptions").mkdir(parents=True)
    (out / "subscriptions" / "part-00000.parquet").write_bytes(b"previous")
    (out / "_snapshot.json").write_text('{"ds": "2026-11-25"}\n')
    (out / "_SUCCESS").touch()
    return contents(out)


def contents(out: Path) -> dict[str, str]:
    return {
        str(p.relative_to(out)): p.read_text(errors="replace")
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def leftovers(out: Path) -> list[str]:
    """What an export leaves beside its output: the lock, temporaries (`.NAME.__*`)."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def test_a_snapshot_locked_by_a_live_export_exits_4(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "snap"
    before = previous_snapshot(out)
    now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    holder = {
        "pid": os.getpid(),  # alive, on this host: a concurrent export
        "host": socket.gethostname(),
        "started": now,
        "renewed": now,
        "lease_s": 300,
        "token": "another-run",
    }
    lock = tmp_path / ".snap.__lock"
    lock.write_text(json.dumps(holder))
    # Refused before any connection: the address need not be a broker.
    address = f"127.0.0.1:{free_port()}"
    code = export_snapshot.main(["--bootstrap-servers", address, "--output", str(out)])
    assert code == export_snapshot.EXIT_LOCKED == 4
    assert "output locked" in caplog.text
    assert "retry later" in caplog.text
    assert f"pid {os.getpid()}" in caplog.text
    assert json.loads(lock.read_text()) == holder  # the other run's lock is left alone
    assert contents(out) == before
    assert leftovers(out) == [".snap.__lock"]


def test_sigterm_while_connecting_exits_143_lock_released(tmp_path: Path) -> None:
    """A real exporter process, stuck on a broker that never answers, is sent SIGTERM."""
    out = tmp_path / "snap"
    before = previous_snapshot(out)
    with fake_broker("silent") as broker:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jobs.export_snapshot",
                "--bootstrap-servers",
                broker.bootstrap,
                "--output",
                str(out),
                "--timeout-s",
                "120",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 60
            # Locked, and waiting for the broker's answer: mid-export.
            while not ((tmp_path / ".snap.__lock").exists() and broker.accepted):
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the exporter never reached the broker"
                time.sleep(0.05)
            time.sleep(0.5)
            proc.send_signal(signal.SIGTERM)
            stdout, stderr = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == export_snapshot.EXIT_TERMINATED == 143, stderr
    assert stderr.strip().splitlines() == [
        "terminated (SIGTERM): nothing written, any previous snapshot is unchanged"
    ]
    assert "Traceback" not in stderr + stdout
    assert leftovers(out) == []
    assert contents(out) == before


class _Client:
    """Stands in for the cluster: the SIGTERM below lands while the tables are written."""

    stats = Stats()

    def __init__(self, *args: Any) -> None:
        pass

    def close(self) -> None:
        pass


def _collect(client: Any, opts: Any, sink: Any = None) -> Snapshot:
    snap = Snapshot(
        subscriptions=[
            {"group_id": "g", "member_id": "m", "topics": ["t"], "group_protocol": "classic"}
        ],
        topic_partitions=[{"topic": "t", "partition": 0}],
    )
    snap.cluster = ClusterInfo("c", 1, {1: Broker(1, "127.0.0.1", 9092, None)}, {}, set())
    return snap


def test_sigterm_while_writing_removes_the_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "snap"
    before = previous_snapshot(out)
    real = writer.write_table
    written: list[str] = []

    def write_then_terminate(folder: str, name: str, rows: Any) -> None:
        real(folder, name, rows)
        written.append(folder)
        if len(written) == 2:
            assert os.path.isdir(folder)  # half a snapshot in the temporary
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(export_snapshot, "Client", _Client)
    monkeypatch.setattr(export_snapshot, "collect", _collect)
    monkeypatch.setattr(writer, "write_table", write_then_terminate)
    handler = signal.getsignal(signal.SIGTERM)
    code = export_snapshot.main(["--bootstrap-servers", "127.0.0.1:9", "--output", str(out)])
    assert code == export_snapshot.EXIT_TERMINATED
    assert signal.getsignal(signal.SIGTERM) == handler  # the caller's handler is back
    assert len(written) == 2
    assert not os.path.exists(written[0])
    assert leftovers(out) == []
    assert contents(out) == before
    err = capsys.readouterr().err
    assert "terminated (SIGTERM): nothing written" in err
    assert "Traceback" not in err
