"""A bucket's rows: the one format the planning UDF writes, and every reader of it.

The UDF returns every output table in one frame (`WIDE_COLUMNS`), its rows told apart by a
kind code (`KINDS`). Assignment rows (the millions) use the typed columns of `assignments`;
the rows of the small tables travel as a text `payload`: JSON, decoded with the table's
contract schema, except `rebalance_costs` (one per group, strategy and scenario: millions
too), whose payload is delimited values (`costs_payload`): cheaper than JSON to write in
Python and to parse in the JVM, and fewer bytes through Arrow and the staged Parquet
(docs/performance.md). One frame with the union of all columns would carry some 30
mostly-null columns per assignment row through Arrow and the JVM: the costliest way to
carry them.

Here are the encoder (`SmallRows`, `costs_payload`) and every decoder: Spark SQL
(`spark_projections`, for `jobs.plan.pipeline`), pyarrow (`decode`, `shared_entries`, for
the writers of `jobs.output` and the one-group commands of `jobs.plan.one_group`). The columns
themselves come from the contract (`jobs.tables.contract`): adding an output column is a
change there (or in the pure core's column list), not here.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from assignors.analysis.membership import max_generation, members_digest
from assignors.model import Member
from assignors.planner import GroupPlan
from assignors.problems import ERROR, NOT_PLANNED, Problem
from assignors.whatif.group import GroupWhatIf
from jobs.tables import contract
from jobs.tables.contract import Column, Table

Row = dict[str, Any]

# ---- kind codes: one letter per kind of row, distinct across the input and output frames ----

# the planner's input rows (`jobs.plan.pipeline.planner_input`)
KIND_MEMBER = "s"  # a subscriptions row
KIND_OWNED = "o"  # a current_assignment row
KIND_OFFSETS = "l"  # an `offsets` row: lands in its group's bucket like the members
KIND_TARGET = "g"  # a `target_assignment` row (KIP-848): travels like the owned rows
# the UDF's output rows, one kind per output table
KIND_ASSIGNMENT, KIND_METRICS, KIND_ELECTION, KIND_REJECTED = "a", "b", "e", "r"
KIND_REBALANCE_COSTS, KIND_RECOMMENDATION = "c", "d"  # what-if rebalances, recommendations
KIND_CAPACITY = "k"  # the members each (group, strategy) can use and needs
KIND_LIVE_CHECK = "v"  # the current assignment against the `elected` plan (docs/live.md)
KIND_MIGRATION = "m"  # the group's paths to the consumer protocol
# Not a table: a bucket's planning seconds by phase (the run's phase line and manifest).
KIND_TIMING = "t"
# Each output kind's table, in the contract's order.
TABLE_OF: dict[str, Table] = {
    KIND_ASSIGNMENT: contract.ASSIGNMENTS,
    KIND_METRICS: contract.BALANCE_METRICS,
    KIND_ELECTION: contract.ELECTIONS,
    KIND_REJECTED: contract.REJECTED,
    KIND_REBALANCE_COSTS: contract.REBALANCE_COSTS,
    KIND_RECOMMENDATION: contract.RECOMMENDATIONS,
    KIND_CAPACITY: contract.CAPACITY,
    KIND_LIVE_CHECK: contract.LIVE_CHECK,
    KIND_MIGRATION: contract.MIGRATIONS,
}
KIND_OF = {table.name: kind for kind, table in TABLE_OF.items()}
KINDS = (KIND_MEMBER, KIND_OWNED, KIND_OFFSETS, KIND_TARGET, *TABLE_OF, KIND_TIMING)

# ---- the wide frame ---------------------------------------------------------------------------

PAYLOAD = "payload"
# On an assignment row, `payload` names the further strategies the row also stands for,
# joined by SHARED_SEPARATOR (null: none); a name followed by ROUND_SEPARATOR and a number
# gives that strategy's own `rebalance_round` for the row. Strategies that gave the same
# rows (`elected` and the strategy it names; sticky and cooperative-sticky, which differ at
# most in the round a moved partition arrives in) then travel once through Arrow, the JVM
# and the staged Parquet, and are repeated per strategy only when the `assignments` table is
# written. The separators are control characters no protocol name uses; a group whose names
# contain one is not shared.
SHARED_SEPARATOR, ROUND_SEPARATOR = "\x1f", "\x1e"
# The UDF's frame: the kind, the assignment columns, the payload; every column nullable.
WIDE_COLUMNS: tuple[Column, ...] = (
    Column("kind", contract.STRING, True),
    *(Column(c.name, c.type, True) for c in contract.ASSIGNMENTS.columns),
    Column(PAYLOAD, contract.STRING, True),
)
WIDE_NAMES = tuple(c.name for c in WIDE_COLUMNS)

# `rebalance_costs` payload: its columns after `group_id` (the frame's own column), comma
# separated, an empty value for null, the strategy last: the one free-form value, so a split
# into COSTS_PAYLOAD_COLUMNS parts keeps whatever it contains.
COSTS_PAYLOAD_COLUMNS: tuple[str, ...] = (
    *(n for n in contract.REBALANCE_COSTS.names if n not in ("group_id", "strategy")),
    "strategy",
)

# ---- the encoder ------------------------------------------------------------------------------

# Floats round-trip exactly (shortest repr, parsed back by Spark's from_json and pyarrow).
# One encoder: json.dumps with any non-default option builds a new one per call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
_COSTS_PAYLOAD_VALUES = operator.itemgetter(*COSTS_PAYLOAD_COLUMNS)


def json_payload(row: Mapping[str, Any]) -> str:
    """A small table's row (but `rebalance_costs`) as its payload."""
    return _ENCODER.encode(row)


