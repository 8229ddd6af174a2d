"""Per-group cost of the load core (no assertions): `.venv/bin/python tools/perf_load.py`.

Typical small groups: 3-6 members, 1-3 topics, 1-64 partitions in all, some heterogeneous
subscriptions, lags for ~80% of the partitions, weights on every partition.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assignors.analysis.load import (
    OffsetRow,
    group_partitions,
    lag_loads,
    load_metrics,
    partition_lags,
    partition_weights,
    weight_loads,
    weight_lower_bound,
)
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.ownership import previous_owners
from assignors.strategies.range import RangeAssignor
from assignors.strategies.weighted import assign_by_load


def make_group(rng: random.Random, i: int) -> GroupSpec:
    n_topics = rng.randint(1, 3)
    total = rng.randint(n_topics, 64)
    counts = [1] * n_topics
    for _ in range(total - n_topics):
        counts[rng.randrange(n_topics)] += 1
    topics = {f"g{i}-t{k}": TopicMetadata(f"g{i}-t{k}", n) for k, n in enumerate(counts)}
    names = list(topics)
    members = []
    for m in range(rng.randint(3, 6)):
        subs = frozenset(names) if rng.random() < 0.7 else frozenset(rng.sample(names, 1))
        members.append(Member(f"consumer-{m}-{rng.randrange(10**6)}", subs))
    return GroupSpec(f"g{i}", tuple(members), topics)


def timed(label: str, groups: int, fn: Callable[[], object]) -> None:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    print(f"{label:<44} {best / groups * 1e6:8.1f} µs/group")


def main() -> None:
    rng = random.Random(1)
    specs = [make_group(rng, i) for i in range(2000)]
    rows = []
    units = []
    for spec in specs:
        parts = group_partitions(spec)
        rows.append(
            [
                OffsetRow(t, p, rng.randint(0, 1000), 1000 + rng.choice([0, 0, 5, 10**6]))
                for t, n in parts.items()
                for p in range(n)
                if rng.random() < 0.8
            ]
        )
        units.append(
            partition_weights(
                (t, p, rng.choice([None, 0.5, 2.0, 40.0]))
                for t, n in parts.items()
                for p in range(n)
            )[0]
        )
    lags = [
        partition_lags(r, group_partitions(s), s.group_id)[0]
        for s, r in zip(specs, rows, strict=True)
    ]
    assignments = [RangeAssignor().assign(s) for s in specs]
    previous = [previous_owners(s) for s in specs]
    wloads = [weight_loads(s, u) for s, u in zip(specs, units, strict=True)]
    n = len(specs)
    data = list(zip(specs, assignments, lags, units, previous, wloads, rows, strict=True))

    timed(
        "partition_lags", n, lambda: [partition_lags(r, group_partitions(s)) for s, *_, r in data]
    )
    timed(
        "load_metrics (lags + weights, bound inside)",
        n,
        lambda: [load_metrics(s, a, lg, u, p) for s, a, lg, u, p, *_ in data],
    )
    bounds = [weight_lower_bound(s, w) for s, *_, w, _ in data]
    timed(
        "load_metrics (lags + weights, bound given)",
        n,
        lambda: [
            load_metrics(s, a, lg, u, p, weight_bound=b)
            for (s, a, lg, u, p, *_), b in zip(data, bounds, strict=True)
        ],
    )
    timed(
        "load_metrics (lags only)",
        n,
        lambda: [load_metrics(s, a, lg, None, p) for s, a, lg, _, p, *_ in data],
    )
    timed("weight_lower_bound", n, lambda: [weight_lower_bound(s, w) for s, *_, w, _ in data])
    timed("assign_by_load (weights)", n, lambda: [assign_by_load(s, w, {}) for s, *_, w, _ in data])
    timed(
        "assign_by_load (lags, previous = range)",
        n,
        lambda: [assign_by_load(s, lag_loads(lg), p) for s, _, lg, _, p, *_ in data],
    )
    timed("range (reference)", n, lambda: [RangeAssignor().assign(s) for s, *_ in data])


if __name__ == "__main__":
    main()
