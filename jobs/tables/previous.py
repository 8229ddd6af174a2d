"""A run's small tables reduced to one row of `jobs.tables.changes.Figures` per group:
today's, and a previous output's (`--previous`), read with pyarrow on the driver; and the
two compared (`compare_runs`).

Only `balance_metrics`, `elections`, `recommendations` and, when the output has one,
`live_check` are read, and only the columns the comparison needs: yesterday is never planned
again. A previous output that cannot be compared (not a planner output, written by a version
without a column, damaged files) is a `PreviousUnusable` naming the cause in one line; the
run then goes on without a `changes` table. The member figures of `elections`
(`max_generation`, `members_digest`) are optional: an older planner's output has none, and
REBALANCED is then told without them.

Columns, not rows: at 100,000 groups a run's `balance_metrics` has some 700,000 rows, and
turning them (or even one object per group) into Python values cost seconds and hundreds
of MB on the driver. Each run is reduced to one Arrow table of figures with joins, the two
runs joined, and only the groups whose figures differ become `Figures` for the rules of
`jobs.tables.changes` (docs/performance.md).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from assignors.catalog.registry import ELECTED
from jobs.tables import changes, group_read
from jobs.tables.changes import Figures
from jobs.tables.manifest import MANIFEST_FILE

# The columns read of each table; `live_check` is optional.
COLUMNS: dict[str, tuple[str, ...]] = {
    "balance_metrics": (
        "group_id",
        "strategy",
        "member_count",
        "partition_count",
        "balance_gap",
        "total_lag",
    ),
    "elections": ("group_id", "elected_strategy", "error"),
    "recommendations": ("group_id", "recommended_strategy"),
    "live_check": ("group_id", "verdict"),
}
# Columns read when the table has them: an older planner's output has none of these.
OPTIONAL: dict[str, tuple[str, ...]] = {"elections": ("max_generation", "members_digest")}
MEMBER_FIGURES = OPTIONAL["elections"]
REQUIRED = ("balance_metrics", "elections", "recommendations")
# (table, columns, optional columns) -> the table's rows of those columns (of the optional
# ones, those it has); None when the output has no table.
ReadTable = Callable[[str, tuple[str, ...], tuple[str, ...]], pa.Table | None]
# One row per group: the fields of `Figures`, each as this type.
FIGURES_SCHEMA = pa.schema(
    [
        ("group_id", pa.string()),
        ("members", pa.int64()),
        ("partitions", pa.int64()),
        ("elected", pa.string()),
        ("error", pa.string()),
        ("balance_gap", pa.int64()),
        ("total_lag", pa.int64()),
        ("recommended", pa.string()),
        ("verdict", pa.string()),
        ("max_generation", pa.int64()),
        ("members_digest", pa.string()),
    ]
)
assert FIGURES_SCHEMA.names == [f.name for f in dataclasses.fields(Figures)]
_FIGURES = tuple(FIGURES_SCHEMA.names[1:])


class PreviousUnusable(Exception):
    """A previous output that cannot be compared with; the message is the cause."""


@dataclass(frozen=True)
class RunFigures:
    """A run's groups as its small tables show them: `table` (FIGURES_SCHEMA, by group_id).
    `member_figures`: its `elections` has `max_generation` and `members_digest`."""

    table: pa.Table = field(default_factory=FIGURES_SCHEMA.empty_table)
    has_live_check: bool = False
    member_figures: bool = True

    @property
    def groups(self) -> int:
        return int(self.table.num_rows)

    @cached_property
    def figures(self) -> dict[str, Figures]:
        """Every group as `Figures` (a few groups' worth: `describe`, tests)."""
        return {r["group_id"]: Figures(**r) for r in self.table.to_pylist()}


@dataclass(frozen=True)
class PreviousRun:
    path: str
    ds: str | None
    version: str
    run: RunFigures = field(default_factory=RunFigures)

    def as_manifest(self) -> dict[str, Any]:
        return {"path": self.path, "ds": self.ds, "version": self.version}


def missing_columns(name: str, missing: list[str]) -> PreviousUnusable:
    return PreviousUnusable(
        f"{name} has no column {', '.join(missing)} (written by an older version of the planner?)"
    )


def local_reader(output_dir: str, group_id: str | None = None) -> ReadTable:
    """Tables of a local output, with pyarrow (`group_id`: that group's rows only)."""

    def read(name: str, columns: tuple[str, ...], optional: tuple[str, ...]) -> pa.Table | None:
        path = group_read.locate(output_dir, name)
        if path is None:
            return None
        data = group_read.dataset(path)
        missing = [c for c in columns if c not in data.schema.names]
        if missing:
            raise missing_columns(name, missing)
        present = [*columns, *(c for c in optional if c in data.schema.names)]
        expr = None if group_id is None else ds.field("group_id") == group_id
        table: pa.Table = data.to_table(columns=present, filter=expr)
        return table

    return read


def _column(table: pa.Table, name: str, typ: pa.DataType) -> pa.ChunkedArray:
    """`name` of `table` as `typ`; all null when the table lacks it."""
    if name in table.column_names:
        return table.column(name).cast(typ)
    return pa.chunked_array([pa.nulls(table.num_rows, typ)], typ)


# Every column read, as the comparison types it: a file's own types may differ (int32 or
# int64; `null` for a column a writer left all null), and joins need one type per column.
_READ_TYPES: dict[str, pa.DataType] = {
    "member_count": pa.int64(),
    "partition_count": pa.int64(),
    "balance_gap": pa.int64(),
    "total_lag": pa.int64(),
    "max_generation": pa.int64(),
}


def _typed(table: pa.Table) -> pa.Table:
    """`table` with every column as _READ_TYPES types it (a string when not named there)."""
    names = table.column_names
    return pa.table(
        [table.column(n).cast(_READ_TYPES.get(n, pa.string())) for n in names], names=names
    )


def _last_per_group(table: pa.Table, column: str) -> pa.Table:
    """One row per group_id (not null): its last `column` in the table's order."""
    table = table.filter(pc.is_valid(table.column("group_id"))).select(["group_id", column])
    if pc.count_distinct(table.column("group_id")).as_py() == table.num_rows:
        return table  # the usual case: one row per group already
    agg = table.group_by("group_id", use_threads=False).aggregate([(column, "last")])
    return agg.select(["group_id", f"{column}_last"]).rename_columns(["group_id", column])


_METRICS = ["group_id", "member_count", "partition_count", "balance_gap", "total_lag"]


def _elected_metrics(metrics: pa.Table, elected: pa.Table) -> pa.Table:
    """Per group of `elected` (group_id, elected_strategy): its `balance_metrics` row under
    `elected`, else under the elected strategy's own name, else its first row (members
    only: every row of a group counts the same members); `is_elected` says which.

    The `elected` rows are one per group and usually cover every planned group: the other
    strategies' rows (most of the table) are only searched for the groups they miss."""
    strategy = metrics.column("strategy")
    pseudo = metrics.filter(pc.equal(strategy, ELECTED))
    pseudo = pseudo.filter(pc.is_valid(pseudo.column("group_id")))
    if pc.count_distinct(pseudo.column("group_id")).as_py() == pseudo.num_rows:
        covered = pseudo.select(_METRICS)
        covered = covered.append_column("is_elected", pa.array(np.ones(len(covered), bool)))
        rest = pc.invert(pc.is_in(elected.column("group_id"), value_set=pseudo.column("group_id")))
        elected = elected.filter(rest)
        metrics = metrics.filter(pc.is_in(metrics.column("group_id"), elected.column("group_id")))
    else:  # a damaged or hand-made table: rank every row
        covered = None
    n = metrics.num_rows
    metrics = metrics.append_column("_i", pa.array(np.arange(n, dtype=np.int64)))
    joined = metrics.join(elected, "group_id", join_type="inner")
    own = pc.fill_null(
        pc.equal(joined.column("strategy"), joined.column("elected_strategy")), False
    )
    rank = pc.if_else(pc.equal(joined.column("strategy"), ELECTED), 0, pc.if_else(own, 1, 2)).cast(
        pa.int64()
    )
    key = pc.add(pc.multiply(rank, max(n, 1)), joined.column("_i"))
    joined = joined.append_column("_key", key)
    best = joined.group_by("group_id").aggregate([("_key", "min")])
    best = best.select(["group_id", "_key_min"]).rename_columns(["group_id", "_key"])
    chosen = joined.join(best, ["group_id", "_key"], join_type="inner")
    is_elected = pc.less(chosen.column("_key"), 2 * max(n, 1))
    ranked = chosen.select(_METRICS).append_column("is_elected", is_elected)
    return ranked if covered is None else pa.concat_tables([covered, ranked.cast(covered.schema)])


def run_figures(read: ReadTable) -> RunFigures:
    """Every group of a run: its elections row, with the elected strategy's metrics row and
    the recommendation. PreviousUnusable when a table the comparison needs is absent."""
    tables = {name: read(name, cols, OPTIONAL.get(name, ())) for name, cols in COLUMNS.items()}
    tables = {name: None if t is None else _typed(t) for name, t in tables.items()}
    absent = [t for t in REQUIRED if tables[t] is None]
    if absent:
        raise PreviousUnusable(f"no {', '.join(absent)} table")
    metrics, elections, recs = (tables[t] for t in REQUIRED)
    assert metrics is not None  # checked above, as the two others
    assert elections is not None
    assert recs is not None
    elections = elections.filter(pc.is_valid(elections.column("group_id")))
    if pc.count_distinct(elections.column("group_id")).as_py() != elections.num_rows:
        raise PreviousUnusable("elections has more than one row for a group")
    member_figures = all(c in elections.column_names for c in MEMBER_FIGURES)
    chosen = _elected_metrics(metrics, elections.select(["group_id", "elected_strategy"]))
    live = tables["live_check"]
    out = elections.join(chosen, "group_id", join_type="left outer")
    out = out.join(_last_per_group(recs, "recommended_strategy"), "group_id", "group_id")
    if live is not None:
        out = out.join(_last_per_group(live, "verdict"), "group_id", "group_id")
    out = out.sort_by("group_id")
    is_elected = pc.fill_null(_column(out, "is_elected", pa.bool_()), False)

    def of_elected(name: str) -> pa.ChunkedArray:
        return pc.if_else(is_elected, _column(out, name, pa.int64()), None)

    columns = {
        "group_id": out.column("group_id"),
        "members": _column(out, "member_count", pa.int64()),
        "partitions": of_elected("partition_count"),
        "elected": _column(out, "elected_strategy", pa.string()),
        "error": _column(out, "error", pa.string()),
        "balance_gap": of_elected("balance_gap"),
        "total_lag": of_elected("total_lag"),
        "recommended": _column(out, "recommended_strategy", pa.string()),
        "verdict": _column(out, "verdict", pa.string()),
        "max_generation": _column(out, "max_generation", pa.int64()),
        "members_digest": _column(out, "members_digest", pa.string()),
    }
    table = pa.table([columns[n] for n in FIGURES_SCHEMA.names], schema=FIGURES_SCHEMA)
    return RunFigures(table, has_live_check=live is not None, member_figures=member_figures)


def _distinct(a: pa.ChunkedArray, b: pa.ChunkedArray) -> pa.ChunkedArray:
    """Per row, whether a and b differ, a null differing from a value (IS DISTINCT FROM)."""
    differ = pc.fill_null(pc.not_equal(a, b), False)
    return pc.or_(differ, pc.xor(pc.is_null(a), pc.is_null(b)))


def compare_runs(
    before: RunFigures, after: RunFigures, min_lag_change: int = changes.DEFAULT_MIN_LAG_CHANGE
) -> list[changes.Row]:
    """`changes.compare` of two runs' figures, the same rows: the runs are joined by group,
    and only the groups new, gone, or with a figure that differs become `Figures` (a group
    whose figures all agree has no change)."""
    flag = "_present"
    b = before.table.append_column(flag, pa.array(np.ones(before.groups, dtype=bool)))
    a = after.table.append_column(flag, pa.array(np.ones(after.groups, dtype=bool)))
    joined = b.join(a, "group_id", join_type="full outer", left_suffix="_b", right_suffix="_a")
    in_b = pc.fill_null(joined.column(f"{flag}_b"), False)
    in_a = pc.fill_null(joined.column(f"{flag}_a"), False)
    mask = pc.invert(pc.and_(in_b, in_a))
    for name in _FIGURES:
        mask = pc.or_(mask, _distinct(joined.column(f"{name}_b"), joined.column(f"{name}_a")))
    differ = joined.filter(mask)
    was: dict[str, Figures] = {}
    now: dict[str, Figures] = {}
    for side, found in (("b", was), ("a", now)):
        names = ["group_id", *(f"{n}_{side}" for n in _FIGURES)]
        present = differ.filter(differ.column(f"{flag}_{side}")).select(names)
        for values in zip(*(present.column(n).to_pylist() for n in names), strict=True):
            found[values[0]] = Figures(*values)
    return changes.compare(
        was,
        now,
        min_lag_change,
        verdicts=before.has_live_check and after.has_live_check,
        member_figures=before.member_figures and after.member_figures,
    )


def read_previous(path: str, read: ReadTable | None = None) -> PreviousRun:
    """The previous output at `path` (local, unless `read` reads its tables another way and
    the manifest was checked by the caller); PreviousUnusable naming the cause."""
    manifest_path = os.path.join(path, MANIFEST_FILE)
    if read is None:
        if not os.path.isdir(path):
            raise PreviousUnusable(f"{path} does not exist")
        read = local_reader(path)
    try:
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
    except FileNotFoundError:
        raise PreviousUnusable(f"{path} is not a planner output (no {MANIFEST_FILE})") from None
    except (OSError, ValueError) as exc:
        raise PreviousUnusable(f"{manifest_path} is unreadable: {exc}") from None
    return previous_of(path, manifest, read)


def previous_of(path: str, manifest: Any, read: ReadTable) -> PreviousRun:
    """The previous run from its parsed manifest and a reader of its tables."""
    if not isinstance(manifest, dict) or "version" not in manifest:
        raise PreviousUnusable(f"{path}: {MANIFEST_FILE} is not a planner manifest")
    try:
        run = run_figures(read)
    except PreviousUnusable as exc:
        raise PreviousUnusable(f"{path}: {exc}") from None
    except (OSError, pa.ArrowException, KeyError, TypeError, ValueError) as exc:
        cause = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PreviousUnusable(f"{path}: damaged tables: {cause}") from None
    ds = manifest.get("ds")
    return PreviousRun(path, ds if isinstance(ds, str) else None, str(manifest["version"]), run)


# A URI scheme, as Hadoop's Path parses one (`hdfs:`, `s3a:`, `file:`).
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def os_path(uri: str) -> str | None:
    """The OS path of a `file:` URI on this host (`file:/p`, `file:///p`,
    `file://localhost/p`); None for another host's."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return unquote(parsed.path) or None


def group_since(output_dir: str, manifest: dict[str, Any], group_id: str) -> dict[str, Any] | None:
    """One group's figures in this output and in its previous run (the manifest's
    `previous`), for `describe`: None when the run had no previous one. A previous output
    gone or unusable since is said in `unusable`, never an error."""
    recorded = manifest.get("previous")
    if not isinstance(recorded, dict):
        return None
    out: dict[str, Any] = {"previous": recorded, "before": None, "after": None}
    try:
        out["after"] = run_figures(local_reader(output_dir, group_id)).figures.get(group_id)
    except (PreviousUnusable, OSError, pa.ArrowException) as exc:
        out["unusable"] = f"this output: {exc}"
        return out
    path = recorded.get("path")
    if recorded.get("unusable") or not isinstance(path, str):
        out["unusable"] = recorded.get("unusable") or "no previous path recorded"
        return out
    if path.startswith("file:"):
        path = os_path(path) or path
    elif _SCHEME.match(path):
        out["unusable"] = f"{path} is not on the local file system: describe reads local outputs"
        return out
    if not os.path.isdir(path):
        out["unusable"] = f"{path} is no longer there"
        return out
    try:
        out["before"] = run_figures(local_reader(path, group_id)).figures.get(group_id)
    except (PreviousUnusable, OSError, pa.ArrowException) as exc:
        out["unusable"] = f"{path}: {exc}"
    return out