def costs_payload(row: Mapping[str, object]) -> str:
    """One `rebalance_costs` row as its payload (see COSTS_PAYLOAD_COLUMNS). A list, not a
    generator, and one itemgetter: half the time a row (millions of rows a large run)."""
    return ",".join(["" if v is None else str(v) for v in _COSTS_PAYLOAD_VALUES(row)])


def problem_row(p: Problem) -> Row:
    """A problem as its `rejected` row."""
    return {
        "group_id": p.group_id,
        "member_id": p.member_id,
        "topic": p.topic,
        "strategy": p.strategy,
        "severity": p.severity,
        "reason": p.reason,
        "detail": p.detail,
    }


def problem_payload(p: Problem) -> str:
    """A `rejected` row as its payload (also the driver's topic rows)."""
    return json_payload(problem_row(p))


# (kind, group_id, payload): one encoded row of a small table
Encoded = tuple[str, str | None, str]


class SmallRows:
    """The encoded rows of the small tables, group by group: what the UDF sends for a group
    and what the one-group commands decode (`jobs.plan.one_group.table_rows`), the same rows.
    `counted` sees every problem as its row is made (the UDF's tally)."""

    def __init__(self, counted: Callable[[list[Problem]], None] | None = None) -> None:
        self.rows: list[Encoded] = []
        self.planned_groups = 0
        self._counted = counted

    def problems(self, problems: Iterable[Problem]) -> None:
        problems = list(problems)
        if self._counted is not None:
            self._counted(problems)
        self.rows.extend((KIND_REJECTED, p.group_id, problem_payload(p)) for p in problems)

    def election(
        self,
        group_id: str,
        elected: str | None,
        candidates: list[str],
        error: str | None,
        protocol: str | None = None,
        basis: str | None = None,
        client_library: str | None = None,
        members: Sequence[Member] | None = None,
        member_counts: tuple[int, int] | None = None,
    ) -> None:
        row = {
            "group_id": group_id,
            "elected_strategy": elected,
            "candidate_strategies": list(candidates),
            "error": error,
            "group_protocol": protocol,
            "election_basis": basis,
            "client_library": client_library,
            "max_generation": None if members is None else max_generation(members),
            "members_digest": None if members is None else members_digest(members),
            # migration: (classic, consumer) member counts of a planned group
            "classic_members": None if member_counts is None else member_counts[0],
            "consumer_members": None if member_counts is None else member_counts[1],
        }
        self.rows.append((KIND_ELECTION, group_id, json_payload(row)))
        if error != NOT_PLANNED:  # every input group has one row; NOT_PLANNED: rejected
            self.planned_groups += 1

    def not_planned(self, group_id: str) -> None:
        """The `elections` row of a rejected group: every input group has one."""
        self.election(group_id, None, [], NOT_PLANNED)

    def plan(
        self,
        plan: GroupPlan,
        whatif: GroupWhatIf | None = None,
        protocol: str | None = None,
        members: Sequence[Member] | None = None,
        member_counts: tuple[int, int] | None = None,
    ) -> None:
        """A planned group's rows: its problems, election, what-if rows and metrics (its
        assignment rows are the caller's: typed columns, not payloads). `members`: the
        group's (its spec's), for the election row's member figures; `member_counts`: its
        (classic, consumer) members."""
        self.problems(plan.problems)
        # Only a group-level error rejects the group; a failed strategy (`strategy` set) is a
        # rejected row, and the group counts as planned.
        rejected = any(p.severity == ERROR and p.strategy is None for p in plan.problems)
        election = plan.election
        if election is None or rejected:
            self.not_planned(plan.group_id)
        else:
            self.election(
                plan.group_id,
                election.elected,
                election.candidate_strategies,
                election.error,
                protocol,
                election.basis,
                client_library=plan.client_library,
                members=members,
                member_counts=member_counts,
            )
            if whatif is not None:  # planned groups only
                self.whatif(plan.group_id, whatif)
        for sp in plan.plans:
            metrics = {"group_id": plan.group_id, "strategy": sp.strategy, **sp.metrics}
            self.rows.append((KIND_METRICS, plan.group_id, json_payload(metrics)))

    def whatif(self, group_id: str, whatif: GroupWhatIf) -> None:
        """The `rebalance_costs` rows, the `recommendations` row and their warnings."""
        self.problems(whatif.problems)
        rows = self.rows
        for row in whatif.costs:
            rows.append((KIND_REBALANCE_COSTS, group_id, costs_payload(row)))
        rows.append((KIND_RECOMMENDATION, group_id, json_payload(whatif.recommendation)))

    def live_check(self, row: Mapping[str, Any] | None) -> None:
        """The group's `live_check` row, if it has one (`assignors.analysis.live`)."""
        if row is not None:
            self.rows.append((KIND_LIVE_CHECK, str(row["group_id"]), json_payload(row)))

    def migrations(self, group_id: str, rows: Iterable[Mapping[str, Any]]) -> None:
        """The `migrations` rows of a planned group."""
        self.rows.extend((KIND_MIGRATION, group_id, json_payload(row)) for row in rows)

    def capacity(
        self, group_id: str, rows: Iterable[Mapping[str, Any]], problems: Iterable[Problem] = ()
    ) -> None:
        """The `capacity` rows of a planned group, and the problems their search found."""
        self.problems(problems)
        self.rows.extend((KIND_CAPACITY, group_id, json_payload(row)) for row in rows)


