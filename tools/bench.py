"""`make bench`: the job end to end against two floors, measured in the same run.

Both floors (`tools.floors`) read the same inputs (every table, fully scanned) and write the
job's own output rows again, computing no assignment: the Spark floor the job's way (the same
tables, hash partitioning, sorted files, `assignments` in one folder per strategy), the Arrow
floor with pyarrow alone in two processes (the physical floor). Runs alternate between the job
and the floors so that machine noise hits all alike; medians and their ratios are printed.
With `--peer`, kafka-python's own assignors compute the same groups in one process with no I/O
(`tools.bench_peer`), alternating too.

    python -m tools.bench --groups 100000 --strategies range,roundrobin --repeat 3
    python -m tools.bench --groups 100000 --plan-only  # no what-if scenarios
    python -m tools.bench --groups 100000 --plan-only --peer  # and kafka-python's assignors
    python -m tools.bench --groups 100000 --offsets   # with an offsets table
    python -m tools.bench --estate DIR --strategies config  # a snapshot of your own
    python -m tools.bench --scenario big-group --strategies sticky,cooperative-sticky --repeat 3
    python -m tools.bench --scenario what-if --groups 10000 --strategies config
    python -m tools.bench --scenario growth --sizes 10000,30000,100000 --strategies config

`growth` runs the job on estates of growing size and prints seconds and peak Python worker
memory per 1,000 groups on one line, so that a change in the slope shows.

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
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from jobs.plan.pipeline import run
from jobs.plan.session import build_session
from jobs.settings.config import PlannerConfig, load_config
from tools import sample_estate
from tools.floors import ArrowFloor, SparkFloor, same_rows
from tools.sample_estate import generate, write


def floors(spark: SparkSession, estate: str, job_output: str, work: Path,
           files: int) -> tuple[float, float]:  # fmt: skip
    """The Spark floor's and the Arrow floor's seconds for `estate`, each writing the rows of
    the job's output in `job_output` (loaded before each clock starts)."""
    spark_floor = SparkFloor(spark, job_output, files)
    t = time.monotonic()
    spark_floor.run(spark, estate, str(work / "out-floor"))
    spark_seconds = time.monotonic() - t
    spark_floor.release()
    arrow_seconds = ArrowFloor(estate, job_output).run(str(work / "out-floor-arrow"))
    for floor_output in ("out-floor", "out-floor-arrow"):
        if not same_rows(job_output, str(work / floor_output)):
            raise RuntimeError(f"{floor_output} did not write the job's rows")
    return spark_seconds, arrow_seconds


def peer(estate: Path, strategies: str) -> float:
    """kafka-python's assignors over every group of `estate`, in a process of their own."""
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench_peer", str(estate), "--strategies", strategies],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return float(json.loads(done.stdout.strip().splitlines()[-1])["total_seconds"])


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
    member but one owns its share), each against the floors of the same estate, alternating.
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
    out_job = args.work / "out-big-group"
    files = config.execution.output_files
    # Warm up the JVM and the Python workers on a small estate (see `main`).
    warm = _estate(args, 2_000)
    run(spark, str(warm), str(out_job), config, report=False)
    floors(spark, str(warm), str(out_job), args.work, files)
    times: dict[str, dict[str, list[float]]] = {
        v: {"job": [], "floor": [], "arrow": []} for v in estates
    }
    for i in range(args.repeat):
        for variant, estate in estates.items():
            t = time.monotonic()
            with WorkerMemory() as memory:
                manifest = run(spark, str(estate), str(out_job), config)
            times[variant]["job"].append(time.monotonic() - t)
            spark_s, arrow_s = floors(spark, str(estate), str(out_job), args.work, files)
            times[variant]["floor"].append(spark_s)
            times[variant]["arrow"].append(arrow_s)
            print(
                f"run {i + 1}, {variant}: job {times[variant]['job'][-1]:.1f} s, Spark floor"
                f" {spark_s:.1f} s, Arrow floor {arrow_s:.1f} s, peak Python worker RSS"
                f" {memory.peak_mib:.0f} MiB\n  {manifest.phase_line()}",
                flush=True,
            )
    summary: dict[str, Any] = {
        "strategies": list(config.planner.strategies),
        "cores": spark.sparkContext.defaultParallelism,
    }
    for variant, t in times.items():
        job, flo, arrow = (statistics.median(t[k]) for k in ("job", "floor", "arrow"))
        summary[variant] = {
            **{f"{k}_seconds": [round(x, 2) for x in v] for k, v in t.items()},
            "job_median": round(job, 2),
            "floor_median": round(flo, 2),
            "arrow_floor_median": round(arrow, 2),
            "beyond_floor": round(job - flo, 2),
            "ratio": round(job / flo, 2),
            "arrow_ratio": round(job / arrow, 2),
        }
    print(json.dumps(summary, indent=2))
    for variant in times:
        s = summary[variant]
        print(
            f"one group of 1M partitions, {variant}, {', '.join(config.planner.strategies)}:"
            f" job {s['job_median']:.1f} s vs Spark floor {s['floor_median']:.1f} s,"
            f" {s['beyond_floor']:.1f} s beyond it ({s['ratio']:.2f}x), Arrow floor"
            f" {s['arrow_floor_median']:.1f} s ({s['arrow_ratio']:.2f}x; median of {args.repeat})"
        )
    spark.stop()
    for folder in ("out-floor", "out-floor-arrow"):
        shutil.rmtree(args.work / folder, ignore_errors=True)


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


