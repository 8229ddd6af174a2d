"""The `changes` step alone at estate size: two outputs' small tables, read and compared
(docs/changes.md, docs/performance.md).

    python -m tools.bench_changes [--groups 100000] [--repeat 3] [--churn 1] [--keep DIR]
        [--spark]

Writes a previous and a current output's small tables with pyarrow at the contract's
schemas (`balance_metrics`: seven strategies per group, `elections`, `recommendations`,
`live_check`, `_manifest.json`): the current run has 1% of the groups new and 1% gone, and
changes in the others' members, generations, elected strategy, balance and lag (`--churn`
scales their shares: 1 changes about 44% of the groups, 0.1 about 5%). Then, in a
fresh process each time (so that its peak memory is the step's), times what the job does
on the driver: the previous output read before planning (`jobs.tables.previous.read_previous`),
and after the writes today's tables read and compared (`run_figures`, `compare_runs`).
Prints the seconds (best of `--repeat`), the rows found and the process's peak RSS.
`--spark` also times the rows' DataFrame and write through a local SparkSession.

A benchmark, not a test: it makes no timing assertion.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from jobs.tables import contract
from jobs.tables.manifest import MANIFEST_FILE

STRATEGIES = (
    "range",
    "roundrobin",
    "sticky",
    "cooperative-sticky",
    "uniform",
    "balanced",
    "elected",
)
FILES = 8  # part files per table, as a small run's `output_files`


def _column(rng: np.random.Generator, field: pa.Field, n: int) -> pa.Array:
    t = field.type
    if pa.types.is_integer(t):
        return pa.array(rng.integers(0, 1_000, n), t)
    if pa.types.is_floating(t):
        return pa.array(rng.random(n), t)
    if pa.types.is_boolean(t):
        return pa.array(rng.random(n) < 0.5, t)
    if pa.types.is_list(t):
        return pa.array([["range", "cooperative-sticky"]] * n, t)
    return pa.array(np.full(n, "x", dtype=object), t)


def _write(root: str, name: str, table: pa.Table) -> None:
    folder = os.path.join(root, name)
    os.makedirs(folder)
    step = -(-table.num_rows // FILES)
    for i in range(FILES):
        part = table.slice(i * step, step)
        pq.write_table(part, os.path.join(folder, f"part-{i:05d}.parquet"))


def _figures(total: int, seed: int = 7) -> dict[str, np.ndarray]:
    """Every group's figures on day 0, by group index."""
    rng = np.random.default_rng(seed)
    return {
        "members": rng.integers(1, 60, total),
        "partitions": rng.integers(1, 200, total),
        "generation": rng.integers(1, 10_000, total),
        "digest": np.array([f"{i:016x}" for i in range(total)], dtype=object),
        "gap": rng.integers(0, 3, total),
        "lag": rng.integers(0, 1_000_000, total),
        "elected": np.where(rng.random(total) < 0.7, "range", "cooperative-sticky").astype(object),
        "verdict": np.where(rng.random(total) < 0.9, "MATCHES", "DIFFERS").astype(object),
    }


def _edited(f: dict[str, np.ndarray], churn: float, seed: int = 11) -> dict[str, np.ndarray]:
    """Day 1 at `churn` 1: 5% of the groups with a member more, 20% at a later generation,
    10% with members replaced, 5% less balanced, 10% with lag tripled, 3% electing sticky,
    2% with another live verdict (each share times `churn`)."""
    rng = np.random.default_rng(seed)
    n = len(f["members"])
    edit = rng.random((7, n)) / churn
    digest = f["digest"]
    return {
        "members": f["members"] + (edit[0] < 0.05),
        "partitions": f["partitions"],
        "generation": f["generation"] + (edit[1] < 0.2),
        "digest": np.where(edit[2] < 0.1, "f" + digest.astype(str), digest).astype(object),
        "gap": f["gap"] + (edit[3] < 0.05),
        "lag": np.where(edit[4] < 0.1, f["lag"] * 3 + 5_000, f["lag"]),
        "elected": np.where(edit[5] < 0.03, "sticky", f["elected"]).astype(object),
        "verdict": np.where(edit[6] < 0.02, "DIFFERS", f["verdict"]).astype(object),
    }


