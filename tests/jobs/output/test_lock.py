"""The output lock's lease: the holder renews it, a lock not renewed within its lease expires
on any host, and a live holder's lock stops the next run with OutputLocked (exit 4)."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import time
from pathlib import Path

import pytest

from jobs.fs import LocalFs
from jobs.output import OutputError, OutputLocked, lock
from jobs.output.swap import Place, Target


def _target(tmp_path: Path, token: str = "mine") -> Target:
    parent = str(tmp_path)
    return Target("out", parent, "out", LocalFs(), Place("file", "", parent), token, lambda: None)


def _ago(seconds: float) -> str:
    return (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds)).isoformat()


def _other_host_lock(tmp_path: Path, renewed_ago: float, lease_s: float = 300) -> Path:
    path = tmp_path / ".out.__lock"
    path.write_text(
        json.dumps(
            {
                "pid": 1,
                "host": "another-host.invalid",
                "started": _ago(renewed_ago + 3600),
                "renewed": _ago(renewed_ago),
                "lease_s": lease_s,
                "token": "theirs",
            }
        )
    )
    return path


def test_a_lock_renewed_within_its_lease_on_another_host_is_locked(tmp_path: Path) -> None:
    path = _other_host_lock(tmp_path, renewed_ago=10)
    with pytest.raises(OutputLocked, match="another run holds out: pid 1 on host another-host"):
        lock.lock(_target(tmp_path))
    assert json.loads(path.read_text())["token"] == "theirs"
    assert issubclass(OutputLocked, OutputError)


def test_a_lock_not_renewed_within_its_lease_expires_on_any_host(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _other_host_lock(tmp_path, renewed_ago=301, lease_s=300)
    target = _target(tmp_path)
    lock.lock(target)
    try:
        taken = json.loads(path.read_text())
        assert taken["token"] == "mine"
        assert taken["host"] == socket.gethostname()
        assert taken["pid"] == os.getpid()
        assert taken["lease_s"] == lock.DEFAULT_LEASE_S
        assert "removed the lock of a run that is gone (pid 1 on host another-host" in caplog.text
    finally:
        lock.unlock(target)
    assert not path.exists()


@pytest.mark.parametrize(
    ("holder", "expired"),
    [
        ({"renewed": 10, "lease_s": 5}, True),  # seconds ago, made when the test runs
        ({"renewed": 10, "lease_s": 60}, False),
        ({"renewed": "2026-11-20T10:00:00", "lease_s": 60}, True),  # naive: UTC, as written
        ({"started": "2026-11-20T10:00:00"}, False),  # no renewal time: an older planner's
        ({"renewed": "yesterday", "lease_s": 60}, False),
        ({"renewed": 10, "lease_s": "5"}, False),
    ],
)
def test_expiry(holder: dict[str, object], expired: bool) -> None:
    if isinstance(holder.get("renewed"), int):
        holder = {**holder, "renewed": _ago(float(holder["renewed"]))}  # type: ignore[arg-type]
    assert lock._expired(holder) is expired
    assert lock._is_stale({**holder, "host": "another-host.invalid", "pid": 1}) is expired


def test_the_holder_renews_its_lock_while_it_runs_and_removes_it_at_the_end(
    tmp_path: Path,
) -> None:
    target = _target(tmp_path)
    lock.lock(target, lease_s=0.5)  # a renewal every 0.1 s
    path = tmp_path / ".out.__lock"
    first = json.loads(path.read_text())
    try:
        while json.loads(path.read_text() or "{}").get("renewed") == first["renewed"]:
            time.sleep(0.05)  # renewed is written to the second: wait for the next one
        renewed = json.loads(path.read_text())
        assert renewed["started"] == first["started"]
        assert renewed["token"] == "mine"
    finally:
        lock.unlock(target)
    assert not path.exists()
    assert lock._beats == {}


def test_a_holder_whose_lock_was_taken_over_stops_renewing_it(tmp_path: Path) -> None:
    target = _target(tmp_path)
    lock.lock(target, lease_s=0.5)
    path = tmp_path / ".out.__lock"
    beat = lock._beats[target.token]
    path.write_text(json.dumps({"token": "next-run", "host": "h", "pid": 1}))
    while beat._thread.is_alive():
        time.sleep(0.05)
    assert beat.lost
    assert json.loads(path.read_text())["token"] == "next-run", "never overwritten"
    lock.unlock(target)
    assert json.loads(path.read_text())["token"] == "next-run", "never removed"


def test_a_run_whose_lock_was_taken_over_does_not_swap_its_output_in(tmp_path: Path) -> None:
    target = _target(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "_manifest.json").write_text('{"ds": "previous"}')
    lock.lock(target)
    path = tmp_path / ".out.__lock"
    try:
        with (  # noqa: PT012
            pytest.raises(OutputLocked, match="taken over by another run"),
            target.replace() as tmp,
        ):
            Path(tmp.removeprefix("file://")).mkdir()
            path.write_text(json.dumps({"token": "next-run", "host": "h", "pid": 1}))
    finally:
        lock.unlock(target)
    assert (out / "_manifest.json").read_text() == '{"ds": "previous"}'
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.__lock", "out"]


def test_a_stop_just_after_the_lock_is_written_still_removes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM unwinds as KeyboardInterrupt: landing between writing the lock and holding it,
    it must not leave a lock that blocks the next run."""
    import importlib

    claim = importlib.import_module("jobs.output.claim")  # the module, not its function

    def lock_then_stop(target: Target, lease_s: float) -> None:
        lock.lock(target, lease_s)
        raise KeyboardInterrupt

    monkeypatch.setattr(claim, "lock", lock_then_stop)
    claimed = claim._claimed(_target(tmp_path), False, "_manifest.json", "an output", 300)
    with pytest.raises(KeyboardInterrupt), claimed:
        pytest.fail("the claim was interrupted before it was held")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert lock._beats == {}


