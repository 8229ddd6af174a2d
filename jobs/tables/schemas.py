"""The data contract (docs/data-contract.md) as Spark schemas, and the inputs' schema check."""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from assignors.analysis.metrics import METRIC_COLUMNS
from assignors.whatif.recommend import RECOMMENDATION_COLUMNS
from assignors.whatif.simulation import REBALANCE_COST_COLUMNS
from assignors.widths import BIGINT_COLUMNS

STRING = T.StringType()
INT = T.IntegerType()
LONG = T.LongType()
DOUBLE = T.DoubleType()
BOOL = T.BooleanType()
STRINGS = T.ArrayType(T.StringType())


@dataclass(frozen=True)
class InputTable:
    name: str
    required: bool
    columns: tuple[tuple[str, T.DataType], ...]
    # Columns that may hold nulls (the contract's nullable columns): such a column may also be
    # missing from a file, or typed `null` by pyarrow when every value is null.
    nullable: frozenset[str] = frozenset()


TOPIC_PARTITIONS = InputTable(
    "topic_partitions",
    True,
    (("topic", STRING), ("partition", INT), ("replica_racks", STRINGS), ("weight", DOUBLE)),
    frozenset({"replica_racks", "weight"}),
)
SUBSCRIPTIONS = InputTable(
    "subscriptions",
    True,
    (
        ("group_id", STRING),
        ("member_id", STRING),
        ("group_instance_id", STRING),
        ("client_rack", STRING),
        ("topics", STRINGS),
        ("topic_pattern", STRING),
        ("assignment_strategies", STRINGS),
        ("generation", INT),
        # `classic` (null or absent) or `consumer` (KIP-848); constant within a group
        ("group_protocol", STRING),
        # Kafka's name of the group's state at the snapshot (`Stable`, `PreparingRebalance`)
        ("group_state", STRING),
    ),
    frozenset(
        {
            "group_instance_id",
            "client_rack",
            "topics",
            "topic_pattern",
            "assignment_strategies",
            "generation",
            "group_protocol",
            "group_state",
        }
    ),
)
CURRENT_ASSIGNMENT = InputTable(
    "current_assignment",
    False,
    (("group_id", STRING), ("member_id", STRING), ("topic", STRING), ("partition", INT)),
)
OFFSETS = InputTable(
    "offsets",
    False,
    (
        ("group_id", STRING),
        ("topic", STRING),
        ("partition", INT),
        ("committed_offset", LONG),
        ("log_end_offset", LONG),
    ),
    frozenset({"committed_offset"}),
)
INPUT_TABLES = (TOPIC_PARTITIONS, SUBSCRIPTIONS, CURRENT_ASSIGNMENT, OFFSETS)

# Columns that may be absent from an input file: they are optional in meaning (all null).
OPTIONAL_COLUMNS = {(t.name, c) for t in INPUT_TABLES for c in t.nullable}


class SchemaError(ValueError):
    """An input table is missing, or a required column is missing or of the wrong type."""


_INTEGERS = T.ByteType | T.ShortType | T.IntegerType | T.LongType
_FLOATS = T.FloatType | T.DoubleType


def _is_unsigned_long(t: T.DataType) -> bool:
    """How Spark reads a Parquet uint64 column: decimal(20,0) (uint8..uint32 read as ints)."""
    return isinstance(t, T.DecimalType) and t.scale == 0 and t.precision <= 20


def _accepts(actual: T.DataType, expected: T.DataType) -> bool:
    """Exact type, or one that converts without loss of meaning: another integer type where an
    int/bigint is expected (Parquet writers often produce int64 for partition numbers), a float
    there (pandas turns an integer column with a None into float64: the values are checked to
    be integral separately), an integer where a double is expected."""
    if actual == expected:
        return True
    if isinstance(expected, T.IntegerType | T.LongType):
        return isinstance(actual, _INTEGERS | _FLOATS) or _is_unsigned_long(actual)
    if isinstance(expected, T.DoubleType):
        return isinstance(actual, _INTEGERS | T.FloatType) or _is_unsigned_long(actual)
    if isinstance(expected, T.ArrayType) and isinstance(actual, T.ArrayType):
        return _accepts(actual.elementType, expected.elementType)
    return False


def schema_problems(schema: T.StructType, table: InputTable) -> list[str]:
    """Every way `schema` breaks the contract: missing required columns, wrong types."""
    actual = {f.name: f.dataType for f in schema.fields}
    found = []
    for name, expected in table.columns:
        if name not in actual or isinstance(actual[name], T.NullType):
            if name not in table.nullable:
                found.append(
                    f"{table.name}: required column {name!r} ({expected.simpleString()}) is missing"
                )
        elif not _accepts(actual[name], expected):
            found.append(
                f"{table.name}: column {name!r} has type {actual[name].simpleString()},"
                f" expected {expected.simpleString()}"
            )
    return found


