"""Atomic replacement of the output directory through Hadoop's FileSystem.

Output is written into a temporary sibling directory and renamed into place only when every
table and the manifest are complete, so a failed or retried run never leaves half a result.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

from jobs.io import _fs


@contextmanager
def atomic_output(spark: SparkSession, output_dir: str) -> Iterator[str]:
    """Yield a hidden temporary sibling directory; on success it replaces `output_dir`.

    The previous output is renamed aside, the new one renamed into place, then the previous
    one deleted: readers see either the old or the new tables, never a mix or a half. On
    failure the temporary directory is deleted and `output_dir` is left as it was.
    """
    out = output_dir.rstrip("/")
    token = uuid.uuid4().hex[:12]
    parent, _, name = out.rpartition("/")
    # Hidden names ("."): Spark's partition discovery and most readers skip them, so a run in
    # progress (or one killed outright) never shows up as an extra `ds=...` partition.
    hidden = f"{parent}/.{name}" if parent else f".{name}"
    tmp = f"{hidden}.__tmp-{token}"
    fs, tmp_path = _fs(spark, tmp)
    _, out_path = _fs(spark, out)
    try:
        yield tmp
    except BaseException:
        fs.delete(tmp_path, True)
        raise
    old_path = None
    if fs.exists(out_path):
        _, old_path = _fs(spark, f"{hidden}.__old-{token}")
        if not fs.rename(out_path, old_path):
            fs.delete(tmp_path, True)
            raise OSError(f"cannot move the previous output {out} aside")
    if not fs.rename(tmp_path, out_path):
        if old_path is not None:
            fs.rename(old_path, out_path)
        raise OSError(f"cannot move the new output into place at {out} (kept {tmp})")
    if old_path is not None:
        fs.delete(old_path, True)
