"""The output directory: checked before planning, locked, and replaced only when complete.

The job never deletes what is not its own (docs/deploy.md). Before any planning, `claim`:

- refuses an `--output` that equals, contains or lies inside `--input` (compared as resolved,
  fully qualified paths: symlinks, relative paths and `file:` URIs cannot hide an overlap);
- refuses an existing plain file, and a non-empty directory without `_manifest.json` (the mark
  of a previous output of this planner) unless `--force`, which never overrides the rest;
- takes a lock file beside the output (`.NAME.__lock`: pid, host, start time), so two runs
  on one output never interleave: the second one stops with exit 2 naming the holder;
- removes the temporaries (`.NAME.__tmp-*`, `.NAME.__old-*`) of runs that died, which no live
  run holds any more (their lock is gone or belongs to a dead pid on this host);
- checks that the output's parent is writable and that a rename works there (a probe
  directory is created and renamed), and, on the local file system, that the previous output
  can be renamed at all (not a mount point, not immutable).

The tables are then written into a hidden sibling (`.NAME.__tmp-<token>`) and swapped into
place when complete. On Linux's local file system the swap is one `renameat2(RENAME_EXCHANGE)`:
a reader polling the path always finds either the old or the new output. Elsewhere (HDFS, or
a kernel or file system without it) it is two renames, the old output aside then the new one
in: between them, for the time of one rename, the path does not exist. Each rename's result is
checked and nothing is ever copied: Hadoop's local file system falls back to copy-and-delete
when a rename fails, which would empty the previous tables, so local paths are renamed with
the OS's own call. If the previous output cannot be moved, it stays exactly as it was and the
job fails naming it.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime as dt
import errno
import json
import logging
import os
import shutil
import socket
import stat
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from pyspark.sql import SparkSession

log = logging.getLogger("planner")
MANIFEST = "_manifest.json"
TMP, OLD, PROBE, LOCK = "__tmp-", "__old-", "__probe-", "__lock"


class OutputError(Exception):
    """The output location is unsafe or unusable; nothing was written (exit 2)."""


def normalize(path: str) -> str:
    """The path without trailing slashes (`out/x/` and `out/x` are one output)."""
    stripped = path.rstrip("/")
    return stripped or path


# --- file systems: the OS for local paths (strict renames), Hadoop's FileSystem otherwise ---


class _LocalFs:
    """Local paths through the OS: a failed rename raises, it is never a copy."""

    def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def names(self, path: str) -> list[str]:
        return sorted(os.listdir(path))

    def mkdirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def rename(self, src: str, dst: str) -> None:
        if os.path.lexists(dst):
            raise OSError(errno.EEXIST, "target exists", dst)
        os.rename(src, dst)

    def exchange(self, a: str, b: str) -> bool:
        return _exchange(a, b)

    def delete(self, path: str) -> None:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def create_new(self, path: str, text: str) -> bool:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        return True

    def read_text(self, path: str) -> str | None:
        try:
            with open(path, encoding="utf-8") as f:
                return f.read()
        except OSError:
            return None


class _HadoopFs:
    """HDFS and object stores through Hadoop's FileSystem; every rename's result is checked."""

    def __init__(self, spark: SparkSession, path: str) -> None:
        jvm = spark.sparkContext._jvm
        assert jvm is not None  # invariant: a live session has a gateway
        self._jvm = jvm
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        self._fs = jvm.org.apache.hadoop.fs.Path(path).getFileSystem(conf)

    def _p(self, path: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(path)

    def exists(self, path: str) -> bool:
        return bool(self._fs.exists(self._p(path)))

    def is_dir(self, path: str) -> bool:
        return bool(
            self._fs.exists(self._p(path)) and self._fs.getFileStatus(self._p(path)).isDirectory()
        )

    def names(self, path: str) -> list[str]:
        return sorted(str(s.getPath().getName()) for s in self._fs.listStatus(self._p(path)))

    def mkdirs(self, path: str) -> None:
        if not self._fs.mkdirs(self._p(path)):
            raise OSError(f"cannot create {path}")

    def rename(self, src: str, dst: str) -> None:
        if self.exists(dst):
            raise OSError(errno.EEXIST, "target exists", dst)
        if not (self._fs.rename(self._p(src), self._p(dst)) and self.exists(dst)):
            raise OSError(f"cannot rename {src} to {dst}")
        if self.exists(src):
            raise OSError(f"renaming {src} to {dst} left the source behind")

    def exchange(self, a: str, b: str) -> bool:
        return False

    def delete(self, path: str) -> None:
        self._fs.delete(self._p(path), True)

    def create_new(self, path: str, text: str) -> bool:
        try:
            stream = self._fs.create(self._p(path), False)
        except Exception:  # FileAlreadyExistsException (or a race with another creator)
            return False
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()
        return True

    def read_text(self, path: str) -> str | None:
        try:
            stream = self._fs.open(self._p(path))
        except Exception:
            return None
        try:
            reader = self._jvm.java.io.BufferedReader(
                self._jvm.java.io.InputStreamReader(stream, "UTF-8")
            )
            return "\n".join(iter(reader.readLine, None))
        finally:
            stream.close()


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _exchange(a: str, b: str) -> bool:
    """Swap two paths in one step (Linux `renameat2(RENAME_EXCHANGE)`); False if unsupported."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), b)


