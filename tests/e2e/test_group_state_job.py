"""`subscriptions.group_state` through the job and through plan_group: a group caught in a
rebalance is planned and warned about; a snapshot without the column plans the same rows."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.estate import member, write_estate

from jobs.cli.plan_group import read_group
from jobs.plan.one_group import table_rows
from jobs.plan_assignments import run
from jobs.settings.config import PlannerConfig
from jobs.tables import group_read
from tools.sample_estate import SCHEMAS

pytestmark = pytest.mark.e2e
STATES = {"stable": "Stable", "joining": "PreparingRebalance", "syncing": "CompletingRebalance"}


def estate(root: Path, with_state: bool) -> Path:
    members = [member(g, f"c{i}", ["t"]) for g in STATES for i in range(3)]
    owned = [("stable", f"c{i}", "t", p) for i, p in ((0, 0), (0, 1), (1, 2), (1, 3), (2, 4))]
    write_estate(root, {"t": 6}, members, owned)
    if with_state:
        schema = SCHEMAS["subscriptions"].append(pa.field("group_state", pa.string()))
        rows: list[dict[str, Any]] = [{**m, "group_state": STATES[m["group_id"]]} for m in members]
        table = pa.table({n: [r.get(n) for r in rows] for n in schema.names}, schema=schema)
        (sub,) = (root / "subscriptions").glob("*.parquet")
        pq.write_table(table, sub)
    return root


def test_groups_caught_in_a_rebalance_are_planned_and_warned_about(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = estate(tmp_path / "in", with_state=True)
    out = tmp_path / "out"
    result = run(spark, str(src), str(out), PlannerConfig().replace(strategies=("range", "sticky")))
    assert result.groups.planned == 3
    rejected = spark.read.parquet(str(out / "rejected")).collect()
    warned = sorted(
        (r["group_id"], r["severity"]) for r in rejected if r["reason"] == "GROUP_REBALANCING"
    )
    assert warned == [("joining", "warning"), ("syncing", "warning")]
    # plan_group reads the column too: the same rows as the job, table by table
    for gid in STATES:
        args = SimpleNamespace(config=None, strategies="range,sticky", input=str(src), group=gid)
        result, _ = read_group(args, [])
        mine = table_rows(result)
        for name, rows in group_read.read_output(str(out), gid).tables.items():
            expected = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
            got = sorted(json.dumps(r, sort_keys=True, default=str) for r in mine[name])
            assert got == expected, (gid, name)


def test_a_snapshot_without_the_column_plans_the_same_rows(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = PlannerConfig().replace(strategies=("range", "sticky"))
    with_state, without = tmp_path / "with", tmp_path / "without"
    run(spark, str(estate(tmp_path / "in-with", True)), str(with_state), config)
    run(spark, str(estate(tmp_path / "in-without", False)), str(without), config)
    for table in ("assignments", "balance_metrics"):
        a = spark.read.parquet(str(with_state / table)).sort("group_id", "strategy").collect()
        b = spark.read.parquet(str(without / table)).sort("group_id", "strategy").collect()
        assert sorted(map(str, a)) == sorted(map(str, b))
