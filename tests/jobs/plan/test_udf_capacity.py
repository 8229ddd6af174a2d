"""The bucket function's `capacity` table in plain pandas: the oracle's side."""

from __future__ import annotations

import dataclasses

import pandas as pd
from helpers.oracle import split_tables

from assignors.inputs.validation import TopicStatus
from assignors.whatif.capacity import CAPACITY_COLUMNS, CapacitySettings, CapacityTarget
from jobs.plan.one_group import member_rows, plan_one, table_rows
from jobs.plan.udf import INPUT_COLUMNS, PHASES, PlanContext, plan_bucket
from jobs.settings.run import RunSettings
from jobs.tables.rows import KIND_CAPACITY, KIND_MEMBER, TABLE_OF

# The 4/1/1 example of docs/capacity.md: topics of 4, 1 and 1 partitions.
TOPICS = {"a": TopicStatus(4), "b": TopicStatus(1), "c": TopicStatus(1)}
STRATEGIES = ("range", "roundrobin", "cooperative-sticky")


def members() -> list[dict[str, object]]:
    return [
        *({"group_id": "g411", "member_id": f"c{i}", "topics": ["a", "b", "c"]} for i in range(2)),
        # a rejected group (two rows of one member id that differ): no capacity rows
        *({"group_id": "dup", "member_id": "x", "topics": t} for t in (["a"], ["a", "b"])),
    ]


def bucket() -> pd.DataFrame:
    frame = pd.DataFrame([{"kind": KIND_MEMBER, **r} for r in members()])
    return frame.reindex(columns=list(INPUT_COLUMNS))


DEFAULT = CapacitySettings()


def settings(capacity: CapacitySettings | None = DEFAULT) -> RunSettings:
    base = RunSettings.of(STRATEGIES, False, plan_elected=True)
    return dataclasses.replace(base, capacity=capacity)


def tables(capacity: CapacitySettings | None = DEFAULT) -> dict[str, pd.DataFrame]:
    return split_tables(plan_bucket(bucket(), TOPICS, PlanContext(settings(capacity))))


def test_the_table_has_the_cores_columns_and_kind() -> None:
    assert TABLE_OF[KIND_CAPACITY].name == "capacity"
    assert list(tables()["capacity"]) == [n for n, _, _ in CAPACITY_COLUMNS]


def test_one_row_per_planned_group_and_strategy_elected_included() -> None:
    rows = tables()["capacity"].to_dict("records")
    assert {r["group_id"] for r in rows} == {"g411"}  # none for the rejected `dup`
    by = {r["strategy"]: r for r in rows}
    assert set(by) == {*STRATEGIES, "elected"}
    assert (by["range"]["members"], by["range"]["active_members"]) == (2, 2)
    assert by["range"]["max_useful_members"] == 4
    assert by["roundrobin"]["max_useful_members"] == 6
    assert by["cooperative-sticky"]["max_useful_members"] == 6
    # members that vote for nothing elect Kafka's default, range: the elected row repeats it
    assert {**by["elected"], "strategy": "range"} == by["range"]
    assert all(pd.isna(r["target"]) and pd.isna(r["members_for_target"]) for r in rows)


def test_a_target_fills_members_for_target() -> None:
    target = CapacityTarget.parse("max_partitions_per_member:3")
    by = {r["strategy"]: r for r in tables(CapacitySettings(target))["capacity"].to_dict("records")}
    assert (by["range"]["members_for_target"], by["roundrobin"]["members_for_target"]) == (4, 2)
    assert by["range"]["target"] == "max_partitions_per_member:3"


def test_capacity_off_writes_no_rows_and_leaves_the_other_tables_alone() -> None:
    on, off = tables(), tables(None)
    assert off["capacity"].empty
    for name in on:
        if name != "capacity":
            pd.testing.assert_frame_equal(on[name], off[name], check_dtype=False)


def test_the_one_group_rows_equal_the_buckets() -> None:
    result = plan_one(
        "g411", member_rows(members()[:2]), (), [], TOPICS, settings()
    )  # fmt: skip
    mine = table_rows(result)["capacity"]
    job = tables()["capacity"].to_dict("records")
    assert sorted(mine, key=lambda r: r["strategy"]) == sorted(job, key=lambda r: r["strategy"])


def test_the_phase_clock_counts_capacity_on_its_own() -> None:
    assert "capacity" in PHASES
