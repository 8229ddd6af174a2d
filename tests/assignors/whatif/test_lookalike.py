"""Look-alike groups share their what-if figures (`assignors.whatif.lookalike`).

The memo rests on one claim: a group renamed so that every order is kept (member ids,
`group.instance.id`s, topics, racks) has the same what-if figures under every built-in
strategy. These tests check the claim itself on seeded random groups (sizes, subscriptions,
static members, client and replica racks, previous owners with stale generations), that a
renamed copy is found in the memo under every strategy, and that rows with the memo are
always the rows without it, whatever the memo holds.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial

import pytest
from helpers.assignors import EagerAssignor
from helpers.lookalike import random_group, renamed

from assignors.analysis.bounds import best_balance
from assignors.catalog.registry import Assignor, resolve
from assignors.model import GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.problems import WARNING, Problem, Reason
from assignors.strategies.balanced import BalancedAssignor
from assignors.whatif.lookalike import GroupShape, ScenarioMemo
from assignors.whatif.simulation import CostRow, group_scenario_costs

STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "balanced")


def _best_max(spec: GroupSpec) -> int:
    return best_balance(spec).best_max


Plans = list[tuple[str, Callable[[], Assignor], dict[str, list[TopicPartition]]]]


def _plans(spec: GroupSpec, strategies: tuple[str, ...] = STRATEGIES) -> Plans:
    plans: Plans = []
    for strategy in strategies:
        factory = resolve(strategy)[1]
        plans.append((strategy, factory, factory().rebalance(spec).assignment))
    return plans


def _costs(
    spec: GroupSpec,
    memo: ScenarioMemo | None,
    plans: Plans | None = None,
    lags: dict[TopicPartition, int] | None = None,
) -> tuple[list[CostRow], list[Problem]]:
    return group_scenario_costs(
        spec, plans or _plans(spec), lags=lags, best_max=_best_max, memo=memo
    )


def _named(rows: list[CostRow], gid: str) -> list[CostRow]:
    return [{**row, "group_id": gid} for row in rows]


@pytest.mark.parametrize("seed", range(150))
def test_a_renamed_group_has_the_same_figures_and_is_found_in_the_memo(seed: int) -> None:
    rng = random.Random(seed)
    spec = random_group(rng, "orders")
    copy = renamed(spec, "payments", scheme=seed % 3, shift=rng.randint(-5, 40))
    memo = ScenarioMemo()
    rows, problems = _costs(spec, memo)
    assert (memo.hits, memo.misses) == (0, len(STRATEGIES))
    alone = _costs(copy, None)
    # The claim the memo rests on, checked without it: same figures under other names.
    assert alone[0] == _named(rows, "payments")
    assert [p.reason for p in alone[1]] == [p.reason for p in problems]
    # And the copy is found under every strategy, with the rows it has alone.
    assert _costs(copy, memo) == alone
    assert (memo.hits, memo.misses) == (len(STRATEGIES), len(STRATEGIES))


@pytest.mark.parametrize("seed", range(60))
def test_rows_with_the_memo_are_the_rows_without_it(seed: int) -> None:
    """An estate of small groups drawn from a narrow space, so shapes repeat under other
    names and some look alike without being alike; one memo for all of them, as a worker."""
    rng = random.Random(1000 + seed)
    memo = ScenarioMemo()
    for k in range(12):
        spec = random_group(rng, f"g{k}")
        if rng.random() < 0.5:
            spec = renamed(spec, f"g{k}", scheme=rng.randint(0, 2), shift=rng.randint(0, 9))
        assert _costs(spec, memo) == _costs(spec, None)
    assert memo.hits + memo.misses == 12 * len(STRATEGIES)


def test_an_order_changed_by_renaming_is_another_shape() -> None:
    """c0 (rack r0) sorts before c1 (rack r1); renamed z0 it sorts after: the members in
    Kafka's order no longer have the same racks, so nothing is reused."""
    topics = {"t": TopicMetadata("t", 5, (frozenset({"r0"}),) * 5)}
    c1 = Member("c1", frozenset({"t"}), rack="r1")
    one = GroupSpec("a", (Member("c0", frozenset({"t"}), rack="r0"), c1), topics)
    two = GroupSpec("b", (Member("z0", frozenset({"t"}), rack="r0"), c1), topics)
    memo = ScenarioMemo()
    _costs(one, memo)
    assert _costs(two, memo) == _costs(two, None)
    assert (memo.hits, memo.misses) == (0, 2 * len(STRATEGIES))


