"""One file-system adapter for the job: the OS for local paths, Hadoop's FileSystem otherwise.

Local paths go through the OS so that a failed rename raises and is never a copy (Hadoop's
local file system falls back to copy-and-delete); HDFS and object stores go through Hadoop's
FileSystem of the session, every rename's result checked. Both answer the same calls, so the
output's claim, lock and swap (`jobs.output`), the input reader and the report share them.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import shutil
from typing import Any, Protocol

from pyspark.sql import SparkSession


class FileSystem(Protocol):
    def exists(self, path: str) -> bool: ...
    def is_dir(self, path: str) -> bool: ...
    def names(self, path: str) -> list[str]: ...
    def mkdirs(self, path: str) -> None: ...
    def rename(self, src: str, dst: str) -> None: ...
    def exchange(self, a: str, b: str) -> bool: ...
    def delete(self, path: str) -> None: ...
    def create_new(self, path: str, text: str) -> bool: ...
    def read_text(self, path: str) -> str | None: ...
    def write_text(self, path: str, text: str) -> None: ...


class LocalFs:
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
        return exchange(a, b)

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
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
        except BaseException:  # a full disk, a stop: no empty file that looks held forever
            os.unlink(path)
            raise
        return True

    def read_text(self, path: str) -> str | None:
        try:
            with open(path, encoding="utf-8") as f:
                return f.read()
        except OSError:
            return None

    def write_text(self, path: str, text: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


class HadoopFs:
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
            try:
                stream.write(bytearray(text.encode("utf-8")))
            finally:
                stream.close()
        except BaseException:  # as locally: no empty file that looks held forever
            self._fs.delete(self._p(path), False)
            raise
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

    def write_text(self, path: str, text: str) -> None:
        stream = self._fs.create(self._p(path), True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def exchange(a: str, b: str) -> bool:
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


def hadoop_path(spark: SparkSession, path: str) -> tuple[Any, Any]:
    """(Hadoop FileSystem, Hadoop Path) of `path` as the session resolves it."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None  # invariant: a live session has a gateway
    hpath = jvm.org.apache.hadoop.fs.Path(path)
    return hpath.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hpath


def exists(spark: SparkSession, path: str) -> bool:
    fs, hpath = hadoop_path(spark, path)
    return bool(fs.exists(hpath))


def read_text(spark: SparkSession, path: str) -> str | None:
    """A small text file (a manifest), or None when absent; through Hadoop's FileSystem, as
    Spark's own listing skips names starting with `_`."""
    return HadoopFs(spark, path).read_text(path) if exists(spark, path) else None


def write_text(spark: SparkSession, path: str, text: str) -> None:
    HadoopFs(spark, path).write_text(path, text)


def write_json(spark: SparkSession, path: str, payload: dict[str, Any]) -> None:
    write_text(spark, path, json.dumps(payload, indent=2, sort_keys=True) + "\n")