# ---- pyarrow decoders ---------------------------------------------------------------------------


def shared_entries(payload: str) -> list[tuple[str, int | None]]:
    """The further strategies an assignment row's payload names, each with its own round
    (None: the row's)."""
    out: list[tuple[str, int | None]] = []
    for entry in payload.split(SHARED_SEPARATOR):
        name, _, own = entry.partition(ROUND_SEPARATOR)
        out.append((name, int(own) if own else None))
    return out


def decode(kind: str, group_ids: pa.Array, payloads: pa.Array, schema: pa.Schema) -> pa.Table:
    """The rows of a small table's payloads as `schema` (the table's contract columns, maybe
    with a writer's metadata): every column, a missing JSON field null."""
    if kind == KIND_REBALANCE_COSTS:
        columns = {"group_id": group_ids, **_costs_columns(payloads, schema)}
    else:
        columns = _json_columns(payloads, schema)
    return pa.table([columns[name] for name in schema.names], schema=schema)


def _costs_columns(payloads: pa.Array, schema: pa.Schema) -> dict[str, pa.Array]:
    """`rebalance_costs` columns from their payloads (`costs_payload`): split into
    COSTS_PAYLOAD_COLUMNS parts at most (the strategy last keeps any comma), an empty value
    is null, then cast to the column's type, as the Spark projection does."""
    n = len(COSTS_PAYLOAD_COLUMNS)
    parts = pc.split_pattern(payloads, ",", max_splits=n - 1)
    lengths = pc.list_value_length(parts).to_numpy(zero_copy_only=False)
    if len(lengths) and (lengths != n).any():
        raise ValueError("a rebalance_costs payload has too few values")
    flat = parts.flatten()
    out = {}
    for i, name in enumerate(COSTS_PAYLOAD_COLUMNS):
        values = flat.take(pa.array(np.arange(i, len(flat), n)))
        values = pc.if_else(pc.equal(values, ""), pa.scalar(None, pa.string()), values)
        out[name] = values.cast(schema.field(name).type)
    return out


def _json_columns(payloads: pa.Array, schema: pa.Schema) -> dict[str, pa.Array]:
    """Columns from JSON payloads (one object each, as `from_json` reads them): fields the
    schema names, missing ones null."""
    import pyarrow.json as pj

    if len(payloads) == 0:
        return {f.name: pa.array([], f.type) for f in schema}
    if payloads.null_count:
        raise ValueError("a JSON payload is null")
    # one object a line, joined in Arrow's memory (no Python string per row)
    lines = pc.binary_join_element_wise(payloads, "\n", "")
    offsets = np.frombuffer(lines.buffers()[1], np.int32, len(lines) + 1, lines.offset * 4)
    text = lines.buffers()[2].slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    parsed = pj.read_json(pa.BufferReader(text), parse_options=options)
    return {f.name: parsed[f.name].combine_chunks() for f in schema}


