"""One bucket of the UDF in process: `jobs.plan.udf.plan_bucket` by phase, without Spark.

    python -m tools.bench_plan --estate big-owned [--repeat 3] [--profile] [--dump FILE]

Builds the pandas frame a bucket receives (rows of `jobs.plan.udf.INPUT_COLUMNS`, the array
columns as JSON text as `jobs.plan.pipeline.planner_input` sends them) and the topic catalog the
driver broadcasts, then times `plan_bucket` with a `PhaseClock` (what-if rebalances off: the
planning path only) and prints the phase seconds and the total of each repeat, and their
medians. Estates (`tools.sample_estate`):

* `big-owned`, `big-fresh`: Kafka's large sticky test as one group (500 topics x 2,000
  partitions, 2,000 members), with and without a current assignment; sticky and
  cooperative-sticky.
* `estate`: 3,000 small groups (seed 42), the seven default strategies.
* `estate-load`: the same with offsets and weights (`--balance-by` picks what `balanced`
  balances).

`--dump FILE` writes the returned frame as parquet; `--compare FILE` checks that the frame
equals one dumped before (run it on two checkouts to show that a change keeps the output).
`--profile` runs the bucket once under cProfile and prints the top functions.

A benchmark, not a test: it makes no timing assertion.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import statistics
import sys
import time
from collections import defaultdict
from typing import Any

import pandas as pd

from assignors.inputs.topics import partition_data
from assignors.inputs.validation import TopicStatus, check_topic
from jobs.plan.udf import (
    INPUT_COLUMNS,
    KIND_MEMBER,
    KIND_OFFSETS,
    KIND_OWNED,
    PHASES,
    PhaseClock,
    PlanContext,
    plan_bucket,
)
from jobs.settings.model import PlannerSection
from jobs.settings.run import RunSettings
from tools import sample_estate

ESTATES = ("big-owned", "big-fresh", "estate", "estate-load")
BIG_STRATEGIES = ("sticky", "cooperative-sticky")

Tables = dict[str, dict[str, list[Any]]]


def tables_of(estate: str, groups: int, seed: int) -> Tables:
    if estate == "big-owned":
        return sample_estate.big_group(owned=True)
    if estate == "big-fresh":
        return sample_estate.big_group(owned=False)
    return sample_estate.generate(groups, seed, offsets=estate == "estate-load")


def topic_catalog(tp: dict[str, list[Any]]) -> dict[str, TopicStatus]:
    """The driver's catalog (`jobs.plan.pipeline.topic_catalog`) from column lists."""
    parts: dict[str, list[int]] = defaultdict(list)
    for t, p in zip(tp["topic"], tp["partition"], strict=True):
        parts[t].append(p)
    catalog: dict[str, TopicStatus] = {}
    for t, ps in parts.items():
        catalog[t], _ = check_topic(t, len(ps), len(set(ps)), min(ps), max(ps), 0)
    rows = list(zip(tp["topic"], tp["partition"], tp["replica_racks"], tp["weight"], strict=True))
    catalog, _ = partition_data(
        catalog,
        ((t, p, r) for t, p, r, _ in rows if r is not None),
        ((t, p, w) for t, p, _, w in rows if w is not None),
    )
    return catalog


def bucket_input(tables: Tables) -> pd.DataFrame:
    """The rows of one bucket holding every group, as the UDF receives them."""
    subs = tables["subscriptions"]
    n = len(subs["group_id"])
    frames = [
        pd.DataFrame(
            {
                "kind": [KIND_MEMBER] * n,
                **{k: subs[k] for k in ("group_id", "member_id", "group_instance_id")},
                "client_rack": subs["client_rack"],
                "topics": [None if v is None else json.dumps(v) for v in subs["topics"]],
                "topic_pattern": subs["topic_pattern"],
                "assignment_strategies": [
                    None if v is None else json.dumps(v) for v in subs["assignment_strategies"]
                ],
                "generation": pd.array(subs["generation"], dtype="float64"),
            }
        )
    ]
    cur = tables.get("current_assignment")
    if cur is not None:
        frames.append(pd.DataFrame({"kind": KIND_OWNED, **cur}))
    off = tables.get("offsets")
    if off is not None:
        offsets = {
            k: [None if v is None else str(v) for v in off[k]]
            for k in ("committed_offset", "log_end_offset")
        }
        frames.append(
            pd.DataFrame(
                {
                    "kind": KIND_OFFSETS,
                    **{k: off[k] for k in ("group_id", "topic", "partition")},
                    **offsets,
                }
            )
        )
    return pd.concat(frames, ignore_index=True).reindex(columns=list(INPUT_COLUMNS))


