"""A cluster that answers slowly, wrongly or not at all, and a disk that fills up: each ends in
one line naming the cause, never a traceback. A coordinator that never answers (or answers
bytes that do not decode) costs only its own groups: they are listed under `groups_failed`
with the reason and the rest is exported (exit 3).

The coordinator's silence and its garbage are made on the wire, in kafka-python's connection:
the request is never written to the broker (so kafka-python's own timeout fires), or the
broker's answer is overwritten before it is decoded. librdkafka's mock cluster delays one
broker's answers itself."""

from __future__ import annotations

import ctypes
import errno
import functools
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jobs.cli import export as export_snapshot
from jobs.export import writer
from jobs.export.client import Client, RawGroup, RawMember
from jobs.export.protocol import Assignment, Subscription, encode_assignment, encode_subscription
from tests.jobs.export import estate
from tests.jobs.export.brokers import Noida, fake_broker, free_port, have, noida, run_module
from tests.jobs.export.mock_cluster import MockCluster
from tests.jobs.export.test_exit_codes import contents, leftovers, previous_snapshot

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not (have("confluent_kafka") and have("kafka")),
        reason="confluent-kafka and kafka-python are needed (pip install -e '.[dev,export]')",
    ),
]

DESCRIBE_GROUPS, OFFSET_FETCH = 15, 9
SUBSCRIPTION = encode_subscription(Subscription(1, ["un-t"], None, []))
OWNS_BOTH = encode_assignment(Assignment(1, [("un-t", [0, 1])]))


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Noida]:
    from confluent_kafka.admin import AdminClient, NewTopic

    with noida(tmp_path_factory.mktemp("unanswered")) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        for f in admin.create_topics([NewTopic("un-t", 2, 1)]).values():
            f.result(30)
        yield b


@pytest.fixture(scope="module")
def groups(broker: Noida) -> Iterator[list[str]]:
    held = [
        estate.raw_member(broker.bootstrap, g, "consumer", "range", SUBSCRIPTION, OWNS_BOTH)
        for g in ("un-a", "un-b")
    ]
    yield ["un-a", "un-b"]
    for h in held:
        h.close()