def decode_rows(rows: Iterable[Encoded]) -> dict[str, list[Row]]:
    """Encoded rows (`SmallRows.rows`) as each small table's rows, in the order given: the
    same decoder as the job's pyarrow writers."""
    by_kind: dict[str, tuple[list[str | None], list[str]]] = {}
    for kind, gid, payload in rows:
        gids, payloads = by_kind.setdefault(kind, ([], []))
        gids.append(gid)
        payloads.append(payload)
    out: dict[str, list[Row]] = {}
    for kind, table in TABLE_OF.items():
        if kind == KIND_ASSIGNMENT:
            continue
        gids, payloads = by_kind.get(kind, ([], []))
        decoded = decode(
            kind, pa.array(gids, pa.string()), pa.array(payloads, pa.string()), table.schema()
        )
        out[table.name] = decoded.to_pylist()
    return out


# ---- the Spark SQL decoder -------------------------------------------------------------------

# Spark SQL's name of each contract type
_SQL_TYPES = {
    contract.STRING: "string",
    contract.INT: "int",
    contract.LONG: "bigint",
    contract.DOUBLE: "double",
    contract.BOOL: "boolean",
}


def sql_type(t: pa.DataType) -> str:
    """A contract type as Spark SQL names it (`DataType.simpleString`)."""
    if pa.types.is_list(t):
        return f"array<{sql_type(t.value_type)}>"
    return _SQL_TYPES[t]


def sql_struct(table: Table) -> str:
    """The table's row as a Spark SQL struct type (`StructType.simpleString`)."""
    return "struct<" + ",".join(f"{c.name}:{sql_type(c.type)}" for c in table.columns) + ">"


def _sql_char(separator: str) -> str:
    """A one-character separator (a control character) in SQL: by its code, not as a
    literal, whose escapes depend on the session's parser settings."""
    assert len(separator) == 1, separator
    return f"chr({ord(separator)})"


def _row_strategies() -> str:
    """The strategies an assignment row of the wide frame stands for (SQL): its own, then
    those its payload names (see SHARED_SEPARATOR)."""
    return (
        f"CASE WHEN {PAYLOAD} IS NULL THEN array(strategy)"
        f" ELSE concat(array(strategy), split({PAYLOAD}, {_sql_char(SHARED_SEPARATOR)})) END"
    )


def spark_projections(kind: str) -> tuple[list[str], list[str]]:
    """The table of `kind` from the wide frame's rows of that kind, in Spark SQL: two
    projections (`selectExpr`), the first reading the payloads, the second each contract
    column cast to its type, in the contract's order.

    Assignment rows: one per strategy the row stands for, with its round (see
    SHARED_SEPARATOR); position 0 is the row's own strategy, kept as it is. SQL text, one
    projection each: a Column per field costs a dozen py4j round trips each (about a second
    of driver time before every run's writes, for the same plan)."""
    table = TABLE_OF[kind]
    computed: dict[str, str] = {}  # columns not read as the first projection's of that name
    if kind == KIND_ASSIGNMENT:
        entry = f"split(entry, {_sql_char(ROUND_SEPARATOR)})"
        first = ["*", f"posexplode({_row_strategies()}) AS (pos, entry)"]
        computed = {
            "strategy": f"CASE WHEN pos = 0 THEN strategy ELSE {entry}[0] END",
            "rebalance_round": "CASE WHEN pos = 0 THEN rebalance_round ELSE"
            f" coalesce(CAST(try_element_at({entry}, 2) AS INT), rebalance_round) END",
        }
    elif kind == KIND_REBALANCE_COSTS:
        n = len(COSTS_PAYLOAD_COLUMNS)
        first = [
            "group_id",
            *[
                f"nullif(split({PAYLOAD}, ',', {n})[{i}], '') AS `{name}`"
                for i, name in enumerate(COSTS_PAYLOAD_COLUMNS)
            ],
        ]
    else:
        first = [f"from_json({PAYLOAD}, '{sql_struct(table)}') AS r"]
        computed = {n: f"r.`{n}`" for n in table.names}
    return first, typed_projection(table.columns, computed)


def typed_projection(
    columns: Iterable[Column], computed: Mapping[str, str] | None = None
) -> list[str]:
    """Each column cast to its type, in order; `computed` gives some of them as SQL
    expressions instead of the column of that name."""
    computed = computed or {}
    return [
        f"CAST({computed.get(c.name, f'`{c.name}`')} AS {sql_type(c.type)}) AS `{c.name}`"
        for c in columns
    ]


def decode_assignments(rows: list[Row]) -> list[Row]:
    """Assignment rows as the table holds them: every contract column, of its type."""
    schema = pa.schema([(c.name, c.type) for c in contract.ASSIGNMENTS.columns])
    decoded: list[Row] = pa.Table.from_pylist(rows, schema=schema).to_pylist()
    return decoded
