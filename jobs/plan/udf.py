"""The grouped pandas UDF adapter: one call plans a whole bucket of groups.

One `applyInPandas` call costs milliseconds of Arrow/pandas conversion while assigning a small
group costs microseconds, so groups are hashed into buckets and each call loops
over the groups of its bucket with plain Python lists. This module only adapts rows to the
pure core and back (each group planned by `jobs.plan.one_group.plan_one`, as the terminal plans
one); it holds no assignment logic. The rows it returns are the bucket row format of
`jobs.tables.rows`. `plan_bucket` is plain pandas, so tests run it without Spark and compare the
Spark path with it.
"""

from __future__ import annotations

import gc
import importlib.machinery
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

import assignors.planner
from assignors import progress
from assignors.analysis.load import OffsetRow, offsets_unknown_group_problem
from assignors.inputs.patterns import PatternResolver
from assignors.inputs.validation import (
    MemberRow,
    OwnedRow,
    TopicStatus,
    no_members_problem,
    null_group_problem,
    owned_without_group,
)
from assignors.model import Member
from assignors.planner import (
    ASSIGNMENT_ROW_FIELDS,
    AssignmentColumns,
    GroupPlan,
    StrategyPlan,
    internal_error,
)
from assignors.problems import ERROR, Problem
from assignors.whatif.group import GroupWhatIf
from jobs.output.assignment_files import FILE_INDEX, runs, whole_file
from jobs.output.spark_layout import spark_file_index
from jobs.plan.guard import guarded
from jobs.plan.one_group import plan_one
from jobs.settings.run import RunSettings
from jobs.tables.contract import ASSIGNMENTS
from jobs.tables.rows import (
    KIND_ASSIGNMENT,
    KIND_MEMBER,
    KIND_OFFSETS,
    KIND_OWNED,
    KIND_TARGET,
    KIND_TIMING,
    PAYLOAD,
    ROUND_SEPARATOR,
    SHARED_SEPARATOR,
    WIDE_COLUMNS,
    SmallRows,
    json_payload,
)

INPUT_COLUMNS = (
    "kind",
    "group_id",
    "member_id",
    "group_instance_id",
    "client_rack",
    "topics",
    "topic_pattern",
    "assignment_strategies",
    "generation",
    "group_protocol",
    "group_state",
    "client_library",
    "assignment_user_data",
    "topic",
    "partition",
    "committed_offset",
    "log_end_offset",
)
# The job sends a bucket's members and its owned and offsets rows (one per partition) as two
# cogrouped frames, each with only its kinds' columns: a 1M-partition group's owned rows then
# cross the shuffle, the sort and Arrow with 7 columns, not 14 mostly null ones.
MEMBER_INPUT_COLUMNS = INPUT_COLUMNS[: INPUT_COLUMNS.index("topic")]
PARTITION_INPUT_COLUMNS = (
    "kind",
    "group_id",
    "member_id",
    "topic",
    "partition",
    "committed_offset",
    "log_end_offset",
)


@dataclass(frozen=True)
class PlanContext:
    """What every bucket needs; pickled once per task (the topic catalog travels as a
    broadcast). `settings` are the run's, built once on the driver (its strategy catalog
    included) and shipped as they are."""

    settings: RunSettings
    # A directory every worker can write (a local output's temporary directory): each bucket
    # writes its assignment rows there as one Parquet file (`rows_file`) instead of returning
    # them through Arrow to the JVM. None: they travel in the UDF's frame.
    rows_dir: str | None = None
    # With `rows_dir`: the output's files per table. Each row is then written with the index of
    # the `assignments` file it belongs in, the rows of one file in row groups of their own, so
    # that the task writing that file reads only its rows (`jobs.output.assignment_files`).
    output_files: int | None = None


def _nullable(col: pd.Series) -> list[Any]:
    """Values with None for nulls (string columns arrive with None; be safe about NaN)."""
    values: list[Any] = col.tolist()
    if not col.hasnans:  # the usual column: no per-value check
        return values
    return [None if v is None or v != v else v for v in values]


