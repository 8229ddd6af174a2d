"""One group's what-if rows and recommendation from its plans (docs/whatif.md)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.assignors import Flaky

from assignors.catalog.catalog import StrategyCatalog
from assignors.catalog.registry import resolve
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.planner import plan_group
from assignors.problems import WARNING, Reason
from assignors.whatif.group import WhatIfSettings, group_whatif
from assignors.whatif.recommend import RECOMMENDATION_COLUMNS
from assignors.whatif.simulation import REBALANCE_COST_COLUMNS, SCENARIOS

CLASSIC = ("range", "roundrobin", "sticky", "cooperative-sticky")


def six(
    members: tuple[str, ...] = ("c0", "c1", "c2"), votes: tuple[str, ...] = ("range",)
) -> GroupSpec:
    """The worked example's group: one topic of 6 partitions, dynamic members."""
    return GroupSpec(
        "g",
        tuple(Member(c, frozenset({"t"}), assignment_strategies=votes) for c in members),
        {"t": TopicMetadata("t", 6)},
    )


def run(spec: GroupSpec, names: tuple[str, ...], **settings: Any) -> Any:
    catalog = StrategyCatalog.build(names)
    plan = plan_group(spec, catalog, has_current_assignment=False)
    return group_whatif(spec, plan, catalog, WhatIfSettings(**settings))


def costs(out: Any) -> dict[tuple[str, str], dict[str, Any]]:
    return {(str(r["strategy"]), str(r["scenario"])): r for r in out.costs}


def test_issue_10_member_join_facts() -> None:
    out = run(six(), CLASSIC)
    rows = costs(out)
    figures = {
        s: (
            rows[(s, "member_join")]["moved_partition_count"],
            rows[(s, "member_join")]["paused_partition_count"],
            rows[(s, "member_join")]["rounds"],
        )
        for s in CLASSIC
    }
    assert figures == {
        "range": (1, 6, 1),
        "roundrobin": (3, 6, 1),
        "sticky": (1, 6, 1),
        "cooperative-sticky": (1, 1, 2),
    }


def test_issue_10_member_leave_and_rolling_restart_facts() -> None:
    rows = costs(run(six(), ("range", "cooperative-sticky")))
    leave = rows[("range", "member_leave")]
    assert (leave["moved_partition_count"], leave["paused_partition_count"]) == (3, 6)
    coop = rows[("cooperative-sticky", "member_leave")]
    assert (coop["moved_partition_count"], coop["paused_partition_count"], coop["rounds"]) == (
        2,
        2,
        1,
    )
    restart = rows[("range", "rolling_restart")]
    assert (restart["rebalances"], restart["paused_partition_count"]) == (6, 36)


def test_rows_have_the_contract_columns_and_the_exact_gap() -> None:
    out = run(six(), CLASSIC)
    names = [n for n, _, _ in REBALANCE_COST_COLUMNS]
    assert all(list(r) == names for r in out.costs)
    assert list(out.recommendation) == [n for n, _, _ in RECOMMENDATION_COLUMNS]
    join = costs(out)[("range", "member_join")]
    # 6 partitions over 4 members: 2 at best, and range gives c0 and c1 two each
    assert join["max_partitions_per_member_after"] == 2
    assert join["balance_gap_after"] == 0
    assert join["lag_moved"] is None  # no offsets
    # subscription_change changes nothing when every member subscribes alike: no row, and no
    # warning either
    assert {s for _, s in costs(out)} == set(SCENARIOS) - {"subscription_change"}
    assert out.problems == []


def test_configured_scenarios_only_and_none_at_all() -> None:
    out = run(six(), CLASSIC, scenarios=("rolling_restart",))
    assert {s for _, s in costs(out)} == {"rolling_restart"}
    nothing = run(six(), CLASSIC, scenarios=())
    assert nothing.costs == []
    assert nothing.problems == []
    # balance alone decides; all four are equally balanced, so the current one stays
    assert nothing.recommendation["recommended_strategy"] == "range"
    assert nothing.recommendation["current_restart_paused"] is None


def test_recommendation_prefers_fewer_paused_partitions() -> None:
    out = run(six(), CLASSIC)
    rec = out.recommendation
    assert rec["current_strategy"] == "range"
    assert rec["recommended_strategy"] == "cooperative-sticky"
    restart = costs(out)[("cooperative-sticky", "rolling_restart")]["paused_partition_count"]
    assert rec["recommended_restart_paused"] == restart
    assert rec["current_restart_paused"] == 36
    assert f"pauses {restart} partitions instead of 36" in str(rec["reason"])


def test_recommend_from_limits_the_candidates() -> None:
    out = run(six(), CLASSIC, recommend_from=("range", "roundrobin"))
    assert out.recommendation["recommended_strategy"] in {"range", "roundrobin"}
    assert {str(r["strategy"]) for r in out.costs} == set(CLASSIC)  # costs for every strategy


def test_elected_only_planned_as_elected_carries_its_real_name() -> None:
    spec = six(votes=("cooperative-sticky",))
    out = run(spec, ("range", "elected"))
    strategies = {str(r["strategy"]) for r in out.costs}
    assert strategies == {"range", "cooperative-sticky"}  # never `elected`
    assert out.recommendation["current_strategy"] == "cooperative-sticky"
    assert out.recommendation["recommended_strategy"] == "cooperative-sticky"
    # the elected plan stands for its strategy: the same figures as planning it directly
    direct = costs(run(spec, ("range", "cooperative-sticky")))
    assert costs(out) == direct


def test_elected_planned_anyway_is_not_repeated() -> None:
    out = run(six(), ("range", "sticky", "elected"))
    assert sorted(str(r["strategy"]) for r in out.costs if r["scenario"] == "member_join") == [
        "range",
        "sticky",
    ]