def conform(
    df: DataFrame,
    table: InputTable,
    null_columns: frozenset[str] = frozenset(),
    checked: bool = False,
) -> DataFrame:
    """Check `df` against the contract and select the contract's columns with their types.

    Extra columns are ignored; a nullable column that is missing, or listed in `null_columns`
    (typed `null` in the file: Spark reads it as int), is all null. Otherwise a missing column
    or a wrong type raises SchemaError naming the table, the column and the expected type,
    unless the caller has `checked` the file types already (pyarrow sees types Spark does not:
    a list of nulls reads as array<int>).
    """
    if not checked:
        found = schema_problems(df.schema, table)
        if found:
            raise SchemaError("; ".join(found))
    actual = {f.name: f.dataType for f in df.schema.fields}
    cols = []
    for name, expected in table.columns:
        dtype = actual.get(name)
        if dtype is None or name in null_columns or isinstance(dtype, T.NullType):
            cols.append(_null(expected).alias(name))
        elif dtype == expected or (
            isinstance(dtype, T.LongType) and isinstance(expected, T.IntegerType)
        ):
            # A bigint is kept as is, never narrowed: a cast would fail (ANSI) or wrap on values
            # beyond int range; the planner reads partitions and generations as Python ints and
            # reports impossible values as rejected rows.
            cols.append(df[name])
        elif _is_unsigned_long(dtype) and isinstance(expected, T.LongType):
            # An unsigned offset column is kept exact, even above 2^63-1: the offsets travel to
            # the planner as text, which reports such values (OFFSET_OUT_OF_RANGE).
            cols.append(df[name])
        elif _is_unsigned_long(dtype) and isinstance(expected, T.IntegerType):
            # partition, generation: values above 2^63-1 are refused when the files are
            # checked (jobs.tables.inputs); the rest fit a bigint, and the planner reports those
            # beyond int range as it does for a bigint column.
            cols.append(df[name].cast(LONG).alias(name))
        elif isinstance(dtype, _FLOATS) and not isinstance(expected, T.DoubleType):
            # integral values (checked by the reader); NaN is pandas' null
            c = df[name]
            cols.append(F.when(F.isnan(c), None).otherwise(c.cast(LONG)).alias(name))
        else:
            cols.append(df[name].cast(expected).alias(name))
    return df.select(*cols)


def _null(dtype: T.DataType) -> Column:
    return F.lit(None).cast(dtype)


# ---- outputs -----------------------------------------------------------------------------

_PY_TO_SPARK: dict[type, T.DataType] = {
    int: INT,
    float: DOUBLE,
    bool: BOOL,
    str: STRING,
    list: STRINGS,
}


def _spark_type(name: str, typ: type) -> T.DataType:
    """A core column's Spark type: offsets and sums of offsets are bigint (their domain is a
    Kafka long), other integers count things of one group (int)."""
    if typ is int and name in BIGINT_COLUMNS:
        return LONG
    return _PY_TO_SPARK[typ]


ASSIGNMENTS_FIELDS: tuple[tuple[str, T.DataType, bool], ...] = (
    ("group_id", STRING, False),
    ("strategy", STRING, False),
    ("member_id", STRING, False),
    ("group_instance_id", STRING, True),
    ("topic", STRING, False),
    ("partition", INT, False),
    ("previous_member_id", STRING, True),
    ("rebalance_round", INT, False),
    # the partition's lag from `offsets` (null: unknown, or no offsets table)
    ("lag", LONG, True),
)
BALANCE_METRICS_FIELDS: tuple[tuple[str, T.DataType, bool], ...] = (
    ("group_id", STRING, False),
    ("strategy", STRING, False),
    *((name, _spark_type(name, typ), True) for name, typ in METRIC_COLUMNS),
)
ELECTIONS_FIELDS: tuple[tuple[str, T.DataType, bool], ...] = (
    ("group_id", STRING, False),
    ("elected_strategy", STRING, True),
    ("candidate_strategies", STRINGS, False),
    ("error", STRING, True),
    # `classic` or `consumer` (null for a group that is not planned), and for a `consumer`
    # group why the broker runs the elected assignor (null for classic groups)
    ("group_protocol", STRING, True),
    ("election_basis", STRING, True),
)
REJECTED_FIELDS: tuple[tuple[str, T.DataType, bool], ...] = (
    ("group_id", STRING, True),
    ("member_id", STRING, True),
    ("topic", STRING, True),
    # set when only that strategy failed for the group; null for group-level problems
    ("strategy", STRING, True),
    ("severity", STRING, False),
    ("reason", STRING, False),
    ("detail", STRING, False),
)

# What-if rebalances and recommendations (docs/whatif.md): the pure core names the columns.
# `lag_moved` is a sum of offsets (bigint, like the lag columns).
REBALANCE_COSTS_FIELDS: tuple[tuple[str, T.DataType, bool], ...] = tuple(
    (name, _spark_type(name, typ), nullable) for name, typ, nullable in REBALANCE_COST_COLUMNS
)
RECOMMENDATIONS_FIELDS: tuple[tuple[str, T.DataType, bool], ...] = tuple(
    (name, _spark_type(name, typ), nullable) for name, typ, nullable in RECOMMENDATION_COLUMNS
)


