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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from jobs.output.claim import local_output
from jobs.tables import contract

SNAPSHOT_JSON = "_snapshot.json"
SUCCESS = "_SUCCESS"
# Rows per file: what a table's rows cost the export at most (about 50 MB as Python rows)
FILE_ROWS = 100_000


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
    """One more file of the table `name`: part-00000.parquet, then part-00001.parquet, ..."""
    table = pa.Table.from_pylist(rows, schema=SCHEMAS[name])
    where = os.path.join(folder, name)
    os.makedirs(where, exist_ok=True)
    part = sum(1 for f in os.listdir(where) if f.endswith(".parquet"))
    pq.write_table(table, os.path.join(where, f"part-{part:05d}.parquet"))


class TableSink:
    """The tables as the export produces them, a chunk of groups at a time: each table's rows
    wait until they fill a file of `file_rows` rows (the export holds no more than that per
    table, whatever the estate's size); `close` writes the rest, and an empty file for a table
    without rows."""

    def __init__(self, folder: str, file_rows: int = FILE_ROWS) -> None:
        self.folder = folder
        self.file_rows = file_rows
        self._rows: dict[str, list[dict[str, Any]]] = {}
        self._files: dict[str, int] = {}

    def write(self, name: str, rows: list[dict[str, Any]]) -> None:
        held = self._rows.setdefault(name, [])
        held.extend(rows)
        while len(held) >= self.file_rows:
            self._flush(name, held[: self.file_rows])
            del held[: self.file_rows]

    def close(self, names: Iterable[str]) -> None:
        for name in names:
            held = self._rows.pop(name, [])
            if held or not self._files.get(name):
                self._flush(name, held)

    def _flush(self, name: str, rows: list[dict[str, Any]]) -> None:
        write_table(self.folder, name, rows)
        self._files[name] = self._files.get(name, 0) + 1


def write_snapshot(
    folder: str,
    tables: dict[str, list[dict[str, Any]]],
    meta: dict[str, Any],
    sink: TableSink | None = None,
) -> None:
    """The tables' rows (after those `sink` took already), then `_snapshot.json`, then
    `_SUCCESS`."""
    sink = TableSink(folder) if sink is None else sink
    for name, rows in tables.items():
        sink.write(name, rows)
    sink.close(tables)
    with open(os.path.join(folder, SNAPSHOT_JSON), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2, sort_keys=True)
        f.write("\n")
    # Last: the DAG's sensor waits for it.
    with open(os.path.join(folder, SUCCESS), "w", encoding="utf-8"):
        pass
