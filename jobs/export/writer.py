"""The snapshot folder: four Parquet tables, `_snapshot.json`, then `_SUCCESS`.

The output is guarded exactly as the planner's (jobs/output.py): a lock beside it, leftovers
of dead runs cleaned, the tables written into a hidden sibling and swapped in only when
complete, so a failed or interrupted export leaves no half snapshot and the previous one is
untouched. A non-empty `--output` is replaced only when it is a previous snapshot (it holds
`_snapshot.json`). The exporter runs without Spark, so the output is a local path.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from jobs import output as out

SNAPSHOT_JSON = "_snapshot.json"
SUCCESS = "_SUCCESS"

_STR, _INT, _LONG = pa.string(), pa.int32(), pa.int64()
SCHEMAS = {
    "topic_partitions": pa.schema(
        [
            pa.field("topic", _STR, nullable=False),
            pa.field("partition", _INT, nullable=False),
            pa.field("replica_racks", pa.list_(_STR)),
            pa.field("weight", pa.float64()),
        ]
    ),
    "subscriptions": pa.schema(
        [
            pa.field("group_id", _STR, nullable=False),
            pa.field("member_id", _STR, nullable=False),
            pa.field("group_instance_id", _STR),
            pa.field("client_rack", _STR),
            pa.field("topics", pa.list_(_STR)),
            pa.field("topic_pattern", _STR),
            pa.field("assignment_strategies", pa.list_(_STR)),
            pa.field("generation", _INT),
            pa.field("group_protocol", _STR),
        ]
    ),
    "current_assignment": pa.schema(
        [
            pa.field("group_id", _STR, nullable=False),
            pa.field("member_id", _STR, nullable=False),
            pa.field("topic", _STR, nullable=False),
            pa.field("partition", _INT, nullable=False),
        ]
    ),
    "offsets": pa.schema(
        [
            pa.field("group_id", _STR, nullable=False),
            pa.field("topic", _STR, nullable=False),
            pa.field("partition", _INT, nullable=False),
            pa.field("committed_offset", _LONG),
            pa.field("log_end_offset", _LONG),
        ]
    ),
}


def _check_contents(target: out.Target) -> None:
    path = target.path
    if not os.path.lexists(path):
        return
    if not os.path.isdir(path):
        raise out.OutputError(f"--output {target.output} is an existing file, not a directory")
    names = sorted(os.listdir(path))
    if names and SNAPSHOT_JSON not in names:
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        raise out.OutputError(
            f"--output {target.output} is a non-empty directory without {SNAPSHOT_JSON}"
            f" ({shown}): not a previous snapshot, so it is not replaced"
        )


@contextmanager
def snapshot_output(output_dir: str) -> Iterator[str]:
    """Claim `output_dir` (local) and yield the temporary directory that replaces it."""
    output = out.normalize(output_dir)
    if "://" in output and not output.startswith("file://"):
        raise out.OutputError(f"--output {output}: the exporter writes local paths only")
    real = os.path.realpath(output.removeprefix("file://"))
    name = PurePosixPath(real).name
    if not name:
        raise out.OutputError(f"--output {output} is a root directory")
    parent = str(PurePosixPath(real).parent)
    fs = out._LocalFs()
    place = out._Place("file", "", real)
    target = out.Target(output, parent, name, fs, place, uuid.uuid4().hex[:12], lambda: None)
    try:
        fs.mkdirs(parent)
    except OSError as exc:
        raise out.OutputError(f"cannot create the output's parent {parent}: {exc}") from exc
    out._lock(target)
    try:
        out._clean_stale(target)
        _check_contents(target)
        out._check_local_move(target)
        out._probe_rename(target)
        with target.replace() as tmp:
            yield tmp.removeprefix("file://")
    finally:
        fs.delete(target.sibling(out.TMP, target.token))
        out._unlock(target)


def write_table(folder: str, name: str, rows: list[dict[str, Any]]) -> None:
    table = pa.Table.from_pylist(rows, schema=SCHEMAS[name])
    os.makedirs(os.path.join(folder, name))
    pq.write_table(table, os.path.join(folder, name, "part-00000.parquet"))


def write_snapshot(
    folder: str, tables: dict[str, list[dict[str, Any]]], meta: dict[str, Any]
) -> None:
    for name, rows in tables.items():
        write_table(folder, name, rows)
    with open(os.path.join(folder, SNAPSHOT_JSON), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2, sort_keys=True)
        f.write("\n")
    # Last: the DAG's sensor waits for it.
    with open(os.path.join(folder, SUCCESS), "w", encoding="utf-8"):
        pass
