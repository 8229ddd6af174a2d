"""The output directory and the files in it: `claim`, `lock` and `swap` check the output
before planning, lock it and replace it only when complete; `assignment_files` and
`payload_files` write a local output's tables with pyarrow, in `spark_layout`, Spark's own
file layout (hash partitioning, partition folders, footers). This wing imports `tables` and
`settings` (and the shared `jobs.fs`), never `cli`, `plan`, `report` or `export`.

The job never deletes what is not its own (docs/deploy.md). Before any planning, `claim`:

- refuses an `--output` that equals, contains or lies inside `--input` (compared as resolved,
  fully qualified paths: symlinks, relative paths and `file:` URIs cannot hide an overlap);
- refuses an existing plain file, and a non-empty directory without `_manifest.json` (the mark
  of a previous output of this planner) unless `--force`, which never overrides the rest;
- takes a lock file beside the output (`.NAME.__lock`: pid, host, start and renewal times,
  lease), so two runs on one output never interleave: the second one stops with exit 4 naming
  the holder; the holder renews the lock while it runs, and a lock not renewed within its lease
  (`[output] lock_lease_s`) is a dead run's, on any host;
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

from jobs.output.claim import atomic_output, claim, normalize
from jobs.output.swap import OutputError, OutputLocked, Target

__all__ = ["OutputError", "OutputLocked", "Target", "atomic_output", "claim", "normalize"]
