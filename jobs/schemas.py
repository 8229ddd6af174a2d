"""The data contract (DESIGN §3) as Spark schemas, and the schema check of the inputs."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from assignors.metrics import METRIC_COLUMNS

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


TOPIC_PARTITIONS = InputTable(
    "topic_partitions",
    True,
    (("topic", STRING), ("partition", INT), ("replica_racks", STRINGS), ("weight", DOUBLE)),
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
)
INPUT_TABLES = (TOPIC_PARTITIONS, SUBSCRIPTIONS, CURRENT_ASSIGNMENT, OFFSETS)

# Columns that may be absent from an input file: they are optional in meaning (all null).
OPTIONAL_COLUMNS = {
    ("topic_partitions", "replica_racks"),
    ("topic_partitions", "weight"),
}


class SchemaError(ValueError):
    """An input table is missing, or a required column is missing or of the wrong type."""


def _accepts(actual: T.DataType, expected: T.DataType) -> bool:
    """Exact type, or another integer type where an int/bigint is expected (Parquet writers
    often produce int64 for partition numbers)."""
    if actual == expected:
        return True
    if isinstance(expected, T.IntegerType):
        return isinstance(actual, T.ShortType | T.ByteType | T.LongType)
    if isinstance(expected, T.LongType):
        return isinstance(actual, T.IntegerType | T.ShortType | T.ByteType)
    if isinstance(expected, T.ArrayType) and isinstance(actual, T.ArrayType):
        return _accepts(actual.elementType, expected.elementType)
    return False


def conform(df: DataFrame, table: InputTable) -> DataFrame:
    """Check `df` against the contract and select the contract's columns with their types.

    Extra columns are ignored. A missing column or a wrong type raises SchemaError naming
    the table, the column and the expected type.
    """
    actual = {f.name: f.dataType for f in df.schema.fields}
    cols = []
    for name, expected in table.columns:
        if name not in actual:
            if (table.name, name) in OPTIONAL_COLUMNS:
                cols.append(_null(expected).alias(name))
                continue
            raise SchemaError(
                f"{table.name}: required column {name!r} ({expected.simpleString()}) is missing"
            )
        if not _accepts(actual[name], expected):
            raise SchemaError(
                f"{table.name}: column {name!r} has type {actual[name].simpleString()},"
                f" expected {expected.simpleString()}"
            )
        if actual[name] == expected or isinstance(actual[name], T.LongType):
            # A bigint is kept as is, never narrowed: a cast would fail (ANSI) or wrap on values
            # beyond int range; the planner reads partitions and generations as Python ints and
            # reports impossible values as rejected rows.
            cols.append(df[name])
        else:
            cols.append(df[name].cast(expected).alias(name))
    return df.select(*cols)


def _null(dtype: T.DataType):  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    return F.lit(None).cast(dtype)


# ---- outputs -----------------------------------------------------------------------------

_PY_TO_SPARK: dict[type, T.DataType] = {
    int: INT,
    float: DOUBLE,
    bool: BOOL,
    str: STRING,
    list: STRINGS,
}

ASSIGNMENTS_FIELDS: tuple[tuple[str, T.DataType, bool], ...] = (
    ("group_id", STRING, False),
    ("strategy", STRING, False),
    ("member_id", STRING, False),
    ("group_instance_id", STRING, True),
    ("topic", STRING, False),
    ("partition", INT, False),
    ("previous_member_id", STRING, True),
    ("rebalance_round", INT, False),
)
BALANCE_METRICS_FIELDS: tuple[tuple[str, T.DataType, bool], ...] = (
    ("group_id", STRING, False),
    ("strategy", STRING, False),
    *((name, _PY_TO_SPARK[typ], True) for name, typ in METRIC_COLUMNS),
)
ELECTIONS_FIELDS: tuple[tuple[str, T.DataType, bool], ...] = (
    ("group_id", STRING, False),
    ("elected_strategy", STRING, True),
    ("candidate_strategies", STRINGS, False),
    ("error", STRING, True),
)
REJECTED_FIELDS: tuple[tuple[str, T.DataType, bool], ...] = (
    ("group_id", STRING, True),
    ("member_id", STRING, True),
    ("topic", STRING, True),
    ("severity", STRING, False),
    ("reason", STRING, False),
    ("detail", STRING, False),
)


def struct(fields: tuple[tuple[str, T.DataType, bool], ...]) -> T.StructType:
    return T.StructType([T.StructField(n, t, nullable) for n, t, nullable in fields])


# The UDF returns every output table in one frame, told apart by `kind`. Assignment rows (the
# millions) use the typed columns of `assignments`; the rows of the small tables (one per
# group and strategy at most) travel as a JSON `payload` parsed back with the table's schema.
# One frame with the union of all columns would carry ~30 mostly-null columns per assignment
# row through Arrow, the JVM and the cache, which measured as the job's largest cost.
KIND_ASSIGNMENT, KIND_METRICS, KIND_ELECTION, KIND_REJECTED = "a", "m", "e", "r"
OUTPUT_TABLES = {
    KIND_ASSIGNMENT: ("assignments", ASSIGNMENTS_FIELDS),
    KIND_METRICS: ("balance_metrics", BALANCE_METRICS_FIELDS),
    KIND_ELECTION: ("elections", ELECTIONS_FIELDS),
    KIND_REJECTED: ("rejected", REJECTED_FIELDS),
}
PAYLOAD = "payload"
WIDE_FIELDS: list[tuple[str, T.DataType]] = [
    ("kind", STRING),
    *((name, dtype) for name, dtype, _ in ASSIGNMENTS_FIELDS),
    (PAYLOAD, STRING),
]
WIDE_SCHEMA = T.StructType([T.StructField(n, t, True) for n, t in WIDE_FIELDS])
