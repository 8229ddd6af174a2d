"""The best achievable balance: facts, and a brute-force oracle."""

from __future__ import annotations

import itertools
import random

import pytest
from helpers.baselines import lower_bound

from assignors.analysis.bounds import _by_flow, _classes, best_balance
from assignors.analysis.metrics import balance_metrics
from assignors.catalog.registry import get_assignor
from assignors.model import GroupSpec, Member, TopicMetadata, TopicPartition


def group(
    topics: dict[str, int],
    subs: dict[str, str],
    owned: dict[str, list[TopicPartition]] | None = None,
    gen: int | None = None,
) -> GroupSpec:
    owned = owned or {}
    return GroupSpec(
        "g",
        tuple(
            Member(m, frozenset(s), owned=tuple(owned.get(m, ())), generation=gen)
            for m, s in subs.items()
        ),
        {t: TopicMetadata(t, n) for t, n in topics.items()},
    )


def test_owners_keep_uneven_sizes_best_is_two() -> None:
    """Sticky, cooperative-sticky and uniform keep sizes 1/2/3; the best max is 2."""
    spec = group(
        {"a": 3, "b": 3},
        {"X": "a", "Y": "ab", "Z": "b"},
        {"X": [("a", 0)], "Y": [("a", 1), ("a", 2)], "Z": [("b", 0), ("b", 1), ("b", 2)]},
        gen=1,
    )
    assert best_balance(spec).best_max == 2
    for name in ("sticky", "cooperative-sticky", "uniform"):
        assignor = get_assignor(name)
        rebalance = getattr(assignor, "rebalance", None)
        result = rebalance(spec).assignment if rebalance else assignor.assign(spec)
        assert sorted(len(v) for v in result.values()) == [1, 2, 3], name
        row = balance_metrics(spec, result, None)
        assert row["best_max_partitions_per_member"] == 2
        assert row["balance_gap"] == 1
        assert row["bottleneck_topics"] == []


def test_plain_average_is_out_of_reach() -> None:
    """X, Y -> {a, b}, Z1..Z3 -> {c}; a(3), b(3), c(1): average 2, best 3."""
    spec = group({"a": 3, "b": 3, "c": 1}, {"X": "ab", "Y": "ab", "Z1": "c", "Z2": "c", "Z3": "c"})
    bound = best_balance(spec)
    assert bound.best_max == 3
    assert bound.bottleneck_topics == ("a", "b")


def test_idle_members_and_empty_groups() -> None:
    assert best_balance(group({"a": 4}, {"X": "a", "Y": ""})).best_max == 4
    assert best_balance(group({"a": 4}, {"X": "a", "Y": ""})).bottleneck_topics == ("a",)
    assert best_balance(group({"a": 0}, {"X": "a"})).best_max == 0
    assert best_balance(group({}, {"X": ""})).best_max == 0


def brute_best(spec: GroupSpec) -> int:
    parts = [(t, p) for t in spec.subscribed_topics() for p in range(spec.partition_count(t))]
    if not parts:
        return 0
    subs = spec.subscribers()
    choices = [[m.member_id for m in subs[t]] for t, _ in parts]
    best = len(parts)
    for pick in itertools.product(*choices):
        counts: dict[str, int] = {}
        for m in pick:
            counts[m] = counts.get(m, 0) + 1
        best = min(best, max(counts.values()))
    return best


def random_group(rng: random.Random) -> GroupSpec:
    topics = {f"t{i}": rng.randint(0, 2) for i in range(rng.randint(1, 4))}
    members = {
        f"m{i}": "".join(t[1] for t in topics if rng.random() < 0.4)
        for i in range(rng.randint(1, 4))
    }
    subs = {m: {f"t{c}" for c in s} for m, s in members.items()}
    return GroupSpec(
        "g",
        tuple(Member(m, frozenset(s)) for m, s in subs.items()),
        {t: TopicMetadata(t, n) for t, n in topics.items()},
    )


@pytest.mark.parametrize("seed", range(400))
def test_best_max_matches_brute_force(seed: int) -> None:
    spec = random_group(random.Random(seed))
    bound = best_balance(spec)
    assert bound.best_max == brute_best(spec)
    # The flow alone (no closed-form shortcut) agrees too.
    c = _classes(spec)
    low, result, _ = lower_bound(spec)
    assert low <= bound.best_max
    assert _by_flow(c, low, result).best_max == bound.best_max
    if bound.bottleneck_topics:
        ts = set(bound.bottleneck_topics)
        load = sum(spec.partition_count(t) for t in ts)
        n = sum(1 for m in spec.members if m.topics & ts)
        assert -(-load // n) == bound.best_max


def test_achieved_hint_only_shortcuts() -> None:
    spec = group({"a": 3, "b": 3, "c": 1}, {"X": "ab", "Y": "abc", "Z": "c"})
    assert best_balance(spec, achieved=99) == best_balance(spec)


def test_large_groups_stay_cheap() -> None:
    """Kafka's 1M-partition non-equal case is two classes on each side."""
    names = [f"t{i:03d}" for i in range(500)]
    topics = {t: TopicMetadata(t, 2000) for t in names}
    every = frozenset(names)
    members = (
        *(Member(f"c{i:04d}", every) for i in range(1999)),
        Member("c1999", frozenset(names[:1])),
    )
    bound = best_balance(GroupSpec("g", members, topics))
    assert bound.best_max == 500
    assert bound.bottleneck_topics == ()