def growth(args: argparse.Namespace) -> None:
    """The job (the config's settings) on estates of each size, alternating sizes across
    repeats; one line of seconds and peak worker MiB per 1,000 groups."""
    sizes = [int(x) for x in args.sizes.split(",")]
    estates = {n: _estate(args, n) for n in sizes}
    config = load_config(strategies=None if args.strategies == "config" else args.strategies)
    quiet = {**config.spark, "spark.ui.showConsoleProgress": "false", "spark.driver.memory": "8g"}
    config = config.replace(spark=quiet)
    if args.plan_only:
        config = config.replace(scenarios=())
    spark = build_session(config)
    spark.sparkContext.setLogLevel("ERROR")
    out = str(args.work / "out-growth")
    run(spark, str(_estate(args, 2_000)), out, config, report=False)
    seconds: dict[int, list[float]] = {n: [] for n in sizes}
    peak: dict[int, float] = dict.fromkeys(sizes, 0.0)
    for i in range(args.repeat):
        for n, estate in estates.items():
            t = time.monotonic()
            with WorkerMemory() as memory:
                result = run(spark, str(estate), out, config, report=False)
            seconds[n].append(time.monotonic() - t)
            peak[n] = max(peak[n], memory.peak_mib)
            print(f"run {i + 1}, {n} groups: {seconds[n][-1]:.1f} s, peak Python worker"
                  f" {memory.peak_mib:.0f} MiB\n  {result.phase_line()}", flush=True)  # fmt: skip
    summary = {
        n: {
            "seconds": [round(x, 2) for x in seconds[n]],
            "median": round(statistics.median(seconds[n]), 2),
            "seconds_per_1000_groups": round(statistics.median(seconds[n]) / n * 1000, 3),
            "peak_worker_mib": round(peak[n]),
        }
        for n in sizes
    }
    print(json.dumps(summary, indent=2))
    print("growth: " + "; ".join(
        f"{n:,} groups {summary[n]['median']:.1f} s = {summary[n]['seconds_per_1000_groups']:.2f}"
        f" s/1k, peak worker {summary[n]['peak_worker_mib']} MiB" for n in sizes
    ) + f" (median of {args.repeat})")  # fmt: skip
    spark.stop()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--scenario", choices=("estate", "big-group", "what-if", "growth"), default="estate"
    )
    p.add_argument("--sizes", default="10000,30000,100000", help="growth: the estates' groups")
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
    p.add_argument(
        "--peer",
        action="store_true",
        help="estate: also time kafka-python's own assignors over the same groups (no I/O)",
    )
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.scenario == "big-group":
        big_group(args)
        return
    if args.scenario == "what-if":
        what_if(args)
        return
    if args.scenario == "growth":
        growth(args)
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
    out_job = args.work / "out-job"
    files = config.execution.output_files

    # Warm up the JVM (JIT) and the Python workers on a small estate first, so that neither
    # side of the comparison pays the start-up alone.
    warm = args.work / "estate-warmup"
    if not (warm / "_SUCCESS").exists():
        write(generate(2_000, args.seed), warm, files=4)
        (warm / "_SUCCESS").touch()
    run(spark, str(warm), str(out_job), config, report=False)
    floors(spark, str(warm), str(out_job), args.work, files)

    times: dict[str, list[float]] = {"job": [], "floor": [], "arrow": []}
    if args.peer:
        times["peer"] = []
    peak: list[float] = []
    manifest: dict[str, Any] = {}
    for i in range(args.repeat):
        t = time.monotonic()
        with WorkerMemory() as memory:
            result = run(spark, str(estate), str(out_job), config, report=False)
        times["job"].append(time.monotonic() - t)
        peak.append(memory.peak_mib)
        manifest = result.to_json()
        spark_s, arrow_s = floors(spark, str(estate), str(out_job), args.work, files)
        times["floor"].append(spark_s)
        times["arrow"].append(arrow_s)
        if args.peer:
            times["peer"].append(peer(estate, args.strategies))
        print(
            f"run {i + 1}: " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in times.items())
            + f", peak Python worker RSS {memory.peak_mib:.0f} MiB\n  {result.phase_line()}",
            flush=True,
        )  # fmt: skip
    medians = {k: statistics.median(v) for k, v in times.items()}
    job = medians["job"]
    summary = {
        "groups": manifest["groups"],
        "input_rows": manifest["input_rows"],
        "output_rows": manifest["output_rows"],
        "strategies": list(config.planner.strategies),
        "offsets": args.offsets,
        "scenarios": list(config.planner.scenarios),
        **{f"{k}_seconds": [round(x, 2) for x in v] for k, v in times.items()},
        **{f"{k}_median": round(v, 2) for k, v in medians.items()},
        "spark_floor_ratio": round(job / medians["floor"], 2),
        "arrow_floor_ratio": round(job / medians["arrow"], 2),
        **({"peer_ratio": round(job / medians["peer"], 2)} if args.peer else {}),
        "peak_worker_mib": round(max(peak)),
        "cores": spark.sparkContext.defaultParallelism,
    }
    print(json.dumps(summary, indent=2))
    print(
        f"job {job:.1f} s vs Spark floor {medians['floor']:.1f} s"
        f" ({summary['spark_floor_ratio']:.2f}x) and Arrow floor {medians['arrow']:.1f} s"
        f" ({summary['arrow_floor_ratio']:.2f}x)", end="",
    )  # fmt: skip
    if args.peer:
        print(f"; kafka-python's assignors {medians['peer']:.1f} s ({summary['peer_ratio']:.2f}x)",
              end="")  # fmt: skip
    print(f" (median of {args.repeat})")
    spark.stop()
    for folder in ("out-floor", "out-floor-arrow"):
        shutil.rmtree(args.work / folder, ignore_errors=True)


if __name__ == "__main__":
    main()
