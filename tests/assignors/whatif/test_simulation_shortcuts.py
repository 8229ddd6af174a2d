"""The what-if shortcuts (`assignors.whatif.simulation._Simulator`) against the full replay.

Every shortcut (the shared steady state and leave, a STATELESS rejoin reusing the plan, a
restart that returns to the plan, a STATELESS leave reused for members that look alike)
must give exactly the rows of `shortcuts=False`, which replays every rebalance from the
state the previous one left. Seeded random groups cover sizes, subscriptions, static and
dynamic members, client racks, replica racks, previous owners (with departed members and
stale generations) and lags; "look-alike" groups make many members share a shape so the
STATELESS leave reuse is exercised, not just allowed.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from helpers.assignors import EagerAssignor
from helpers.groups import RACKS, random_lags, random_topics

from assignors.analysis.bounds import best_balance
from assignors.catalog.catalog import StrategyCatalog
from assignors.catalog.registry import Assignor, resolve
from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.planner import plan_group
from assignors.strategies import shared
from assignors.strategies.sticky.assignor import CooperativeStickyAssignor, StickyAssignor
from assignors.whatif.group import WhatIfSettings, group_whatif
from assignors.whatif.simulation import (
    SCENARIOS,
    group_scenario_costs,
    run_scenarios,
)

STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "balanced")
STATELESS = frozenset(s for s in STRATEGIES if resolve(s)[1]().stateless)


def random_group(rng: random.Random, look_alike: bool) -> GroupSpec:
    topics = random_topics(rng, 0.5, 16)
    names = list(topics)
    n_members = rng.randint(1, 12)
    same = look_alike or rng.random() < 0.5
    static_share = rng.choice((0.0, 0.3) if look_alike else (0.0, 0.3, 1.0))
    rack_share = rng.choice((0.0, 0.5, 1.0))
    # look-alike members share one rack (or none), so many leave the same shape behind
    racks = RACKS[:1] if look_alike else RACKS
    members = []
    for i in range(n_members):
        subs = frozenset(names) if same else frozenset(t for t in names if rng.random() < 0.6)
        static = f"i{rng.randint(0, 99):02d}-{i}" if rng.random() < static_share else None
        rack = rng.choice(racks) if rng.random() < rack_share else None
        members.append(Member(f"m{rng.randint(0, 99):02d}-{i}", subs, static, rack))
    spec = GroupSpec("g", tuple(members), topics)
    return _with_owners(rng, spec) if rng.random() < 0.5 else spec


def _with_owners(rng: random.Random, spec: GroupSpec) -> GroupSpec:
    """A previous assignment with churn: some partitions unowned, some claimed twice, mixed
    generations (what a group reports after members came and went)."""
    owned: dict[str, list[TopicPartition]] = {m.member_id: [] for m in spec.members}
    ids = list(owned)
    for t, meta in spec.topics.items():
        for p in range(meta.partition_count):
            if rng.random() < 0.85:
                owned[rng.choice(ids)].append((t, p))
            if rng.random() < 0.05:
                owned[rng.choice(ids)].append((t, p))
    generation = rng.randint(1, 9)
    members = tuple(
        Member(
            m.member_id,
            m.topics,
            m.group_instance_id,
            m.rack,
            tuple(dict.fromkeys(owned[m.member_id])),
            generation - (1 if rng.random() < 0.2 else 0),
        )
        for m in spec.members
    )
    return GroupSpec(spec.group_id, members, spec.topics)


def _best_max(spec: GroupSpec) -> int:
    return best_balance(spec).best_max


@pytest.mark.parametrize("seed", range(120))
@pytest.mark.parametrize("look_alike", [False, True])
def test_shortcuts_give_the_rows_of_the_full_replay(seed: int, look_alike: bool) -> None:
    rng = random.Random(seed)
    spec = random_group(rng, look_alike)
    lags = random_lags(rng, spec)
    plans = []
    for strategy in STRATEGIES:
        factory = resolve(strategy)[1]
        plans.append((strategy, factory, factory().rebalance(spec).assignment))
    fast = group_scenario_costs(spec, plans, lags=lags, best_max=_best_max)
    full = group_scenario_costs(spec, plans, lags=lags, best_max=_best_max, shortcuts=False)
    assert fast == full
    assert len(fast[0]) >= len(STRATEGIES)  # member_join and partition_growth always run


@pytest.mark.parametrize("seed", range(60))
def test_shortcuts_leave_the_same_groups_behind(seed: int) -> None:
    """Beyond the rows: each scenario ends in the same assignment and group."""
    rng = random.Random(seed)
    spec = random_group(rng, look_alike=seed % 2 == 0)
    for strategy in STRATEGIES:
        factory = resolve(strategy)[1]
        planned = factory().rebalance(spec).assignment
        fast, _ = run_scenarios(spec, strategy, factory, planned)
        full, _ = run_scenarios(spec, strategy, factory, planned, shortcuts=False)
        assert [c.scenario for c in fast] == [c.scenario for c in full]
        for a, b in zip(fast, full, strict=True):
            assert (a.rebalances, a.rounds, a.moved, a.paused, a.revoked, a.lag_moved) == (
                b.rebalances,
                b.rounds,
                b.moved,
                b.paused,
                b.revoked,
                b.lag_moved,
            ), (strategy, a.scenario)
            assert a.assignment == b.assignment, (strategy, a.scenario)
            assert [(m.member_id, m.topics) for m in a.members] == [
                (m.member_id, m.topics) for m in b.members
            ]
            assert a.topics == b.topics


class Counting(EagerAssignor):
    """An eager assignor that records the size of every group it is asked to assign."""

    name = "counting"

    def __init__(self, inner: Assignor, calls: list[int]) -> None:
        self.inner, self.calls = inner, calls
        self.stateless = inner.stateless  # declared as the assignor it counts

    def assign(self, spec: GroupSpec) -> Assignment:
        self.calls.append(len(spec.members))
        return self.inner.assign(spec)


@pytest.mark.parametrize("strategy", sorted(STATELESS))
def test_look_alike_leaves_run_one_rebalance_per_shape(strategy: str) -> None:
    """Twelve look-alike dynamic members: the rolling restart's twelve leaves are one
    assignor run (the rejoins reuse the plan), and the rows stay exact."""
    topics = {"t": TopicMetadata("t", 30)}
    spec = GroupSpec("g", tuple(Member(f"c{i:02d}", frozenset({"t"})) for i in range(12)), topics)
    inner = resolve(strategy)[1]
    calls: list[int] = []
    planned = inner().assign(spec)
    rows = []
    for shortcuts in (True, False):
        found, _ = run_scenarios(
            spec,
            strategy,
            lambda: Counting(inner(), calls),
            planned,
            scenarios=["rolling_restart"],
            shortcuts=shortcuts,
        )
        rows.append([(c.moved, c.paused, c.rounds, c.rebalances) for c in found])
    assert calls == [11] + [11, 12] * 12  # shortcuts, then the full replay
    assert rows[0] == rows[1]
    assert rows[0][0][0] > 0


def test_every_scenario_is_compared() -> None:
    """The random groups above reach every scenario (a guard on the generator)."""
    seen: set[str] = set()
    for seed in range(120):
        for look_alike in (False, True):
            rng = random.Random(seed)
            spec = random_group(rng, look_alike)
            factory = resolve("sticky")[1]
            found, _ = run_scenarios(spec, "sticky", factory, factory().assign(spec))
            seen.update(c.scenario for c in found)
    assert seen == set(SCENARIOS)


@pytest.mark.parametrize("seed", range(40))
def test_group_whatif_shortcuts_match_the_full_replay(seed: int) -> None:
    """Through `group_whatif`, as the job calls it: every strategy and `elected` planned
    (the elected plan standing for an unplanned strategy too), rows and recommendation."""
    rng = random.Random(seed)
    spec = random_group(rng, look_alike=seed % 3 == 0)
    voted = rng.choice((("range",), ("cooperative-sticky", "range"), ("roundrobin",)))
    spec = replace(
        spec, members=tuple(replace(m, assignment_strategies=voted) for m in spec.members)
    )
    planned = STRATEGIES if seed % 2 else ("sticky", "uniform", "balanced")
    catalog = StrategyCatalog.build([*planned, "elected"])
    plan = plan_group(spec, catalog, has_current_assignment=True, plan_elected=True)
    lags = random_lags(rng, spec)
    fast = group_whatif(spec, plan, catalog, WhatIfSettings(), lags=lags)
    full = group_whatif(spec, plan, catalog, WhatIfSettings(), lags=lags, shortcuts=False)
    assert fast.costs == full.costs
    assert fast.recommendation == full.recommendation
    assert fast.problems == full.problems
    assert fast.costs


def _shifted(spec: GroupSpec, by: int) -> GroupSpec:
    """The same group with every reported generation moved by `by` (their order kept)."""
    return replace(
        spec,
        members=tuple(
            replace(m, generation=None if m.generation is None else m.generation + by)
            for m in spec.members
        ),
    )


@pytest.mark.parametrize("seed", range(80))
def test_shared_sticky_targets_give_the_rows_of_each_strategy_alone(seed: int) -> None:
    """`sticky` and `cooperative-sticky` share their targets inside a group's what-if
    (`assignors.strategies.shared`): the rows are those of each strategy replayed on its own,
    outside any scope, with and without the other shortcuts."""
    rng = random.Random(seed)
    spec = random_group(rng, look_alike=seed % 3 == 0)
    lags = random_lags(rng, spec)
    plans = []
    alone = []
    for strategy in ("sticky", "cooperative-sticky"):
        factory = resolve(strategy)[1]
        planned = factory().rebalance(spec).assignment
        plans.append((strategy, factory, planned))
        for shortcuts in (True, False):
            costs, _ = run_scenarios(
                spec, strategy, factory, planned, lags=lags, shortcuts=shortcuts
            )
            alone.append((strategy, shortcuts, costs))
    together = group_scenario_costs(spec, plans, lags=lags, best_max=_best_max)
    full = group_scenario_costs(spec, plans, lags=lags, best_max=_best_max, shortcuts=False)
    assert together == full
    by_strategy = {s: [r for r in together[0] if r["strategy"] == s] for s, _, _ in plans}
    for strategy, _, costs in alone:
        rows = by_strategy[strategy]
        assert [(c.scenario, c.moved, c.paused, c.rounds, c.lag_moved) for c in costs] == [
            (
                r["scenario"],
                r["moved_partition_count"],
                r["paused_partition_count"],
                r["rounds"],
                r["lag_moved"] if lags is not None else 0,
            )
            for r in rows
        ]


@pytest.mark.parametrize("seed", range(150))
def test_a_shared_target_is_the_one_computed_afresh(seed: int) -> None:
    """Inside a scope a spec whose generations are in the same order (shifted) finds the
    target of the first: each assignor's result is the one it computes outside any scope."""
    rng = random.Random(seed)
    spec = _with_owners(rng, random_group(rng, look_alike=seed % 2 == 0))
    shifted = _shifted(spec, rng.randint(1, 5))
    for first, second in (
        (StickyAssignor, CooperativeStickyAssignor),
        (CooperativeStickyAssignor, StickyAssignor),
    ):
        expected = second().rebalance(shifted)
        with shared.sharing() as scope:
            first().rebalance(spec)
            got = second().rebalance(shifted)
            assert scope.entries  # the first one kept its target
        assert got == expected
