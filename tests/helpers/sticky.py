"""Checks and generators shared by the sticky assignors' tests."""

from __future__ import annotations

import random

from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition


def assert_valid_and_balanced(spec: GroupSpec, a: Assignment) -> None:
    """Kafka's verifyValidityAndBalance (§4.7)."""
    subs = {m.member_id: m.topics for m in spec.members}
    assert set(a) == set(subs)
    seen: set[TopicPartition] = set()
    for m, parts in a.items():
        for t, p in parts:
            assert t in subs[m], (m, t)
            assert 0 <= p < spec.partition_count(t)
            assert (t, p) not in seen, (t, p)
            seen.add((t, p))
    ids = sorted(a)
    for i, x in enumerate(ids):
        for y in ids[i + 1 :]:
            big, small = (x, y) if len(a[x]) > len(a[y]) else (y, x)
            if len(a[big]) - len(a[small]) >= 2:
                assert not {t for t, _ in a[big]} & {t for t, _ in a[small]}, (big, small)


def _subset(rng: random.Random, items: list[str], empty_ok: bool = True) -> frozenset[str]:
    chosen = frozenset(t for t in items if rng.random() < 0.5)
    if not chosen and not empty_ok and items:
        chosen = frozenset({rng.choice(items)})
    return chosen


def fresh_group(rng: random.Random) -> GroupSpec:
    names = [f"t{i}" for i in range(rng.randint(1, 8))]
    topics = {t: TopicMetadata(t, rng.randint(1, 12)) for t in names}
    wanted = [*names, "missing"]  # a subscribed topic without metadata
    n = rng.randint(1, 12)
    if rng.random() < 0.4:
        common = _subset(rng, wanted, empty_ok=False)
        subs = [common] * n
    else:
        subs = [_subset(rng, wanted) for _ in range(n)]
    members = tuple(Member(f"m{i:02d}", s) for i, s in enumerate(subs))
    return GroupSpec("g", members, topics)


def churn(rng: random.Random, spec: GroupSpec, current: Assignment, generation: int) -> GroupSpec:
    """The next rebalance: membership, metadata and subscriptions change; owners report."""
    topics = dict(spec.topics)
    for t, meta in list(topics.items()):
        r = rng.random()
        if r < 0.15:
            topics[t] = TopicMetadata(t, meta.partition_count + rng.randint(1, 4))
        elif r < 0.2:
            del topics[t]
    if rng.random() < 0.3:
        t = f"t{len(spec.topics) + rng.randint(0, 3)}"
        topics.setdefault(t, TopicMetadata(t, rng.randint(1, 6)))
    names = sorted(topics)
    equal = len({m.topics for m in spec.members}) == 1 and rng.random() < 0.6
    common = _subset(rng, names, empty_ok=False) if rng.random() < 0.3 else None

    members: list[Member] = []
    for m in spec.members:
        if rng.random() < 0.2:
            continue  # leaves: its partitions become free
        owned = tuple(current.get(m.member_id, ()))
        gen: int | None = generation
        r = rng.random()
        if r < 0.1:
            gen = generation - rng.randint(1, 3)  # stale: missed a rebalance
            owned = owned + tuple(rng.sample(_all(spec), min(2, len(_all(spec)))))
        elif r < 0.15:
            gen = None  # an old client without generation
        topics_m = m.topics
        if common is not None:
            topics_m = common
        elif not equal and rng.random() < 0.2:
            topics_m = _subset(rng, [*names, "missing"])
        members.append(Member(m.member_id, topics_m, owned=owned, generation=gen))
    # Same-generation double claims: someone also reports a partition another member owns.
    if len(members) >= 2 and rng.random() < 0.2:
        a, b = rng.sample(range(len(members)), 2)
        if members[b].owned:
            extra = rng.choice(members[b].owned)
            ma = members[a]
            members[a] = Member(
                ma.member_id, ma.topics, owned=(*ma.owned, extra), generation=members[b].generation
            )
    for i in range(rng.randint(0, 3)):
        topics_new = members[0].topics if members and equal else _subset(rng, names)
        members.append(Member(f"n{generation}-{i}", topics_new))
    if not members:
        members.append(Member("solo", frozenset(names)))
    rng.shuffle(members)
    return GroupSpec("g", tuple(members), topics)


def _all(spec: GroupSpec) -> list[TopicPartition]:
    return [(t, p) for t in sorted(spec.topics) for p in range(spec.partition_count(t))]
