"""Reading the input tables as users write them, with every problem found up front
(docs/data-contract.md).

Each table is `NAME/` (a folder of part files, Spark's layout) or `NAME.parquet` (one file, what
pandas' `to_parquet` writes). On a local file system every data file is checked with pyarrow
before Spark touches it: its footer (the schema, per file: Spark itself reads only one), and
its contract columns in full (corrupt pages, strings that are not UTF-8, fractions in a float
column standing in for an integer one). A broken file is then a schema error naming it, never a
failure inside a Spark task halfway through planning. Files are read in groups of identical
contract-column types, so part files that disagree in ways the contract accepts (an all-null
column typed `null` in one file and `string` in another, int32 next to int64) are read each with
its own schema and conformed to the contract's.

Other file systems (HDFS, object stores) are read with Spark's schema merging instead: a
conflict between part files is still a schema error, but it cannot name the file, and an
all-null column of Arrow type `null` reads as `int` there (write it with its real type).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from jobs.fs import hadoop_path
from jobs.tables.schemas import INPUT_TABLES, InputTable, SchemaError, conform, schema_problems

# Arrow types as the contract (Spark SQL) names them, for messages.
_ARROW_NAMES = {
    pa.null(): "null",
    pa.bool_(): "boolean",
    pa.int8(): "tinyint",
    pa.int16(): "smallint",
    pa.int32(): "int",
    pa.int64(): "bigint",
    pa.uint8(): "uint8",
    pa.uint16(): "uint16",
    pa.uint32(): "uint32",
    pa.uint64(): "uint64",
    pa.float16(): "float16",
    pa.float32(): "float",
    pa.float64(): "double",
    pa.string(): "string",
    pa.large_string(): "string",
    pa.string_view(): "string",
    pa.binary(): "binary",
}
# Verdicts on one file's column (see `_verdict`).
OK, NULL, FLOAT, BAD = "ok", "null", "float", "bad"
_BATCH_ROWS = 65_536
_SHOWN_FILES = 3


def arrow_type_name(t: pa.DataType) -> str:
    if t in _ARROW_NAMES:
        return _ARROW_NAMES[t]
    if pa.types.is_dictionary(t):
        return arrow_type_name(t.value_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return f"array<{arrow_type_name(t.value_type)}>"
    return str(t)


def _is_string(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        return _is_string(t.value_type)
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t))


def _is_int(t: pa.DataType) -> bool:
    # Signed and unsigned; uint64 reads as decimal(20,0) in Spark (see jobs.tables.schemas.conform)
    return bool(pa.types.is_integer(t))


def _verdict(t: pa.DataType, expected: T.DataType) -> str:
    """OK: Spark reads it and a cast gives the contract type; NULL: Arrow type null (all
    null); FLOAT: a float for an integer column (accepted when every value is integral)."""
    if pa.types.is_null(t):
        return NULL
    if isinstance(expected, T.StringType):
        return OK if _is_string(t) else BAD
    if isinstance(expected, T.IntegerType | T.LongType):
        if _is_int(t):
            return OK
        return FLOAT if pa.types.is_floating(t) and t != pa.float16() else BAD
    if isinstance(expected, T.DoubleType):
        return OK if _is_int(t) or pa.types.is_float32(t) or pa.types.is_float64(t) else BAD
    if isinstance(expected, T.BooleanType):
        return OK if pa.types.is_boolean(t) else BAD
    if isinstance(expected, T.ArrayType) and (pa.types.is_list(t) or pa.types.is_large_list(t)):
        element = t.value_type
        return (
            OK
            if pa.types.is_null(element) or _verdict(element, expected.elementType) == OK
            else BAD
        )
    return BAD


@dataclass
class _FileInfo:
    path: str
    types: dict[str, pa.DataType]  # contract columns present in the file
    case_collision: bool
    rows: int


@dataclass
class _TableFiles:
    """One table's dataset and its data files, as their footers describe them."""

    table: InputTable
    dataset: str  # the folder or the single file
    files: list[_FileInfo] = field(default_factory=list)


def local_path(spark: SparkSession, path: str) -> str | None:
    """The local path of `path` when Hadoop resolves it to the local file system, else None
    (a path without a scheme is on the cluster's default file system, e.g. HDFS)."""
    fs, hpath = hadoop_path(spark, path)
    if str(fs.getUri().getScheme()) != "file":
        return None
    return str(fs.makeQualified(hpath).toUri().getPath())


