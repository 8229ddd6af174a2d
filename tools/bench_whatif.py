"""The what-if rebalances alone, on sample groups, without Spark (docs/performance.md).

    python -m tools.bench_whatif [--groups 3000] [--repeat 3] [--by-scenario] [--dump FILE]

Builds the groups of `tools.sample_estate` (with offsets: `lag_moved` is filled), plans each
under the default strategies (`plan_group`, not timed), then times `group_whatif` over all
groups, best of `--repeat`. `--by-scenario` adds a table of `scenario_costs` per strategy and
scenario (best of `--repeat` too). `--dump FILE` writes every group's rows, recommendation and
warnings as text, one group per line: run it on two checkouts and diff the files to show that
a change keeps the rows identical.

A benchmark, not a test: it needs no Spark and makes no timing assertion.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from assignors.analysis.load import OffsetRow
from assignors.catalog.catalog import StrategyCatalog
from assignors.inputs.validation import MemberRow, OwnedRow, TopicStatus, build_group
from assignors.model import GroupSpec
from assignors.planner import GroupPlan, group_load, plan_group
from assignors.racks import replica_racks_by_partition
from assignors.whatif.group import WhatIfSettings, group_whatif, strategy_plans
from assignors.whatif.simulation import SCENARIOS, scenario_costs
from jobs.settings.model import PlannerSection
from tools.sample_estate import generate

STRATEGIES = PlannerSection.strategies  # the shipped default seven

Planned = tuple[GroupSpec, GroupPlan, dict[Any, int | None] | None]


def _catalog(tables: dict[str, dict[str, list[Any]]]) -> dict[str, TopicStatus]:
    tp = tables["topic_partitions"]
    rows: dict[str, list[tuple[int, list[str]]]] = defaultdict(list)
    for t, p, racks in zip(tp["topic"], tp["partition"], tp["replica_racks"], strict=True):
        rows[t].append((p, racks))
    return {
        t: TopicStatus(len(r), replica_racks=replica_racks_by_partition(len(r), r))
        for t, r in rows.items()
    }


def estate(groups: int, seed: int = 7) -> tuple[list[Planned], StrategyCatalog]:
    """The sample groups, validated and planned (the what-if input)."""
    tables = generate(groups, seed=seed, offsets=True)
    topics = _catalog(tables)
    subs, cur, off = tables["subscriptions"], tables["current_assignment"], tables["offsets"]
    members: dict[str, list[MemberRow]] = defaultdict(list)
    for i, gid in enumerate(subs["group_id"]):
        members[gid].append(
            MemberRow(
                subs["member_id"][i],
                subs["group_instance_id"][i],
                subs["client_rack"][i],
                subs["topics"][i],
                subs["topic_pattern"][i],
                subs["assignment_strategies"][i],
                subs["generation"][i],
            )
        )
    owned: dict[str, list[OwnedRow]] = defaultdict(list)
    for gid, mid, t, p in zip(
        cur["group_id"], cur["member_id"], cur["topic"], cur["partition"], strict=True
    ):
        owned[gid].append(OwnedRow(mid, t, p))
    offsets: dict[str, list[OffsetRow]] = defaultdict(list)
    for gid, t, p, c, e in zip(
        off["group_id"],
        off["topic"],
        off["partition"],
        off["committed_offset"],
        off["log_end_offset"],
        strict=True,
    ):
        offsets[gid].append(OffsetRow(t, p, c, e))
    catalog = StrategyCatalog.build(list(STRATEGIES))
    out: list[Planned] = []
    for gid in sorted(members):
        spec, _ = build_group(gid, members[gid], owned[gid], topics, catalog.is_known)
        if spec is None:
            continue
        load, _ = group_load(spec, offsets[gid], None)
        plan = plan_group(spec, catalog, True, load=load)
        out.append((spec, plan, load.lags))
    return out, catalog


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()  # as the job plans a bucket (jobs/plan/udf.py)
        try:
            start = time.process_time()
            fn()
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--by-scenario", action="store_true")
    parser.add_argument(
        "--strategies", default=",".join(STRATEGIES[:-1]), help="the --by-scenario rows"
    )
    parser.add_argument("--no-total", action="store_true", help="skip the group_whatif total")
    parser.add_argument("--dump", help="write every group's what-if output to this file")
    args = parser.parse_args(argv)

    import assignors.whatif.simulation as sim

    compiled = not sim.__file__.endswith(".py")
    planned, catalog = estate(args.groups, args.seed)
    settings = WhatIfSettings()
    print(f"{len(planned)} groups, core {'compiled' if compiled else 'pure Python'}")

    def whatif_all() -> None:
        for spec, plan, lags in planned:
            group_whatif(spec, plan, catalog, settings, lags=lags)

    if not args.no_total:
        total = best_of(args.repeat, whatif_all)
        print(f"group_whatif, every strategy and scenario: {total:.2f} s (best of {args.repeat})")

    if args.by_scenario:
        by_scenario(planned, catalog, args.strategies.split(","), args.repeat)
    if args.dump:
        dump(planned, catalog, settings, args.dump)


def by_scenario(
    planned: list[Planned], catalog: StrategyCatalog, names: list[str], repeat: int
) -> None:
    """`scenario_costs` per strategy and scenario (outside `group_scenario_costs`: what one
    strategy costs alone, without what strategies of a group share)."""
    per_plan = [(spec, lags, strategy_plans(plan, catalog)[0]) for spec, plan, lags in planned]
    print(f"{'strategy':<20}" + "".join(f"{s:>20}" for s in SCENARIOS) + f"{'all':>10}")
    for strategy in names:
        cells = []
        for scenario in SCENARIOS:

            def one(strategy: str = strategy, scenario: str = scenario) -> None:
                for spec, lags, plans in per_plan:
                    for name, factory, assignment in plans:
                        if name == strategy:
                            scenario_costs(
                                spec, name, factory, assignment, scenarios=(scenario,), lags=lags
                            )

            cells.append(best_of(repeat, one))
        print(f"{strategy:<20}" + "".join(f"{c:>20.3f}" for c in cells) + f"{sum(cells):>10.3f}")


def dump(
    planned: list[Planned], catalog: StrategyCatalog, settings: WhatIfSettings, path: str
) -> None:
    with open(path, "w") as f:
        for spec, plan, lags in planned:
            out = group_whatif(spec, plan, catalog, settings, lags=lags)
            f.write(f"{spec.group_id}\t{out.costs!r}\t{out.recommendation!r}")
            f.write(f"\t{out.problems!r}\n")
    print(f"rows written to {path}")


if __name__ == "__main__":
    main()
