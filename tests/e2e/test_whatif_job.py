"""What-if rebalances and recommendations through the job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.estate import member, write_estate

from assignors.whatif.recommend import RECOMMENDATION_COLUMNS
from assignors.whatif.simulation import REBALANCE_COST_COLUMNS
from jobs.plan.summary import format_summary
from jobs.plan_assignments import main, run
from jobs.settings.config import PlannerConfig
from jobs.tables.schemas import REBALANCE_COSTS_FIELDS, RECOMMENDATIONS_FIELDS, struct

pytestmark = pytest.mark.e2e
CLASSIC = ("range", "roundrobin", "sticky", "cooperative-sticky")


def estate(root: Path) -> Path:
    return write_estate(
        root,
        {"t": 6, "u": 4},
        [
            # the worked example's group: one topic of 6 partitions, dynamic members c0, c1, c2
            *(member("six", f"c{i}", ["t"]) for i in range(3)),
            # above scenario_max_members = 4
            *(member("big", f"m{i}", ["t", "u"]) for i in range(5)),
            # rejected: two members share an id
            member("dup", "x", ["t"]),
            member("dup", "x", ["t"], client_rack="r1"),
        ],
    )


def test_rebalance_costs_and_recommendations_through_the_job(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    config = PlannerConfig().replace(strategies=(*CLASSIC, "elected"), scenario_max_members=4)
    result = run(spark, str(estate(tmp_path / "in")), str(out), config)

    costs = spark.read.parquet(str(out / "rebalance_costs"))
    recs = spark.read.parquet(str(out / "recommendations"))
    # exactly the contract's columns, with the contract's types
    assert costs.columns == [n for n, _, _ in REBALANCE_COST_COLUMNS]
    assert recs.columns == [*(n for n, _, _ in RECOMMENDATION_COLUMNS), "migration_next_step"]
    assert [(f.name, f.dataType) for f in costs.schema] == [
        (f.name, f.dataType) for f in struct(REBALANCE_COSTS_FIELDS)
    ]
    assert [(f.name, f.dataType) for f in recs.schema] == [
        (f.name, f.dataType) for f in struct(RECOMMENDATIONS_FIELDS)
    ]

    rows = {(r["group_id"], r["strategy"], r["scenario"]): r for r in costs.collect()}
    # hand-checked: a member joins the 6-partition, 3-member group
    join = rows[("six", "range", "member_join")]
    assert (join["moved_partition_count"], join["paused_partition_count"]) == (1, 6)
    coop = rows[("six", "cooperative-sticky", "member_join")]
    assert (coop["moved_partition_count"], coop["paused_partition_count"], coop["rounds"]) == (
        1,
        1,
        2,
    )
    restart = rows[("six", "range", "rolling_restart")]
    assert (restart["rebalances"], restart["paused_partition_count"]) == (6, 36)
    assert {s for _, s, _ in rows} == set(CLASSIC)  # `elected` repeats one: no rows

    # the group above scenario_max_members: a warning, no rows, still a recommendation
    assert {g for g, _, _ in rows} == {"six"}
    rejected = spark.read.parquet(str(out / "rejected")).collect()
    skipped = [r for r in rejected if r["reason"] == "SCENARIO_SKIPPED"]
    assert [(r["group_id"], r["severity"]) for r in skipped] == [("big", "warning")]

    by_group = {r["group_id"]: r for r in recs.collect()}
    assert sorted(by_group) == ["big", "six"]  # planned groups only
    six = by_group["six"]
    assert (six["current_strategy"], six["current_restart_paused"]) == ("range", 36)
    assert six["recommended_strategy"] == "cooperative-sticky"
    best = rows[("six", "cooperative-sticky", "rolling_restart")]["paused_partition_count"]
    assert six["recommended_restart_paused"] == best
    assert f"pauses {best} partitions instead of 36" in six["reason"]

    manifest = json.loads((out / "_manifest.json").read_text())
    groups = manifest["groups"]
    assert groups == {"input": 3, "planned": 2, "rejected": 1}
    assert groups["input"] == groups["planned"] + groups["rejected"]
    assert manifest["output_rows"]["rebalance_costs"] == len(rows)
    assert manifest["output_rows"]["recommendations"] == 2
    assert manifest["config"]["scenario_max_members"] == 4

    # the console: rolling-restart paused partitions and recommended groups per strategy
    whatif = {r["strategy"]: r for r in result.whatif}
    assert whatif["range"]["restart_paused"] == 36
    assert whatif["cooperative-sticky"]["recommended_groups"] == sum(
        r["recommended_strategy"] == "cooperative-sticky" for r in by_group.values()
    )
    text = format_summary(result)
    assert "rolling restart: paused partitions" in text
    assert f"{out}/rebalance_costs" in text


def test_no_scenarios_means_no_cost_rows(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    config = PlannerConfig().replace(strategies=CLASSIC, scenarios=())
    run(spark, str(estate(tmp_path / "in")), str(out), config)
    costs = spark.read.parquet(str(out / "rebalance_costs"))
    assert costs.columns == [n for n, _, _ in REBALANCE_COST_COLUMNS]
    assert costs.count() == 0
    assert spark.read.parquet(str(out / "recommendations")).count() == 2


@pytest.mark.parametrize(
    ("planner", "needle"),
    [
        ('scenarios = ["member_crash"]', "unknown scenario 'member_crash'"),
        ('recommend_from = ["stikcy"]', "recommend_from: 'stikcy' is neither"),
    ],
)
def test_an_unknown_scenario_exits_2_with_nothing_written(  # type: ignore[no-untyped-def]
    tmp_path: Path, capsys, caplog, planner: str, needle: str
) -> None:
    config = tmp_path / "planner.toml"
    config.write_text(f"[planner]\n{planner}\n", encoding="utf-8")
    out = tmp_path / "out"
    inp = estate(tmp_path / "in")
    code = main(["--input", str(inp), "--output", str(out), "--config", str(config)])
    assert code == 2
    assert needle in capsys.readouterr().err + caplog.text
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "planner.toml"]


@pytest.mark.slow
def test_look_alike_groups_with_what_if_warnings_are_planned_whole(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Groups shaped alike share their what-if figures and warnings: a planning child hands
    them to its worker by pickle, which once took the whole job down. Static and dynamic
    members, unequal subscriptions (one differs only by a topic that does not exist: a
    SCENARIO_NOT_APPLICABLE warning kept with the shape), the default what-if settings."""
    members = []
    for g in range(40):
        static = g % 2 == 0
        for i in range(3):
            topics = ["t", "gone"] if i == 1 else ["t"]
            instance = f"i{i}" if static else None
            members.append(member(f"g{g:02d}", f"c{i}", topics, group_instance_id=instance))
    src = write_estate(tmp_path / "in", {"t": 6, "u": 4}, members)
    out = tmp_path / "out"
    result = run(
        spark, str(src), str(out), PlannerConfig().replace(strategies=("range", "roundrobin"))
    )
    assert result.groups.planned == 40
    rejected = spark.read.parquet(str(out / "rejected")).collect()
    warned = {r["group_id"] for r in rejected if r["reason"] == "SCENARIO_NOT_APPLICABLE"}
    assert warned == {f"g{g:02d}" for g in range(40)}
    assert {r["severity"] for r in rejected} == {"warning"}
