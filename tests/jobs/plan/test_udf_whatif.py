"""The bucket function's what-if tables in plain pandas: the oracle's side."""

from __future__ import annotations

import dataclasses

import pandas as pd
from helpers.oracle import split_tables

from assignors.inputs.validation import TopicStatus
from assignors.whatif.group import WhatIfSettings
from assignors.whatif.recommend import RECOMMENDATION_COLUMNS
from assignors.whatif.simulation import REBALANCE_COST_COLUMNS
from jobs.plan.udf import INPUT_COLUMNS, PlanContext, plan_bucket
from jobs.settings.run import RunSettings
from jobs.tables.rows import KIND_MEMBER, KIND_REBALANCE_COSTS, KIND_RECOMMENDATION, TABLE_OF

TOPICS = {"t": TopicStatus(6), "u": TopicStatus(2)}
CLASSIC = ("range", "roundrobin", "sticky", "cooperative-sticky")


def bucket() -> pd.DataFrame:
    rows = [
        # the 6-partition, 3-member group, and a rejected one (two members share an id)
        *({"group_id": "six", "member_id": c, "topics": ["t"]} for c in ("c0", "c1", "c2")),
        # (different rows: identical ones are one member counted once, DUPLICATE_SUBSCRIPTION)
        *({"group_id": "dup", "member_id": "x", "topics": t} for t in (["t"], ["t", "u"])),
        {"group_id": "solo", "member_id": "s", "topics": ["t", "u"]},
    ]
    frame = pd.DataFrame([{"kind": KIND_MEMBER, **r} for r in rows])
    return frame.reindex(columns=list(INPUT_COLUMNS))


def tables(**whatif: object) -> dict[str, pd.DataFrame]:
    settings = RunSettings.of(CLASSIC, False, plan_elected=True)
    if whatif:
        settings = dataclasses.replace(settings, whatif=WhatIfSettings(**whatif))  # type: ignore[arg-type]
    ctx = PlanContext(settings)
    return split_tables(plan_bucket(bucket(), TOPICS, ctx))


def test_both_tables_with_the_contract_columns() -> None:
    out = tables()
    assert TABLE_OF[KIND_REBALANCE_COSTS].name == "rebalance_costs"
    assert TABLE_OF[KIND_RECOMMENDATION].name == "recommendations"
    assert list(out["rebalance_costs"]) == [n for n, _, _ in REBALANCE_COST_COLUMNS]
    # the core's columns, then the migration's next step (assignors.migration.advice)
    assert list(out["recommendations"]) == [
        *(n for n, _, _ in RECOMMENDATION_COLUMNS),
        "migration_next_step",
    ]


def test_one_recommendation_per_planned_group_only() -> None:
    out = tables()
    planned = set(out["balance_metrics"]["group_id"])
    assert planned == {"six", "solo"}
    assert sorted(out["recommendations"]["group_id"]) == sorted(planned)
    assert set(out["rebalance_costs"]["group_id"]) == planned  # none for `dup`
    # no `elected` rows: it repeats one of the planned strategies
    assert set(out["rebalance_costs"]["strategy"]) == set(CLASSIC)


def test_the_issue_10_fact_through_the_bucket() -> None:
    costs = tables()["rebalance_costs"].set_index(["group_id", "strategy", "scenario"])
    join = costs.loc[("six", "cooperative-sticky", "member_join")]
    assert (join["moved_partition_count"], join["paused_partition_count"], join["rounds"]) == (
        1,
        1,
        2,
    )
    assert costs.loc[("six", "range", "member_join"), "paused_partition_count"] == 6


def test_warnings_go_to_rejected_and_limits_apply() -> None:
    out = tables(max_members=2)
    assert set(out["rebalance_costs"]["group_id"]) == {"solo"}  # `six` has 3 members
    rejected = out["rejected"].set_index("reason")
    assert rejected.loc["SCENARIO_SKIPPED", "group_id"] == "six"
    assert rejected.loc["SCENARIO_SKIPPED", "severity"] == "warning"
    # one member: member_leave has nothing to simulate, skipped without a warning
    assert "SCENARIO_NOT_APPLICABLE" not in rejected.index
    assert "member_leave" not in set(out["rebalance_costs"]["scenario"])
    assert len(out["recommendations"]) == 2


def test_no_scenarios_still_recommends() -> None:
    out = tables(scenarios=())
    assert out["rebalance_costs"].empty
    assert list(out["rebalance_costs"]) == [n for n, _, _ in REBALANCE_COST_COLUMNS]
    assert sorted(out["recommendations"]["group_id"]) == ["six", "solo"]


def test_costs_payload_round_trips_nulls_and_keeps_a_comma_in_the_strategy() -> None:
    """`rebalance_costs` rows travel as delimited values; the strategy goes last, so even a
    name with a comma (no built-in or plugin has one) comes back whole."""
    from helpers.oracle import costs_values

    from jobs.tables.rows import COSTS_PAYLOAD_COLUMNS, costs_payload

    row = {
        "group_id": "g",
        "strategy": "odd,name",
        "scenario": "member_join",
        "rebalances": 1,
        "rounds": 2,
        "moved_partition_count": 3,
        "paused_partition_count": 0,
        "lag_moved": None,
        "max_partitions_per_member_after": 4,
        "partition_spread_after": 1,
        "balance_gap_after": None,
    }
    payload = costs_payload(row)
    assert payload == "member_join,1,2,3,0,,4,1,,odd,name"
    assert costs_values(payload) == {
        n: None if row[n] is None else str(row[n]) for n in COSTS_PAYLOAD_COLUMNS
    }
