"""Deterministic synthetic Kafka estates for `make run` and `make bench`.

Shapes follow real estates: topics shared by many groups, partition counts skewed small
(1-64), 1-20 members per group (median 4), a share of static members, some heterogeneous
subscriptions, some groups with a current assignment (with departed members and stale
generations), a few members listing their preferred strategies, replica racks and weights on
every partition, and (unless `--no-offsets`) an `offsets` table: small lags, a few hot
partitions with a large backlog, some partitions never committed. `--bad-rows` adds a handful
of broken rows so that the `rejected` table has something to show.

    python -m tools.sample_estate --groups 300 --out data/sample
"""

from __future__ import annotations

import argparse
import random
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

PARTITION_CHOICES = (1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64)
PARTITION_WEIGHTS = (5, 6, 8, 9, 10, 12, 8, 10, 9, 6, 5, 5, 4, 3)
MEMBER_CHOICES = tuple(range(1, 21))
MEMBER_WEIGHTS = (7, 13, 15, 17, 11, 8, 6, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1)
STRATEGY_LISTS: tuple[list[str] | None, ...] = (
    None,
    None,
    None,
    ["range"],
    ["cooperative-sticky", "range"],
    ["roundrobin"],
    ["org.apache.kafka.clients.consumer.RangeAssignor"],
)