def test_groups_above_the_limits_get_scenario_skipped_and_no_rows() -> None:
    members = tuple(f"c{i}" for i in range(5))
    big = run(six(members), CLASSIC, max_members=4)
    assert big.costs == []
    assert [(p.reason, p.severity) for p in big.problems] == [(Reason.SCENARIO_SKIPPED, WARNING)]
    assert "scenario_max_members (4)" in big.problems[0].detail
    assert big.recommendation["recommended_strategy"] is not None  # balance still compared
    wide = run(six(), CLASSIC, max_partitions=5)
    assert wide.costs == []
    assert [p.reason for p in wide.problems] == [Reason.SCENARIO_SKIPPED]
    assert "6 partitions is more than scenario_max_partitions (5)" in wide.problems[0].detail
    assert run(six(), CLASSIC, max_members=3, max_partitions=6).costs != []  # limits inclusive


def test_a_single_member_group_skips_member_leave_silently() -> None:
    out = run(six(("c0",)), CLASSIC)
    assert out.problems == []
    assert {s for _, s in costs(out)} == {"member_join", "partition_growth", "rolling_restart"}


def test_a_group_without_existing_topics_warns_for_partition_growth() -> None:
    spec = GroupSpec(
        "g",
        tuple(Member(c, frozenset({"gone"})) for c in ("c0", "c1")),
        {"t": TopicMetadata("t", 6)},
    )
    out = run(spec, CLASSIC)
    assert [p.reason for p in out.problems] == [Reason.SCENARIO_NOT_APPLICABLE]
    assert "partition_growth" in out.problems[0].detail
    assert "partition_growth" not in {s for _, s in costs(out)}


def test_a_plugin_failing_in_a_scenario_names_its_strategy() -> None:
    spec = six()
    catalog = StrategyCatalog.from_assignors([("range", resolve("range")[1]()), ("flaky", Flaky())])
    plan = plan_group(spec, catalog, has_current_assignment=False)
    out = group_whatif(spec, plan, catalog, WhatIfSettings())
    failed = [p for p in out.problems if p.reason == Reason.SCENARIO_FAILED]
    assert failed
    assert {p.strategy for p in failed} == {"flaky"}
    assert {str(r["strategy"]) for r in out.costs} == {"range", "flaky"}  # partition_growth ran


def test_load_decides_when_metrics_carry_an_imbalance() -> None:
    spec = six()
    catalog = StrategyCatalog.build(("range", "cooperative-sticky"))
    plan = plan_group(spec, catalog, has_current_assignment=False)
    # as the load wiring would fill them: range evenly loaded, cooperative-sticky not
    for sp in plan.plans:
        sp.metrics["lag_imbalance"] = 1.0 if sp.strategy == "range" else 2.5
    out = group_whatif(spec, plan, catalog, WhatIfSettings())
    rec = out.recommendation
    assert rec["recommended_strategy"] == "range"
    assert (rec["current_load_imbalance"], rec["recommended_load_imbalance"]) == (1.0, 1.0)
    # without the load columns cooperative-sticky wins on paused partitions
    plain = run(spec, ("range", "cooperative-sticky"))
    assert plain.recommendation["recommended_strategy"] == "cooperative-sticky"


def test_lags_fill_lag_moved() -> None:
    spec = six()
    catalog = StrategyCatalog.build(("range",))
    plan = plan_group(spec, catalog, has_current_assignment=False)
    lags = {("t", p): 10 * (p + 1) for p in range(6)} | {("t", 5): None}
    out = group_whatif(spec, plan, catalog, WhatIfSettings(scenarios=("member_leave",)), lags=lags)
    # c0 leaves: p0 (lag 10), p1 (20) go to c1 and p3 (40) to c2
    assert [r["lag_moved"] for r in out.costs] == [70]


def test_unknown_scenario_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown scenario 'member_crash'"):
        WhatIfSettings(scenarios=("member_crash",))


def test_balanced_by_weight_keeps_its_loads_in_the_scenarios() -> None:
    # One topic of 4 partitions, t0 as heavy as the other three together. By weight,
    # `balanced` gives t0 to one member alone; the scenarios must rebalance the same way
    # (they rebuild the assignor from the plan, not from the count-based catalog default).
    from assignors.analysis.bounds import best_balance
    from assignors.analysis.load import UNIT
    from assignors.planner import GroupLoad
    from assignors.strategies.balanced import BalancedAssignor
    from assignors.whatif.simulation import scenario_costs

    spec = GroupSpec(
        "g",
        tuple(Member(c, frozenset({"t"})) for c in ("c0", "c1", "c2")),
        {"t": TopicMetadata("t", 4)},
    )
    weights = {("t", 0): 3 * UNIT, ("t", 1): UNIT, ("t", 2): UNIT, ("t", 3): UNIT}
    catalog = StrategyCatalog.build(("balanced",))
    plan = plan_group(spec, catalog, False, load=GroupLoad(None, weights, "weight"))
    (planned,) = plan.plans
    assert [len(tps) for tps in planned.assignment.values()] == [1, 2, 1]
    out = group_whatif(spec, plan, catalog, WhatIfSettings(scenarios=("member_join",)))
    (row,) = out.costs

    def rows_with(factory: Any) -> list[dict[str, Any]]:
        found, _ = scenario_costs(
            spec,
            "balanced",
            factory,
            planned.assignment,
            scenarios=("member_join",),
            best_max=lambda s: best_balance(s).best_max,
        )
        return [dict(r) for r in found]

    assert [dict(row)] == rows_with(lambda: BalancedAssignor(weights))
    assert [dict(row)] != rows_with(BalancedAssignor)  # counts alone rebalance otherwise