def _ints(col: pd.Series) -> list[int | None]:
    """Nullable int columns reach pandas as float64 with NaN when a batch holds a null.

    Converted in numpy where every value is below 2^53 (a float64 holds those exactly, and
    the cast is then the same as `int(v)`); larger values one by one with `int`."""
    values = col.to_numpy()
    if values.dtype.kind in "iu":
        return list(values.tolist())
    if values.dtype.kind == "f":
        nan = np.isnan(values)
        if nan.all():
            return [None] * len(values)
        if np.abs(values[~nan]).max() < 2.0**53:
            ints: list[int | None] = np.where(nan, 0.0, values).astype(np.int64).tolist()
            for i in np.flatnonzero(nan).tolist():
                ints[i] = None
            return ints
    return [None if v is None or v != v else int(v) for v in col.tolist()]


def _string_lists(col: pd.Series) -> list[list[str | None] | None]:
    """An array<string> column. The Spark side sends it as JSON text (see `planner_input`):
    the whole column is decoded with one json.loads call instead of one per row."""
    values = col.tolist()
    texts = [v for v in values if isinstance(v, str)]
    present = sum(1 for v in values if v is not None and not (isinstance(v, float) and v != v))
    if len(texts) == present:
        decoded = iter(json.loads("[" + ",".join(texts) + "]"))
        return [next(decoded) if isinstance(v, str) else None for v in values]
    # already lists or arrays (a plain pandas frame, e.g. the oracle in the tests)
    return [
        None
        if v is None or (isinstance(v, float) and math.isnan(v))
        else [None if x is None else str(x) for x in v]
        for v in values
    ]


@dataclass
class _Rows:
    """A bucket's input rows by group."""

    members: dict[str | None, list[MemberRow]] = field(default_factory=dict)
    owned: dict[str, list[OwnedRow]] = field(default_factory=dict)
    offsets: dict[str | None, list[OffsetRow]] = field(default_factory=dict)
    # `target_assignment` rows (KIP-848) by group; rows without a group are left out
    targets: dict[str, list[OwnedRow]] = field(default_factory=dict)


def _optional(pdf: pd.DataFrame, column: str) -> list[Any]:
    # A plain pandas caller's frame may lack an optional column (group_protocol: every group
    # is classic; group_state: unknown).
    return _nullable(pdf[column]) if column in pdf else [None] * len(pdf)


def _offsets_columns(pdf: pd.DataFrame) -> tuple[list[int | None], list[int | None]]:
    # A frame without the offsets columns (a plain pandas caller) has no offsets rows.
    if "committed_offset" not in pdf:
        return [None] * len(pdf), [None] * len(pdf)
    return _exact_ints(pdf["committed_offset"]), _exact_ints(pdf["log_end_offset"])


def _exact_ints(col: pd.Series) -> list[int | None]:
    """Offsets, exactly: the Spark side sends them as decimal text (see `planner_input`); a
    plain pandas caller may pass ints (numpy, nullable Int64 or Arrow-backed), or floats
    with NaN for null (pandas' default for an int column with a None) below 2^53 only: a
    larger float may already have been rounded, so it is refused rather than guessed."""
    out: list[int | None] = []
    for v in col.tolist():
        if v is None or v is pd.NA:
            out.append(None)
        elif isinstance(v, str):
            out.append(int(v))
        elif isinstance(v, float):
            if v != v:
                out.append(None)
            elif v.is_integer() and abs(v) < 2.0**53:
                out.append(int(v))
            else:
                raise TypeError(f"an offset as float {v!r} may be rounded: pass integers")
        else:
            out.append(int(v))
    return out


