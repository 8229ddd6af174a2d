"""A live Kafka estate for the DAG's export step: a noida-db broker on 127.0.0.1 and consumer
groups held by real librdkafka consumers (confluent-kafka), started and stopped by the test.

Both packages are installed into .venv-airflow by `make venv-airflow`, pinned as in the
project's dev extras. The broker runs as its own process group, so stopping it never leaves a
child behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

TOPICS = {"orders": 6, "payments": 4, "audit": 2}


@dataclass
class Group:
    group_id: str
    strategy: str  # librdkafka's partition.assignment.strategy
    topics: list[str]
    members: int
    consumers: list[Any] = field(default_factory=list)

    def partitions(self) -> set[tuple[str, int]]:
        return {(t, p) for t in self.topics for p in range(TOPICS[t])}


def groups() -> list[Group]:
    return [
        Group("dag-range", "range", ["orders", "payments"], 3),
        Group("dag-roundrobin", "roundrobin", ["orders", "payments", "audit"], 2),
        Group("dag-coop", "cooperative-sticky", ["orders"], 2),
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def noida_broker(data_dir: Path) -> Iterator[str]:
    """Yields the bootstrap address of a noida-db broker listening on 127.0.0.1 only."""
    binary = Path(str(files("noida_db").joinpath("noida-db")))
    if not binary.is_file():
        pytest.fail("noida-db has no broker binary here: run `make venv-airflow`")
    binary.chmod(0o755)  # some wheels unpack it without the executable bit
    port = free_port()
    log_path = data_dir / "noida.log"
    command = [
        str(binary),
        "start",
        "--data-dir",
        str(data_dir / "data"),
        "--host",
        "127.0.0.1",
        "--only",
        "kafka",
        "--kafka-port",
        str(port),
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-800:]
                pytest.fail(f"noida-db did not start: {tail}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


def create_topics(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(t, n, 1) for t, n in TOPICS.items()]).values():
        future.result(30)


def start_groups(bootstrap: str, estate: list[Group]) -> None:
    from confluent_kafka import Consumer

    for g in estate:
        for _ in range(g.members):
            consumer = Consumer(
                {
                    "bootstrap.servers": bootstrap,
                    "group.id": g.group_id,
                    "enable.auto.commit": False,
                    "partition.assignment.strategy": g.strategy,
                    # Polled only until the groups settle; the DAG then runs for minutes, and a
                    # member that does not poll within this interval would leave its group.
                    "max.poll.interval.ms": 86400000,
                }
            )
            consumer.subscribe(g.topics)
            g.consumers.append(consumer)


def held(consumer: Any) -> set[tuple[str, int]]:
    return {(tp.topic, tp.partition) for tp in consumer.assignment()}


def wait_stable(estate: list[Group], patience: float = 120.0, quiet: float = 4.0) -> None:
    """Polls every consumer until each group holds all its partitions once, every member
    some, and nothing changed for `quiet` seconds."""

    def complete(g: Group) -> bool:
        parts = [held(c) for c in g.consumers]
        union = set().union(*parts)
        return union == g.partitions() and sum(map(len, parts)) == len(union) and all(parts)

    deadline = time.monotonic() + patience
    last: list[list[list[tuple[str, int]]]] | None = None
    since = time.monotonic()
    while time.monotonic() < deadline:
        for g in estate:
            for c in g.consumers:
                c.poll(0.05)
        state = [[sorted(held(c)) for c in g.consumers] for g in estate]
        if state != last:
            last, since = state, time.monotonic()
        elif all(map(complete, estate)) and time.monotonic() - since > quiet:
            return
    raise AssertionError(f"groups did not settle: {last}")


def pause_fetching(estate: list[Group]) -> None:
    """Stop fetching once the groups have settled; the members stay in their groups. An idle
    consumer re-fetches as soon as the broker answers an empty fetch, which keeps the
    machine's cores busy while the job under test runs beside it."""
    for g in estate:
        for c in g.consumers:
            c.pause(c.assignment())


def stop_groups(estate: list[Group]) -> None:
    for g in estate:
        for c in g.consumers:
            c.close()
        g.consumers.clear()
