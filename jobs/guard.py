"""The per-group guard: a strategy that hangs, exhausts memory or kills its process fails
only the (group, strategy) it touched.

A bucket is planned in a child process forked from the Python worker. Before each unit of
work the core announces it (`assignors.progress`: group, strategy, phase), and the child
passes the announcement to the parent through a pipe. The parent waits for the next
announcement at most `group_timeout_s`, and watches the child's resident memory against
`group_memory_mb`. When the child dies (a segfault in a plugin's native library, `os._exit`,
the kernel's OOM killer) or is stopped for time or memory, the unit it was in is known: the
bucket is planned again in a fresh child with that strategy left out for that group, and the
(group, strategy) gets a `rejected` row naming the strategy, the phase and the cause
(INTERNAL_ERROR for a built-in assignor, ASSIGNOR_FAILED for a plugin). Every other group and
strategy is planned as usual; only the groups from the failed one on are planned again.

Without `os.fork` (not Linux or macOS) the bucket is planned in the worker itself, unguarded.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import pickle
import select
import signal
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pandas as pd

from assignors import progress
from assignors.problems import ERROR, Problem, Reason

ProblemsFrame = Callable[[list[Problem]], pd.DataFrame]

POLL_S = 0.2  # how often the parent looks at the child's memory while it waits
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class GuardSettings:
    """`[planner] group_timeout_s` and `group_memory_mb`; 0 turns a limit off."""

    timeout_s: float = 60.0
    memory_mb: int = 2048

    @property
    def enabled(self) -> bool:
        return hasattr(os, "fork") and (self.timeout_s > 0 or self.memory_mb > 0)


@dataclass(frozen=True)
class Unit:
    group_id: str
    strategy: str
    phase: str


@dataclass(frozen=True)
class Failure:
    """Why a child stopped in `unit`: 'timeout', 'memory', a signal or an exit code."""

    unit: Unit
    cause: str


# A bucket planner: (the groups to leave strategies out of) -> the wide output frame.
Planner = Callable[[Mapping[str, frozenset[str]]], pd.DataFrame]


def guarded(
    plan: Planner,
    settings: GuardSettings,
    builtin: Callable[[str], bool],
    problems_frame: ProblemsFrame,
) -> pd.DataFrame:
    """Plan a bucket in a child; on a failure, again without the failed (group, strategy),
    until it completes. `builtin(strategy)` says whose fault a failure is."""
    if not settings.enabled:
        return plan({})
    excluded: dict[str, frozenset[str]] = {}
    failures: list[Failure] = []
    while True:
        outcome = _run_child(plan, excluded, settings)
        if isinstance(outcome, pd.DataFrame):
            problems = [_problem(f, builtin) for f in failures]
            return _concat(outcome, problems_frame(problems)) if problems else outcome
        failures.append(outcome)
        unit = outcome.unit
        left_out = excluded.get(unit.group_id, frozenset())
        if unit.strategy in left_out:  # cannot happen: the unit was left out; never loop
            raise RuntimeError(f"the guard could not isolate {unit}")
        excluded[unit.group_id] = left_out | {unit.strategy}


def _run_child(
    plan: Planner, excluded: Mapping[str, frozenset[str]], settings: GuardSettings
) -> pd.DataFrame | Failure:
    read_fd, write_fd = os.pipe()
    with tempfile.NamedTemporaryFile(prefix="planner-bucket-", suffix=".pkl", delete=False) as f:
        result_path = f.name
    try:
        pid = os.fork()
        if pid == 0:  # the child: plan, announce each unit, leave the frame in the file
            os.close(read_fd)
            _child(plan, excluded, write_fd, result_path)
        os.close(write_fd)
        return _watch(pid, read_fd, result_path, settings)
    finally:
        with contextlib.suppress(OSError):
            os.close(read_fd)
        with contextlib.suppress(OSError):
            os.unlink(result_path)


def _child(
    plan: Planner, excluded: Mapping[str, frozenset[str]], write_fd: int, result_path: str
) -> None:
    code = 0
    faulthandler.disable()  # a crash is reported once, by the parent, not as a stack dump
    try:

        def announce(group_id: str, strategy: str, phase: str) -> None:
            os.write(write_fd, pickle.dumps(Unit(group_id, strategy, phase)) + b"\n\0\n")

        progress.listen(announce)
        frame = plan(excluded)
        with open(result_path, "wb") as out:
            pickle.dump(frame, out, protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:  # the parent reports the unit; the child must never return
        code = 70
    finally:
        os._exit(code)


_SEP = b"\n\0\n"


def _watch(
    pid: int, read_fd: int, result_path: str, settings: GuardSettings
) -> pd.DataFrame | Failure:
    unit = Unit("", "(bucket)", "read")
    buffered = b""
    deadline = time.monotonic() + settings.timeout_s if settings.timeout_s > 0 else None
    while True:
        wait = POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic()))
        ready, _, _ = select.select([read_fd], [], [], wait)
        if ready:
            chunk = os.read(read_fd, 65536)
            if not chunk:  # the child closed its end: it has exited
                break
            buffered += chunk
            *messages, buffered = buffered.split(_SEP)
            if messages:
                unit = pickle.loads(messages[-1])
                if settings.timeout_s > 0:
                    deadline = time.monotonic() + settings.timeout_s
            continue
        if deadline is not None and time.monotonic() >= deadline:
            _stop(pid)
            return Failure(unit, f"did not finish within {settings.timeout_s:g} s")
        if settings.memory_mb > 0 and _rss_mb(pid) > settings.memory_mb:
            _stop(pid)
            return Failure(unit, f"used more than {settings.memory_mb} MB of memory")
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return Failure(unit, f"killed its worker with signal {signal.Signals(sig).name}")
    code = os.WEXITSTATUS(status)
    if code != 0:
        return Failure(unit, f"ended its worker with exit code {code}")
    with open(result_path, "rb") as f:
        frame: pd.DataFrame = pickle.load(f)
    return frame


def _stop(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * _PAGE / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def _problem(failure: Failure, builtin: Callable[[str], bool]) -> Problem:
    unit = failure.unit
    if not unit.group_id:
        # before any group: reading the bucket's rows failed (a planner bug)
        detail = f"planning the bucket {failure.cause} before its first group"
        return Problem(None, None, None, ERROR, Reason.INTERNAL_ERROR, detail)
    own = builtin(unit.strategy)
    reason = Reason.INTERNAL_ERROR if own else Reason.ASSIGNOR_FAILED
    what = "the built-in assignor" if own else "the assignor plugin"
    detail = (
        f"{what} {unit.strategy!r} {failure.cause} ({unit.phase} of group"
        f" {unit.group_id!r}); the group is planned without it"
        + (" (a planner bug: please report it)" if own else "")
    )
    return Problem(unit.group_id, None, None, ERROR, reason, detail, unit.strategy)


def _concat(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """`a` then `b`, each Arrow-backed column one contiguous array (as the UDF's frames are:
    PySpark passes those through, and refuses a column of several chunks)."""
    out = pd.concat([a, b], ignore_index=True)
    for name in out.columns:
        column = out[name]
        if isinstance(column.dtype, pd.ArrowDtype):
            chunks = column.array.__arrow_array__()
            out[name] = pd.Series(
                pd.arrays.ArrowExtensionArray(chunks.combine_chunks()), index=out.index
            )
    return out