@pytest.mark.parametrize("seed", range(40))
def test_static_members_ids_still_count(seed: int) -> None:
    """Static members are ordered by `group.instance.id`, but the leaving member's tie-break,
    the joiner's subscription and sticky's ties read member ids: the same instance ids with
    the member ids shuffled is another shape, and its rows are its own."""
    rng = random.Random(500 + seed)
    topics = {"t0": TopicMetadata("t0", rng.randint(2, 9)), "t1": TopicMetadata("t1", 3)}
    subs = [frozenset({"t0"}), frozenset({"t0", "t1"})]
    n = rng.randint(2, 5)
    members = [Member(f"m{k}", rng.choice(subs), f"i{k}") for k in range(n)]
    ids = [m.member_id for m in members]
    rng.shuffle(ids)
    shuffled = [Member(i, m.topics, m.group_instance_id) for i, m in zip(ids, members, strict=True)]
    memo = ScenarioMemo()
    _costs(GroupSpec("a", tuple(members), topics), memo)
    copy = GroupSpec("b", tuple(shuffled), topics)
    assert _costs(copy, memo) == _costs(copy, None)


def test_names_that_sort_differently_in_java_are_never_memoised() -> None:
    # U+FF21 sorts after U+1F600 in Java (UTF-16 code units), before it in Python.
    topics = {"t": TopicMetadata("t", 4)}
    members = (Member("\uff21", frozenset({"t"})), Member("\U0001f600", frozenset({"t"})))
    spec = GroupSpec("g", members, topics)
    assert GroupShape.of(spec) is None
    memo = ScenarioMemo()
    assert _costs(spec, memo) == _costs(spec, None)
    assert (memo.hits, memo.misses, memo.entries) == (0, 0, {})


def test_groups_with_lags_plugins_or_loads_are_not_memoised() -> None:
    spec = random_group(random.Random(7))
    plan = resolve("range")[1]().rebalance(spec).assignment
    lags = {(t, p): 5 for t, meta in spec.topics.items() for p in range(meta.partition_count)}
    memo = ScenarioMemo()
    _costs(spec, memo, _plans(spec), lags=lags)  # lag_moved reads each partition's lag
    _costs(spec, memo, [("eager", EagerAssignor, plan)])  # a plugin reads names as it likes

    loaded = partial(BalancedAssignor, {})  # bound to the group's loads: not in the shape
    balanced_plan = loaded().rebalance(spec).assignment
    _costs(spec, memo, [("balanced", loaded, balanced_plan)])
    assert (memo.hits, memo.misses, memo.entries) == (0, 0, {})


def test_a_full_memo_keeps_nothing_more_and_the_rows_stay_right() -> None:
    rng = random.Random(3)
    memo = ScenarioMemo(max_entries=len(STRATEGIES))
    first = random_group(rng, "a")
    _costs(first, memo)
    assert len(memo.entries) == len(STRATEGIES)
    second = random_group(rng, "b")
    assert _costs(second, memo) == _costs(second, None)
    assert len(memo.entries) == len(STRATEGIES)


def test_a_failed_scenario_is_not_kept() -> None:
    memo = ScenarioMemo()
    failed = Problem("g", None, None, WARNING, Reason.SCENARIO_FAILED, "boom", "range")
    memo.put(("key",), (), [failed])
    assert memo.entries == {}
    skipped = Problem("g", None, None, WARNING, Reason.SCENARIO_NOT_APPLICABLE, "no row")
    memo.put(("key",), (), [skipped])
    found = memo.get(("key",), "other")
    assert found == ([], [Problem("other", None, None, WARNING, skipped.reason, "no row")])


def test_what_another_process_kept_is_merged_up_to_the_bound() -> None:
    """A planning child's shapes (`since`) join its parent's memo (`merge`), never past
    `max_entries`, and never over a shape the parent has."""
    child = ScenarioMemo()
    for k in range(5):
        child.put(("shape", k), (), [])
    mark = child.mark()
    for k in range(5, 9):
        child.put(("shape", k), (), [])
    learned = child.since(mark)
    assert [key for key, _ in learned] == [("shape", k) for k in range(5, 9)]
    parent = ScenarioMemo(max_entries=3)
    parent.put(("shape", 5), (), [])
    parent.merge(learned)
    assert list(parent.entries) == [("shape", 5), ("shape", 6), ("shape", 7)]


def test_a_group_over_max_members_costs_no_shape() -> None:
    topics = {"t": TopicMetadata("t", 4)}
    spec = GroupSpec("g", tuple(Member(f"c{i}", frozenset({"t"})) for i in range(3)), topics)
    memo = ScenarioMemo()
    plans = _plans(spec)
    skipped = group_scenario_costs(spec, plans, max_members=2, memo=memo)
    assert skipped == group_scenario_costs(spec, plans, max_members=2)
    assert skipped[0] == []
    assert [p.reason for p in skipped[1]] == [Reason.SCENARIO_SKIPPED]
    assert (memo.hits, memo.misses, memo.entries) == (0, 0, {})