def _read_rows(frames: Sequence[pd.DataFrame], out: _Output) -> _Rows:
    """Sort the input rows by kind and group (owned rows without a group are reported at
    once).

    Kind by kind, each with only the columns it uses: a large group's owned and offsets rows
    (one per partition) leave the member columns, all null for them, unconverted."""
    found = _Rows()
    frames = [f for f in frames if len(f)]  # a cogroup's empty side may lack the columns
    kinds = (KIND_MEMBER, KIND_OFFSETS, KIND_OWNED, KIND_TARGET)
    for kind, pdf in ((k, f) for k in kinds for f in frames):
        mask = pdf["kind"].to_numpy() == kind
        if not mask.any():
            continue
        part = pdf[mask] if not mask.all() else pdf
        if kind == KIND_MEMBER:
            _read_members(part, found.members)
        elif kind == KIND_OFFSETS:
            committed, log_end = _offsets_columns(part)
            rows = zip(
                _nullable(part["group_id"]),
                _nullable(part["topic"]),
                _ints(part["partition"]),
                committed,
                log_end,
                strict=True,
            )
            offsets = found.offsets
            for gid, topic, p, c, e in rows:
                offsets.setdefault(gid, []).append(OffsetRow(topic, p, c, e))
        elif kind == KIND_TARGET:
            _read_targets(part, found.targets)
        else:
            _read_owned(part, found.owned, out)
    return found


def _read_members(pdf: pd.DataFrame, members: dict[str | None, list[MemberRow]]) -> None:
    rows = zip(
        _nullable(pdf["group_id"]),
        map(
            MemberRow,
            _nullable(pdf["member_id"]),
            _nullable(pdf["group_instance_id"]),
            _nullable(pdf["client_rack"]),
            _string_lists(pdf["topics"]),
            _nullable(pdf["topic_pattern"]),
            _string_lists(pdf["assignment_strategies"]),
            _ints(pdf["generation"]),
            _optional(pdf, "group_protocol"),
            _optional(pdf, "group_state"),
            _optional(pdf, "client_library"),
            _optional(pdf, "assignment_user_data"),
        ),
        strict=True,
    )
    for gid, row in rows:
        members.setdefault(gid, []).append(row)


def _read_targets(pdf: pd.DataFrame, targets: dict[str, list[OwnedRow]]) -> None:
    """`target_assignment` rows by group: a row without a group belongs to none, and only
    `live_check` reads these (a group's row says how many of its rows it ignored)."""
    rows = map(
        OwnedRow, _nullable(pdf["member_id"]), _nullable(pdf["topic"]), _ints(pdf["partition"])
    )
    for gid, row in zip(_nullable(pdf["group_id"]), rows, strict=True):
        if gid is not None:
            targets.setdefault(gid, []).append(row)


def _read_owned(pdf: pd.DataFrame, owned: dict[str, list[OwnedRow]], out: _Output) -> None:
    rows = map(
        OwnedRow, _nullable(pdf["member_id"]), _nullable(pdf["topic"]), _ints(pdf["partition"])
    )
    gids = _nullable(pdf["group_id"])
    if len(set(gids)) == 1 and gids[0] is not None:  # one group (a large one): no loop
        owned.setdefault(gids[0], []).extend(rows)
        return
    for gid, row in zip(gids, rows, strict=True):
        if gid is None:
            out.problems([owned_without_group(row)])
        else:
            owned.setdefault(gid, []).append(row)


