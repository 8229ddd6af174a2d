"""The `balanced` strategy's test oracle: tiny random groups and a brute-force optimum."""

from __future__ import annotations

import itertools
import random

from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.ownership import valid_owned
from assignors.racks import rack_mismatch_count

RACKS = ["a", "b", "c"]


def random_group(rng: random.Random) -> GroupSpec:
    """<= 7 partitions, 2-4 members, random subscriptions, racks, owners and generations."""
    n_topics = rng.randint(1, 3)
    counts = [rng.randint(1, 3) for _ in range(n_topics)]
    while sum(counts) > 7:
        counts[rng.randrange(n_topics)] -= 1
    topics = {
        f"t{i}": TopicMetadata(
            f"t{i}",
            n,
            tuple(frozenset(rng.sample(RACKS, rng.randint(0, 2))) for _ in range(n))
            if rng.random() < 0.6
            else (),
        )
        for i, n in enumerate(counts)
        if n > 0
    }
    names = list(topics)
    members = []
    for i in range(rng.randint(2, 4)):
        subs = frozenset(t for t in names if rng.random() < 0.7)
        owned = tuple(
            (t, p) for t in names for p in range(topics[t].partition_count) if rng.random() < 0.3
        )
        members.append(
            Member(
                f"m{rng.randint(0, 99):02d}{i}",
                subs,
                rack=rng.choice([None, "", *RACKS]),
                owned=owned,
                generation=rng.choice([None, 1, 2]) if owned else None,
            )
        )
    return GroupSpec("g", tuple(members), topics)


def objective(spec: GroupSpec, a: Assignment) -> tuple[tuple[int, ...], int, int]:
    """(sorted-descending loads, rack mismatches, -kept): smaller is better, in this order."""
    loads = tuple(sorted((len(a[m.member_id]) for m in spec.members), reverse=True))
    owned = valid_owned(spec)
    kept = sum(1 for m, tps in a.items() for tp in tps if tp in set(owned[m]))
    return loads, rack_mismatch_count(spec, a) or 0, -kept


def brute_force(spec: GroupSpec) -> tuple[tuple[int, ...], int, int]:
    """The best objective over every assignment (each partition to one of its subscribers)."""
    ids = [m.member_id for m in spec.members]
    index = {m: i for i, m in enumerate(ids)}
    parts = [(t, p) for t in spec.subscribed_topics() for p in range(spec.partition_count(t))]
    subs = spec.subscribers()
    owned = valid_owned(spec)
    owner = {tp: index[m] for m, tps in owned.items() for tp in tps}
    racks_known = rack_mismatch_count(spec, {m: [] for m in ids}) is not None
    options: list[list[tuple[int, int, int]]] = []  # per partition: (member, mismatch, kept)
    for t, p in parts:
        racks = spec.topics[t].replica_racks
        on = racks[p] if p < len(racks) else frozenset()
        row = []
        for m in subs[t]:
            rack = m.rack or None
            mm = int(racks_known and rack is not None and rack not in on)
            row.append((index[m.member_id], mm, int(owner.get((t, p)) == index[m.member_id])))
        options.append(row)
    best = None
    for pick in itertools.product(*options):
        loads = [0] * len(ids)
        mm = kept = 0
        for r, x, k in pick:
            loads[r] += 1
            mm += x
            kept += k
        key = (tuple(sorted(loads, reverse=True)), mm, -kept)
        if best is None or key < best:
            best = key
    return best if best is not None else (tuple([0] * len(ids)), 0, 0)


def check_valid(spec: GroupSpec, a: Assignment) -> None:
    assert set(a) == {m.member_id for m in spec.members}
    topics = {m.member_id: m.topics for m in spec.members}
    seen: list[TopicPartition] = [tp for tps in a.values() for tp in tps]
    assert len(seen) == len(set(seen))
    expected = {(t, p) for t in spec.subscribed_topics() for p in range(spec.partition_count(t))}
    assert set(seen) == expected
    for m, tps in a.items():
        assert all(t in topics[m] for t, _ in tps)
