"""`live_check` through the job on a hand-written snapshot: every verdict, a kafka-python-led
group by its column and by a `[clients]` pattern, KIP-848 groups with a target assignment;
plan_group and describe give the same rows and show the verdict; the console summary counts
the verdicts. A snapshot without `client_library` and `target_assignment` plans the same rows
of every other table as one whose members all name Java."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.estate import member, write_estate

from jobs.cli.describe import describe
from jobs.cli.plan_group import read_group
from jobs.plan.one_group import table_rows
from jobs.plan_assignments import format_summary, run
from jobs.settings.config import PlannerConfig, load_config
from jobs.tables import group_read
from jobs.tables.contract import OUTPUT_NAMES
from tools.sample_estate import SCHEMAS

pytestmark = pytest.mark.e2e

# group -> (its members' owned partitions of `t` (4 partitions), departed holders)
CLASSIC: dict[str, tuple[dict[str, list[int]], dict[str, list[int]]]] = {
    "matches": ({"c0": [0, 1], "c1": [2, 3]}, {}),
    "same-sizes": ({"c0": [0, 2], "c1": [1, 3]}, {}),
    "rebalancing": ({"c0": [0, 1], "c1": []}, {}),
    "stale": ({"c0": [0, 1], "c1": [2]}, {"gone": [3]}),
    "unexplained": ({"c0": [0, 1, 2], "c1": [3]}, {}),
}
# kafka-python's range with interleaved static members (its leader gives `a` nothing): led
# by kafka-python per its column (`py-led`) or per a [clients] pattern (`cfg-led`)
PY_OWNED = {"a": [], "b": [3, 4], "c": [0, 1, 2]}
PY_INSTANCES = {"a": "z", "b": None, "c": "y"}
# KIP-848: current and target assignment
K848 = {
    "k848-reconciled": ({"c0": [0, 1], "c1": [2, 3]}, {"c0": [0, 1], "c1": [2, 3]}),
    "k848-reconciling": ({"c0": [0, 1, 2], "c1": []}, {"c0": [0, 1], "c1": [2, 3]}),
}
EXPECTED = {
    "matches": "MATCHES_ELECTED",
    "same-sizes": "SAME_SIZES",
    "rebalancing": "REBALANCING",
    "stale": "STALE_OWNERS",
    "unexplained": "UNEXPLAINED",
    "py-led": "MATCHES_ELECTED",
    "cfg-led": "MATCHES_ELECTED",
    "k848-reconciled": "MATCHES_ELECTED",
    "k848-reconciling": "REBALANCING",
}
STRATEGIES = ("range", "sticky", "uniform", "elected")
CONFIG_TEXT = """
[planner]
strategies = ["range", "sticky", "uniform", "elected"]