def plan_bucket(
    pdf: pd.DataFrame | Sequence[pd.DataFrame],
    catalog: Mapping[str, TopicStatus],
    ctx: PlanContext,
    isolate_interrupts: bool = False,
    left_out: Mapping[str, frozenset[str]] | None = None,
    clock: PhaseClock | None = None,
    timing_row: bool = False,
    rows_file: str | None = None,
) -> pd.DataFrame:
    """Plan every group in `pdf` (rows of `INPUT_COLUMNS`, or several frames, each with `kind`
    and the columns its kinds use: `MEMBER_INPUT_COLUMNS`, `PARTITION_INPUT_COLUMNS`); returns
    the wide output frame.

    `catalog` is the topic catalog; the strategies come from `ctx.settings.catalog`. A bug that
    escapes the planner for one group becomes that group's INTERNAL_ERROR row; the other
    groups of the bucket are still planned. `isolate_interrupts` is set on the executors
    only (see `plan_group`). `offsets` rows travel with their group's members (one shuffle):
    rows of a group with no member are OFFSETS_UNKNOWN_GROUP warnings. `left_out`: per group,
    strategies not to plan (the guard's: they failed that group before). `timing_row`: the
    frame ends with the bucket's KIND_TIMING row (`clock`'s phases, the peak memory and the
    `Tally` of its rows), taken once the assignment columns are built. `rows_file`: the
    assignment rows go to this Parquet file (see `write_rows`), not into the frame."""
    clock = clock or PhaseClock()
    with _no_cyclic_gc(), progress.listening(clock.unit):
        frames = [pdf] if isinstance(pdf, pd.DataFrame) else list(pdf)
        out = _plan_bucket(frames, catalog, ctx, isolate_interrupts, left_out or {}, clock)
        last = (lambda: [out.timing_row(clock)]) if timing_row else None
        return out.frame(last, rows_file, ctx.output_files)


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """The cyclic garbage collector off while a bucket is planned: the bucket builds millions
    of small objects that all live until it returns (output rows), so every full collection
    walks them again for nothing; a plan holds no reference cycles (reference counting frees
    everything). Back on, as it was, when the bucket is done."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _plan_bucket(
    frames: list[pd.DataFrame],
    catalog: Mapping[str, TopicStatus],
    ctx: PlanContext,
    isolate_interrupts: bool,
    left_out: Mapping[str, frozenset[str]],
    clock: PhaseClock,
) -> _Output:
    out = _Output()
    rows = _read_rows(frames, out)
    members, owned, offsets = rows.members, rows.owned, rows.offsets
    resolve_pattern = PatternResolver(sorted(catalog))  # memoised for the whole bucket
    for row in members.pop(None, []):
        out.problems([null_group_problem(row.member_id)])
    named: dict[str, list[MemberRow]] = {g: rows for g, rows in members.items() if g is not None}
    for gid in sorted(named):
        group_offsets = offsets.pop(gid, [])
        planned = ctx.settings.without(left_out[gid]).catalog if gid in left_out else None
        clock.enter(VALIDATE)
        try:
            result = plan_one(
                gid,
                named[gid],
                owned.pop(gid, ()),
                group_offsets,
                catalog,
                ctx.settings,
                resolve_pattern,
                planned=planned,
                isolate_interrupts=isolate_interrupts,
                targets=rows.targets.pop(gid, None),
            )
            problems, spec, plan, whatif = result.problems, result.spec, result.plan, result.whatif
            capacity, capacity_problems = result.capacity, result.capacity_problems
            live, migrations, counts = result.live, result.migrations, result.member_counts
        except Exception as exc:  # a planner bug: this group only, the bucket goes on
            problems, spec, plan, whatif = [internal_error(gid, None, exc)], None, None, None
            capacity, capacity_problems, live = [], [], None
            migrations, counts = [], None
        clock.enter(ROWS)
        out.problems(problems)
        if plan is None:
            out.not_planned(gid)
        else:
            out.plan(
                plan,
                whatif,
                None if spec is None else spec.group_protocol,
                None if spec is None else spec.members,
                counts,
            )
            out.encoded.capacity(gid, capacity, capacity_problems)
            out.live_check(live)
            out.migrations(gid, migrations)
    for gid in sorted(owned):
        out.problems([no_members_problem(gid)])
    for key in sorted(offsets, key=lambda g: (g is not None, g or "")):
        out.problems([offsets_unknown_group_problem(key, len(offsets[key]))])
    return out


VALIDATE, ROWS = "validate", "rows"
# The order of the phase line: a bucket's phases, as the core and this module announce them.
PHASES = (
    VALIDATE,
    progress.PLAN,
    progress.METRICS,
    progress.WHATIF,
    progress.CAPACITY,
    progress.MIGRATION,
    ROWS,
)
# Beside the phases in a bucket's timing row: the peak memory of the process that planned it,
# and the tally of the rows it wrote (`Tally`).
PEAK_RSS_MIB, TALLY = "peak_rss_mib", "tally"
# In a planned bucket's tally: which core planned it (`planning_core`).
CORE, COMPILED, PURE = "core", "compiled", "pure"


def planning_core() -> str:
    """COMPILED when this process plans with the mypyc-compiled core (`make core`: Python
    imported the extension modules beside the sources), PURE when it runs the `.py` files."""
    path = assignors.planner.__file__ or ""
    return COMPILED if path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)) else PURE


def peak_rss_mib() -> float:
    """This process's peak resident memory (the guard's child: from the fork on), 0 if unknown."""
    try:
        import resource  # not on Windows
    except ImportError:
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


class PhaseClock:
    """Seconds spent in each phase of a bucket: the time until the next phase starts goes to
    the phase that is running (the core announces plan, metrics and what-if units)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.phase = VALIDATE
        self.since = time.perf_counter()

    def enter(self, phase: str) -> None:
        now = time.perf_counter()
        self.seconds[self.phase] = self.seconds.get(self.phase, 0.0) + now - self.since
        self.phase, self.since = phase, now

    def unit(self, group_id: str, strategy: str, phase: str) -> None:
        self.enter(phase)

    def stop(self) -> dict[str, float]:
        self.enter(ROWS)
        return {p: round(s, 6) for p, s in self.seconds.items()}