def write_output(root: str, keys: np.ndarray, f: dict[str, np.ndarray], ds: str) -> None:
    """One output's small tables: a row per group of `keys`, its figures `f`."""
    rng = np.random.default_rng(3)  # the columns never compared
    n = len(keys)
    os.makedirs(root)

    schema = contract.BALANCE_METRICS.schema()
    k = len(STRATEGIES)
    rows = n * k
    columns = {fld.name: _column(rng, fld, rows) for fld in schema}
    columns["group_id"] = pa.array(np.repeat(keys, k), pa.string())
    columns["strategy"] = pa.array(np.tile(np.array(STRATEGIES, dtype=object), n), pa.string())
    columns["member_count"] = pa.array(np.repeat(f["members"], k), pa.int32())
    columns["partition_count"] = pa.array(np.repeat(f["partitions"], k), pa.int32())
    columns["balance_gap"] = pa.array(np.repeat(f["gap"], k), pa.int32())
    columns["total_lag"] = pa.array(np.repeat(f["lag"], k), pa.int64())
    if "elected_strategy" in columns:
        is_elected = np.tile(np.array([s == "elected" for s in STRATEGIES]), n)
        named = np.where(is_elected, np.repeat(f["elected"], k), None)
        columns["elected_strategy"] = pa.array(named, pa.string())
    _write(root, "balance_metrics", pa.table(columns, schema=schema))

    schema = contract.ELECTIONS.schema()
    columns = {fld.name: pa.nulls(n, fld.type) for fld in schema}
    columns |= {
        "group_id": pa.array(keys, pa.string()),
        "elected_strategy": pa.array(f["elected"], pa.string()),
        "candidate_strategies": pa.array(
            [["range", "cooperative-sticky"]] * n, schema.field("candidate_strategies").type
        ),
        "group_protocol": pa.array(np.full(n, "classic", dtype=object), pa.string()),
        "max_generation": pa.array(f["generation"], pa.int32()),
        "members_digest": pa.array(f["digest"], pa.string()),
    }
    _write(root, "elections", pa.table(columns, schema=schema))

    schema = contract.RECOMMENDATIONS.schema()
    columns = {fld.name: _column(rng, fld, n) for fld in schema}
    columns["group_id"] = pa.array(keys, pa.string())
    columns["recommended_strategy"] = pa.array(f["elected"], pa.string())
    _write(root, "recommendations", pa.table(columns, schema=schema))

    live = pa.table({"group_id": pa.array(keys, pa.string()), "verdict": f["verdict"]})
    _write(root, "live_check", live)
    with open(os.path.join(root, MANIFEST_FILE), "w", encoding="utf-8") as out:
        json.dump({"version": "bench", "ds": ds}, out)


def write_pair(root: str, groups: int, churn: float = 1.0) -> tuple[str, str]:
    """The previous and the current output: 1% of the groups gone, 1% new."""
    moved = groups // 100
    keys = np.array(
        [f"group-{i:07d}" for i in range(groups + moved)], dtype=object
    )  # the last `moved` are the new ones
    day0 = _figures(groups + moved)
    day1 = _edited(day0, churn)
    before, after = os.path.join(root, "previous"), os.path.join(root, "current")
    write_output(before, keys[:groups], {c: v[:groups] for c, v in day0.items()}, "2026-12-01")
    write_output(after, keys[moved:], {c: v[moved:] for c, v in day1.items()}, "2026-12-02")
    return before, after


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def measure(before: str, after: str, repeat: int, spark: bool) -> dict[str, Any]:
    """The step's seconds and this process's peak RSS (run it in a fresh process)."""
    from jobs.tables import changes
    from jobs.tables.previous import compare_runs, local_reader, read_previous, run_figures

    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    read_s, previous = _best(lambda: read_previous(before), repeat)
    today_s, today = _best(lambda: run_figures(local_reader(after)), repeat)
    compare_s, rows = _best(lambda: compare_runs(previous.run, today), repeat)
    out: dict[str, Any] = {
        "groups_before": previous.run.groups,
        "groups_after": today.groups,
        "rows": len(rows),
        "counts": {c: n for c, n in changes.counts(rows).items() if n},
        "read_previous_s": round(read_s, 3),
        "read_today_s": round(today_s, 3),
        "compare_s": round(compare_s, 3),
        "rss_start_mib": rss0 // 1024,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    }
    if spark:
        out["spark_write_s"] = round(_spark_write(rows, repeat), 3)
    return out


def _spark_write(rows: list[dict[str, Any]], repeat: int) -> float:
    from pyspark.sql import SparkSession

    from jobs.plan.since import changes_frame

    session = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as tmp:
        counter = iter(range(repeat))

        def write() -> None:
            changes_frame(session, rows).write.parquet(f"{tmp}/changes-{next(counter)}")

        seconds, _ = _best(write, repeat)
    session.stop()
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--churn", type=float, default=1.0, help="scale the share of groups changed (default 1)"
    )
    parser.add_argument("--keep", help="write the outputs here and keep them")
    parser.add_argument("--spark", action="store_true", help="also time the Spark write")
    parser.add_argument("--measure", nargs=2, metavar=("BEFORE", "AFTER"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(*args.measure, args.repeat, args.spark)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or tmp
        t = time.perf_counter()
        before, after = write_pair(root, args.groups, args.churn)
        print(f"wrote two outputs of {args.groups:,} groups in {time.perf_counter() - t:.1f} s")
        cmd = [sys.executable, "-m", "tools.bench_changes", "--repeat", str(args.repeat)]
        cmd += [*(["--spark"] if args.spark else []), "--measure", before, after]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        print(json.dumps(json.loads(done.stdout.strip().splitlines()[-1]), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