def struct(fields: tuple[tuple[str, T.DataType, bool], ...]) -> T.StructType:
    return T.StructType([T.StructField(n, t, nullable) for n, t, nullable in fields])


# Each output table's files are sorted by these columns (`jobs.plan.pipeline.sorted_for_write`,
# and the pyarrow writers of a local output).
SORT_KEYS = {
    "assignments": ("strategy", "group_id", "topic", "partition"),
    "balance_metrics": ("group_id", "strategy"),
    "elections": ("group_id",),
    "rejected": ("group_id", "member_id", "topic", "strategy", "reason", "detail"),
    "rebalance_costs": ("group_id", "strategy", "scenario"),
    "recommendations": ("group_id",),
}

# The UDF returns every output table in one frame, told apart by `kind`. Assignment rows (the
# millions) use the typed columns of `assignments`; the rows of the small tables (one per
# group and strategy at most) travel as a JSON `payload` parsed back with the table's schema,
# except `rebalance_costs` (one per group, strategy and scenario: millions too), whose
# payload is delimited values (`costs_payload`): cheaper than JSON to write in Python and to
# parse in the JVM, and fewer bytes through Arrow and the staged Parquet (docs/performance.md).
# One frame with the union of all columns would carry ~30 mostly-null columns per assignment
# row through Arrow and the JVM: the costliest way to carry them.
KIND_ASSIGNMENT, KIND_METRICS, KIND_ELECTION, KIND_REJECTED = "a", "m", "e", "r"
KIND_REBALANCE_COSTS, KIND_RECOMMENDATION = "c", "d"  # what-if rebalances, recommendations
# Not a table: a bucket's planning seconds by phase (the run's phase line and manifest).
KIND_TIMING = "t"
OUTPUT_TABLES = {
    KIND_ASSIGNMENT: ("assignments", ASSIGNMENTS_FIELDS),
    KIND_METRICS: ("balance_metrics", BALANCE_METRICS_FIELDS),
    KIND_ELECTION: ("elections", ELECTIONS_FIELDS),
    KIND_REJECTED: ("rejected", REJECTED_FIELDS),
    KIND_REBALANCE_COSTS: ("rebalance_costs", REBALANCE_COSTS_FIELDS),
    KIND_RECOMMENDATION: ("recommendations", RECOMMENDATIONS_FIELDS),
}
# Each output table's schema, to read back what this version wrote without inferring it:
# Spark infers a Parquet schema with a job that reads the files' footers.
OUTPUT_SCHEMAS = {table: struct(fields) for table, fields in OUTPUT_TABLES.values()}
PAYLOAD = "payload"
# On an assignment row, `payload` names the further strategies the row also stands for,
# joined by SHARED_SEPARATOR (null: none); a name followed by ROUND_SEPARATOR and a number
# gives that strategy's own `rebalance_round` for the row. Strategies that gave the same
# rows (`elected` and the strategy it names; sticky and cooperative-sticky, which differ at
# most in the round a moved partition arrives in) then travel once through Arrow, the JVM
# and the staged Parquet, and are repeated per strategy only when the `assignments` table is
# written (`jobs.plan.pipeline.split_output`). The separators are control characters no protocol
# name uses; a group whose names contain one is not shared.
SHARED_SEPARATOR, ROUND_SEPARATOR = "\x1f", "\x1e"
WIDE_FIELDS: list[tuple[str, T.DataType]] = [
    ("kind", STRING),
    *((name, dtype) for name, dtype, _ in ASSIGNMENTS_FIELDS),
    (PAYLOAD, STRING),
]
WIDE_SCHEMA = T.StructType([T.StructField(n, t, True) for n, t in WIDE_FIELDS])


# `rebalance_costs` payload: its columns after `group_id` (the frame's own column), comma
# separated, an empty value for null, the strategy last: the one free-form value, so a split
# into COSTS_PAYLOAD_COLUMNS parts keeps whatever it contains.
COSTS_PAYLOAD_COLUMNS: tuple[str, ...] = (
    *(name for name, _, _ in REBALANCE_COSTS_FIELDS if name not in ("group_id", "strategy")),
    "strategy",
)


_COSTS_PAYLOAD_VALUES = operator.itemgetter(*COSTS_PAYLOAD_COLUMNS)


def costs_payload(row: Mapping[str, object]) -> str:
    """One `rebalance_costs` row as its payload (see COSTS_PAYLOAD_COLUMNS). A list, not a
    generator, and one itemgetter: half the time a row (millions of rows a large run)."""
    return ",".join(["" if v is None else str(v) for v in _COSTS_PAYLOAD_VALUES(row)])


def costs_values(payload: str) -> dict[str, str | None]:
    """A payload's values by column, as text (None for null): the oracle of the Spark split."""
    values = payload.split(",", len(COSTS_PAYLOAD_COLUMNS) - 1)
    return {name: v or None for name, v in zip(COSTS_PAYLOAD_COLUMNS, values, strict=True)}