# --- where things are ---


@dataclass(frozen=True)
class _Place:
    """A path qualified by Hadoop (scheme, authority) and, when local, resolved by the OS."""

    scheme: str
    authority: str
    path: str  # absolute; symlinks resolved for local paths

    @property
    def local(self) -> bool:
        return self.scheme == "file"

    def overlaps(self, other: _Place) -> bool:
        if (self.scheme, self.authority) != (other.scheme, other.authority):
            return False
        a, b = PurePosixPath(self.path), PurePosixPath(other.path)
        return a == b or a in b.parents or b in a.parents


def _place(spark: SparkSession, path: str) -> _Place:
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # invariant: a live session has a gateway
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    uri = hpath.getFileSystem(conf).makeQualified(hpath).toUri()
    scheme, authority = str(uri.getScheme() or ""), str(uri.getAuthority() or "")
    raw = str(uri.getPath())
    resolved = os.path.realpath(raw) if scheme == "file" else raw.rstrip("/") or "/"
    return _Place(scheme, authority, resolved)


def _uri(place: _Place, path: str) -> str:
    """A path in `place`'s file system as Spark should be given it: fully qualified, so a
    local path stays local when the cluster's default file system is HDFS."""
    return f"{place.scheme}://{place.authority}{path}"


# --- the claim: checks, lock, stale temporaries, then the swap ---


@dataclass
class Target:
    """A claimed output: checked, locked; `replace()` writes and swaps it in."""

    output: str  # as the user gave it, normalized
    parent: str  # in the file system's own terms (absolute)
    name: str
    fs: Any
    place: _Place
    token: str
    halt: Callable[[], None]  # stops Spark's running jobs before their output is removed

    def sibling(self, kind: str, token: str = "") -> str:
        # Hidden names ("."): Spark's partition discovery and most readers skip them, so a run
        # in progress (or one killed outright) never shows up as an extra `ds=...` partition.
        return f"{self.parent.rstrip('/')}/.{self.name}.{kind}{token}"

    @property
    def path(self) -> str:
        return f"{self.parent.rstrip('/')}/{self.name}"

    @contextmanager
    def replace(self) -> Iterator[str]:
        """Yield the temporary directory to write into; on success it becomes the output."""
        tmp = self.sibling(TMP, self.token)
        try:
            yield _uri(self.place, tmp)
        except BaseException:
            # Interrupted mid-write, tasks may still be writing: stop them, then delete.
            self.halt()
            self.fs.delete(tmp)
            raise
        self._swap(tmp)

    def _swap(self, tmp: str) -> None:
        out = self.path
        if not self.fs.exists(out):
            self._move(tmp, out, keep=None)
            return
        try:
            if self.fs.exchange(tmp, out):
                self.fs.delete(tmp)  # now the previous output
                return
        except OSError as exc:
            self.fs.delete(tmp)
            raise OutputError(f"cannot replace {self.output}: {exc}; it is kept as it was") from exc
        aside = self.sibling(OLD, self.token)
        try:
            self.fs.rename(out, aside)
        except OSError as exc:
            self.fs.delete(tmp)
            raise OutputError(
                f"cannot move the previous output {self.output} aside ({exc}); it is kept as it was"
            ) from exc
        self._move(tmp, out, keep=aside)
        self.fs.delete(aside)

    def _move(self, tmp: str, out: str, keep: str | None) -> None:
        try:
            self.fs.rename(tmp, out)
        except OSError as exc:
            if keep is not None:
                self.fs.rename(keep, out)
            self.fs.delete(tmp)
            raise OutputError(
                f"cannot move the new output into place at {self.output}: {exc}"
            ) from exc