def export(bootstrap: str, out: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    code = export_snapshot.main(
        ["--bootstrap-servers", bootstrap, "--output", str(out), "--timeout-s", "1", *extra]
    )
    meta = json.loads((out / "_snapshot.json").read_text()) if out.exists() else {}
    return code, meta


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []


def unanswered(monkeypatch: pytest.MonkeyPatch, api_key: int, times: int = 1000) -> list[int]:
    """The next `times` requests of `api_key` never reach the broker: kafka-python waits for
    their answers until its request timeout (and then closes the connection, as it does for
    a broker that is too slow). Returns the count of requests swallowed, as a one-item list."""
    from kafka.net.connection import KafkaConnection

    real = KafkaConnection._send_request
    swallowed = [0]

    class Deaf:
        def write(self, data: bytes) -> None:
            pass

    def send(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(request, "API_KEY", None) != api_key or swallowed[0] >= times:
            return real(self, request, *args, **kwargs)
        swallowed[0] += 1
        transport, self.transport = self.transport, Deaf()
        try:
            return real(self, request, *args, **kwargs)
        finally:
            self.transport = transport

    monkeypatch.setattr(KafkaConnection, "_send_request", send)
    return swallowed


def test_a_coordinator_that_never_answers_describe_groups_fails_its_groups(
    broker: Noida,
    groups: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    swallowed = unanswered(monkeypatch, DESCRIBE_GROUPS)
    code, meta = export(broker.bootstrap, tmp_path / "snap", "--groups", "un-.*")
    assert code == export_snapshot.EXIT_NEEDS_ATTENTION, caplog.text
    assert swallowed[0] == 6  # the first try and 5 retries, then the group is given up
    reason = "DescribeGroups to broker 1: no answer within 1 s, 6 tries (REQUEST_TIMED_OUT)"
    assert meta["groups_failed"] == dict.fromkeys(groups, reason)
    assert meta["groups_exported"] == []
    assert f"group un-a failed: {reason}" in caplog.text
    no_traceback(caplog)


def test_a_timeout_that_clears_is_retried(
    broker: Noida,
    groups: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    swallowed = unanswered(monkeypatch, OFFSET_FETCH, times=2)
    code, meta = export(broker.bootstrap, tmp_path / "snap", "--groups", "un-.*")
    assert code == export_snapshot.EXIT_OK, caplog.text
    assert swallowed[0] == 2
    assert meta["groups_exported"] == groups
    assert "OffsetFetch to broker 1 failed (" in caplog.text  # the retries, logged
    no_traceback(caplog)


@pytest.mark.parametrize("broken", ["body", "header"])
def test_a_coordinator_answering_garbage_fails_its_groups(
    broker: Noida,
    groups: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    broken: str,
) -> None:
    """An answer cut short after its header (`body`), or in its header (`header`). kafka-python
    3.0.12 reads a header that does not decode without noticing (its connection stops reading):
    that answer is then, to the exporter, one that never came."""
    from kafka.net.connection import KafkaConnection

    real = KafkaConnection.data_received

    def garble(self: Any, data: bytes) -> Any:
        waiting = self.parser.in_flight_requests if self.parser else []
        api_key = getattr(waiting[0], "request_api_key", None) if waiting else None
        if api_key == DESCRIBE_GROUPS and len(data) > 8:
            # The correlation id stays; then the (flexible) header's empty tagged fields, or
            # not; then two bytes where the answer's body should be.
            rest = (b"\x00" if broken == "body" else b"") + b"\xff\xff"
            data = (4 + len(rest)).to_bytes(4, "big") + data[4:8] + rest
        return real(self, data)

    monkeypatch.setattr(KafkaConnection, "data_received", garble)
    code, meta = export(broker.bootstrap, tmp_path / "snap", "--groups", "un-.*")
    assert code == export_snapshot.EXIT_NEEDS_ATTENTION, caplog.text
    assert set(meta["groups_failed"]) == set(groups)
    reason = meta["groups_failed"]["un-a"]
    if broken == "body":
        assert reason.startswith("DescribeGroups to broker 1: the answer does not decode as")
        assert "DescribeGroups" not in meta["requests"]  # asked once, not again
    else:
        assert reason.startswith("DescribeGroups to broker 1: no answer within 1 s")
    no_traceback(caplog)


@pytest.mark.parametrize("when", ["collecting", "finishing"])
def test_a_full_disk_while_writing_is_one_line_and_keeps_the_previous_snapshot(
    broker: Noida,
    groups: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    when: str,
) -> None:
    """The disk fills while a chunk's rows stream out (files of one row) or while the last
    files and `_snapshot.json` are written."""
    out = tmp_path / "snap"
    before = previous_snapshot(out)
    real = writer.pq.write_table
    calls = [0]
    finished: list[bool] = []
    real_finish = export_snapshot.write_snapshot
    if when == "collecting":
        monkeypatch.setattr(
            export_snapshot, "TableSink", functools.partial(writer.TableSink, file_rows=1)
        )

    def finish(*args: Any, **kwargs: Any) -> None:
        finished.append(True)
        real_finish(*args, **kwargs)

    monkeypatch.setattr(export_snapshot, "write_snapshot", finish)

    def fill_up(table: Any, where: Any, *args: Any, **kwargs: Any) -> None:
        calls[0] += 1
        if calls[0] == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(where))
        real(table, where, *args, **kwargs)

    monkeypatch.setattr(writer.pq, "write_table", fill_up)
    code, _ = export(broker.bootstrap, out, "--groups", "un-.*")
    assert code == export_snapshot.EXIT_UNEXPECTED
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert errors[0].startswith(f"cannot write the snapshot {out}, nothing written")
    assert "No space left on device" in errors[0]
    assert finished == ([] if when == "collecting" else [True])
    no_traceback(caplog)
    assert contents(out) == before
    assert leftovers(out) == []


# --- the bootstrap servers, across a real process -----------------------------------------


def one_line_export(bootstrap: str, out: Path) -> tuple[int, str]:
    result = run_module(
        "jobs.export_snapshot",
        "--bootstrap-servers",
        bootstrap,
        "--output",
        str(out),
        "--timeout-s",
        "2",
        timeout=120,
    )
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()
    return result.returncode, lines[0]


def test_a_bootstrap_server_that_never_answers_is_named_as_such(tmp_path: Path) -> None:
    with fake_broker("silent") as silent:
        code, line = one_line_export(silent.bootstrap, tmp_path / "snap")
    assert code == export_snapshot.EXIT_BAD_INPUT
    assert (
        f"the bootstrap servers {silent.bootstrap} accepted the connection but did not answer"
        " within 2 s" in line
    )
    assert "cannot reach" not in line


def test_a_bootstrap_server_answering_garbage_is_named_as_such(tmp_path: Path) -> None:
    with fake_broker("garbage") as garbage:
        code, line = one_line_export(garbage.bootstrap, tmp_path / "snap")
    assert code == export_snapshot.EXIT_BAD_INPUT
    assert f"the bootstrap servers {garbage.bootstrap} answered with bytes that are not" in line
    assert "cannot reach" not in line


def test_an_unreachable_bootstrap_server_cannot_be_reached(tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    code, line = one_line_export(address, tmp_path / "snap")
    assert code == export_snapshot.EXIT_BAD_INPUT
    assert f"cannot reach the bootstrap servers {address} within 2 s" in line


# --- several coordinators: librdkafka's mock cluster ----------------------------------------


def _member(topics: list[str]) -> RawMember:
    return RawMember(
        "m-1",
        None,
        "client",
        "/127.0.0.1",
        encode_subscription(Subscription(1, topics, None, [])),
        b"",
    )


def test_a_slow_coordinator_costs_only_its_own_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    mock = MockCluster(3)
    lib = mock.lib
    lib.rd_kafka_mock_coordinator_set.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_int32,
    ]
    lib.rd_kafka_mock_broker_push_request_error_rtts.restype = ctypes.c_int
    try:
        mock.create_topic("orders", 3, 3)
        coordinators = {"g-1": 1, "g-2": 2, "g-3": 3}
        for g, b in coordinators.items():
            lib.rd_kafka_mock_coordinator_set(mock.mc, b"group", g.encode(), b)
            mock.commit(g, {("orders", 0): 0})
        # Broker 3 answers OffsetFetch only after 3 s, past the 1 s timeout, every time.
        delays = [ctypes.c_int(v) for _ in range(12) for v in (0, 3000)]
        err = lib.rd_kafka_mock_broker_push_request_error_rtts(
            ctypes.c_void_p(mock.mc),
            ctypes.c_int32(3),
            ctypes.c_int16(OFFSET_FETCH),
            ctypes.c_size_t(12),
            *delays,
        )
        assert err == 0

        # The mock has neither API: these two answer as a broker would for three live groups.
        def list_groups(self: Client, broker_ids: Any) -> list[tuple[str, str, str | None]]:
            return [(g, "consumer", None) for g in sorted(coordinators)]

        def describe_groups(
            self: Client, by_coordinator: dict[int, list[str]], chunk: int = 200
        ) -> dict[str, RawGroup]:
            assert {g: b for b, gs in by_coordinator.items() for g in gs} == coordinators
            return {
                g: RawGroup(g, 0, "Stable", "consumer", "range", [_member(["orders"])])
                for g in coordinators
            }

        monkeypatch.setattr(Client, "list_groups", list_groups)
        monkeypatch.setattr(Client, "describe_groups", describe_groups)
        code, meta = export(mock.bootstrap, tmp_path / "snap")
    finally:
        mock.close()
    assert code == export_snapshot.EXIT_NEEDS_ATTENTION, caplog.text
    assert meta["groups_exported"] == ["g-1", "g-2"]
    assert meta["groups_failed"] == {
        "g-3": "OffsetFetch to broker 3: no answer within 1 s, 6 tries (REQUEST_TIMED_OUT)"
    }
    no_traceback(caplog)


# --- SIGTERM while a coordinator keeps the export waiting, across a real process ------------

WAITING_EXPORTER = """
import sys
from kafka.net.connection import KafkaConnection

real = KafkaConnection._send_request


class Deaf:
    def write(self, data):
        pass


def send(self, request, *args, **kwargs):
    if getattr(request, "API_KEY", None) != 15:
        return real(self, request, *args, **kwargs)
    transport, self.transport = self.transport, Deaf()  # DescribeGroups never reaches it
    try:
        return real(self, request, *args, **kwargs)
    finally:
        self.transport = transport
        print("DescribeGroups sent", flush=True)


KafkaConnection._send_request = send
from jobs.cli import export as export_snapshot

sys.exit(export_snapshot.main(sys.argv[1:]))
"""


def test_sigterm_while_a_coordinator_keeps_the_export_waiting(
    broker: Noida, groups: list[str], tmp_path: Path
) -> None:
    import signal
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    out = tmp_path / "snap"
    before = previous_snapshot(out)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            WAITING_EXPORTER,
            *("--bootstrap-servers", broker.bootstrap, "--output", str(out)),
            *("--groups", "un-.*", "--timeout-s", "120"),
        ],
        cwd=root,
        env=dict(os.environ, PYTHONPATH=str(root)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "DescribeGroups sent"
        assert (tmp_path / ".snap.__lock").exists()  # mid-export: the lock is held
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, stderr  # 128 + SIGTERM
    assert stderr.strip().splitlines()[-1] == (
        "terminated (SIGTERM): nothing written, any previous snapshot is unchanged"
    )
    assert "Traceback" not in stderr
    assert leftovers(out) == []
    assert contents(out) == before
