"""Real brokers on 127.0.0.1 for the exporter's tests, started and stopped by the tests.

noida-db: one Kafka-compatible broker with a real classic group coordinator (installed from
the package registry with the test extras). librdkafka's mock cluster (through confluent-kafka):
several brokers with racks, but no group listing. Either is skipped with the reason when it
cannot start here.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], patience: float = 20.0) -> bool:
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return True
        time.sleep(0.1)
    return False


def noida_binary() -> str | None:
    try:
        from importlib.resources import files

        path = files("noida_db").joinpath("noida-db")
    except (ImportError, ModuleNotFoundError):
        return None
    if not path.is_file():
        return None
    os.chmod(str(path), 0o755)
    return str(path)


class Noida:
    def __init__(self, data_dir: Path) -> None:
        binary = noida_binary()
        if binary is None:
            pytest.skip("noida-db is not installed (pip install -e '.[export]')")
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.log = data_dir / "noida.log"
        cmd = [
            binary,
            "start",
            "--data-dir",
            str(data_dir / "data"),
            "--host",
            "127.0.0.1",
            "--only",
            "kafka",
            "--kafka-port",
            str(self.port),
        ]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        if not _wait_port(self.port, self.proc):
            self.stop()
            pytest.skip(f"noida-db did not start: {self.log.read_text(errors='replace')[-500:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


@contextlib.contextmanager
def noida(tmp: Path) -> Iterator[Noida]:
    broker = Noida(tmp)
    try:
        yield broker
    finally:
        broker.stop()


def run_module(module: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python -m module args` from the repository root, this checkout's code first."""
    root = Path(__file__).resolve().parents[3]
    env = dict(os.environ, PYTHONPATH=str(root), SPARK_LOCAL_IP="127.0.0.1")
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def have(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def cleanup_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


class FakeBroker:
    """A TCP listener on 127.0.0.1 that is no Kafka broker: `silent` accepts connections and
    never answers (a broker too slow to answer anything), `garbage` answers every request with
    bytes that are not Kafka's protocol (an HTTP server, say)."""

    def __init__(self, mode: str) -> None:
        import threading

        assert mode in ("silent", "garbage")
        self.mode = mode
        self.accepted = 0
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self.bootstrap = f"127.0.0.1:{self._sock.getsockname()[1]}"
        self._conns: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            self._conns.append(conn)
            if self.mode == "garbage":
                with contextlib.suppress(OSError):
                    conn.settimeout(5)
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for c in [*self._conns, self._sock]:
            with contextlib.suppress(OSError):
                c.close()


@contextlib.contextmanager
def fake_broker(mode: str) -> Iterator[FakeBroker]:
    broker = FakeBroker(mode)
    try:
        yield broker
    finally:
        broker.close()
