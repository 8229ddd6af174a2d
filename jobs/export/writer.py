"""The snapshot folder: four Parquet tables, `_snapshot.json`, then `_SUCCESS`.

The output is guarded exactly as the planner's (jobs/output/): a lock beside it, leftovers
of dead runs cleaned, the tables written into a hidden sibling and swapped in only when
complete, so a failed or interrupted export leaves no half snapshot and the previous one is
untouched. A non-empty `--output` is replaced only when it is a previous snapshot (it holds
`_snapshot.json`). The exporter runs without Spark, so the output is a local path.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from jobs.output.claim import local_output

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
            pa.field("group_state", _STR),
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


@contextmanager
def snapshot_output(output_dir: str) -> Iterator[str]:
    """Claim `output_dir` (local) and yield the temporary directory that replaces it: the
    planner's checks, lock and swap; an existing folder must be a previous snapshot."""
    with local_output(output_dir, SNAPSHOT_JSON, "a previous snapshot") as tmp:
        yield tmp


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