def reason_key(p: Problem) -> str:
    """A rejected row's key in the manifest's `rejected_by_reason`."""
    return f"{p.severity}:{p.reason}"


@dataclass
class Tally:
    """What the manifest counts, tallied where the rows are made: the driver then sums one
    small row per bucket (a job) instead of counting the small tables (five jobs, over a
    second even on a one-group output)."""

    planned_groups: int = 0
    # a group is rejected by a group-level error (no strategy named): a failed (group,
    # strategy) is a rejected row, and the group counts as planned
    rejected_groups: set[str] = field(default_factory=set)
    by_reason: dict[str, int] = field(default_factory=dict)
    # `assignments` rows, each shared row once per strategy it stands for
    assignment_rows: int = 0
    # `live_check` rows per verdict
    verdicts: dict[str, int] = field(default_factory=dict)
    # `migrations` rows per path: groups, ready, and rows per blocker and warning
    migrations: dict[str, dict[str, Any]] = field(default_factory=dict)

    def problems(self, problems: Iterable[Problem]) -> None:
        for p in problems:
            key = reason_key(p)
            self.by_reason[key] = self.by_reason.get(key, 0) + 1
            if p.severity == ERROR and p.group_id is not None and p.strategy is None:
                self.rejected_groups.add(p.group_id)

    def as_json(self, rows: Mapping[str, int]) -> dict[str, Any]:
        """With `rows`: rows per kind of the small tables (`assignments` is counted from its
        written files)."""
        return {
            "rows": rows,
            "planned_groups": self.planned_groups,
            "rejected_groups": len(self.rejected_groups),
            "by_reason": self.by_reason,
            "assignment_rows": self.assignment_rows,
            "verdicts": self.verdicts,
            "migrations": self.migrations,
        }

    def migration(self, row: Mapping[str, Any]) -> None:
        path = self.migrations.setdefault(
            str(row["path"]), {"groups": 0, "ready": 0, "blockers": {}, "warnings": {}}
        )
        path["groups"] += 1
        path["ready"] += bool(row["ready"])
        for key in ("blockers", "warnings"):
            counts = path[key]
            for code in row[key] or ():
                counts[code] = counts.get(code, 0) + 1


