"""The output's lock file (`.NAME.__lock`): one run at a time per output."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import socket
from typing import Any

from jobs.output.swap import LOCK, OutputError, Target

log = logging.getLogger("planner")


def _lock_text(token: str) -> str:
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    return json.dumps(
        {"pid": os.getpid(), "host": socket.gethostname(), "started": started, "token": token}
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


def _is_stale(holder: dict[str, Any]) -> bool:
    """A lock of a run that died: its pid is gone on this host. Other hosts cannot be told."""
    return holder.get("host") == socket.gethostname() and not _pid_alive(holder.get("pid"))


def lock(target: Target) -> None:
    lock = target.sibling(LOCK)
    text = _lock_text(target.token)
    try:
        if target.fs.create_new(lock, text):
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
                    "removed the lock of a run that died (pid %s, started %s)",
                    holder.get("pid"),
                    holder.get("started"),
                )
                if target.fs.create_new(lock, text):
                    return
            elif not target.fs.exists(lock):  # not the dead run's lock: put it back
                target.fs.rename(broken, lock)
    raise OutputError(
        f"another run holds {target.output}: pid {holder.get('pid', '?')} on host"
        f" {holder.get('host', '?')} since {holder.get('started', '?')} (lock file {lock};"
        " remove it only if that run is gone)"
    )


def unlock(target: Target) -> None:
    lock = target.sibling(LOCK)
    if _holder(target.fs.read_text(lock)).get("token") == target.token:
        target.fs.delete(lock)
