"""`make bench`: the job end to end against an I/O-only floor, measured in the same run.

The floor reads the same inputs (every table, fully scanned) and writes the same number of
rows to the same three tables, the same way (fixed hash partitioning, sorted files,
`assignments` partitioned by strategy), but computes no assignment. Runs alternate between
floor and job so that machine noise hits both alike; medians and their ratio are printed.

    python -m tools.bench --groups 100000 --strategies range,roundrobin --repeat 3
    python -m tools.bench --groups 100000 --plan-only  # no what-if scenarios
    python -m tools.bench --groups 100000 --offsets   # with an offsets table
    python -m tools.bench --estate DIR --strategies config  # a snapshot of your own
    python -m tools.bench --scenario big-group --strategies sticky,cooperative-sticky --repeat 3
    python -m tools.bench --scenario what-if --groups 10000 --strategies config

`what-if` times the job with the config's what-if scenarios against the same job
with `scenarios = []` (plan only; recommendations still computed), alternating. Every timed
run writes the tables and the manifest but not report.html (the page has no floor to compare
with; `python -m jobs.report OUT` times it alone).
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from jobs import fs, output
from jobs.plan.pipeline import run, sorted_for_write
from jobs.plan.session import build_session
from jobs.settings.config import PlannerConfig, load_config
from jobs.tables.inputs import read_table
from jobs.tables.schemas import INPUT_TABLES, OUTPUT_FIELDS
from tools import sample_estate
from tools.sample_estate import generate, write


def floor(spark: SparkSession, input_dir: str, output_dir: str, rows: dict[str, int],
          strategies: tuple[str, ...], files: int) -> None:  # fmt: skip
    """Read every input table fully, then write `rows[table]` synthetic rows per table."""
    for source in INPUT_TABLES:
        df = read_table(spark, input_dir, source)
        if df is not None:
            df.select(F.hash(*df.columns).alias("h")).agg(F.sum("h")).collect()
    with output.atomic_output(spark, output_dir) as tmp:
        for table, fields in OUTPUT_FIELDS.items():
            frame = _synthetic(spark, rows[table], fields, strategies)
            writer = sorted_for_write(frame, table, files).write.mode("error")
            if table == "assignments":
                writer = writer.partitionBy("strategy")
            writer.parquet(f"{tmp}/{table}")
        fs.write_json(spark, f"{tmp}/_manifest.json", {"floor": True})


def _synthetic(spark: SparkSession, n: int, fields: Any, strategies: tuple[str, ...]) -> DataFrame:
    idx = F.col("id")
    cols = []
    for name, dtype, _ in fields:
        if name == "strategy":
            value = F.element_at(
                F.array(*[F.lit(s) for s in strategies]), (idx % len(strategies) + 1).cast("int")
            )
        elif name == "group_id":
            value = F.concat(F.lit("group-"), (idx % 100_000).cast("string"))
        elif dtype.simpleString() == "array<string>":
            value = F.array(F.lit("range"), F.lit("cooperative-sticky"))
        elif dtype.simpleString() == "string":
            value = F.concat(F.lit(f"{name}-"), (idx % 9973).cast("string"))
        else:
            value = (idx % 64).cast(dtype)
        cols.append(value.alias(name))
    return spark.range(n).select(*cols)


class WorkerMemory:
    """Samples the peak RSS of PySpark's Python workers while a job runs (Linux /proc)."""

    def __init__(self) -> None:
        self.peak_mib = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> WorkerMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            for proc in Path("/proc").iterdir():
                try:
                    cmd = (proc / "cmdline").read_bytes()
                    if b"pyspark.daemon" not in cmd and b"pyspark.worker" not in cmd:
                        continue
                    for line in (proc / "status").read_text().splitlines():
                        if line.startswith("VmRSS:"):
                            self.peak_mib = max(self.peak_mib, int(line.split()[1]) / 1024)
                except OSError:
                    continue