class _Output:
    """Collects the output tables: assignment rows as column lists, the rest as encoded rows
    (`jobs.tables.rows.SmallRows`)."""

    def __init__(self) -> None:
        # the assignment columns, and PAYLOAD: the further strategies of shared rows
        self.a: dict[str, list[Any]] = {n: [] for n in ASSIGNMENTS.names}
        self.a[PAYLOAD] = []
        self.tally = Tally()
        self.encoded = SmallRows(self.tally.problems)
        self.small = self.encoded.rows  # (kind, group_id, payload)

    def problems(self, problems: Iterable[Problem]) -> None:
        self.encoded.problems(problems)

    def timing_row(self, clock: PhaseClock | None) -> tuple[str, str | None, str]:
        """The bucket's KIND_TIMING row: its phase seconds and the peak memory of its process
        (none without `clock`), and the tally of the small rows so far, with the core that
        planned them (CORE, only with `clock`: one per planned bucket)."""
        kinds = Counter(kind for kind, _, _ in self.small)
        rows = {kind: kinds[kind] for kind in sorted(kinds)}
        self.tally.planned_groups = self.encoded.planned_groups
        tally = self.tally.as_json(rows)
        timing = {}
        if clock is not None:  # a planned bucket: its phases, memory and core
            timing = {**clock.stop(), PEAK_RSS_MIB: peak_rss_mib()}
            tally[CORE] = planning_core()
        return KIND_TIMING, None, json_payload({**timing, TALLY: tally})

    def not_planned(self, group_id: str) -> None:
        """The `elections` row of a rejected group: every input group has one."""
        self.encoded.not_planned(group_id)

    def live_check(self, row: Mapping[str, Any] | None) -> None:
        """The group's `live_check` row, counted by verdict."""
        if row is not None:
            verdict = str(row["verdict"])
            self.tally.verdicts[verdict] = self.tally.verdicts.get(verdict, 0) + 1
        self.encoded.live_check(row)

    def migrations(self, group_id: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """The group's `migrations` rows, counted per path."""
        for row in rows:
            self.tally.migration(row)
        self.encoded.migrations(group_id, rows)

    def plan(
        self,
        plan: GroupPlan,
        whatif: GroupWhatIf | None = None,
        protocol: str | None = None,
        members: Sequence[Member] | None = None,
        member_counts: tuple[int, int] | None = None,
    ) -> None:
        self.encoded.plan(plan, whatif, protocol, members, member_counts)
        a = self.a
        for shared, labels in _shared_rows(plan.plans):
            columns: tuple[list[Any], ...] = shared
            n = len(columns[0])
            self.tally.assignment_rows += n * len(labels)
            a["group_id"].extend([plan.group_id] * n)
            a["strategy"].extend([labels[0][0]] * n)
            a[PAYLOAD].extend(_further(n, columns[_ROUND], labels[1:]))
            # the planner's rows come as columns: appended as they are, no tuple per row
            for name, values in zip(ASSIGNMENT_ROW_FIELDS, columns, strict=True):
                a[name].extend(values)

    def frame(
        self,
        last: Callable[[], list[tuple[str, str | None, str]]] | None = None,
        rows_file: str | None = None,
        files: int | None = None,
    ) -> pd.DataFrame:
        """Assignment rows, then one row per small-table row (null assignment columns), then
        the rows `last` gives once the assignment columns are built (a bucket's timing row:
        appended here, not by concatenating a second frame, which copied every column).
        `rows_file`: the assignment rows are written there instead (`write_rows`, with each
        row's output file among `files`).

        Every column is Arrow-backed (`ArrowExtensionArray`): PySpark hands such a column to Arrow
        as it is, where an object column of strings would be converted value by value, and
        pandas does not copy them into one consolidated block either.
        """
        n_a = len(self.a["group_id"])
        heads = {}
        for column in WIDE_COLUMNS:
            name, typ = column.name, column.type
            if name == "kind":
                heads[name] = pa.repeat(pa.scalar(KIND_ASSIGNMENT, typ), n_a)
            else:
                heads[name] = pa.array(self.a[name], typ)
        if rows_file is not None:
            write_rows(pa.table(heads), rows_file, files)
            heads = {name: column.slice(0, 0) for name, column in heads.items()}
        small = self.small + (last() if last is not None else [])
        kinds, groups, payloads = zip(*small, strict=True) if small else ((), (), ())
        tails = {"kind": kinds, "group_id": groups, PAYLOAD: payloads}
        data: dict[str, pd.arrays.ArrowExtensionArray] = {}
        for column in WIDE_COLUMNS:
            name, typ = column.name, column.type
            tail = pa.array(tails[name], typ) if name in tails else pa.nulls(len(small), typ)
            data[name] = pd.arrays.ArrowExtensionArray(pa.concat_arrays([heads[name], tail]))
        return pd.DataFrame(data)


def rows_file(rows_dir: str, bucket: int) -> str:
    """The file of a bucket's assignment rows: named by the bucket, so a retried or
    speculative task attempt replaces its rows rather than adding to them."""
    return os.path.join(rows_dir, f"bucket-{bucket:05d}.parquet")


def write_rows(rows: pa.Table, path: str, files: int | None = None) -> None:
    """A bucket's assignment rows as one Parquet file, whole or not at all: written under a
    hidden name (Spark's readers skip names starting with "."), then renamed into place. The
    file is written even with no rows, so it always replaces what a failed attempt left.
    With `files`: each row with its output file's index (`FILE_INDEX`), the rows of each
    output file in row groups of their own (its writer skips the others).

    Why: Arrow to the JVM, rows in the JVM and the JVM's Parquet encoder cost several times
    what pyarrow's encoder does (docs/performance.md), and the guard's child hands back only
    the small tables' rows to its parent, not these."""
    import pyarrow.parquet as pq  # the workers' import only when it is used

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with whole_file(path) as partial:
        if files is None:
            pq.write_table(rows, partial)
            return
        index = spark_file_index(rows["group_id"], rows["partition"], files)
        order = np.argsort(index, kind="stable")
        rows = rows.take(order).append_column(FILE_INDEX, pa.array(index[order]))
        with pq.ParquetWriter(partial, rows.schema) as writer:
            for start, end in runs(index[order]):
                writer.write_table(rows.slice(start, end - start))


# The column the strategies sharing rows may differ in (see ROUND_SEPARATOR).
_ROUND = ASSIGNMENT_ROW_FIELDS.index("rebalance_round")
# The strategies of one set of shared rows: each with its own `rebalance_round` column.
_Labels = list[tuple[str, list[Any]]]


def _shared_rows(plans: list[StrategyPlan]) -> list[tuple[AssignmentColumns, _Labels]]:
    """Each distinct set of rows of a group's plans once, with the strategies that gave it
    (in plan order) and their `rebalance_round` columns. The planner hands the same column
    lists to strategies whose rows are the same (`elected`, and a strategy that gave the
    rows of the one before, with a round column of its own where its rounds differ): only
    those are shared, so no row is compared here. (By the lists' identity, not the tuple's:
    the compiled core boxes a new tuple on every read.)"""
    separators = (SHARED_SEPARATOR, ROUND_SEPARATOR)
    if any(sep in sp.strategy for sp in plans for sep in separators):
        return [(sp.columns, [(sp.strategy, sp.columns[_ROUND])]) for sp in plans]
    out: dict[tuple[int, ...], tuple[AssignmentColumns, _Labels]] = {}
    for sp in plans:
        columns = sp.columns
        key = tuple(id(c) for i, c in enumerate(columns) if i != _ROUND)
        found = out.get(key)
        rounds = columns[_ROUND]
        if found is not None and rounds is not found[0][_ROUND] and not _all_ints(rounds):
            key = (*key, id(rounds))  # a round the payload cannot carry: rows of its own
        out.setdefault(key, (columns, []))[1].append((sp.strategy, rounds))
    return list(out.values())


def _all_ints(values: list[Any]) -> bool:
    return all(type(v) is int for v in values)


def _further(n: int, rounds: list[Any], further: _Labels) -> list[str | None]:
    """The payloads of `n` shared rows: the further strategies' names, each with its own
    round where it differs from the row's (see ROUND_SEPARATOR)."""
    if not further:
        return [None] * n
    plain = SHARED_SEPARATOR.join(label for label, _ in further)
    out: list[str | None] = [plain] * n
    own = [(label, other) for label, other in further if other is not rounds]
    differ = sorted(
        {
            i
            for _, other in own
            for i, (x, y) in enumerate(zip(rounds, other, strict=True))
            if x != y
        }
    )
    for i in differ:
        out[i] = SHARED_SEPARATOR.join(
            label
            if other is rounds or other[i] == rounds[i]
            else f"{label}{ROUND_SEPARATOR}{other[i]}"
            for label, other in further
        )
    return out


def _concat_frames(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """`a` then `b`, each Arrow-backed column one contiguous array (PySpark passes such a
    column through, and refuses one of several chunks)."""
    return pd.DataFrame(
        {
            name: pd.arrays.ArrowExtensionArray(
                pa.concat_arrays(
                    [a[name].array.__arrow_array__().combine_chunks(),
                     b[name].array.__arrow_array__().combine_chunks()]
                )
            )
            for name in a.columns
        }
    )  # fmt: skip


def problems_frame(problems: list[Problem], tally: bool = False) -> pd.DataFrame:
    """The wide frame of `rejected` rows alone; `tally`: and their KIND_TIMING row (no
    phases: the tally of these rows only)."""
    out = _Output()
    out.problems(problems)
    return out.frame((lambda: [out.timing_row(None)]) if tally else None)


# The grouping key as `applyInPandas` passes it: (bucket,).
Key = tuple[Any, ...]


def bucket_function(
    catalog_value: Callable[[], Mapping[str, TopicStatus]], ctx: PlanContext
) -> Callable[[Key, pd.DataFrame], pd.DataFrame]:
    """The function handed to `applyInPandas`; `catalog_value` reads the broadcast lazily."""

    def run(key: Key, pdf: pd.DataFrame) -> pd.DataFrame:
        return _run_bucket(int(key[0]), [pdf], catalog_value, ctx)

    return run


def cogrouped_bucket_function(
    catalog_value: Callable[[], Mapping[str, TopicStatus]], ctx: PlanContext
) -> Callable[[Key, pd.DataFrame, pd.DataFrame], pd.DataFrame]:
    """The function handed to a cogroup's `applyInPandas`: a bucket's members, then its owned
    and offsets rows (see `PARTITION_INPUT_COLUMNS`)."""

    def run(key: Key, members: pd.DataFrame, partitions: pd.DataFrame) -> pd.DataFrame:
        return _run_bucket(int(key[0]), [members, partitions], catalog_value, ctx)

    return run


def _run_bucket(
    bucket: int,
    frames: list[pd.DataFrame],
    catalog_value: Callable[[], Mapping[str, TopicStatus]],
    ctx: PlanContext,
) -> pd.DataFrame:
    """One bucket on an executor, guarded (`jobs.plan.guard`), with its timing row; its
    assignment rows in `ctx.rows_dir` when there is one (written by the guard's child)."""
    catalog = catalog_value()
    to = None if ctx.rows_dir is None else rows_file(ctx.rows_dir, bucket)

    def plan(left_out: Mapping[str, frozenset[str]]) -> pd.DataFrame:
        # On an executor a plugin's KeyboardInterrupt cannot be a Ctrl-C on the driver.
        return plan_bucket(
            frames, catalog, ctx, True, left_out, PhaseClock(), timing_row=True, rows_file=to
        )

    frame, failures = guarded(plan, ctx.settings.guard, ctx.settings.is_builtin)
    if not failures:
        return frame
    return _concat_frames(frame, problems_frame(failures, tally=True))
