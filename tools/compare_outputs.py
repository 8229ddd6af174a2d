"""Compare two planner outputs table by table, row by row, order included.

    python -m tools.compare_outputs OUT_A OUT_B [--show N]

Exit 0 when both hold the same data files (the same relative paths of Parquet files, part
file names aside: those carry a run's random token) and every file holds the same rows in the
same order; else 1, printing the first differences of each table. Reads with pyarrow only
(no Spark), one file at a time, so a large output needs the memory of its largest file.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

# A part file's name without the token of the run that wrote it:
# part-00003-0b8f...-c000.snappy.parquet -> part-00003.c000.snappy.parquet
_TOKEN = re.compile(r"^(\.?part-\d+)-[0-9a-f-]{36}(.*)$")


def _data_files(table_dir: Path) -> dict[str, Path]:
    """The table's Parquet files by their path under the table, the run's token removed."""
    found: dict[str, Path] = {}
    for root, dirs, names in os.walk(table_dir):
        dirs.sort()
        for name in sorted(names):
            if name.startswith((".", "_")) or not name.endswith(".parquet"):
                continue
            path = Path(root) / name
            rel = path.relative_to(table_dir)
            match = _TOKEN.match(rel.name)
            key = str(rel.with_name("".join(match.groups()) if match else rel.name))
            found[key] = path
    return found


def tables_of(out: Path) -> list[str]:
    """The table folders (and single-file tables) of an output."""
    return sorted(
        p.name.removesuffix(".parquet")
        for p in out.iterdir()
        if not p.name.startswith((".", "_")) and (p.is_dir() or p.name.endswith(".parquet"))
    )


def _table_files(out: Path, table: str) -> dict[str, Path]:
    folder = out / table
    if folder.is_dir():
        return _data_files(folder)
    single = out / f"{table}.parquet"
    return {single.name: single} if single.is_file() else {}


def _rows(path: Path) -> pa.Table:
    return pq.read_table(path)


def compare_table(a: Path, b: Path, table: str, show: int) -> list[str]:
    """The first differences of one table (empty: identical)."""
    problems: list[str] = []
    files_a, files_b = _table_files(a, table), _table_files(b, table)
    if files_a.keys() != files_b.keys():
        only_a = sorted(files_a.keys() - files_b.keys())[:show]
        only_b = sorted(files_b.keys() - files_a.keys())[:show]
        problems.append(f"files differ: only in A {only_a}, only in B {only_b}")
    for key in sorted(files_a.keys() & files_b.keys()):
        ta, tb = _rows(files_a[key]), _rows(files_b[key])
        if ta.schema.names != tb.schema.names or ta.schema.types != tb.schema.types:
            problems.append(f"{key}: schema differs:\n  A {ta.schema}\n  B {tb.schema}")
            continue
        if ta.num_rows != tb.num_rows:
            problems.append(f"{key}: {ta.num_rows} rows in A, {tb.num_rows} in B")
        if ta.num_rows == tb.num_rows and ta.equals(tb):
            continue
        for i, (ra, rb) in enumerate(_pairs(ta, tb)):
            if ra.keys() != rb.keys() or not all(_same(ra[k], rb[k]) for k in ra):
                problems.append(f"{key} row {i}:\n  A {ra}\n  B {rb}")
                if sum(1 for p in problems if " row " in p) >= show:
                    break
    return problems


def _pairs(ta: pa.Table, tb: pa.Table) -> Iterator[tuple[dict[str, object], dict[str, object]]]:
    """Rows of both tables side by side, batch by batch (not all as Python at once)."""
    for start in range(0, min(ta.num_rows, tb.num_rows), 65_536):
        xs = ta.slice(start, 65_536).to_pylist()
        ys = tb.slice(start, 65_536).to_pylist()
        yield from zip(xs, ys, strict=True)


def _same(x: object, y: object) -> bool:
    """Equal values, NaN equal to NaN (floats compared bit for bit otherwise)."""
    if isinstance(x, float) and isinstance(y, float) and x != x and y != y:
        return True
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(_same(u, v) for u, v in zip(x, y, strict=True))
    return type(x) is type(y) and x == y


def listing(out: Path) -> set[str]:
    """Every file of an output by its relative path, part files without their run's token."""
    found = set()
    for root, dirs, names in os.walk(out):
        dirs.sort()
        for name in names:
            rel = (Path(root) / name).relative_to(out)
            match = _TOKEN.match(rel.name)
            found.add(str(rel.with_name("".join(match.groups()) if match else rel.name)))
    return found


def compare(a: Path, b: Path, show: int = 5) -> dict[str, list[str]]:
    """Each table's first differences (tables with none left out), and under "(files)" the
    files of one output that the other lacks."""
    out: dict[str, list[str]] = {}
    list_a, list_b = listing(a), listing(b)
    if list_a != list_b:
        out["(files)"] = [
            f"only in A: {sorted(list_a - list_b)[:show]}",
            f"only in B: {sorted(list_b - list_a)[:show]}",
        ]
    tables_a, tables_b = tables_of(a), tables_of(b)
    for table in sorted(set(tables_a) | set(tables_b)):
        if table not in tables_a or table not in tables_b:
            out[table] = [f"only in {'A' if table in tables_a else 'B'}"]
            continue
        found = compare_table(a, b, table, show)
        if found:
            out[table] = found
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_a", type=Path)
    p.add_argument("out_b", type=Path)
    p.add_argument("--show", type=int, default=5, help="differences shown per table")
    args = p.parse_args(argv)
    for out in (args.out_a, args.out_b):
        if not out.is_dir():
            print(f"{out}: not a directory", file=sys.stderr)
            return 2
    found = compare(args.out_a, args.out_b, args.show)
    tables = tables_of(args.out_a)
    for table in tables:
        files = _table_files(args.out_a, table)
        rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files.values())
        verdict = "differs" if table in found else "identical"
        print(f"{table}: {len(files)} files, {rows} rows in A: {verdict}")
    for table, problems in found.items():
        print(f"\n{table}:")
        for problem in problems:
            print(f"  {problem}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