def big_group(args: argparse.Namespace) -> None:
    """One group of 1M partitions (Kafka's large sticky test) through the job at default
    settings, report included: a fresh plan (no current assignment) and a rebalance (every
    member but one owns its share), each against the I/O floor of the same estate, alternating.
    """
    estates = {}
    for variant, owned in (("fresh", False), ("rebalance", True)):
        estates[variant] = estate = args.work / f"estate-big-group-{variant}"
        if not (estate / "_SUCCESS").exists():
            write(sample_estate.big_group(owned=owned), estate, files=4)
            (estate / "_SUCCESS").touch()
    config = load_config(strategies=args.strategies)
    quiet = {**config.spark, "spark.ui.showConsoleProgress": "false"}
    config = config.replace(spark=quiet)
    spark = build_session(config)
    spark.sparkContext.setLogLevel("ERROR")
    out_job, out_floor = str(args.work / "out-big-group"), str(args.work / "out-floor")
    # Warm up the JVM and the Python workers on a small estate (see `main`).
    warm = _estate(args, 2_000)
    rows = run(spark, str(warm), out_job, config, report=False).output_rows
    floor(
        spark, str(warm), out_floor, rows, config.planner.strategies, config.execution.output_files
    )
    times: dict[str, dict[str, list[float]]] = {v: {"job": [], "floor": []} for v in estates}
    for i in range(args.repeat):
        for variant, estate in estates.items():
            t = time.monotonic()
            with WorkerMemory() as memory:
                manifest = run(spark, str(estate), out_job, config)
            times[variant]["job"].append(time.monotonic() - t)
            t = time.monotonic()
            floor(spark, str(estate), out_floor, manifest.output_rows, config.planner.strategies,
                  config.execution.output_files)  # fmt: skip
            times[variant]["floor"].append(time.monotonic() - t)
            job, flo = times[variant]["job"][-1], times[variant]["floor"][-1]
            print(
                f"run {i + 1}, {variant}: job {job:.1f} s, floor {flo:.1f} s, peak Python"
                f" worker RSS {memory.peak_mib:.0f} MiB\n  {manifest.phase_line()}",
                flush=True,
            )
    summary: dict[str, Any] = {
        "strategies": list(config.planner.strategies),
        "cores": spark.sparkContext.defaultParallelism,
    }
    for variant, t in times.items():
        job, flo = statistics.median(t["job"]), statistics.median(t["floor"])
        summary[variant] = {
            "job_seconds": [round(x, 2) for x in t["job"]],
            "floor_seconds": [round(x, 2) for x in t["floor"]],
            "job_median": round(job, 2),
            "floor_median": round(flo, 2),
            "beyond_floor": round(job - flo, 2),
            "ratio": round(job / flo, 2),
        }
    print(json.dumps(summary, indent=2))
    for variant in times:
        s = summary[variant]
        print(
            f"one group of 1M partitions, {variant}, {', '.join(config.planner.strategies)}:"
            f" job {s['job_median']:.1f} s vs I/O floor {s['floor_median']:.1f} s,"
            f" {s['beyond_floor']:.1f} s beyond it ({s['ratio']:.2f}x; median of {args.repeat})"
        )
    spark.stop()
    shutil.rmtree(out_floor, ignore_errors=True)


def _estate(args: argparse.Namespace, groups: int) -> Path:
    estate: Path = args.work / f"estate-{groups}-{args.seed}"
    if not (estate / "_SUCCESS").exists():
        t = time.monotonic()
        write(generate(groups, args.seed), estate, files=4)
        (estate / "_SUCCESS").touch()
        print(f"generated estate in {time.monotonic() - t:.1f} s: {estate}", flush=True)
    return estate


