"""What-if rebalances (`assignors.whatif.simulation`): hand-checked facts and properties.

The facts use one topic of 6 partitions and dynamic members c0, c1, c2; every strategy starts
from its own plan (range: c0 p0,p1; c1 p2,p3; c2 p4,p5; roundrobin: c0 p0,p3; c1 p1,p4;
c2 p2,p5).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import pytest
from helpers.assignors import Flaky

from assignors.analysis.metrics import is_valid
from assignors.catalog.registry import Assignor, resolve
from assignors.model import (
    Assignment,
    GroupSpec,
    Member,
    TopicMetadata,
    TopicPartition,
)
from assignors.problems import WARNING, Problem, Reason
from assignors.protocol import is_cooperative
from assignors.whatif.simulation import (
    REBALANCE_COST_COLUMNS,
    SCENARIOS,
    CostRow,
    _member_movement,
    _movement,
    _owner_map,
    _State,
    check_scenarios,
    group_scenario_costs,
    run_scenarios,
    scenario_costs,
)

BUILTINS = ("range", "roundrobin", "sticky", "cooperative-sticky", "uniform")
# Declared by each assignor (`assignors.protocol`): cooperative-sticky, uniform, balanced.
COOPERATIVE = frozenset(s for s in (*BUILTINS, "balanced") if is_cooperative(resolve(s)[1]()))
COLUMNS = [name for name, _, _ in REBALANCE_COST_COLUMNS]


def group(
    members: dict[str, set[str]] | list[str],
    topics: dict[str, int],
    static: dict[str, str] | None = None,
) -> GroupSpec:
    subs = members if isinstance(members, dict) else {m: set(topics) for m in members}
    inst = static or {}
    ms = tuple(Member(m, frozenset(t), inst.get(m)) for m, t in subs.items())
    return GroupSpec("g", ms, {t: TopicMetadata(t, n) for t, n in topics.items()})


def plan(spec: GroupSpec, strategy: str) -> Assignment:
    return resolve(strategy)[1]().rebalance(spec).assignment


def costs(
    spec: GroupSpec, strategy: str, **kwargs: Any
) -> tuple[dict[str, CostRow], list[Problem]]:
    factory = resolve(strategy)[1]
    rows, problems = scenario_costs(spec, strategy, factory, plan(spec, strategy), **kwargs)
    assert all(list(r) == COLUMNS for r in rows)
    return {str(r["scenario"]): r for r in rows}, problems


SIX = group(["c0", "c1", "c2"], {"t": 6})


def figures(row: CostRow) -> tuple[object, ...]:
    return (
        row["rebalances"],
        row["rounds"],
        row["moved_partition_count"],
        row["paused_partition_count"],
    )


# --------------------------------------------------------------------- hand-checked facts


@pytest.mark.parametrize(
    ("strategy", "moved", "paused", "rounds"),
    [
        ("range", 1, 6, 1),  # p5 to c3
        ("roundrobin", 3, 6, 1),  # c0: p0,p4; c1: p1,p5; c2: p2; c3: p3
        ("sticky", 1, 6, 1),
        ("cooperative-sticky", 1, 1, 2),
    ],
)
def test_member_join_facts(strategy: str, moved: int, paused: int, rounds: int) -> None:
    rows, _ = costs(SIX, strategy, scenarios=["member_join"])
    assert figures(rows["member_join"]) == (1, rounds, moved, paused)
    assert rows["member_join"]["max_partitions_per_member_after"] == 2
    assert rows["member_join"]["partition_spread_after"] == 1


def test_member_join_roundrobin_result() -> None:
    (cost,), _ = run_scenarios(
        SIX,
        "roundrobin",
        resolve("roundrobin")[1],
        plan(SIX, "roundrobin"),
        scenarios=["member_join"],
    )
    assert cost.assignment == {
        "c0": [("t", 0), ("t", 4)],
        "c1": [("t", 1), ("t", 5)],
        "c2": [("t", 2)],
        "c2-joined": [("t", 3)],
    }


def test_member_leave_range_moves_three() -> None:
    rows, _ = costs(SIX, "range", scenarios=["member_leave"])
    assert figures(rows["member_leave"]) == (1, 1, 3, 6)
    (cost,), _ = run_scenarios(
        SIX, "range", resolve("range")[1], plan(SIX, "range"), scenarios=["member_leave"]
    )
    # c0 (all hold 2: the first in Java order) leaves; p0, p1 go to c1, p3 to c2.
    assert cost.assignment == {
        "c1": [("t", 0), ("t", 1), ("t", 2)],
        "c2": [("t", 3), ("t", 4), ("t", 5)],
    }


def test_member_leave_cooperative_sticky_revokes_nothing() -> None:
    spec, strategy = SIX, "cooperative-sticky"
    (cost,), _ = run_scenarios(
        spec, strategy, resolve(strategy)[1], plan(spec, strategy), scenarios=["member_leave"]
    )
    assert (cost.rebalances, cost.rounds, cost.moved, cost.paused, cost.revoked) == (1, 1, 2, 2, 0)
    # c0's two partitions, one to each of the others.
    assert sorted(len(tps) for tps in cost.assignment.values()) == [3, 3]


def test_rolling_restart_dynamic_range() -> None:
    rows, _ = costs(SIX, "range", scenarios=["rolling_restart"])
    row = rows["rolling_restart"]
    assert (row["rebalances"], row["paused_partition_count"]) == (6, 36)
    assert row["rounds"] == 6
    assert row["max_partitions_per_member_after"] == 2


def test_rolling_restart_static_members_cost_nothing() -> None:
    spec = group(["c0", "c1", "c2"], {"t": 6}, static={"c0": "i0", "c1": "i1", "c2": "i2"})
    for strategy in BUILTINS:
        rows, _ = costs(spec, strategy, scenarios=["rolling_restart"])
        assert figures(rows["rolling_restart"]) == (0, 0, 0, 0)


def test_rolling_restart_mixed_group_counts_dynamic_members_only() -> None:
    spec = group(["c0", "c1", "c2"], {"t": 6}, static={"c1": "i1"})
    rows, _ = costs(spec, "range", scenarios=["rolling_restart"])
    assert (
        rows["rolling_restart"]["rebalances"],
        rows["rolling_restart"]["paused_partition_count"],
    ) == (4, 24)


def test_rolling_restart_cooperative_pauses_only_what_moves() -> None:
    rows, _ = costs(SIX, "cooperative-sticky", scenarios=["rolling_restart"])
    # Each member: its 2 partitions pause when it leaves; 2 are revoked for it when it rejoins
    # (a second round each time).
    assert figures(rows["rolling_restart"]) == (6, 9, 12, 12)


def test_rolling_restart_of_a_lone_member() -> None:
    spec = group(["c0"], {"t": 4})
    rows, problems = costs(spec, "range", scenarios=["rolling_restart"])
    # Leaving empties the group (no round; all 4 stop), rejoining takes them all back.
    assert figures(rows["rolling_restart"]) == (2, 1, 0, 4)
    assert problems == []


def test_partition_growth_range_moves_co_partitioned_partitions() -> None:
    spec = group(["c0", "c1", "c2"], {"a": 6, "b": 6})
    rows, _ = costs(spec, "range", scenarios=["partition_growth"])
    # 7 partitions over 3 members: c0 p0-p2, c1 p3-p4, c2 p5-p6, so p2 and p4 of each topic move.
    assert figures(rows["partition_growth"]) == (1, 1, 4, 12)
    for strategy in ("sticky", "cooperative-sticky", "uniform"):
        rows, _ = costs(spec, strategy, scenarios=["partition_growth"])
        assert rows["partition_growth"]["moved_partition_count"] == 0
    assert costs(spec, "cooperative-sticky")[0]["partition_growth"]["paused_partition_count"] == 0


def test_subscription_change_narrowest_member_takes_every_topic() -> None:
    spec = group({"c0": {"a", "b"}, "c1": {"a"}, "c2": {"a", "b"}}, {"a": 2, "b": 4})
    (cost,), problems = run_scenarios(
        spec,
        "sticky",
        resolve("sticky")[1],
        plan(spec, "sticky"),
        scenarios=["subscription_change"],
    )
    assert problems == []
    assert cost.rebalances == 1
    assert next(m for m in cost.members if m.member_id == "c1").topics == {"a", "b"}
    assert is_valid(cost.spec("g"), cost.assignment)
    assert max(len(tps) for tps in cost.assignment.values()) == 2


def test_lag_moved_sums_the_lag_of_moved_partitions() -> None:
    lags: dict[TopicPartition, int] = {("t", p): 10 * (p + 1) for p in range(6)}
    rows, _ = costs(SIX, "range", scenarios=["member_leave", "member_join"], lags=lags)
    assert rows["member_leave"]["lag_moved"] == 10 + 20 + 40  # p0, p1, p3
    assert rows["member_join"]["lag_moved"] == 60  # p5
    rows, _ = costs(SIX, "range", scenarios=["member_join"])
    assert rows["member_join"]["lag_moved"] is None


def test_balance_gap_after_uses_the_group_the_trigger_leaves() -> None:
    seen: list[tuple[int, int]] = []

    def best_max(spec: GroupSpec) -> int:
        total = sum(spec.partition_count(t) for t in spec.subscribed_topics())
        seen.append((len(spec.members), total))
        return math.ceil(total / len(spec.members))

    rows, _ = costs(SIX, "range", best_max=best_max)
    assert {s: r["balance_gap_after"] for s, r in rows.items()} == {
        "member_leave": 0,  # 3 each
        "member_join": 0,  # 2,2,1,1
        "partition_growth": 0,  # 3,2,2
        "rolling_restart": 0,
    }
    assert sorted(set(seen)) == [(2, 6), (3, 6), (3, 7), (4, 6)]
    assert all(r["balance_gap_after"] is None for r in costs(SIX, "range")[0].values())


# ------------------------------------------------------------------------- bad input


def test_unknown_scenario_names_the_culprit_and_the_known_ones() -> None:
    with pytest.raises(ValueError, match="'member_crash'") as err:
        check_scenarios(["member_join", "member_crash"])
    assert all(s in str(err.value) for s in SCENARIOS)
    assert check_scenarios(list(reversed(SCENARIOS))) == SCENARIOS
    with pytest.raises(ValueError, match="nope"):
        costs(SIX, "range", scenarios=["nope"])


def test_groups_above_the_limit_are_skipped_with_a_warning() -> None:
    rows, problems = costs(SIX, "range", max_members=2)
    assert rows == {}
    assert [(p.reason, p.severity) for p in problems] == [(Reason.SCENARIO_SKIPPED, WARNING)]
    assert "3 members" in problems[0].detail


def test_scenarios_a_group_cannot_run_give_no_row_and_one_warning() -> None:
    lone = group(["c0"], {"t": 3})
    rows, problems = costs(lone, "sticky")
    assert sorted(rows) == ["member_join", "partition_growth", "rolling_restart"]
    (problem,) = problems
    assert problem.reason == Reason.SCENARIO_NOT_APPLICABLE
    assert "member_leave" in problem.detail
    assert "subscription_change" in problem.detail


def test_empty_group_and_group_without_topics() -> None:
    empty = GroupSpec("g", (), {"t": TopicMetadata("t", 3)})
    rows, problems = scenario_costs(empty, "range", resolve("range")[1], {})
    assert rows == []
    assert [p.reason for p in problems] == [Reason.SCENARIO_NOT_APPLICABLE]
    nothing = group({"c0": set(), "c1": {"missing"}}, {})
    rows2, problems2 = costs(nothing, "cooperative-sticky")
    assert "partition_growth" not in rows2
    assert rows2["member_join"]["paused_partition_count"] == 0
    assert len(problems2) == 1


def test_an_assignor_failing_in_a_scenario_is_a_warning() -> None:
    rows, problems = scenario_costs(SIX, "flaky", Flaky, plan(SIX, "range"))
    assert [r["scenario"] for r in rows] == ["partition_growth"]
    assert [p.reason for p in problems] == [
        Reason.SCENARIO_NOT_APPLICABLE,
        Reason.SCENARIO_FAILED,
        Reason.SCENARIO_FAILED,
        Reason.SCENARIO_FAILED,
    ]
    assert "boom" in problems[1].detail
    assert "'flaky'" in problems[1].detail


def test_group_driver_reports_group_warnings_once() -> None:
    plans = [(s, resolve(s)[1], plan(SIX, s)) for s in BUILTINS]
    rows, problems = group_scenario_costs(SIX, plans)
    assert len(rows) == 4 * len(BUILTINS)
    assert [p.reason for p in problems] == [Reason.SCENARIO_NOT_APPLICABLE]
    rows, problems = group_scenario_costs(SIX, plans, max_members=1)
    assert rows == []
    assert [p.reason for p in problems] == [Reason.SCENARIO_SKIPPED]


# ------------------------------------------------------------------------ properties

SEEDS = range(150)


def random_group(rng: random.Random) -> GroupSpec:
    names = [f"t{i}" for i in range(rng.randint(1, 3))]
    topics = {t: TopicMetadata(t, rng.randint(1, 12)) for t in names}
    n = rng.randint(1, 6)
    same = rng.random() < 0.6
    members = []
    for i in range(n):
        subs = frozenset(names) if same else frozenset(t for t in names if rng.random() < 0.6)
        static = f"i{rng.randint(0, 99):02d}-{i}" if rng.random() < 0.25 else None
        members.append(Member(f"m{rng.randint(0, 99):02d}-{i}", subs, static))
    return GroupSpec("g", tuple(members), topics)


def _expected_rebalances(spec: GroupSpec, scenario: str) -> int:
    if scenario == "rolling_restart":
        return 2 * sum(1 for m in spec.members if not m.is_static)
    return 1


@pytest.mark.parametrize("seed", SEEDS)
def test_scenario_properties(seed: int) -> None:
    rng = random.Random(seed)
    spec = random_group(rng)
    lags = {
        (t, p): rng.randint(0, 50)
        for t in spec.topics
        for p in range(spec.topics[t].partition_count)
    }
    paused: dict[str, dict[str, int]] = {}
    for strategy in BUILTINS:
        factory: Callable[[], Assignor] = resolve(strategy)[1]
        found, _ = run_scenarios(spec, strategy, factory, plan(spec, strategy), lags=lags)
        for cost in found:
            final = cost.spec("g")
            assert is_valid(final, cost.assignment), (strategy, cost.scenario)
            assert cost.rebalances == _expected_rebalances(spec, cost.scenario)
            assert 0 <= cost.revoked <= cost.paused
            assert (
                cost.moved <= cost.paused
                or strategy not in COOPERATIVE
                or cost.scenario == "partition_growth"
            )
            assert cost.lag_moved <= sum(lags.values()) * max(cost.rebalances, 1)
        paused[strategy] = {c.scenario: c.paused for c in found}
    for strategy in COOPERATIVE & set(BUILTINS):
        for scenario, n in paused[strategy].items():
            assert n <= paused["sticky"][scenario], (strategy, scenario)


@pytest.mark.parametrize("seed", range(60))
def test_stateless_shortcut_matches_full_simulation(seed: int) -> None:
    spec = random_group(random.Random(seed))
    for strategy in ("range", "roundrobin"):
        factory = resolve(strategy)[1]
        planned = plan(spec, strategy)
        fast, _ = run_scenarios(spec, strategy, factory, planned)
        slow, _ = run_scenarios(spec, strategy, factory, planned, stateless=False)
        assert [
            (c.scenario, c.rebalances, c.rounds, c.moved, c.paused, c.assignment) for c in fast
        ] == [(c.scenario, c.rebalances, c.rounds, c.moved, c.paused, c.assignment) for c in slow]


def test_movement_counts_kept_moved_and_the_lag_of_what_changed_owner() -> None:
    before = {("t", 0): "a", ("t", 1): "a", ("t", 2): "b"}
    after = {("t", 0): "a", ("t", 1): "b", ("t", 2): "b", ("t", 3): "c"}  # t-3 is new
    lags = {("t", 0): 1, ("t", 1): 10, ("t", 2): 100, ("t", 3): 1000}
    # t-1 moved a -> b; a new partition counts in lag_moved once something moved
    assert _movement(after, before, lags) == (2, 1, 10 + 1000)
    assert _movement(after, before, None) == (2, 1, 0)
    # nothing moved: a new partition alone is no moved lag
    grown = {**before, ("t", 3): "c"}
    assert _movement(grown, before, lags) == (3, 0, 0)
    # a partition that left the assignment is neither kept nor moved
    assert _movement({("t", 0): "b"}, before, lags) == (0, 1, 1)


def _random_assignment(rng: random.Random, members: list[str], parts: int) -> Assignment:
    """Each of `parts` partitions (some left out) to one member, in a shuffled order."""
    out: Assignment = {m: [] for m in members}
    tps = [("t", p) for p in range(parts)]
    rng.shuffle(tps)
    for tp in tps:
        if rng.random() < 0.9:
            out[rng.choice(members)].append(tp)
    return out


@pytest.mark.parametrize("seed", range(200))
def test_member_movement_is_the_movement_of_the_owner_maps(seed: int) -> None:
    """The simulation counts movement member by member: the same as on owner maps, with
    members leaving, joining and keeping their list, and partitions added or dropped."""
    rng = random.Random(seed)
    names = [f"m{i}" for i in range(rng.randint(1, 6))]
    before = _random_assignment(rng, names, rng.randint(0, 12))
    later = [m for m in names if rng.random() < 0.8] + ["new"] * rng.randint(0, 1)
    after = _random_assignment(rng, later or ["new"], rng.randint(0, 14))
    for m in later:  # some members keep exactly what they had
        if m in before and rng.random() < 0.4:
            after[m] = list(before[m])
    # one owner per partition, as every assignment has: the first claim stays
    seen: set[TopicPartition] = set()
    for m, tps in after.items():
        after[m] = [tp for tp in tps if tp not in seen]
        seen.update(after[m])
    lags = {("t", p): rng.randint(0, 100) for p in range(14)} if rng.random() < 0.7 else None
    state = _State((), {}, before, 1)
    expected = _movement(_owner_map(after), _owner_map(before), lags)
    assert _member_movement(after, state, lags) == expected
    assert state.count == len(_owner_map(before))