def _hidden(name: str) -> bool:
    # Spark's rule (InMemoryFileIndex): `_SUCCESS`, `_metadata`, `.crc` files, `_temporary`...
    return (
        (name.startswith("_") and "=" not in name)
        or name.startswith(".")
        or name.endswith("._COPYING_")
    )


def _data_files(folder: str) -> list[str]:
    found = []
    for root, dirs, names in os.walk(folder, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not _hidden(d))
        found += [os.path.join(root, n) for n in sorted(names) if not _hidden(n)]
    return found


class _Problems:
    """Every problem of a run, in the order found; raised together."""

    def __init__(self, input_dir: str) -> None:
        self.input_dir = input_dir.rstrip("/")
        self.root = self.input_dir  # file paths are shown relative to it
        self.items: list[str] = []

    def add(self, text: str) -> None:
        self.items.append(text)

    def name(self, path: str) -> str:
        prefix = self.root + "/"
        return path[len(prefix) :] if path.startswith(prefix) else path

    def names(self, paths: list[str], total: int, dataset: str) -> str:
        if len(paths) == total > 1:
            return f"in all {total} files of {self.name(dataset)}"
        shown = ", ".join(self.name(p) for p in paths[:_SHOWN_FILES])
        more = len(paths) - _SHOWN_FILES
        return f"in {shown}" + (f" and {more} more" if more > 0 else "")

    def raise_if_any(self) -> None:
        if len(self.items) == 1:
            raise SchemaError(f"{self.items[0]} (input {self.input_dir})")
        if self.items:
            lines = "\n".join(f"  - {p}" for p in self.items)
            raise SchemaError(f"{len(self.items)} problems in input {self.input_dir}:\n{lines}")


def _locate_local(root: str, table: InputTable, problems: _Problems) -> str | None:
    candidates = [f"{root}/{table.name}", f"{root}/{table.name}.parquet"]
    present = [c for c in candidates if os.path.exists(c)]
    if len(present) > 1:
        problems.add(
            f"{table.name}: found both {present[0]} and {present[1]}; keep one"
            " (the planner cannot tell which one is current)"
        )
        return None
    if not present:
        if table.required:
            problems.add(
                f"{table.name}: required input table not found at {candidates[0]}/ or"
                f" {candidates[1]}"
            )
        return None
    return present[0]


def _inspect_file(path: str, table: InputTable, problems: _Problems) -> _FileInfo | None:
    try:
        footer = pq.ParquetFile(path)
        schema, rows = footer.schema_arrow, footer.metadata.num_rows
    except (OSError, pa.ArrowException, ValueError) as exc:
        problems.add(f"{table.name}: cannot read Parquet file {problems.name(path)}: {_first(exc)}")
        return None
    names = schema.names
    lowered = [n.lower() for n in names]
    types = {name: schema.field(name).type for name, _ in table.columns if name in names}
    return _FileInfo(path, types, len(set(lowered)) != len(lowered), rows)


def _first(exc: BaseException) -> str:
    """The line that says what went wrong (a Py4J error starts with a line that does not)."""
    lines = [line.strip().lstrip(": ") for line in str(exc).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith("An error occurred while calling")]
    return (useful or lines or [type(exc).__name__])[0]


def _type_problems(tf: _TableFiles, problems: _Problems) -> None:
    """Report each contract column whose type some file gets wrong, naming the files."""
    table, total = tf.table, len(tf.files)
    for name, expected in table.columns:
        by_type: dict[str, list[str]] = defaultdict(list)
        bad: dict[str, list[str]] = defaultdict(list)
        missing = []
        for info in tf.files:
            t = info.types.get(name)
            if t is None:
                missing.append(info.path)
                continue
            by_type[arrow_type_name(t)].append(info.path)
            verdict = _verdict(t, expected)
            # a file without rows may type anything `null` (pandas does for an empty frame)
            if verdict == BAD or (verdict == NULL and name not in table.nullable and info.rows):
                bad[arrow_type_name(t)].append(info.path)
        want = expected.simpleString()
        if missing and name not in table.nullable:
            where = problems.names(missing, total, tf.dataset)
            problems.add(f"{table.name}: required column {name!r} ({want}) is missing {where}")
        for found, paths in sorted(bad.items()):
            others = [
                f"{problems.names(p, total, tf.dataset)} it is {t}"
                for t, p in sorted(by_type.items())
                if t != found
            ]
            null_note = " (all null, in a column that must not be null)" if found == "null" else ""
            problems.add(
                f"{table.name}: column {name!r} has type {found}, expected {want}{null_note}"
                f" {problems.names(paths, total, tf.dataset)}"
                + (f"; {'; '.join(others)}" if others else "")
            )


