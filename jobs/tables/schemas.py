"""The data contract (`jobs.tables.contract`) as Spark schemas, and the inputs' schema check."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.tables import contract

STRING = T.StringType()
INT = T.IntegerType()
LONG = T.LongType()
DOUBLE = T.DoubleType()
BOOL = T.BooleanType()
STRINGS = T.ArrayType(T.StringType())

_SPARK_TYPES: dict[pa.DataType, T.DataType] = {
    contract.STRING: STRING,
    contract.INT: INT,
    contract.LONG: LONG,
    contract.DOUBLE: DOUBLE,
    contract.BOOL: BOOL,
}


def spark_type(t: pa.DataType) -> T.DataType:
    """A contract type (Arrow) as its Spark SQL type."""
    if pa.types.is_list(t):
        return T.ArrayType(spark_type(t.value_type))
    return _SPARK_TYPES[t]


def spark_fields(columns: Iterable[contract.Column]) -> tuple[tuple[str, T.DataType, bool], ...]:
    """Contract columns as (name, Spark type, nullable)."""
    return tuple((c.name, spark_type(c.type), c.nullable) for c in columns)


@dataclass(frozen=True)
class InputTable:
    name: str
    required: bool
    columns: tuple[tuple[str, T.DataType], ...]
    # Columns that may hold nulls (the contract's nullable columns): such a column may also be
    # missing from a file, or typed `null` by pyarrow when every value is null.
    nullable: frozenset[str] = frozenset()

    @classmethod
    def of(cls, table: contract.Table) -> InputTable:
        columns = tuple((c.name, spark_type(c.type)) for c in table.columns)
        return cls(table.name, table.required, columns, table.nullable)


TOPIC_PARTITIONS = InputTable.of(contract.TOPIC_PARTITIONS)
SUBSCRIPTIONS = InputTable.of(contract.SUBSCRIPTIONS)
CURRENT_ASSIGNMENT = InputTable.of(contract.CURRENT_ASSIGNMENT)
TARGET_ASSIGNMENT = InputTable.of(contract.TARGET_ASSIGNMENT)
OFFSETS = InputTable.of(contract.OFFSETS)
INPUT_TABLES = (TOPIC_PARTITIONS, SUBSCRIPTIONS, CURRENT_ASSIGNMENT, TARGET_ASSIGNMENT, OFFSETS)

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

Fields = tuple[tuple[str, T.DataType, bool], ...]
ASSIGNMENTS_FIELDS: Fields = spark_fields(contract.ASSIGNMENTS.columns)
BALANCE_METRICS_FIELDS: Fields = spark_fields(contract.BALANCE_METRICS.columns)
ELECTIONS_FIELDS: Fields = spark_fields(contract.ELECTIONS.columns)
REJECTED_FIELDS: Fields = spark_fields(contract.REJECTED.columns)
REBALANCE_COSTS_FIELDS: Fields = spark_fields(contract.REBALANCE_COSTS.columns)
RECOMMENDATIONS_FIELDS: Fields = spark_fields(contract.RECOMMENDATIONS.columns)


def struct(fields: Fields) -> T.StructType:
    return T.StructType([T.StructField(n, t, nullable) for n, t, nullable in fields])


def spark_schema(columns: Iterable[contract.Column]) -> T.StructType:
    """Contract columns as a Spark schema."""
    return struct(spark_fields(columns))


# Each output table's files are sorted by these columns (`jobs.plan.pipeline.sorted_for_write`,
# and the pyarrow writers of a local output).
SORT_KEYS = {t.name: t.sort_keys for t in (*contract.OUTPUTS, *contract.RUN_OUTPUTS)}
# Each output table's schema, to read back what this version wrote without inferring it:
# Spark infers a Parquet schema with a job that reads the files' footers.
OUTPUT_SCHEMAS = {
    t.name: spark_schema(t.columns) for t in (*contract.OUTPUTS, *contract.RUN_OUTPUTS)
}
# Each output table's columns as (name, Spark type, nullable), in the contract's order.
OUTPUT_FIELDS: dict[str, Fields] = {t.name: spark_fields(t.columns) for t in contract.OUTPUTS}