[clients]
library_by_group = { "cfg-*" = "kafka-python" }
"""


def _write(root: Path, table: str, schema: pa.Schema, rows: list[dict[str, Any]]) -> None:
    (root / table).mkdir(exist_ok=True)
    for old in (root / table).glob("*.parquet"):
        old.unlink()
    data = pa.table({n: [r.get(n) for r in rows] for n in schema.names}, schema=schema)
    pq.write_table(data, root / table / "part-0.parquet")


def estate(root: Path, new_columns: bool, java_everywhere: bool = False) -> Path:
    """The snapshot; `new_columns`: with `client_library`, `group_state` and the
    `target_assignment` table (else none of them; `java_everywhere`: the column says java for
    every member and nothing else is new)."""
    members: list[dict[str, Any]] = []
    owned: list[tuple[str, str, str, int]] = []
    for gid, (held, departed) in CLASSIC.items():
        for mid, parts in held.items():
            state = "PreparingRebalance" if gid == "rebalancing" else "Stable"
            members.append(member(gid, mid, ["t"], generation=3, group_state=state))
            owned += [(gid, mid, "t", p) for p in parts]
        owned += [(gid, mid, "t", p) for mid, parts in departed.items() for p in parts]
    for gid in ("py-led", "cfg-led"):
        for mid, parts in PY_OWNED.items():
            library = "kafka-python" if gid == "py-led" else None
            members.append(
                member(
                    gid,
                    mid,
                    ["t5"],
                    group_instance_id=PY_INSTANCES[mid],
                    generation=3,
                    client_library=library,
                )
            )
            owned += [(gid, mid, "t5", p) for p in parts]
    targets: list[dict[str, Any]] = []
    for gid, (held, target) in K848.items():
        for mid, parts in held.items():
            members.append(member(gid, mid, ["t"], generation=5, group_protocol="consumer"))
            owned += [(gid, mid, "t", p) for p in parts]
            targets += [
                {"group_id": gid, "member_id": mid, "topic": "t", "partition": p}
                for p in target[mid]
            ]
    write_estate(root, {"t": 4, "t5": 5}, members, owned)
    base = SCHEMAS["subscriptions"].append(pa.field("group_protocol", pa.string()))
    if new_columns or java_everywhere:
        schema = base.append(pa.field("client_library", pa.string()))
        if java_everywhere:
            members = [{**m, "client_library": "java"} for m in members]
        else:
            schema = schema.append(pa.field("group_state", pa.string()))
        _write(root, "subscriptions", schema, members)
    else:
        _write(root, "subscriptions", base, members)
    if new_columns:
        _write(root, "target_assignment", SCHEMAS["current_assignment"], targets)
    return root


def test_every_verdict_through_the_job_plan_group_and_describe(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = estate(tmp_path / "in", new_columns=True)
    out = tmp_path / "out"
    config_path = tmp_path / "planner.toml"
    config_path.write_text(CONFIG_TEXT, encoding="utf-8")
    config = load_config(config_path)
    assert config.clients.library_by_group == (("cfg-*", "kafka-python"),)
    manifest = run(spark, str(src), str(out), config)
    live = {r["group_id"]: r for r in pq.read_table(out / "live_check").to_pylist()}
    assert {g: r["verdict"] for g, r in live.items()} == EXPECTED
    assert live["py-led"]["elected_strategy"] == "range@kafka-python"
    assert live["cfg-led"]["client_library"] == "kafka-python"
    assert (live["matches"]["elected_strategy"], live["matches"]["client_library"]) == (
        "range",
        "java",
    )
    assert live["k848-reconciled"]["client_library"] is None
    assert "still reconcile towards the target" in live["k848-reconciling"]["detail"]
    assert "gone (1)" in live["stale"]["detail"]
    assert live["same-sizes"]["differing_partition_count"] == 2
    elections = {r["group_id"]: r for r in pq.read_table(out / "elections").to_pylist()}
    assert elections["py-led"]["elected_strategy"] == "range"  # what the members voted
    assert elections["py-led"]["client_library"] == "kafka-python"
    # the elected plan is kafka-python's, which is what the group holds
    elected = [
        (r["member_id"], r["partition"])
        for r in pq.read_table(out / "assignments").to_pylist()
        if r["group_id"] == "py-led" and r["strategy"] == "elected"
    ]
    assert sorted(elected) == sorted((m, p) for m, ps in PY_OWNED.items() for p in ps)
    # the summary's line of counts per verdict, the unexplained first
    assert manifest.live_verdicts["MATCHES_ELECTED"] == 4
    assert (
        "live vs plan (9 groups): UNEXPLAINED 1, REBALANCING 2, MATCHES_ELECTED 4, SAME_SIZES 1,"
        " STALE_OWNERS 1"
    ) in format_summary(manifest)
    # plan_group plans each group alone: the same rows of every table
    for gid in EXPECTED:
        args = SimpleNamespace(config=str(config_path), strategies=None, input=str(src), group=gid)
        result, _ = read_group(args, [])
        mine = table_rows(result)
        for name, rows in group_read.read_output(str(out), gid).tables.items():
            expected = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
            got = sorted(json.dumps(r, sort_keys=True, default=str) for r in mine[name])
            assert got == expected, (gid, name)
    # describe shows the verdict and the partitions that differ
    args = SimpleNamespace(
        output=str(out), group="same-sizes", strategy=None, format="table", input=None
    )
    capsys.readouterr()
    assert describe(args) == 0
    text = capsys.readouterr().out
    assert "LIVE VS PLAN (live_check)" in text
    assert "verdict: SAME_SIZES" in text
    assert "t-1" in text
    assert "t-2" in text
    args.format = "json"
    assert describe(args) == 0
    view = json.loads(capsys.readouterr().out)
    moved = view["live_check"]["differing_partitions"]
    assert [(m["partition"], m["current_member_id"], m["planned_member_id"]) for m in moved] == [
        (1, "c1", "c0"),
        (2, "c0", "c1"),
    ]
    # the report's section
    page = (out / "report.html").read_text(encoding="utf-8")
    section = page.split('<section id="live">', 1)[1].split("</section>", 1)[0]
    listed = [g for g in ("unexplained", "rebalancing", "same-sizes", "stale") if g in section]
    assert listed == ["unexplained", "rebalancing", "same-sizes", "stale"]
    assert section.index("unexplained") < section.index("k848-reconciling")
    assert "matches" not in section.split("<h3>", 1)[1]  # only groups that do not match


def test_a_snapshot_without_the_new_columns_plans_the_same_rows(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = PlannerConfig().replace(strategies=STRATEGIES)
    without, java = tmp_path / "without", tmp_path / "java"
    run(spark, str(estate(tmp_path / "in-without", new_columns=False)), str(without), config)
    run(spark, str(estate(tmp_path / "in-java", False, java_everywhere=True)), str(java), config)
    for table in OUTPUT_NAMES:
        a = pq.read_table(without / table).to_pylist()
        b = pq.read_table(java / table).to_pylist()
        assert sorted(map(str, a)) == sorted(map(str, b)), table
    elections = pq.read_table(without / "elections").to_pylist()
    assert {r["client_library"] for r in elections if r["group_protocol"] == "classic"} == {"java"}
