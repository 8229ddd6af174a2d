"""A run's small tables reduced to one `jobs.tables.changes.Figures` per group: today's, and
a previous output's (`--previous`), read with pyarrow on the driver.

Only `balance_metrics`, `elections`, `recommendations` and, when the output has one,
`live_check` are read, and only the columns the comparison needs: yesterday is never planned
again. A previous output that cannot be compared (not a planner output, written by a version
without a column, damaged files) is a `PreviousUnusable` naming the cause in one line; the
run then goes on without a `changes` table.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from assignors.catalog.registry import ELECTED
from jobs.tables import group_read
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
REQUIRED = ("balance_metrics", "elections", "recommendations")
# (table, columns) -> the table's rows of those columns; None when the output has no table.
ReadTable = Callable[[str, tuple[str, ...]], pa.Table | None]


class PreviousUnusable(Exception):
    """A previous output that cannot be compared with; the message is the cause."""


@dataclass(frozen=True)
class RunFigures:
    """A run's groups as its small tables show them."""

    figures: dict[str, Figures]
    has_live_check: bool = False


@dataclass(frozen=True)
class PreviousRun:
    path: str
    ds: str | None
    version: str
    run: RunFigures = field(default_factory=lambda: RunFigures({}))

    def as_manifest(self) -> dict[str, Any]:
        return {"path": self.path, "ds": self.ds, "version": self.version}


def local_reader(output_dir: str, group_id: str | None = None) -> ReadTable:
    """Tables of a local output, with pyarrow (`group_id`: that group's rows only)."""

    def read(name: str, columns: tuple[str, ...]) -> pa.Table | None:
        path = group_read.locate(output_dir, name)
        if path is None:
            return None
        data = group_read.dataset(path)
        missing = [c for c in columns if c not in data.schema.names]
        if missing:
            raise PreviousUnusable(
                f"{name} has no column {', '.join(missing)}"
                " (written by an older version of the planner?)"
            )
        expr = None if group_id is None else ds.field("group_id") == group_id
        table: pa.Table = data.to_table(columns=list(columns), filter=expr)
        return table

    return read


def _rows(table: pa.Table | None) -> list[dict[str, Any]]:
    return [] if table is None else table.to_pylist()


def run_figures(read: ReadTable) -> RunFigures:
    """Every group of a run: its elections row, with the elected strategy's metrics row and
    the recommendation. PreviousUnusable when a table the comparison needs is absent."""
    tables = {name: read(name, cols) for name, cols in COLUMNS.items()}
    absent = [t for t in REQUIRED if tables[t] is None]
    if absent:
        raise PreviousUnusable(f"no {', '.join(absent)} table")
    elections = {r["group_id"]: r for r in _rows(tables["elections"]) if r["group_id"]}
    metrics_table = tables["balance_metrics"]
    assert metrics_table is not None  # checked above
    # The elected strategy's rows only (the `elected` pseudo-strategy when planned, else
    # the elected strategy's own), and any row per group for the member count: the other
    # strategies' rows are most of the table, and never needed.
    elected_of = {g: r["elected_strategy"] for g, r in elections.items()}
    metrics: dict[str, dict[str, Any]] = {}
    strategy = metrics_table.column("strategy")
    for r in metrics_table.filter(pc.equal(strategy, ELECTED)).to_pylist():
        metrics[r["group_id"]] = r
    for r in metrics_table.filter(pc.not_equal(strategy, ELECTED)).to_pylist():
        g = r["group_id"]
        have = metrics.get(g)
        if have is None or (have["strategy"] != ELECTED and r["strategy"] == elected_of.get(g)):
            metrics[g] = r
    recs = {r["group_id"]: r["recommended_strategy"] for r in _rows(tables["recommendations"])}
    live = tables["live_check"]
    verdicts = {r["group_id"]: r["verdict"] for r in _rows(live)}
    figures: dict[str, Figures] = {}
    for g, e in elections.items():
        m = metrics.get(g)
        elected = e["elected_strategy"]
        is_elected = m is not None and m["strategy"] in (ELECTED, elected)
        figures[g] = Figures(
            group_id=g,
            members=None if m is None else m["member_count"],
            partitions=None if m is None or not is_elected else m["partition_count"],
            elected=elected,
            error=e["error"],
            balance_gap=m["balance_gap"] if is_elected and m is not None else None,
            total_lag=m["total_lag"] if is_elected and m is not None else None,
            recommended=recs.get(g),
            verdict=verdicts.get(g),
        )
    return RunFigures(figures, has_live_check=live is not None)


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
    if not os.path.isdir(path):
        out["unusable"] = f"{path} is no longer there"
        return out
    try:
        out["before"] = run_figures(local_reader(path, group_id)).figures.get(group_id)
    except (PreviousUnusable, OSError, pa.ArrowException) as exc:
        out["unusable"] = f"{path}: {exc}"
    return out
