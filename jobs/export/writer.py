"""The snapshot folder: the input tables as Parquet, `_snapshot.json`, then `_SUCCESS`.

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
from jobs.tables import contract

SNAPSHOT_JSON = "_snapshot.json"
SUCCESS = "_SUCCESS"


def _schema(table: contract.Table) -> pa.Schema:
    schema = table.schema()
    if table is contract.OFFSETS:
        # A partition whose leader gave no end offset is exported with a null one (the
        # planner reports it: NULL_LOG_END_OFFSET), so the file's column is optional.
        at = schema.get_field_index("log_end_offset")
        schema = schema.set(at, schema.field(at).with_nullable(True))
    return schema


# The contract's input tables, as the exporter writes them (client_id and client_host too).
SCHEMAS = {t.name: _schema(t) for t in contract.INPUTS}


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
