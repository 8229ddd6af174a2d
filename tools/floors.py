"""The floors `tools.bench` measures the job against: what reading the inputs and writing the
job's own output rows costs, with no planning at all.

- `SparkFloor`: Spark reads every input table (every column scanned) and writes the rows of
  the job's output again, the job's way: the same tables, the same hash partitioning into the
  same number of files, the same sort within files, `assignments` in one folder per strategy,
  the same row-group size. The rows are read from the job's output and cached before the clock
  starts, so the floor pays for writing them, not for reading them back.
- `ArrowFloor`: the same inputs read and the same output files written by pyarrow alone, in
  two processes (this machine's cores), no Spark: the physical floor. Each output file is
  loaded before the clock starts and written again with its own row-group size and
  compression.

A floor bounds the job from below: both write exactly the rows, files and bytes the job wrote.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs import fs, output
from jobs.plan.pipeline import OUTPUT_ROW_GROUP_BYTES, sorted_for_write
from jobs.tables import contract
from jobs.tables.inputs import read_table
from jobs.tables.schemas import INPUT_TABLES


def _output_tables(job_output: str) -> list[str]:
    """The contract's output tables present in a job's output folder."""
    names = [t.name for t in (*contract.OUTPUTS, *contract.RUN_OUTPUTS)]
    return [n for n in names if os.path.isdir(os.path.join(job_output, n))]


class SparkFloor:
    """Spark reads the inputs and writes the job's output rows again (see the module)."""

    def __init__(self, spark: SparkSession, job_output: str, files: int) -> None:
        self.files = files
        self.frames: dict[str, DataFrame] = {}
        for table in _output_tables(job_output):
            frame = spark.read.parquet(os.path.join(job_output, table))
            frame = frame.select(*contract.TABLES[table].names)
            frame.persist(StorageLevel.MEMORY_AND_DISK)
            frame.count()
            self.frames[table] = frame

    def rows(self) -> dict[str, int]:
        return {t: f.count() for t, f in self.frames.items()}

    def run(self, spark: SparkSession, input_dir: str, output_dir: str) -> None:
        for source in INPUT_TABLES:
            df = read_table(spark, input_dir, source)
            if df is not None:
                df.select(F.hash(*df.columns).alias("h")).agg(F.sum("h")).collect()
        with output.atomic_output(spark, output_dir) as tmp:
            for table, frame in self.frames.items():
                writer = (
                    sorted_for_write(frame, table, self.files)
                    .write.mode("error")
                    .option("parquet.block.size", OUTPUT_ROW_GROUP_BYTES)
                )
                folder = contract.TABLES[table].partition_by
                if folder is not None:
                    writer = writer.partitionBy(folder)
                writer.parquet(f"{tmp}/{table}")
            fs.write_json(spark, f"{tmp}/_manifest.json", {"floor": "spark"})

    def release(self) -> None:
        for frame in self.frames.values():
            frame.unpersist()


@dataclass(frozen=True)
class _OutputFile:
    relative: str  # the file's path inside the output folder
    row_group_rows: int
    compression: str
    size: int


def _parquet_files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*.parquet") if not any(part.startswith(("_", ".")) for part in
                                                      p.relative_to(root).parts)
    )  # fmt: skip


def _describe(root: Path, path: Path) -> _OutputFile:
    meta = pq.ParquetFile(path).metadata
    rows = max((meta.row_group(i).num_rows for i in range(meta.num_row_groups)), default=1)
    codec = meta.row_group(0).column(0).compression if meta.num_row_groups else "SNAPPY"
    relative = str(path.relative_to(root))
    return _OutputFile(relative, max(rows, 1), codec.lower(), path.stat().st_size)


def _split(items: list[tuple[Any, int]], ways: int) -> list[list[Any]]:
    """Greedy split by size into `ways` shares of about equal total size."""
    shares: list[list[Any]] = [[] for _ in range(ways)]
    totals = [0] * ways
    for item, size in sorted(items, key=lambda x: -x[1]):
        i = totals.index(min(totals))
        shares[i].append(item)
        totals[i] += size
    return shares


def _arrow_worker(
    inputs: list[str],
    outputs: list[_OutputFile],
    job_output: str,
    target: str,
    barrier: Any,
    times: Any,
) -> None:
    loaded = [(f, pq.read_table(os.path.join(job_output, f.relative))) for f in outputs]
    barrier.wait()
    start = time.time()
    for path in inputs:
        table = pq.read_table(path)  # every column, decoded
        del table
    for f, table in loaded:
        path = os.path.join(target, f.relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pq.write_table(table, path, row_group_size=f.row_group_rows, compression=f.compression)
    times.put((start, time.time()))


class ArrowFloor:
    """pyarrow alone, `processes` processes, reads the inputs and writes the job's output files
    again (see the module)."""

    def __init__(self, input_dir: str, job_output: str, processes: int = 2) -> None:
        self.job_output = job_output
        self.processes = processes
        root = Path(job_output)
        self.outputs = [_describe(root, p) for p in _parquet_files(root)]
        self.inputs = [str(p) for p in _parquet_files(Path(input_dir))]

    def rows(self) -> int:
        return sum(
            pq.ParquetFile(os.path.join(self.job_output, f.relative)).metadata.num_rows
            for f in self.outputs
        )

    def run(self, output_dir: str) -> float:
        """The floor's wall time: from the moment every process has loaded its rows to the
        last one's end."""
        shutil.rmtree(output_dir, ignore_errors=True)
        context = multiprocessing.get_context("fork")
        barrier = context.Barrier(self.processes)
        times = context.Queue()
        ins = _split([(p, os.path.getsize(p)) for p in self.inputs], self.processes)
        outs = _split([(f, f.size) for f in self.outputs], self.processes)
        workers = [
            context.Process(
                target=_arrow_worker,
                args=(ins[i], outs[i], self.job_output, output_dir, barrier, times),
            )
            for i in range(self.processes)
        ]
        for w in workers:
            w.start()
        spans = [times.get() for _ in workers]
        for w in workers:
            w.join()
            if w.exitcode != 0:
                raise RuntimeError(f"an Arrow floor process failed with exit code {w.exitcode}")
        return max(end for _, end in spans) - min(start for start, _ in spans)


def same_rows(job_output: str, floor_output: str) -> bool:
    """Whether a floor wrote as many rows into each table as the job did."""

    def counts(root: str) -> dict[str, int]:
        found: dict[str, int] = {}
        for p in _parquet_files(Path(root)):
            table = p.relative_to(root).parts[0]
            found[table] = found.get(table, 0) + pq.ParquetFile(p).metadata.num_rows
        return found

    return counts(job_output) == counts(floor_output)