def _scan_file(info: _FileInfo, table: InputTable, problems: _Problems) -> None:
    """Read the file's contract columns in full with pyarrow: a corrupt page, a string that is
    not UTF-8 or a fraction in an integer column is reported here, not inside a Spark task."""
    expected = dict(table.columns)
    columns = [n for n, t in info.types.items() if _verdict(t, expected[n]) in (OK, FLOAT)]
    rows = 0
    try:
        for batch in pq.ParquetFile(info.path).iter_batches(_BATCH_ROWS, columns=columns):
            for name in batch.schema.names:
                if not _values_ok(batch.column(name), name, rows, info, table, problems):
                    return  # one problem per file is enough
            rows += batch.num_rows
    except (OSError, pa.ArrowException, ValueError) as exc:
        problems.add(
            f"{table.name}: cannot read Parquet file {problems.name(info.path)}: {_first(exc)}"
        )


def _values_ok(
    column: pa.Array, name: str, offset: int, info: _FileInfo, table: InputTable, p: _Problems
) -> bool:
    where = f"{table.name}: column {name!r} in {p.name(info.path)}"
    try:
        column.validate(full=True)
    except pa.ArrowInvalid as exc:
        p.add(f"{where} is unreadable (a string that is not valid UTF-8?): {_first(exc)}")
        return False
    expected = dict(table.columns)[name]
    if column.type == pa.uint64() and isinstance(expected, T.IntegerType):
        # A partition or generation above 2^63-1 fits no Spark integer: refused, never wrapped
        # (an offset column keeps such values: the planner reports them row by row).
        above = pc.greater(column, pa.scalar(2**63 - 1, pa.uint64()))
        row = pc.index(above, True).as_py()
        if row >= 0:
            p.add(
                f"{where} has type uint64 with the value {column[row].as_py()} (row"
                f" {offset + row}), above 2^63-1: expected {expected.simpleString()}"
            )
            return False
    if pa.types.is_floating(column.type) and not isinstance(expected, T.DoubleType):
        values = column.to_numpy(zero_copy_only=False)
        with np.errstate(invalid="ignore"):
            wrong = ~np.isnan(values) & ((np.floor(values) != values) | (np.abs(values) >= 2.0**63))
        if wrong.any():
            row = int(np.argmax(wrong))
            p.add(
                f"{where} has type {arrow_type_name(column.type)} with the non-integral value"
                f" {float(values[row])!r} (row {offset + row}), expected"
                f" {expected.simpleString()}"
            )
            return False
    return True


def _signature(info: _FileInfo, table: InputTable) -> tuple[tuple[str, str], ...]:
    return tuple(
        (name, "missing" if name not in info.types else str(info.types[name]))
        for name, _ in table.columns
    )


def _local_table(
    root: str, table: InputTable, problems: _Problems
) -> tuple[_TableFiles | None, bool]:
    """The table's checked files (None when absent or broken), and whether names collide."""
    dataset = _locate_local(root, table, problems)
    if dataset is None:
        return None, False
    paths = _data_files(dataset) if os.path.isdir(dataset) else [dataset]
    if not paths:
        if table.required:
            problems.add(f"{table.name}: {problems.name(dataset)}/ holds no data files")
        return None, False  # an empty folder of an optional table: absent
    tf = _TableFiles(table, dataset)
    before = len(problems.items)
    for path in paths:
        info = _inspect_file(path, table, problems)
        if info is not None:
            tf.files.append(info)
    _type_problems(tf, problems)
    if len(problems.items) > before:
        return None, False
    for info in tf.files:
        _scan_file(info, table, problems)
    if len(problems.items) > before:
        return None, False
    return tf, any(info.case_collision for info in tf.files)


def _read_local(spark: SparkSession, tf: _TableFiles) -> DataFrame:
    """Spark reads each group of files with identical contract types on its own (Spark infers
    a dataset's schema from one footer); each group is conformed, then all are united."""
    groups: dict[tuple[tuple[str, str], ...], list[_FileInfo]] = defaultdict(list)
    for info in tf.files:
        groups[_signature(info, tf.table)].append(info)
    frames = []
    for infos in groups.values():
        reader = spark.read
        if os.path.isdir(tf.dataset):
            reader = reader.option("basePath", tf.dataset)  # keeps `key=value` partition folders
        df = reader.parquet(*[f"file://{i.path}" for i in infos])
        nulls = frozenset(n for n, t in infos[0].types.items() if pa.types.is_null(t))
        frames.append(conform(df, tf.table, null_columns=nulls, checked=True))
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return union


