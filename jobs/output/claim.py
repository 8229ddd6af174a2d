"""The claim: every check on the output before planning, the lock, then the swap."""

from __future__ import annotations

import logging
import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePosixPath

from pyspark.sql import SparkSession

from jobs.fs import FileSystem, HadoopFs, LocalFs
from jobs.output.lock import lock, unlock
from jobs.output.swap import (
    LOCK,
    OLD,
    PROBE,
    TMP,
    OutputError,
    Place,
    Target,
    halt_jobs,
    place_of,
    uri_of,
)
from jobs.settings.model import DEFAULT_LEASE_S
from jobs.tables.manifest import MANIFEST_FILE

log = logging.getLogger("planner")


def normalize(path: str) -> str:
    """The path without trailing slashes (`out/x/` and `out/x` are one output)."""
    stripped = path.rstrip("/")
    return stripped or path


def _clean_stale(target: Target) -> None:
    """Remove what dead runs left beside the output. The caller holds the lock, so no live run
    owns any of these. A previous output moved aside by a run killed mid-swap is put back."""
    prefix = f".{target.name}."
    leftovers = [
        n for n in target.fs.names(target.parent) if n.startswith(prefix) and n != f"{prefix}{LOCK}"
    ]
    for n in leftovers:
        path = f"{target.parent.rstrip('/')}/{n}"
        kind = n[len(prefix) :]
        if kind.startswith(OLD) and not target.fs.exists(target.path):
            log.warning("restoring the previous output %s left aside by a run that died", n)
            target.fs.rename(path, target.path)
        elif kind.startswith((TMP, OLD, PROBE, LOCK + "-stale-", LOCK + "-renew-")):
            log.warning("removing %s left by a run that died", path)
            target.fs.delete(path)


def _check_contents(target: Target, force: bool, marker: str, what: str) -> None:
    """An existing output must be empty or one of ours (it holds `marker`), unless --force."""
    out, fs = target.path, target.fs
    if not fs.exists(out):
        return
    if not fs.is_dir(out):
        raise OutputError(f"--output {target.output} is an existing file, not a directory")
    names = fs.names(out)
    if not names or marker in names or force:
        if names and marker not in names:
            log.warning("--force: replacing %s, which is not %s", target.output, what)
        return
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    raise OutputError(
        f"--output {target.output} is a non-empty directory without {marker} ({shown}):"
        f" not {what}, so it is not replaced"
        + (" (--force replaces it)" if marker == MANIFEST_FILE else "")
    )


def _probe_rename(target: Target) -> None:
    """Create and rename a probe directory beside the output: the swap needs both."""
    a = target.sibling(PROBE, target.token)
    b = a + "-renamed"
    try:
        target.fs.mkdirs(a)
        target.fs.rename(a, b)
    except OSError as exc:
        raise OutputError(
            f"cannot write and rename in {target.parent} (the output's parent): {exc}"
        ) from exc
    finally:
        target.fs.delete(a)
        target.fs.delete(b)


def _mount_points() -> set[str]:
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            return {line.split()[4] for line in f if len(line.split()) > 4}
    except OSError:
        return set()


_FS_IOC_GETFLAGS, _IMMUTABLE_OR_APPEND = 0x80086601, 0x10 | 0x20


def _frozen(path: str) -> bool:
    """The immutable or append-only attribute (chattr +i / +a): such a directory cannot move."""
    import array
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        flags = array.array("i", [0])
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, flags, True)
        return bool(flags[0] & _IMMUTABLE_OR_APPEND)
    except OSError:
        return False
    finally:
        os.close(fd)