def _halt_jobs(spark: SparkSession, patience: float = 60.0) -> None:
    """Cancel Spark's running jobs and wait (a bounded time) until none is active."""
    with contextlib.suppress(Exception):
        sc = spark.sparkContext
        sc.cancelAllJobs()
        deadline = time.monotonic() + patience
        while sc.statusTracker().getActiveJobsIds() and time.monotonic() < deadline:
            time.sleep(0.1)


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


def _lock(target: Target) -> None:
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


def _unlock(target: Target) -> None:
    lock = target.sibling(LOCK)
    if _holder(target.fs.read_text(lock)).get("token") == target.token:
        target.fs.delete(lock)


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
        elif kind.startswith((TMP, OLD, PROBE, LOCK + "-stale-")):
            log.warning("removing %s left by a run that died", path)
            target.fs.delete(path)


def _check_contents(target: Target, force: bool) -> None:
    out, fs = target.path, target.fs
    if not fs.exists(out):
        return
    if not fs.is_dir(out):
        raise OutputError(f"--output {target.output} is an existing file, not a directory")
    names = fs.names(out)
    if not names or MANIFEST in names or force:
        if names and MANIFEST not in names:
            log.warning("--force: replacing %s, which is not a planner output", target.output)
        return
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    raise OutputError(
        f"--output {target.output} is a non-empty directory without {MANIFEST} ({shown}): not a"
        " previous output of this planner, so it is not replaced (--force replaces it)"
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
    spark: SparkSession, output_dir: str, input_dir: str | None = None, force: bool = False
) -> Iterator[Target]:
    """Check the output and lock it for this run; raises OutputError (exit 2) before planning.

    The lock is released (and any temporary of this run removed) when the block ends.
    """
    output = normalize(output_dir)
    place = _place(spark, output)
    if input_dir is not None and place.overlaps(_place(spark, normalize(input_dir))):
        raise OutputError(
            f"--output {output} overlaps --input {input_dir} (equal, inside or around it):"
            " the input would be replaced; --force does not override this"
        )
    name = PurePosixPath(place.path).name
    if not name:
        raise OutputError(f"--output {output} is a root directory")
    parent = str(PurePosixPath(place.path).parent)
    fs: Any = _LocalFs() if place.local else _HadoopFs(spark, _uri(place, place.path))
    target = Target(
        output, parent, name, fs, place, uuid.uuid4().hex[:12], lambda: _halt_jobs(spark)
    )
    try:
        fs.mkdirs(parent)
    except OSError as exc:
        raise OutputError(f"cannot create the output's parent {parent}: {exc}") from exc
    _lock(target)
    try:
        _clean_stale(target)
        _check_contents(target, force)
        if place.local:
            _check_local_move(target)
        _probe_rename(target)
        yield target
    finally:
        fs.delete(target.sibling(TMP, target.token))
        _unlock(target)


@contextmanager
def atomic_output(
    spark: SparkSession, output_dir: str, input_dir: str | None = None, force: bool = False
) -> Iterator[str]:
    """Claim `output_dir` and yield the temporary directory that replaces it on success."""
    with claim(spark, output_dir, input_dir, force) as target, target.replace() as tmp:
        yield tmp