def what_if(args: argparse.Namespace) -> None:
    """The job with the config's scenarios vs plan only (`scenarios = []`), alternating."""
    estate = _estate(args, args.groups)
    config = load_config(strategies=None if args.strategies == "config" else args.strategies)
    quiet = {**config.spark, "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "8g"}
    config = config.replace(spark=quiet)
    plan_only = config.replace(scenarios=())
    spark = build_session(config)
    spark.sparkContext.setLogLevel("ERROR")
    out = str(args.work / "out-what-if")
    warm = _estate(args, 2_000)
    for c in (config, plan_only):
        run(spark, str(warm), out, c, report=False)
    times: dict[str, list[float]] = {"scenarios": [], "plan_only": []}
    manifest: dict[str, Any] = {}
    for i in range(args.repeat):
        for name, c in (("scenarios", config), ("plan_only", plan_only)):
            t = time.monotonic()
            result = run(spark, str(estate), out, c, report=False)
            times[name].append(time.monotonic() - t)
            if name == "scenarios":
                manifest = result.to_json()
        print(f"run {i + 1}: " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in times.items()))
    with_s, without = (statistics.median(times[k]) for k in ("scenarios", "plan_only"))
    summary = {
        "groups": manifest["groups"],
        "output_rows": manifest["output_rows"],
        "strategies": manifest["strategies"],
        "scenarios": list(config.planner.scenarios),
        "seconds": {k: [round(x, 2) for x in v] for k, v in times.items()},
        "median_scenarios": round(with_s, 2),
        "median_plan_only": round(without, 2),
        "ratio": round(with_s / without, 2),
        "cores": spark.sparkContext.defaultParallelism,
    }
    print(json.dumps(summary, indent=2))
    print(
        f"with scenarios {with_s:.1f} s vs plan only {without:.1f} s: {with_s / without:.2f}x;"
        f" the scenario work adds {(with_s - without) / without:.2f}x the plan-only time"
        f" (median of {args.repeat})"
    )
    spark.stop()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenario", choices=("estate", "big-group", "what-if"), default="estate")
    p.add_argument("--groups", type=int, default=100_000)
    p.add_argument("--strategies", default="range,roundrobin", help="'config': the config's")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--work", type=Path, default=Path("data/bench"))
    p.add_argument(
        "--estate",
        type=Path,
        help="estate: plan this snapshot folder (the job's input layout) instead of generating one",
    )
    p.add_argument(
        "--offsets",
        action="store_true",
        help="the estate includes an offsets table (one row per group and partition)",
    )
    p.add_argument(
        "--plan-only",
        action="store_true",
        help="estate: scenarios = [] (no what-if rebalances), comparable with earlier figures",
    )
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.scenario == "big-group":
        big_group(args)
        return
    if args.scenario == "what-if":
        what_if(args)
        return

    estate = args.estate or (
        args.work / f"estate-{args.groups}-{args.seed}{'-offsets' if args.offsets else ''}"
    )
    if not args.estate and not (estate / "_SUCCESS").exists():
        t = time.monotonic()
        write(generate(args.groups, args.seed, offsets=args.offsets), estate, files=4)
        (estate / "_SUCCESS").touch()
        print(f"generated estate in {time.monotonic() - t:.1f} s: {estate}", flush=True)
    config: PlannerConfig = load_config(
        strategies=None if args.strategies == "config" else args.strategies
    )
    quiet = {**config.spark, "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "8g"}
    config = config.replace(spark=quiet)
    if args.plan_only:
        config = config.replace(scenarios=())
    spark = build_session(config)
    spark.sparkContext.setLogLevel("ERROR")
    out_job, out_floor = str(args.work / "out-job"), str(args.work / "out-floor")

    # Warm up the JVM (JIT) and the Python workers on a small estate first, so that neither
    # side of the comparison pays the start-up alone.
    warm = args.work / "estate-warmup"
    if not (warm / "_SUCCESS").exists():
        write(generate(2_000, args.seed), warm, files=4)
        (warm / "_SUCCESS").touch()
    warm_manifest = run(spark, str(warm), out_job, config, report=False).to_json()
    floor(spark, str(warm), out_floor, warm_manifest["output_rows"], config.planner.strategies,
          config.execution.output_files)  # fmt: skip

    job_times: list[float] = []
    floor_times: list[float] = []
    manifest: dict[str, Any] = {}
    for i in range(args.repeat):
        t = time.monotonic()
        manifest = run(spark, str(estate), out_job, config, report=False).to_json()
        job_times.append(time.monotonic() - t)
        t = time.monotonic()
        floor(spark, str(estate), out_floor, manifest["output_rows"], config.planner.strategies,
              config.execution.output_files)  # fmt: skip
        floor_times.append(time.monotonic() - t)
        print(f"run {i + 1}: job {job_times[-1]:.1f} s, floor {floor_times[-1]:.1f} s", flush=True)
    job, flo = statistics.median(job_times), statistics.median(floor_times)
    summary = {
        "groups": manifest["groups"],
        "input_rows": manifest["input_rows"],
        "output_rows": manifest["output_rows"],
        "strategies": list(config.planner.strategies),
        "offsets": args.offsets,
        "scenarios": list(config.planner.scenarios),
        "job_seconds": [round(x, 2) for x in job_times],
        "floor_seconds": [round(x, 2) for x in floor_times],
        "job_median": round(job, 2),
        "floor_median": round(flo, 2),
        "ratio": round(job / flo, 2),
        "cores": spark.sparkContext.defaultParallelism,
    }
    print(json.dumps(summary, indent=2))
    print(f"job {job:.1f} s vs I/O floor {flo:.1f} s: {job / flo:.2f}x the floor", end="")
    print(f" (median of {args.repeat})")
    spark.stop()
    shutil.rmtree(out_floor, ignore_errors=True)


if __name__ == "__main__":
    main()