def _check_local_move(target: Target) -> None:
    """Can the previous output be renamed? Asked before planning, not after."""
    out = target.path
    if not os.path.isdir(out):
        return
    real = os.path.realpath(out)
    reason = None
    if real in _mount_points() or os.path.ismount(real):
        reason = "it is a mount point"
    elif os.stat(real).st_dev != os.stat(target.parent).st_dev:
        reason = "it is on another file system than its parent"
    elif _frozen(real) or _frozen(target.parent):
        reason = "it (or its parent) is immutable or append-only"
    elif os.stat(target.parent).st_mode & stat.S_ISVTX and os.geteuid() not in (
        0,
        os.stat(real).st_uid,
        os.stat(target.parent).st_uid,
    ):
        reason = "its parent is sticky and owned by another user"
    elif not os.access(real, os.W_OK):
        reason = "it is not writable (a directory's rename updates its '..')"
    if reason:
        raise OutputError(
            f"the previous output {target.output} cannot be renamed aside ({reason}): it would"
            " not be replaced atomically; write to a directory beside or inside it instead"
        )


@contextmanager
def claim(
    spark: SparkSession,
    output_dir: str,
    input_dir: str | None = None,
    force: bool = False,
    lease_s: float = DEFAULT_LEASE_S,
) -> Iterator[Target]:
    """Check the output and lock it for this run; raises OutputError (exit 2) before planning.

    The lock is released (and any temporary of this run removed) when the block ends.
    """
    output = normalize(output_dir)
    place = place_of(spark, output)
    if input_dir is not None and place.overlaps(place_of(spark, normalize(input_dir))):
        raise OutputError(
            f"--output {output} overlaps --input {input_dir} (equal, inside or around it):"
            " the input would be replaced; --force does not override this"
        )
    name = PurePosixPath(place.path).name
    if not name:
        raise OutputError(f"--output {output} is a root directory")
    parent = str(PurePosixPath(place.path).parent)
    fs: FileSystem = LocalFs() if place.local else HadoopFs(spark, uri_of(place, place.path))
    target = Target(
        output, parent, name, fs, place, uuid.uuid4().hex[:12], lambda: halt_jobs(spark)
    )
    with _claimed(target, force, MANIFEST_FILE, "a previous output of this planner", lease_s):
        yield target


@contextmanager
def _claimed(
    target: Target, force: bool, marker: str, what: str, lease_s: float
) -> Iterator[Target]:
    """The claim's steps on a target: its parent, the lock, what dead runs left, the checks."""
    fs = target.fs
    try:
        fs.mkdirs(target.parent)
    except OSError as exc:
        raise OutputError(f"cannot create the output's parent {target.parent}: {exc}") from exc
    try:
        # Taken inside the try: a stop (SIGTERM, Ctrl-C) that lands after the lock is written
        # but before it is held still removes it. `unlock` removes this run's lock only.
        lock(target, lease_s)
        _clean_stale(target)
        _check_contents(target, force, marker, what)
        if target.place.local:
            _check_local_move(target)
        _probe_rename(target)
        yield target
    finally:
        fs.delete(target.sibling(TMP, target.token))
        unlock(target)


@contextmanager
def local_output(output_dir: str, marker: str, what: str) -> Iterator[str]:
    """`atomic_output` for a local path without Spark (the exporter's snapshot): the same
    checks, lock and swap; an existing folder must hold `marker`. Yields the temporary."""
    output = normalize(output_dir)
    if "://" in output and not output.startswith("file://"):
        raise OutputError(f"--output {output}: only local paths are written here")
    real = os.path.realpath(output.removeprefix("file://"))
    name = PurePosixPath(real).name
    if not name:
        raise OutputError(f"--output {output} is a root directory")
    parent = str(PurePosixPath(real).parent)
    target = Target(
        output, parent, name, LocalFs(), Place("file", "", real), uuid.uuid4().hex[:12], _nothing
    )
    with _claimed(target, False, marker, what, DEFAULT_LEASE_S), target.replace():
        assert target.local_tmp is not None  # invariant: built local above
        yield target.local_tmp


def _nothing() -> None:
    """No Spark job to halt."""


@contextmanager
def atomic_output(
    spark: SparkSession, output_dir: str, input_dir: str | None = None, force: bool = False
) -> Iterator[str]:
    """Claim `output_dir` and yield the temporary directory that replaces it on success."""
    with claim(spark, output_dir, input_dir, force) as target, target.replace() as tmp:
        yield tmp
