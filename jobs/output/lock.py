"""The output's lock file (`.NAME.__lock`): one run at a time per output.

The holder renews the lock while it runs (a daemon thread rewrites its `renewed` time every
fifth of the lease), so a lock whose holder stopped renewing it for longer than its lease
(`[output] lock_lease_s`, recorded in the lock) belongs to a run that is gone, whatever host it
ran on: a run killed with SIGKILL, a lost container, a host that went away. The lease is judged
by the next run's clock against the holder's `renewed` time, so the hosts' clocks must agree to
well within the lease (NTP does). On the holder's own host, a dead pid frees the lock at once.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import socket
import threading
from typing import Any

from jobs.fs import LocalFs
from jobs.output.swap import LOCK, OutputError, OutputLocked, Target
from jobs.settings.model import DEFAULT_LEASE_S

log = logging.getLogger("planner")
RENEW = LOCK + "-renew-"  # the renewed lock's text before it replaces the lock


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _lock_text(token: str, lease_s: float, started: str | None = None) -> str:
    now = _now().isoformat(timespec="seconds")
    return json.dumps(
        {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": started or now,
            "renewed": now,
            "lease_s": lease_s,
            "token": token,
        }
    )


def _holder(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


def _expired(holder: dict[str, Any]) -> bool:
    """Its holder stopped renewing it for longer than its lease. A lock without `renewed` (a
    hand-made one, or an older planner's) never expires this way."""
    lease = holder.get("lease_s")
    try:
        renewed = dt.datetime.fromisoformat(str(holder["renewed"]))
    except (KeyError, ValueError):
        return False
    if not isinstance(lease, int | float) or isinstance(lease, bool) or lease <= 0:
        return False
    if renewed.tzinfo is None:
        renewed = renewed.replace(tzinfo=dt.UTC)
    return (_now() - renewed).total_seconds() > lease


def _is_stale(holder: dict[str, Any]) -> bool:
    """A lock of a run that is gone: its pid is dead on this host, or (any host) it was not
    renewed within its lease."""
    if holder.get("host") == socket.gethostname() and not _pid_alive(holder.get("pid")):
        return True
    return _expired(holder)


class Heartbeat:
    """Renews the lock every fifth of the lease while the run lives (a daemon thread: it never
    keeps a finished or killed process alive). Stops renewing if the lock is no longer ours."""

    def __init__(self, target: Target, lease_s: float, started: str) -> None:
        self.target, self.lease_s, self.started = target, lease_s, started
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="planner-lock-lease", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        lock = self.target.sibling(LOCK)
        while not self._stop.wait(self.lease_s / 5):
            try:
                if _holder(self.target.fs.read_text(lock)).get("token") != self.target.token:
                    self.lost = True
                    log.warning("the lock %s is no longer this run's: not renewing it", lock)
                    return
                _rewrite(
                    self.target, lock, _lock_text(self.target.token, self.lease_s, self.started)
                )
            except Exception as exc:  # a transient file-system error: try again next beat
                log.warning("cannot renew the lock %s: %s", lock, exc)


_beats: dict[str, Heartbeat] = {}


def _rewrite(target: Target, lock: str, text: str) -> None:
    """Replace the lock's text. Locally in one rename, so a reader never sees it half written;
    elsewhere (HDFS) an overwrite, and a reader that catches it mid-write finds no holder it
    can judge and treats the lock as held (exit 4, a retry later)."""
    if isinstance(target.fs, LocalFs):
        renewed = target.sibling(RENEW, target.token)
        with open(renewed, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(renewed, lock)
    else:
        target.fs.write_text(lock, text)


def lock(target: Target, lease_s: float = DEFAULT_LEASE_S) -> None:
    """Take the output's lock and keep renewing it until `unlock`; OutputLocked if a live run
    holds it."""
    lock = target.sibling(LOCK)
    text = _lock_text(target.token, lease_s)
    try:
        if target.fs.create_new(lock, text):
            _renew(target, lease_s, text)
            return
    except OSError as exc:
        raise OutputError(
            f"cannot write and rename in {target.parent} (the output's parent): {exc}"
        ) from exc
    found = target.fs.read_text(lock)
    holder = _holder(found)
    if _is_stale(holder):
        # Move the dead run's lock aside first: of two runs breaking it, one rename wins.
        broken = target.sibling(LOCK + "-stale-", target.token)
        with contextlib.suppress(OSError):
            target.fs.rename(lock, broken)
            if target.fs.read_text(broken) == found:
                target.fs.delete(broken)
                log.warning(
                    "removed the lock of a run that is gone (pid %s on host %s, started %s, %s)",
                    holder.get("pid"),
                    holder.get("host"),
                    holder.get("started"),
                    f"last renewed {holder['renewed']}, lease {holder.get('lease_s')} s"
                    if _expired(holder)
                    else "pid not running",
                )
                if target.fs.create_new(lock, text):
                    _renew(target, lease_s, text)
                    return
            elif not target.fs.exists(lock):  # not the dead run's lock: put it back
                target.fs.rename(broken, lock)
    raise OutputLocked(_locked(target.output, holder, lock))


def _locked(output: str, holder: dict[str, Any], lock: str) -> str:
    renewed = f", last renewed {holder['renewed']}" if "renewed" in holder else ""
    lease = holder.get("lease_s")
    expiry = f", expires {lease} s after its last renewal" if "renewed" in holder else ""
    return (
        f"another run holds {output}: pid {holder.get('pid', '?')} on host"
        f" {holder.get('host', '?')} since {holder.get('started', '?')}{renewed} (lock file"
        f" {lock}{expiry}; remove it only if that run is gone)"
    )


def check_free(output: str, local_dir: str) -> None:
    """OutputLocked, with `lock`'s message, when a live run holds the lock of `output` (as
    the claim names it, normalized), a local directory (`local_dir`, an OS path). Asked
    before the SparkSession is built, so a locked output is refused in a second, not after
    Spark's start. A stale lock is left to `lock`, which removes it; the claim makes every
    check again under the lock."""
    real = os.path.realpath(local_dir)
    parent, name = os.path.split(real)
    if not name:
        return  # a root directory: the claim refuses it
    lock = f"{parent.rstrip('/')}/.{name}.{LOCK}"
    try:
        with open(lock, encoding="utf-8") as f:
            found = f.read()
    except FileNotFoundError:
        return
    except OSError:
        return  # unreadable here: the claim decides, as it does today
    holder = _holder(found)
    if not _is_stale(holder):
        raise OutputLocked(_locked(output, holder, lock))


def _renew(target: Target, lease_s: float, text: str) -> None:
    beat = Heartbeat(target, lease_s, json.loads(text)["started"])
    _beats[target.token] = beat
    beat.start()


def unlock(target: Target) -> None:
    beat = _beats.pop(target.token, None)
    if beat is not None:
        beat.stop()
    lock = target.sibling(LOCK)
    if _holder(target.fs.read_text(lock)).get("token") == target.token:
        target.fs.delete(lock)