def context(estate: str, tables: Tables, catalog: dict[str, TopicStatus], by: str) -> PlanContext:
    if estate.startswith("big"):
        return PlanContext(
            RunSettings.of(BIG_STRATEGIES, "current_assignment" in tables, whatif=None)
        )
    strategies = PlannerSection.strategies
    return PlanContext(
        RunSettings.of(
            tuple(s for s in strategies if s != "elected"),
            True,
            plan_elected="elected" in strategies,
            has_offsets="offsets" in tables,
            has_weights=estate == "estate-load" and any(s.weights for s in catalog.values()),
            balance_by=by,
            whatif=None,
        )
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--estate", choices=ESTATES, default="big-owned")
    parser.add_argument("--groups", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--balance-by", default="count", choices=("count", "weight", "lag"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="one run under cProfile")
    parser.add_argument("--dump", help="write the bucket's frame to this parquet file")
    parser.add_argument("--compare", help="check the frame equals this parquet file")
    args = parser.parse_args(argv)

    import assignors.planner

    compiled = not assignors.planner.__file__.endswith(".py")
    tables = tables_of(args.estate, args.groups, args.seed)
    catalog = topic_catalog(tables["topic_partitions"])
    pdf = bucket_input(tables)
    ctx = context(args.estate, tables, catalog, args.balance_by)
    del tables
    core = "compiled" if compiled else "pure Python"
    print(f"{args.estate}: {len(pdf):,} input rows, core {core}", flush=True)

    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(plan_bucket, pdf, catalog, ctx)
        order = os.environ.get("PROFILE_SORT", "tottime")  # cumulative: by caller
        pstats.Stats(profile, stream=sys.stdout).sort_stats(order).print_stats(25)
        return

    runs: list[dict[str, float]] = []
    frame = None
    for _ in range(args.repeat):
        frame = None
        gc.collect()
        clock = PhaseClock()
        start, cpu = time.perf_counter(), time.process_time()
        frame = plan_bucket(pdf, catalog, ctx, clock=clock)
        total, cpu = time.perf_counter() - start, time.process_time() - cpu
        seconds = {p: s for p, s in clock.stop().items() if p in PHASES}
        seconds["total"] = total
        seconds["cpu"] = cpu  # the process's CPU seconds: less noisy on a shared machine
        runs.append(seconds)
        print("  " + "  ".join(f"{p} {s:.2f}" for p, s in seconds.items()), flush=True)
    if runs:
        medians = {p: statistics.median(r[p] for r in runs) for p in runs[0]}
        print("median " + "  ".join(f"{p} {s:.2f}" for p, s in medians.items()))
        print("MEDIAN " + json.dumps({p: round(s, 3) for p, s in medians.items()}))
    if frame is None:
        frame = plan_bucket(pdf, catalog, ctx)
    if args.dump:
        frame.to_parquet(args.dump)
        print(f"frame ({len(frame):,} rows) written to {args.dump}")
    if args.compare:
        # both through parquet, so that the dtypes read back alike
        buffer = io.BytesIO()
        frame.to_parquet(buffer)
        same = pd.read_parquet(buffer).equals(pd.read_parquet(args.compare))
        print(f"frame {'EQUALS' if same else 'DIFFERS FROM'} {args.compare}")
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
