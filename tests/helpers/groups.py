"""Random groups' building blocks shared by the seeded property tests."""

from __future__ import annotations

import random
from collections.abc import Sequence

from assignors.model import GroupSpec, TopicMetadata, TopicPartition

RACKS = ("r0", "r1", "r2")


def random_topics(
    rng: random.Random, rack_chance: float, max_partitions: int, racks: Sequence[str] = RACKS
) -> dict[str, TopicMetadata]:
    """One to three topics t0, t1, ... of 1..`max_partitions` partitions; with probability
    `rack_chance` each partition's replicas are on one or two of `racks`."""
    names = [f"t{i}" for i in range(rng.randint(1, 3))]
    with_racks = rng.random() < rack_chance
    topics = {}
    for t in names:
        n = rng.randint(1, max_partitions)
        replicas = (
            tuple(frozenset(rng.sample(racks, rng.randint(1, 2))) for _ in range(n))
            if with_racks
            else ()
        )
        topics[t] = TopicMetadata(t, n, replicas)
    return topics


def random_lags(rng: random.Random, spec: GroupSpec) -> dict[TopicPartition, int] | None:
    """No offsets half the time; else a lag of 0..1000 on nine partitions in ten."""
    if rng.random() < 0.5:
        return None
    return {
        (t, p): rng.randint(0, 1000)
        for t, meta in spec.topics.items()
        for p in range(meta.partition_count)
        if rng.random() < 0.9
    }
