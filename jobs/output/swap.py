"""A claimed output and its swap: the tables are written aside, then swapped into place."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import PurePosixPath

from pyspark.sql import SparkSession

from jobs.fs import FileSystem

TMP, OLD, PROBE, LOCK = "__tmp-", "__old-", "__probe-", "__lock"


class OutputError(Exception):
    """The output location is unsafe or unusable; nothing was written (exit 2)."""


class OutputLocked(OutputError):
    """Another live run holds the output's lock (exit 4: retry later, the input is fine)."""


@dataclass(frozen=True)
class Place:
    """A path qualified by Hadoop (scheme, authority) and, when local, resolved by the OS."""

    scheme: str
    authority: str
    path: str  # absolute; symlinks resolved for local paths

    @property
    def local(self) -> bool:
        return self.scheme == "file"

    def overlaps(self, other: Place) -> bool:
        if (self.scheme, self.authority) != (other.scheme, other.authority):
            return False
        a, b = PurePosixPath(self.path), PurePosixPath(other.path)
        return a == b or a in b.parents or b in a.parents


def place_of(spark: SparkSession, path: str) -> Place:
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # invariant: a live session has a gateway
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    uri = hpath.getFileSystem(conf).makeQualified(hpath).toUri()
    scheme, authority = str(uri.getScheme() or ""), str(uri.getAuthority() or "")
    raw = str(uri.getPath())
    resolved = os.path.realpath(raw) if scheme == "file" else raw.rstrip("/") or "/"
    return Place(scheme, authority, resolved)


def uri_of(place: Place, path: str) -> str:
    """A path in `place`'s file system as Spark should be given it: fully qualified, so a
    local path stays local when the cluster's default file system is HDFS."""
    return f"{place.scheme}://{place.authority}{path}"


@dataclass
class Target:
    """A claimed output: checked, locked; `replace()` writes and swaps it in."""

    output: str  # as the user gave it, normalized
    parent: str  # in the file system's own terms (absolute)
    name: str
    fs: FileSystem
    place: Place
    token: str
    halt: Callable[[], None]  # stops Spark's running jobs before their output is removed

    def sibling(self, kind: str, token: str = "") -> str:
        # Hidden names ("."): Spark's partition discovery and most readers skip them, so a run
        # in progress (or one killed outright) never shows up as an extra `ds=...` partition.
        return f"{self.parent.rstrip('/')}/.{self.name}.{kind}{token}"

    @property
    def path(self) -> str:
        return f"{self.parent.rstrip('/')}/{self.name}"

    @property
    def local_tmp(self) -> str | None:
        """The temporary directory `replace()` yields, as an OS path when the output is
        local (for code that writes it without Hadoop), else None."""
        return self.sibling(TMP, self.token) if self.place.local else None

    @contextmanager
    def replace(self) -> Iterator[str]:
        """Yield the temporary directory to write into; on success it becomes the output."""
        tmp = self.sibling(TMP, self.token)
        try:
            yield uri_of(self.place, tmp)
        except BaseException:
            # Interrupted mid-write, tasks may still be writing: stop them, then delete.
            self.halt()
            self.fs.delete(tmp)
            raise
        if not self._still_locked():
            # This run stopped renewing its lock for longer than the lease (a paused process)
            # and another run took it over: that run owns the output now.
            self.fs.delete(tmp)
            raise OutputLocked(
                f"the lock of {self.output} was taken over by another run while this one was"
                " stalled past its lease: the output is left to that run"
            )
        self._swap(tmp)

    def discard(self, name: str) -> None:
        """Delete `name` inside this run's temporary directory: scratch data written there
        for the run's own use, which must not land in the output."""
        self.fs.delete(f"{self.sibling(TMP, self.token)}/{name}")

    def _still_locked(self) -> bool:
        try:
            holder = json.loads(self.fs.read_text(self.sibling(LOCK)) or "")
        except ValueError:
            return False
        return isinstance(holder, dict) and holder.get("token") == self.token

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


def halt_jobs(spark: SparkSession, patience: float = 60.0) -> None:
    """Cancel Spark's running jobs and wait (a bounded time) until none is active."""
    with contextlib.suppress(Exception):
        sc = spark.sparkContext
        sc.cancelAllJobs()
        deadline = time.monotonic() + patience
        while sc.statusTracker().getActiveJobsIds() and time.monotonic() < deadline:
            time.sleep(0.1)