def _read_remote(
    spark: SparkSession, input_dir: str, table: InputTable, problems: _Problems
) -> DataFrame | None:
    """Not a local file system: Spark lists the files and merges their schemas."""
    root = input_dir.rstrip("/")
    candidates = [f"{root}/{table.name}", f"{root}/{table.name}.parquet"]
    present = []
    for c in candidates:
        fs, hpath = hadoop_path(spark, c)
        if fs.exists(hpath):
            visible = [s for s in fs.listStatus(hpath) if not _hidden(str(s.getPath().getName()))]
            present.append((c, bool(visible)))
    if len(present) > 1:
        problems.add(f"{table.name}: found both {present[0][0]} and {present[1][0]}; keep one")
        return None
    if not present or not present[0][1]:
        if table.required:
            problems.add(f"{table.name}: required input table not found (or empty) at {root}")
        return None
    path = present[0][0]
    try:
        df = _merged(spark, path)
    except Exception as exc:  # AnalysisException, or a JVM error reading a corrupt footer
        problems.add(f"{table.name}: cannot read Parquet at {path}: {_first(exc)}")
        return None
    found = schema_problems(df.schema, table)
    found += _remote_float_problems(df, table)
    if found:
        for text in found:
            problems.add(text)
        return None
    return conform(df, table)


def _merged(spark: SparkSession, path: str) -> DataFrame:
    try:
        return spark.read.option("mergeSchema", "true").parquet(path)
    except Exception as exc:
        if "COLUMN_ALREADY_EXISTS" not in str(exc):
            raise
    # columns differing only by case (`GROUP_ID` next to `group_id`): see read_inputs
    spark.conf.set("spark.sql.caseSensitive", "true")
    return spark.read.option("mergeSchema", "true").parquet(path)


def _remote_float_problems(df: DataFrame, table: InputTable) -> list[str]:
    """Float columns standing in for integer ones must hold integral values (NaN = null)."""
    expected = dict(table.columns)
    floats = [
        f.name
        for f in df.schema.fields
        if f.name in expected
        and isinstance(expected[f.name], T.IntegerType | T.LongType)
        and isinstance(f.dataType, T.FloatType | T.DoubleType)
    ]
    found = []
    for name in floats:
        c = F.col(name)
        wrong = c.isNotNull() & ~F.isnan(c) & ((c % 1 != 0) | (F.abs(c) >= 2.0**63))
        bad = df.where(wrong).select(c, F.input_file_name().alias("file")).limit(1).collect()
        if bad:
            found.append(
                f"{table.name}: column {name!r} in {bad[0]['file']} has the non-integral value"
                f" {bad[0][name]!r}, expected {expected[name].simpleString()}"
            )
    return found


def read_inputs(
    spark: SparkSession, input_dir: str, tables: Iterable[InputTable] = INPUT_TABLES
) -> dict[str, DataFrame | None]:
    """Every input table conformed to the contract (None: an absent optional table).

    Raises SchemaError listing every problem of the run at once (table, column, file, found
    and expected type), before anything is planned or written.
    """
    problems = _Problems(input_dir)
    root = local_path(spark, input_dir)
    if root is not None and not os.path.isdir(root):
        problems.add(f"the input directory {input_dir} does not exist")
        problems.raise_if_any()
    if root is None:
        remote = {t.name: _read_remote(spark, input_dir, t, problems) for t in tables}
        problems.raise_if_any()
        return remote
    problems.root = root.rstrip("/")
    checked = {t.name: _local_table(problems.root, t, problems) for t in tables}
    problems.raise_if_any()
    if any(collides for _, collides in checked.values()):
        # A file holds columns differing only by case (`GROUP_ID` next to `group_id`): Spark's
        # default case-insensitive resolution would refuse it. The planner uses exact names.
        spark.conf.set("spark.sql.caseSensitive", "true")
    return {
        name: (_read_local(spark, tf) if tf is not None else None)
        for name, (tf, _) in checked.items()
    }


def read_table(spark: SparkSession, input_dir: str, table: InputTable) -> DataFrame | None:
    """One table, as `read_inputs` reads it."""
    return read_inputs(spark, input_dir, (table,))[table.name]
