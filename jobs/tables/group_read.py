"""One group's rows from a planner input or output, read with pyarrow alone (no Spark).

Every table is a Parquet dataset (`NAME/`, a folder of part files, or `NAME.parquet`, one
file: docs/data-contract.md). Only the group's rows are read: the scan filters on `group_id` (and on
`topic` for `topic_partitions`), so pyarrow skips the row groups whose statistics exclude
the group and decodes the columns of the others only.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from jobs.tables import contract
from jobs.tables.manifest import MANIFEST_FILE

OUTPUT_TABLES = contract.OUTPUT_NAMES
MANIFEST = MANIFEST_FILE
Row = dict[str, Any]

# The contract's input columns as pyarrow reads them: files that disagree in ways the
# contract accepts (int32 next to int64, an all-null column typed `null`) are cast to these.
INPUT_COLUMNS: dict[str, dict[str, pa.DataType]] = {
    t.name: dict(zip(t.names, t.read_schema().types, strict=True)) for t in contract.INPUTS
}
REQUIRED_INPUTS = tuple(t.name for t in contract.INPUTS if t.required)


class NotFoundError(Exception):
    """A directory that is not what the command needs, or a group it does not hold (exit 2)."""


def _hidden(name: str) -> bool:
    # Spark's rule: `_SUCCESS`, `.crc` files, `_temporary` are not data
    return (name.startswith("_") and "=" not in name) or name.startswith(".")


def _data_files(path: str) -> list[str]:
    if not os.path.isdir(path):
        return [path]
    found = []
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not _hidden(d))
        found += [os.path.join(root, n) for n in sorted(names) if not _hidden(n)]
    return found


def locate(root: str, name: str) -> str | None:
    """`root/NAME/` or `root/NAME.parquet`; None when absent. Both present is an error."""
    candidates = [os.path.join(root, name), os.path.join(root, f"{name}.parquet")]
    present = [c for c in candidates if os.path.exists(c)]
    if len(present) > 1:
        raise NotFoundError(f"{name}: found both {present[0]} and {present[1]}; keep one")
    if not present or not _data_files(present[0]):
        return None
    return present[0]


def dataset(path: str, columns: dict[str, pa.DataType] | None = None) -> ds.Dataset:
    """The dataset at `path`; with `columns`, under that schema (the contract columns
    present in the files; any the files lack read as null)."""
    files = _data_files(path)
    base = path if os.path.isdir(path) else None
    part = ds.partitioning(flavor="hive") if base else None
    found = ds.dataset(files, format="parquet", partitioning=part, partition_base_dir=base)
    if columns is None:
        return found
    schema = pa.schema([(n, t) for n, t in columns.items()])
    return ds.dataset(files, format="parquet", schema=schema)


def rows(
    data: ds.Dataset, expr: ds.Expression | None, columns: Iterable[str] | None = None
) -> list[Row]:
    table = data.to_table(filter=expr, columns=None if columns is None else list(columns))
    out: list[Row] = table.to_pylist()
    return out


def closest(typed: str, known: Iterable[str], n: int = 5) -> list[str]:
    """Group ids an operator probably meant: those containing what was typed, then the
    closest spellings (difflib)."""
    ids = sorted(set(known))
    low = typed.lower()
    hits = [g for g in ids if low and low in g.lower()][:n]
    near = difflib.get_close_matches(typed, ids, n=4 * n, cutoff=0.6)
    for g in sorted(near, key=lambda g: (_edits(typed, g), g)):
        if g not in hits and len(hits) < n:
            hits.append(g)
    return hits


def _edits(a: str, b: str) -> int:
    """Levenshtein distance: orders difflib's candidates (a typo is one or two edits).

    >>> _edits("svc-00007", "svc-000007"), _edits("kitten", "sitting")
    (1, 3)
    """
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def distinct_groups(path: str) -> list[str]:
    column = dataset(path).to_table(columns=["group_id"]).column("group_id")
    return [g for g in pc.unique(column).to_pylist() if g is not None]


# ---- planner output --------------------------------------------------------------------


@dataclass
class OutputRows:
    """One group's rows of every output table (tables the output lacks are listed)."""

    group_id: str
    manifest: dict[str, Any]
    tables: dict[str, list[Row]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


def check_output(output_dir: str) -> dict[str, Any]:
    """The output's manifest; NotFoundError saying what is missing when it is not one."""
    if not os.path.isdir(output_dir):
        raise NotFoundError(f"{output_dir} is not a directory")
    path = os.path.join(output_dir, MANIFEST)
    absent = [t for t in ("assignments", "elections") if locate(output_dir, t) is None]
    if not os.path.isfile(path) or absent:
        what = ([MANIFEST] if not os.path.isfile(path) else []) + [f"{t}/" for t in absent]
        raise NotFoundError(
            f"{output_dir} is not a planner output: no {', '.join(what)}"
            " (run python -m jobs.plan_assignments --output there first)"
        )
    with open(path, encoding="utf-8") as f:
        manifest: dict[str, Any] = json.load(f)
    return manifest


def read_output(output_dir: str, group_id: str, strategy: str | None = None) -> OutputRows:
    """The group's rows of every table; NotFoundError naming the closest ids when the output
    has no such group (every input group has an `elections` row)."""
    manifest = check_output(output_dir)
    found = OutputRows(group_id, manifest)
    by_group = ds.field("group_id") == group_id
    for table in OUTPUT_TABLES:
        path = locate(output_dir, table)
        if path is None:
            found.missing.append(table)
            found.tables[table] = []
            continue
        expr = by_group
        if strategy is not None and table == "assignments":
            sub = os.path.join(path, f"strategy={strategy}")
            found.tables[table] = (
                [{**r, "strategy": strategy} for r in rows(dataset(sub), by_group)]
                if os.path.isdir(sub)
                else []
            )
            continue
        if strategy is not None and table in ("balance_metrics", "rebalance_costs", "capacity"):
            expr = by_group & (ds.field("strategy") == strategy)
        found.tables[table] = rows(dataset(path), expr)
    if not found.tables["elections"]:
        raise NotFoundError(
            _no_group(group_id, output_dir, distinct_groups(locate_req(output_dir)))
        )
    return found


def locate_req(output_dir: str) -> str:
    path = locate(output_dir, "elections")
    assert path is not None  # checked by check_output
    return path


def _no_group(group_id: str, where: str, known: list[str]) -> str:
    near = closest(group_id, known)
    hint = f"; closest group ids: {', '.join(near)}" if near else ""
    return f"group {group_id!r} is not in {where} ({len(known)} groups){hint}"


# ---- planner input ---------------------------------------------------------------------


@dataclass
class InputRows:
    """One group's input rows, and what the estate job knows about the whole snapshot."""

    group_id: str
    members: list[Row]
    owned: list[Row] | None  # None: no current_assignment table
    offsets: list[Row] | None  # None: no offsets table
    topic_rows: list[Row] = field(default_factory=list)
    all_topics: list[str] | None = None  # every topic name (pattern subscriptions only)


def check_input(input_dir: str) -> dict[str, str | None]:
    """Each input table's path (None: an absent optional table); NotFoundError naming what
    is missing when `input_dir` is not a planner input."""
    if not os.path.isdir(input_dir):
        raise NotFoundError(f"the input directory {input_dir} does not exist")
    paths = {t: locate(input_dir, t) for t in INPUT_COLUMNS}
    absent = [t for t in REQUIRED_INPUTS if paths[t] is None]
    if absent:
        listed = " and ".join(f"{t}/ (or {t}.parquet)" for t in absent)
        raise NotFoundError(f"{input_dir} is not a planner input: no {listed}")
    return paths


def input_dataset(paths: dict[str, str | None], table: str) -> ds.Dataset | None:
    path = paths[table]
    if path is None:
        return None
    columns = INPUT_COLUMNS[table]
    present: set[str] = set()
    for f in _data_files(path):
        present.update(pq.read_schema(f).names)
    missing = [c for c in ("group_id", "member_id", "topic", "partition") if c in columns]
    missing = [c for c in missing if c not in present]
    if missing:
        raise NotFoundError(f"{table}: required column(s) {', '.join(missing)} missing in {path}")
    return dataset(path, columns)


def read_members(paths: dict[str, str | None], group_id: str) -> list[Row]:
    data = input_dataset(paths, "subscriptions")
    assert data is not None
    return rows(data, ds.field("group_id") == group_id)


def read_topics(paths: dict[str, str | None], topics: Iterable[str]) -> list[Row]:
    """`topic_partitions` rows of these topics only."""
    data = input_dataset(paths, "topic_partitions")
    assert data is not None
    wanted = sorted(set(topics))
    if not wanted:
        return []
    return rows(data, ds.field("topic").isin(wanted))


def all_topic_names(paths: dict[str, str | None]) -> list[str]:
    data = input_dataset(paths, "topic_partitions")
    assert data is not None
    column = data.to_table(columns=["topic"]).column("topic")
    return [t for t in pc.unique(column).to_pylist() if t is not None]