SCHEMAS = {
    "topic_partitions": pa.schema(
        [
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("replica_racks", pa.list_(pa.string())),
            ("weight", pa.float64()),
        ]
    ),
    "subscriptions": pa.schema(
        [
            ("group_id", pa.string()),
            ("member_id", pa.string()),
            ("group_instance_id", pa.string()),
            ("client_rack", pa.string()),
            ("topics", pa.list_(pa.string())),
            ("topic_pattern", pa.string()),
            ("assignment_strategies", pa.list_(pa.string())),
            ("generation", pa.int32()),
        ]
    ),
    "current_assignment": pa.schema(
        [
            ("group_id", pa.string()),
            ("member_id", pa.string()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
        ]
    ),
    "offsets": pa.schema(
        [
            ("group_id", pa.string()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("committed_offset", pa.int64()),
            ("log_end_offset", pa.int64()),
        ]
    ),
}
RACKS = ("use1-az1", "use1-az2", "use1-az3")


def generate(
    groups: int, seed: int = 7, bad_rows: bool = False, offsets: bool = False
) -> dict[str, dict[str, list[Any]]]:
    """Column lists per table for an estate of `groups` groups (deterministic for a seed).

    `offsets` adds an `offsets` table (see `offsets_table`); the other tables are the same
    with or without it."""
    rng = random.Random(seed)
    n_topics = max(4, groups // 20)
    topics = [
        f"{rng.choice(('orders', 'payments', 'clicks', 'audit', 'events'))}.{i:05d}"
        for i in range(n_topics)
    ]
    sizes = rng.choices(PARTITION_CHOICES, PARTITION_WEIGHTS, k=n_topics)
    tp: dict[str, list[Any]] = {k: [] for k in SCHEMAS["topic_partitions"].names}
    for topic, n in zip(topics, sizes, strict=True):
        for p in range(n):
            tp["topic"].append(topic)
            tp["partition"].append(p)
            tp["replica_racks"].append([RACKS[(p + j) % 3] for j in range(min(3, 2 + p % 2))])
            tp["weight"].append(round(rng.uniform(0.2, 5.0), 3))
    count = dict(zip(topics, sizes, strict=True))

    subs: dict[str, list[Any]] = {k: [] for k in SCHEMAS["subscriptions"].names}
    cur: dict[str, list[Any]] = {k: [] for k in SCHEMAS["current_assignment"].names}
    consumed: list[tuple[str, list[str]]] = []  # (group, its topics) for the offsets
    for g in range(groups):
        gid = f"{rng.choice(('svc', 'etl', 'stream', 'app'))}-{g:06d}"
        n_members = rng.choices(MEMBER_CHOICES, MEMBER_WEIGHTS)[0]
        group_topics = rng.sample(topics, k=rng.choices((1, 2, 3), (5, 3, 2))[0])
        consumed.append((gid, group_topics))
        static = rng.random() < 0.2
        heterogeneous = len(group_topics) > 1 and rng.random() < 0.25
        strategies = rng.choice(STRATEGY_LISTS)
        members = []
        for m in range(n_members):
            mid = f"consumer-{m}-{rng.getrandbits(32):08x}"
            mine = group_topics
            if heterogeneous and m % 2 == 1:
                mine = group_topics[: max(1, len(group_topics) - 1)]
            members.append((mid, mine))
            subs["group_id"].append(gid)
            subs["member_id"].append(mid)
            subs["group_instance_id"].append(f"{gid}-instance-{m}" if static else None)
            subs["client_rack"].append(RACKS[m % 3] if rng.random() < 0.5 else None)
            subs["topics"].append(list(mine))
            subs["topic_pattern"].append(None)
            subs["assignment_strategies"].append(strategies)
            subs["generation"].append(None)
        if rng.random() < 0.4:  # a current assignment, with churn since it was made
            generation = rng.randint(2, 40)
            owners = [mid for mid, _ in members if rng.random() < 0.85]
            owners += [f"departed-{k}-{rng.getrandbits(24):06x}" for k in range(rng.randint(0, 2))]
            if owners:
                all_tps = [(t, p) for t in sorted(group_topics) for p in range(count[t])]
                for i, (t, p) in enumerate(all_tps):
                    cur["group_id"].append(gid)
                    cur["member_id"].append(owners[i % len(owners)])
                    cur["topic"].append(t)
                    cur["partition"].append(p)
            first = len(subs["group_id"]) - n_members
            for i in range(first, len(subs["group_id"])):
                subs["generation"][i] = generation - (1 if rng.random() < 0.1 else 0)

    if bad_rows and groups >= 3:
        _add_bad_rows(subs, tp, topics)
    tables = {"topic_partitions": tp, "subscriptions": subs, "current_assignment": cur}
    if offsets:
        tables["offsets"] = offsets_table(consumed, count, seed)
    return tables


def offsets_table(
    consumed: list[tuple[str, list[str]]], count: dict[str, int], seed: int
) -> dict[str, list[Any]]:
    """One `offsets` row per group and partition it consumes, as a snapshot of
    `kafka-consumer-groups.sh --describe` would give: most lags small, a few hot partitions
    with a large backlog (1%), some partitions never committed (3%: null committed offset).
    Its own random stream, so the other tables do not change with it."""
    rng = random.Random(seed * 7919 + 1)
    out: dict[str, list[Any]] = {k: [] for k in SCHEMAS["offsets"].names}
    for gid, topics in consumed:
        for t in sorted(topics):
            for p in range(count[t]):
                log_end = rng.randint(10_000, 50_000_000)
                roll = rng.random()
                hot = roll < 0.01
                lag = rng.randint(200_000, 2_000_000) if hot else int(rng.expovariate(1 / 300))
                out["group_id"].append(gid)
                out["topic"].append(t)
                out["partition"].append(p)
                out["committed_offset"].append(None if roll > 0.97 else max(0, log_end - lag))
                out["log_end_offset"].append(log_end)
    return out


def big_group(
    topics: int = 500, partitions: int = 2000, members: int = 2000, owned: bool = True
) -> dict[str, dict[str, list[Any]]]:
    """Kafka's large sticky test as an estate: one group owning topics x partitions.

    Every member subscribes to every topic; all members but the first report owning a
    round-robin share in generation 1 (the first rejoins fresh), as Kafka's test does.
    `owned=False`: no `current_assignment` table (a fresh plan).
    """
    names = [f"topic{t:0{len(str(topics))}d}" for t in range(topics)]
    n = topics * partitions
    tp: dict[str, list[Any]] = {
        "topic": [t for t in names for _ in range(partitions)],
        "partition": list(range(partitions)) * topics,
        "replica_racks": [None] * n,
        "weight": [None] * n,
    }
    ids = [f"consumer{i:0{len(str(members))}d}" for i in range(members)]
    subs: dict[str, list[Any]] = {
        "group_id": ["big"] * members,
        "member_id": ids,
        "group_instance_id": [None] * members,
        "client_rack": [None] * members,
        "topics": [names] * members,
        "topic_pattern": [None] * members,
        "assignment_strategies": [None] * members,
        "generation": [1] * members,
    }
    if not owned:
        return {"topic_partitions": tp, "subscriptions": subs}
    owner = [ids[k % members] for k in range(n)]
    keep = [k for k in range(n) if k % members != 0]
    cur = {
        "group_id": ["big"] * len(keep),
        "member_id": [owner[k] for k in keep],
        "topic": [tp["topic"][k] for k in keep],
        "partition": [tp["partition"][k] for k in keep],
    }
    return {"topic_partitions": tp, "subscriptions": subs, "current_assignment": cur}


# The broken groups `--bad-rows` plants on purpose, and what the planner reports for each.
PLANTED = {
    "bad-duplicate-member": "two members share one member_id: error DUPLICATE_MEMBER_ID",
    "bad-both-subscriptions": (
        "a member sets both topics and topic_pattern: error TOPICS_AND_PATTERN"
    ),
    "bad-broken-topic": (
        "subscribes to broken.gap, whose partitions 0, 1, 3 skip 2:"
        " error NON_CONTIGUOUS_PARTITIONS (also reported once for the topic itself)"
    ),
    "bad-strategy-name": (
        "votes for 'sticky-ish', which no assignor implements:"
        " warning UNKNOWN_ASSIGNMENT_STRATEGY (still planned)"
    ),
}


def describe_planted() -> str:
    """What `--bad-rows` planted: printed so the job's rejected counts can be read against it."""
    errors = sum(1 for why in PLANTED.values() if ": error " in why)
    lines = [f"planted on purpose (--bad-rows): {errors} groups to reject, 1 warning"]
    lines += [f"  {group}: {why}" for group, why in PLANTED.items()]
    return "\n".join(lines)


def _add_bad_rows(subs: dict[str, list[Any]], tp: dict[str, list[Any]], topics: list[str]) -> None:
    """A duplicate member, a member with both topics and a pattern, a topic with a gap."""

    def member(gid: str, mid: str, topics_: list[str] | None, pattern: str | None = None) -> None:
        for k, v in {
            "group_id": gid,
            "member_id": mid,
            "group_instance_id": None,
            "client_rack": None,
            "topics": topics_,
            "topic_pattern": pattern,
            "assignment_strategies": None,
            "generation": None,
        }.items():
            subs[k].append(v)

    # two different rows under one member id (an identical repeat is only a warning)
    member("bad-duplicate-member", "consumer-1", [topics[0]])
    member("bad-duplicate-member", "consumer-1", [topics[0], topics[1]])
    member("bad-both-subscriptions", "consumer-1", [topics[1]], "orders\\..*")
    for p in (0, 1, 3):  # partition 2 missing
        tp["topic"].append("broken.gap")
        tp["partition"].append(p)
        tp["replica_racks"].append(None)
        tp["weight"].append(None)
    member("bad-broken-topic", "consumer-1", ["broken.gap", topics[2]])
    member("bad-strategy-name", "consumer-1", [topics[3]])
    subs["assignment_strategies"][-1] = ["sticky-ish", "range"]


def write(tables: dict[str, dict[str, list[Any]]], out: Path, files: int = 2) -> None:
    """Write each table as a Parquet dataset of `files` part files (replacing `out`)."""
    if out.exists():
        shutil.rmtree(out)
    for name, cols in tables.items():
        table = pa.table(cols, schema=SCHEMAS[name])
        (out / name).mkdir(parents=True)
        step = max(1, -(-table.num_rows // files))
        for i, start in enumerate(range(0, max(table.num_rows, 1), step)):
            pq.write_table(table.slice(start, step), out / name / f"part-{i:05d}.parquet")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--groups", type=int, default=300)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--bad-rows", action="store_true", help="add a few broken rows")
    p.add_argument("--no-offsets", action="store_true", help="leave out the offsets table")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    tables = generate(args.groups, args.seed, args.bad_rows, offsets=not args.no_offsets)
    write(tables, args.out)
    rows = ", ".join(f"{k}={len(next(iter(v.values())))}" for k, v in tables.items())
    print(f"sample estate: {args.groups} groups -> {args.out} ({rows})")
    if args.bad_rows and args.groups >= 3:
        print(describe_planted())


if __name__ == "__main__":
    main()
