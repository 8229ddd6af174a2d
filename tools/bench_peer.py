"""The peer a user would reach for: kafka-python's own `range` and `roundrobin` assignors
computing every group of a snapshot in one process, with no I/O in the timed part.

The snapshot is read and each group's `JoinGroup` members and topic metadata are built before
the clock starts; the clock then covers only kafka-python's `assign` calls, group after group.
`tools.bench --peer` runs it beside the job (plan only, `range,roundrobin`) and prints both.

    python -m tools.bench_peer SNAPSHOT_DIR
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import time
import types
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from kafka.coordinator.assignors import roundrobin as kp_roundrobin
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from kafka.protocol.consumer import JoinGroupResponse

JoinMember = JoinGroupResponse.JoinGroupResponseMember
ASSIGNORS = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor}


class Spins(Exception):
    """kafka-python's roundrobin went round its member cycle far more often than it can need
    to: on some unequal subscriptions it never returns."""


def _bounded_cycle(items: list[Any]) -> Any:
    for _ in range(10_000):
        yield from items
    raise Spins


# The one change to kafka-python: a cycle that ends, so that a group it would spin on forever
# counts as failed instead of stopping the benchmark.
kp_roundrobin.itertools = types.SimpleNamespace(  # type: ignore[attr-defined]
    groupby=itertools.groupby, cycle=_bounded_cycle
)


class Metadata:
    """What kafka-python's assignors read of `ClusterMetadata`: the topics and their
    partitions."""

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    def topics(self) -> set[str]:
        return set(self.counts)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        n = self.counts.get(topic)
        return None if n is None else set(range(n))


def _read(root: Path, table: str, columns: list[str]) -> dict[str, list[Any]]:
    single = root / f"{table}.parquet"
    found = pq.read_table(single if single.exists() else root / table, columns=columns)
    return found.to_pydict()


def groups(snapshot: Path) -> list[tuple[Metadata, list[Any]]]:
    """Each group's topic metadata and JoinGroup members, as a kafka-python leader sees them."""
    tp = _read(snapshot, "topic_partitions", ["topic", "partition"])
    counts: dict[str, int] = defaultdict(int)
    for topic in tp["topic"]:
        counts[topic] += 1
    subs = _read(snapshot, "subscriptions", ["group_id", "member_id", "group_instance_id",
                                             "topics", "topic_pattern"])  # fmt: skip
    members: dict[str, list[tuple[str, str | None, list[str]]]] = defaultdict(list)
    names = sorted(counts)
    for gid, mid, instance, topics, pattern in zip(
        subs["group_id"], subs["member_id"], subs["group_instance_id"], subs["topics"],
        subs["topic_pattern"], strict=True,
    ):  # fmt: skip
        if topics is None and pattern is not None:
            compiled = re.compile(pattern)
            topics = [t for t in names if compiled.fullmatch(t)]
        members[gid].append((mid, instance, sorted(topics or [])))
    out = []
    for gid in sorted(members):
        subscribed = {t for _, _, ts in members[gid] for t in ts if t in counts}
        meta = Metadata({t: counts[t] for t in subscribed})
        join = [
            JoinMember(
                member_id=mid,
                group_instance_id=instance,
                metadata=RangePartitionAssignor.metadata(ts),
            )
            for mid, instance, ts in sorted(members[gid])
        ]
        out.append((meta, join))
    return out


def timed(prepared: list[tuple[Metadata, list[Any]]], strategies: list[str]) -> dict[str, Any]:
    seconds: dict[str, float] = {}
    failed: dict[str, int] = {}
    for name in strategies:
        assignor = ASSIGNORS[name]
        errors = 0
        start = time.perf_counter()
        for meta, join in prepared:
            try:
                assignor.assign(meta, join)
            except Exception:  # roundrobin raises, or spins, on some unequal subscriptions
                errors += 1
        seconds[name] = time.perf_counter() - start
        failed[name] = errors
    return {"groups": len(prepared), "seconds": seconds, "failed": failed,
            "total_seconds": sum(seconds.values())}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("snapshot", type=Path)
    p.add_argument("--strategies", default="range,roundrobin")
    args = p.parse_args(argv)
    prepared = groups(args.snapshot)
    print(json.dumps(timed(prepared, args.strategies.split(","))))


if __name__ == "__main__":
    main()
