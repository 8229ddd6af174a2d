"""The per-group guard: a strategy that hangs, exhausts memory or kills its process fails
only the (group, strategy) it touched.

A bucket is planned in a child process forked from the Python worker. Before each unit of
work the core announces it (`assignors.progress`: group, strategy, phase), and the child
posts it in shared memory. The parent gives each unit at most `group_timeout_s` and watches
the child's resident memory against `group_memory_mb`. When the child dies (a segfault in a
plugin's native library, `os._exit`, the kernel's OOM killer) or is stopped for time or
memory, the unit it was in is known: the bucket is planned again in a fresh child with that
strategy left out for that group, and the (group, strategy) gets a `rejected` row naming the
strategy, the phase and the cause (INTERNAL_ERROR for a built-in assignor, ASSIGNOR_FAILED for
a plugin). Every other group and strategy of the bucket is planned as usual.

A Python exception out of the bucket's planner is no unit's doing (the planner turns those of a
group into that group's rows): it is the bucket's, a full disk under the assignment rows, say.
The child hands it to the parent, which raises it, as the worker would unguarded.

Without `os.fork` (not Linux or macOS) the bucket is planned in the worker itself, unguarded.
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import logging
import mmap
import os
import pickle
import select
import signal
import struct
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pandas as pd

from assignors import progress
from assignors.problems import ERROR, Problem, Reason
from assignors.whatif.lookalike import process_bounce_memo, process_memo
from jobs.settings.run import GuardSettings as GuardSettings  # declared with the settings

# The name the job's log lines (and a log filter) know its warnings by.
log = logging.getLogger("jobs.guard")
POLL_S = 0.2  # how often the parent looks at the child's memory while it waits
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


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
) -> tuple[pd.DataFrame, list[Problem]]:
    """Plan a bucket in a child; on a failure, again without the failed (group, strategy),
    until it completes. Returns the frame and a problem per failure; `builtin(strategy)` says
    whose fault a failure is."""
    if not settings.enabled:
        return plan({}), []
    excluded: dict[str, frozenset[str]] = {}
    failures: list[Failure] = []
    while True:
        outcome = _run_child(plan, excluded, settings)
        if isinstance(outcome, pd.DataFrame):
            return outcome, [_problem(f, builtin) for f in failures]
        failures.append(outcome)
        unit = outcome.unit
        left_out = excluded.get(unit.group_id, frozenset())
        if unit.strategy in left_out:  # cannot happen: the unit was left out; never loop
            raise RuntimeError(f"the guard could not isolate {unit}")
        excluded[unit.group_id] = left_out | {unit.strategy}


def _run_child(
    plan: Planner, excluded: Mapping[str, frozenset[str]], settings: GuardSettings
) -> pd.DataFrame | Failure:
    # The child writes the unit it is in to shared memory (no system call per unit); the
    # pipe only tells the parent, by closing, that the child has exited.
    board = mmap.mmap(-1, _BOARD_BYTES)
    raised = mmap.mmap(-1, _RAISED_BYTES)
    read_fd, write_fd = os.pipe()
    with tempfile.NamedTemporaryFile(prefix="planner-bucket-", suffix=".pkl", delete=False) as f:
        result_path = f.name
    try:
        pid = os.fork()
        if pid == 0:  # the child: plan, post each unit, leave the frame in the file
            os.close(read_fd)
            _child(plan, excluded, board, raised, result_path)
        os.close(write_fd)
        return _watch(pid, read_fd, board, raised, result_path, settings)
    finally:
        board.close()
        raised.close()
        with contextlib.suppress(OSError):
            os.close(read_fd)
        with contextlib.suppress(OSError):
            os.unlink(result_path)


# The board: a counter (8 bytes), the unit's length (4 bytes), the unit (group, strategy and
# phase joined by NUL, UTF-8). Group ids longer than the board are cut (the guard's row then
# names the group by its prefix).
_BOARD_BYTES = 1 << 20
_HEAD = struct.Struct("<QI")
# What the child raised: its length (4 bytes), then the exception pickled, on shared memory
# because the disk may be what failed.
_RAISED_BYTES = 1 << 16
_RAISED_HEAD = struct.Struct("<I")


def _child(
    plan: Planner,
    excluded: Mapping[str, frozenset[str]],
    board: mmap.mmap,
    raised: mmap.mmap,
    result_path: str,
) -> None:
    code = 0
    faulthandler.disable()  # a crash is reported once, by the parent, not as a stack dump
    # No cyclic collection in a child that ends when its bucket is done: a plan holds no
    # cycles (`jobs.plan.udf._no_cyclic_gc`), and turning the collector back on at the end walks
    # every object the bucket made (millions on a large group) for memory `_exit` returns
    # whole. It also leaves the pages shared with the parent unwritten.
    gc.disable()
    try:
        posted = 0

        def post(group_id: str, strategy: str, phase: str) -> None:
            nonlocal posted
            text = "\0".join((group_id, strategy, phase)).encode("utf-8", "replace")
            text = text[: _BOARD_BYTES - _HEAD.size]
            posted += 1
            board[_HEAD.size : _HEAD.size + len(text)] = text
            _HEAD.pack_into(board, 0, posted, len(text))

        memo, bounces = process_memo(), process_bounce_memo()
        mark, bounces_mark = memo.mark(), bounces.mark()
        with progress.listening(post):
            frame = plan(excluded)
        # The look-alike shapes this bucket simulated, what-if figures and migration bounce
        # costs, go back with its frame: the parent keeps them for the buckets it forks next
        # (`assignors.whatif.lookalike`). They only save time: if they cannot be pickled, the
        # frame goes back alone.
        try:
            learned: bytes | None = pickle.dumps(
                (memo.since(mark), bounces.since(bounces_mark)), pickle.HIGHEST_PROTOCOL
            )
        except Exception:
            learned = None
        with open(result_path, "wb") as out:
            pickle.dump((frame, learned), out, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # the bucket's: the parent raises it
        code = 70
        _post_raised(raised, exc)
    except BaseException:  # a plugin's SystemExit, say: the parent reports the unit
        code = 70
    finally:
        os._exit(code)


def _post_raised(raised: mmap.mmap, exc: Exception) -> None:
    """`exc` for the parent, with the child's traceback as a note (an exception that does not
    pickle, or pickles too large, goes as a RuntimeError naming it)."""
    where = "".join(traceback.format_exception(exc)).rstrip()
    try:
        exc.add_note(f"raised in the bucket's guarded child process:\n{where}")
        data = pickle.dumps(exc, pickle.HIGHEST_PROTOCOL)
        pickle.loads(data)
    except Exception:
        data = b""
    if not data or len(data) > _RAISED_BYTES - _RAISED_HEAD.size:
        named = RuntimeError(f"{type(exc).__name__}: {exc}")
        data = pickle.dumps(named, pickle.HIGHEST_PROTOCOL)[: _RAISED_BYTES - _RAISED_HEAD.size]
    raised[_RAISED_HEAD.size : _RAISED_HEAD.size + len(data)] = data
    _RAISED_HEAD.pack_into(raised, 0, len(data))


def _read_raised(raised: mmap.mmap) -> BaseException | None:
    (size,) = _RAISED_HEAD.unpack_from(raised, 0)
    if size == 0:
        return None
    try:
        found = pickle.loads(bytes(raised[_RAISED_HEAD.size : _RAISED_HEAD.size + size]))
    except Exception as exc:
        return RuntimeError(f"the bucket's guarded child failed (its exception is lost: {exc})")
    return found if isinstance(found, BaseException) else None


def _read_board(board: mmap.mmap) -> tuple[int, Unit]:
    posted, size = _HEAD.unpack_from(board, 0)
    if posted == 0:
        return 0, Unit("", "(bucket)", "read")
    parts = bytes(board[_HEAD.size : _HEAD.size + size]).decode("utf-8", "replace").split("\0")
    return posted, Unit(*[*parts, "", "", ""][:3])


def _watch(
    pid: int,
    read_fd: int,
    board: mmap.mmap,
    raised: mmap.mmap,
    result_path: str,
    settings: GuardSettings,
) -> pd.DataFrame | Failure:
    seen = 0
    deadline = time.monotonic() + settings.timeout_s if settings.timeout_s > 0 else None
    while True:
        wait = POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic()))
        ready, _, _ = select.select([read_fd], [], [], wait)
        if ready and not os.read(read_fd, 1):  # closed: the child has exited
            break
        posted, _ = _HEAD.unpack_from(board, 0)
        if posted != seen:  # a new unit started: its own time allowance
            seen = posted
            if settings.timeout_s > 0:
                deadline = time.monotonic() + settings.timeout_s
            continue
        if deadline is not None and time.monotonic() >= deadline:
            _stop(pid)
            return Failure(_read_board(board)[1], f"did not finish within {settings.timeout_s:g} s")
        if settings.memory_mb > 0 and _rss_mb(pid) > settings.memory_mb:
            _stop(pid)
            return Failure(
                _read_board(board)[1], f"used more than {settings.memory_mb} MB of memory"
            )
    _, status = os.waitpid(pid, 0)
    unit = _read_board(board)[1]
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return Failure(unit, f"killed its worker with signal {signal.Signals(sig).name}")
    code = os.WEXITSTATUS(status)
    if code != 0:
        found = _read_raised(raised)
        if found is not None:
            raise found
        return Failure(unit, f"ended its worker with exit code {code}")
    with open(result_path, "rb") as f:
        frame, learned = pickle.load(f)
    if learned is not None:
        _merge_learned(learned)
    return frame


def _merge_learned(learned: bytes) -> None:
    """Keep the shapes a child learned. They only save time: shapes that do not unpickle
    stay behind (the next buckets simulate them again), and the bucket's frame is kept."""
    try:
        shapes, bounces = pickle.loads(learned)
    except Exception as exc:
        log.warning(
            "the look-alike shapes of a bucket were dropped: %s: %s", type(exc).__name__, exc
        )
        return
    process_memo().merge(shapes)
    process_bounce_memo().merge(bounces)


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
