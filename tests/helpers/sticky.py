"""Checks and generators shared by the sticky assignors' tests."""

from __future__ import annotations

import random

from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.ownership import valid_owned


def assert_valid_and_balanced(spec: GroupSpec, a: Assignment) -> None:
    """Kafka's verifyValidityAndBalance (AbstractStickyAssignorTest)."""
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


def subscribed_partitions(spec: GroupSpec) -> set[TopicPartition]:
    return {(t, p) for t in spec.subscribed_topics() for p in range(spec.partition_count(t))}


def check_valid(spec: GroupSpec, a: Assignment, complete: bool = True) -> None:
    subs = {m.member_id: m.topics for m in spec.members}
    assert set(a) == set(subs), "every member appears"
    seen: list[TopicPartition] = [x for v in a.values() for x in v]
    assert len(seen) == len(set(seen)), "no partition twice"
    for m, parts in a.items():
        for t, p in parts:
            assert t in subs[m], f"{m} is not subscribed to {t}"
            assert 0 <= p < spec.partition_count(t)
    if complete:
        assert set(seen) == subscribed_partitions(spec), "every subscribed partition assigned"


def check_balance(a: Assignment) -> None:
    """verifyValidityAndBalance rule 3: members 2+ apart share no topic."""
    topics = {m: {t for t, _ in v} for m, v in a.items()}
    for x in a:
        for y in a:
            if len(a[x]) >= len(a[y]) + 2:
                assert not topics[x] & topics[y], (x, y, a)


def naive_general(spec: GroupSpec) -> Assignment:
    """The general path as Java runs it: TreeSet scans and full balance checks, no indexes.

    Slow but obviously faithful; the production path replaces the scans with per-class heaps
    and a per-class balance check, which must not change a single result.
    """
    ids = sorted(m.member_id for m in spec.members)
    by_id = {m.member_id: m for m in spec.members}
    scope = spec.subscribed_topics()
    count = {t: spec.partition_count(t) for t in scope}
    subs = {m: [t for t in scope if t in by_id[m].topics] for m in ids}
    consumers = {t: [m for m in ids if t in subs[m]] for t in scope}

    def gen(m: str) -> int:
        g = by_id[m].generation
        return g if g is not None and g >= 0 else -1

    valid = valid_owned(spec)
    cur: dict[str, list[TopicPartition]] = {}
    revocation = False
    for m in ids:
        in_scope = [x for x in valid[m] if x[0] in count]
        cur[m] = [x for x in in_scope if x[0] in subs[m]]
        revocation |= len(cur[m]) != len(in_scope)
    max_gen = max(gen(m) for m in ids)
    prev: dict[TopicPartition, tuple[str, int]] = {}
    for m in ids:
        if gen(m) < max_gen:
            for x in dict.fromkeys(by_id[m].owned):
                ok = x[0] in subs[m] and 0 <= x[1] < count[x[0]]
                if ok and (x not in prev or gen(m) > prev[x][1]):
                    prev[x] = (m, gen(m))
    owner = {x: m for m in ids for x in cur[m]}
    parts = [
        (t, p) for t in sorted(scope, key=lambda t: (len(consumers[t]), t)) for p in range(count[t])
    ]
    unassigned = [x for x in parts if x not in owner]
    initializing = all(not cur[m] for m in ids)

    def least(members: list[str], topic: str) -> str:
        return min((m for m in members if topic in subs[m]), key=lambda m: (len(cur[m]), m))

    for x in unassigned:
        m = least(ids, x[0])
        cur[m].append(x)
        owner[x] = m
    reassignable = [x for x in parts if len(consumers[x[0]]) >= 2]
    unassigned = [x for x in unassigned if len(consumers[x[0]]) >= 2]
    cap = {m: sum(count[t] for t in subs[m]) for m in ids}
    active = [
        m for m in ids if len(cur[m]) < cap[m] or any(len(consumers[t]) >= 2 for t, _ in cur[m])
    ]
    snapshot = {m: list(cur[m]) for m in active}

    def balanced() -> bool:
        s = [len(cur[m]) for m in active]
        if max(s) - min(s) <= 1:
            return True
        for c in active:
            if len(cur[c]) == cap[c]:
                continue
            for t in subs[c]:
                for p in range(count[t]):
                    if (t, p) not in cur[c] and len(cur[c]) + 1 < len(cur[owner[(t, p)]]):
                        return False
        return True

    moved: dict[TopicPartition, tuple[str, str]] = {}  # partition -> (first source, dest)

    def move(x: TopicPartition, dst: str) -> None:
        src = owner[x]
        first_src = moved[x][0] if x in moved else src
        reverse = [y for y, (a, b) in moved.items() if y[0] == x[0] and (a, b) == (dst, first_src)]
        if reverse:
            x = reverse[0]
            src = owner[x]
        if x in moved:
            a, _ = moved.pop(x)
            if a != dst:
                moved[x] = (a, dst)
        else:
            moved[x] = (src, dst)
        cur[src].remove(x)
        cur[dst].append(x)
        owner[x] = dst

    def perform(xs: list[TopicPartition]) -> bool:
        performed = False
        while True:
            modified = False
            for x in xs:
                if balanced():
                    break
                c = owner[x]
                if x in prev and prev[x][0] in active and len(cur[c]) > len(cur[prev[x][0]]) + 1:
                    move(x, prev[x][0])
                    performed = modified = True
                    continue
                if any(len(cur[c]) > len(cur[o]) + 1 for o in consumers[x[0]]):
                    move(x, least(active, x[0]))
                    performed = modified = True
            if not modified:
                return performed

    if active:
        if not revocation:
            perform(unassigned)
        performed = perform(reassignable)

        def score(sizes: list[int]) -> int:
            return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

        before = score([len(v) for v in snapshot.values()])
        if not initializing and performed and score([len(cur[m]) for m in active]) >= before:
            cur.update(snapshot)
    return {m.member_id: cur[m.member_id] for m in spec.members}