def test_a_lock_whose_text_cannot_be_written_is_not_left_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk while writing the lock: an empty lock names no holder that could be judged
    gone, so it would stop every later run until removed by hand."""
    real_fdopen = os.fdopen

    def full_disk(fd: int, *args: object, **kwargs: object) -> object:
        f = real_fdopen(fd, *args, **kwargs)  # type: ignore[call-overload]

        def write(text: str) -> int:
            raise OSError(28, "No space left on device")

        f.write = write
        return f

    monkeypatch.setattr(os, "fdopen", full_disk)
    with pytest.raises(OutputError, match="No space left on device"):
        lock.lock(_target(tmp_path))
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    lock.lock(target := _target(tmp_path, "next"))  # the next run takes it
    lock.unlock(target)


def test_on_hadoop_a_lock_whose_text_cannot_be_written_is_removed_too() -> None:
    from types import SimpleNamespace

    from jobs.fs import HadoopFs

    class Stream:
        def write(self, data: bytearray) -> None:
            raise OSError("quota exceeded")

        def close(self) -> None:
            pass

    files: set[str] = set()

    class Fs:  # the few calls of Hadoop's FileSystem that create_new makes
        def create(self, path: str, overwrite: bool) -> Stream:
            files.add(path)
            return Stream()

        def delete(self, path: str, recursive: bool) -> bool:
            files.discard(path)
            return True

    fs = HadoopFs.__new__(HadoopFs)
    fs._fs = Fs()
    fs._jvm = SimpleNamespace(org=SimpleNamespace(apache=SimpleNamespace(hadoop=SimpleNamespace(
        fs=SimpleNamespace(Path=str)))))  # fmt: skip
    with pytest.raises(OSError, match="quota exceeded"):
        fs.create_new("hdfs://nn/data/.out.__lock", "{}")
    assert files == set()
