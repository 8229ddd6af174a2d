"""A mixed estate of classic and KIP-848 (`group_protocol = consumer`) groups through the job:
the broker-side elections, the `server-range` and `uniform` assignments, the what-if rows,
the recommendations and the report."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.estate import member

from jobs.cli.plan_group import read_group
from jobs.plan.one_group import table_rows
from jobs.plan_assignments import run
from jobs.settings.config import load_config
from jobs.tables import group_read
from tools.sample_estate import SCHEMAS

pytestmark = pytest.mark.e2e

TOPICS = {"t": 6, "u": 3}
CONFIG = """
[planner]
strategies = ["range", "cooperative-sticky", "uniform", "server-range", "elected"]
scenarios = ["member_join", "member_leave", "rolling_restart"]
group_consumer_assignors = ["uniform", "range"]
"""


def kip848(gid: str, mid: str, names: list[str] | None, **kw: Any) -> dict[str, Any]:
    return {
        **member(gid, mid, ["t", "u"], assignment_strategies=names, **kw),
        "group_protocol": "consumer",
    }


def classic(gid: str, mid: str) -> dict[str, Any]:
    return {**member(gid, mid, ["t", "u"]), "group_protocol": None}


MEMBERS = [
    # classic groups: the client-side election
    *(classic("classic", f"c{i}") for i in range(3)),
    {**classic("classic-said-so", "c0"), "group_protocol": "classic"},
    {**classic("classic-said-so", "c1"), "group_protocol": "Classic"},
    # KIP-848 groups
    *(kip848("default", f"m{i}", None) for i in range(3)),  # nobody names one: uniform
    *(kip848("range", f"m{i}", ["range"]) for i in range(3)),
    kip848("conflict", "m0", ["range"]),
    kip848("conflict", "m1", ["org.apache.kafka.coordinator.group.assignor.RangeAssignor"]),
    kip848("conflict", "m2", ["uniform"]),
    kip848("tie", "m0", ["range"]),
    kip848("tie", "m1", ["uniform"]),
    kip848("unknown", "m0", ["cooperative-sticky"]),
    kip848("unknown", "m1", ["range"]),
    # static members come first under server-range, by group.instance.id
    kip848("static", "a", ["range"]),
    kip848("static", "b", ["range"], group_instance_id="zz"),
    kip848("static", "c", ["range"], group_instance_id="yy"),
    # a group mid-migration: one member moved to the consumer protocol
    {**classic("mixed", "a"), "group_protocol": "consumer"},
    classic("mixed", "b"),
    # bad input
    {**classic("bad-protocol", "a"), "group_protocol": "kip848"},
]
# `range` today: m0 owns t0-t2 and u0-u2, m1 t3-t5; server-range is not sticky
OWNED = [
    *(("range", "m0", "t", p) for p in range(3)),
    *(("range", "m0", "u", p) for p in range(3)),
    *(("range", "m1", "t", p) for p in range(3, 6)),
]


def write_estate(root: Path, members: list[dict[str, Any]], protocol_column: bool) -> Path:
    root.mkdir(parents=True)
    tp = [(t, p) for t, n in TOPICS.items() for p in range(n)]
    pq.write_table(
        pa.table(
            {
                "topic": [t for t, _ in tp],
                "partition": [p for _, p in tp],
                "replica_racks": [None] * len(tp),
                "weight": [None] * len(tp),
            },
            schema=SCHEMAS["topic_partitions"],
        ),
        root / "topic_partitions.parquet",
    )
    schema = SCHEMAS["subscriptions"]
    if protocol_column:
        schema = schema.append(pa.field("group_protocol", pa.string()))
    pq.write_table(
        pa.table({n: [m.get(n) for m in members] for n in schema.names}, schema=schema),
        root / "subscriptions.parquet",
    )
    gids = {m["group_id"] for m in members}
    owned = [o for o in OWNED if o[0] in gids]
    cols = SCHEMAS["current_assignment"].names
    pq.write_table(
        pa.table(
            {c: [o[i] for o in owned] for i, c in enumerate(cols)},
            schema=SCHEMAS["current_assignment"],
        ),
        root / "current_assignment.parquet",
    )
    return root


@pytest.fixture(scope="module")
def planned(spark, tmp_path_factory) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("kafka4")
    conf = root / "planner.toml"
    conf.write_text(CONFIG)
    config = load_config(conf)
    out = root / "out"
    run(spark, str(write_estate(root / "in", MEMBERS, True)), str(out), config)
    # the classic groups alone, from a snapshot without the column: the rows must not change
    only_classic = [m for m in MEMBERS if m["group_id"].startswith("classic")]
    before = root / "before"
    run(spark, str(write_estate(root / "in-classic", only_classic, False)), str(before), config)
    return out, before


def table(spark, out: Path, name: str) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    return [r.asDict() for r in spark.read.parquet(str(out / name)).collect()]


def assignment(spark, out: Path, strategy: str, group: str) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    result: dict[str, list[str]] = {}
    for r in table(spark, out, "assignments"):
        if (r["strategy"], r["group_id"]) == (strategy, group):
            result.setdefault(r["member_id"], []).append(f"{r['topic']}{r['partition']}")
    return {m: sorted(v) for m, v in sorted(result.items())}


def test_elections_say_which_assignor_and_why(spark, planned) -> None:  # type: ignore[no-untyped-def]
    out, _ = planned
    rows = {r["group_id"]: r for r in table(spark, out, "elections")}
    got = {
        g: (r["elected_strategy"], list(r["candidate_strategies"]), r["error"], r["group_protocol"])
        for g, r in rows.items()
    }
    assert got == {
        "classic": ("range", ["range", "cooperative-sticky"], None, "classic"),
        "classic-said-so": ("range", ["range", "cooperative-sticky"], None, "classic"),
        "default": ("uniform", ["uniform"], None, "consumer"),
        "range": ("server-range", ["server-range"], None, "consumer"),
        "conflict": ("server-range", ["server-range", "uniform"], None, "consumer"),
        "tie": ("uniform", ["uniform", "server-range"], None, "consumer"),
        "unknown": ("server-range", ["server-range"], None, "consumer"),
        "static": ("server-range", ["server-range"], None, "consumer"),
        # a group mid-migration is a consumer group: nobody names an assignor, the default
        "mixed": ("uniform", ["uniform"], None, "consumer"),
        "bad-protocol": (None, [], "NOT_PLANNED", None),
    }
    basis = {g: r["election_basis"] for g, r in rows.items()}
    assert basis["classic"] is None
    assert basis["default"] == (
        "no member names a broker assignor: the broker default, uniform"
        " (first of group.consumer.assignors)"
    )
    assert basis["range"] == "3 of 3 members name server-range (group.remote.assignor)"
    assert basis["conflict"] == (
        "2 of 3 members name server-range (group.remote.assignor); 1 names uniform"
    )
    assert basis["tie"] == (
        "tie: 1 of 2 members name uniform and 1 server-range;"
        " uniform is listed first in group.consumer.assignors"
    )
    assert basis["mixed"] == (
        "no member names a broker assignor: the broker default, uniform"
        " (first of group.consumer.assignors); mixed group: 1 classic member votes for nothing"
        " and receives the broker's target through JoinGroup/SyncGroup"
    )
    counts = {g: (r["classic_members"], r["consumer_members"]) for g, r in rows.items()}
    assert counts["classic"] == (3, 0)
    assert counts["range"] == (0, 3)
    assert counts["mixed"] == (1, 1)
    assert counts["bad-protocol"] == (None, None)


def test_rejected_rows(spark, planned) -> None:  # type: ignore[no-untyped-def]
    out, _ = planned
    got = sorted(
        (r["group_id"], r["member_id"], r["severity"], r["reason"])
        for r in table(spark, out, "rejected")
    )
    assert got == [
        ("bad-protocol", "a", "error", "UNKNOWN_GROUP_PROTOCOL"),
        ("conflict", None, "warning", "CONFLICTING_SERVER_ASSIGNORS"),
        ("tie", None, "warning", "CONFLICTING_SERVER_ASSIGNORS"),
        ("unknown", "m0", "warning", "UNKNOWN_SERVER_ASSIGNOR"),
    ]
    detail = {r["group_id"]: r["detail"] for r in table(spark, out, "rejected")}
    assert "group 'bad-protocol'" in detail["bad-protocol"]
    assert "'kip848'" in detail["bad-protocol"]
    assert "not uniform (1)" in detail["conflict"]


def test_server_range_assignments_are_not_sticky(spark, planned) -> None:  # type: ignore[no-untyped-def]
    out, _ = planned
    expected = {"m0": ["t0", "t1", "u0"], "m1": ["t2", "t3", "u1"], "m2": ["t4", "t5", "u2"]}
    assert assignment(spark, out, "server-range", "range") == expected
    assert assignment(spark, out, "elected", "range") == expected
    rows = [
        r
        for r in table(spark, out, "assignments")
        if (r["strategy"], r["group_id"]) == ("server-range", "range")
    ]
    previous = {(r["topic"], r["partition"]): r["previous_member_id"] for r in rows}
    assert previous == {
        ("t", 0): "m0", ("t", 1): "m0", ("t", 2): "m0", ("t", 3): "m1", ("t", 4): "m1",
        ("t", 5): "m1", ("u", 0): "m0", ("u", 1): "m0", ("u", 2): "m0",
    }  # fmt: skip
    # KIP-848 has no JoinGroup rounds: every partition arrives in the one rebalance
    assert {r["rebalance_round"] for r in rows} == {1}
    metrics = {
        (r["group_id"], r["strategy"]): r
        for r in table(spark, out, "balance_metrics")
        if r["group_id"] == "range"
    }
    assert metrics[("range", "elected")]["elected_strategy"] == "server-range"
    # t2 and u1 (m0 -> m1), t4 and t5 (m1 -> m2), u2 (m0 -> m2) move; uniform keeps each
    # member's first 3 (t0-t2, t3-t5) and moves only u0-u2 to m2
    assert metrics[("range", "server-range")]["moved_partition_count"] == 5
    assert (
        metrics[("range", "uniform")]["moved_partition_count"]
        < metrics[("range", "server-range")]["moved_partition_count"]
    )


def test_static_members_first_and_broker_default(spark, planned) -> None:  # type: ignore[no-untyped-def]
    out, _ = planned
    assert assignment(spark, out, "elected", "static") == {
        "a": ["t4", "t5", "u2"],
        "b": ["t2", "t3", "u1"],
        "c": ["t0", "t1", "u0"],
    }
    assert assignment(spark, out, "elected", "default") == assignment(
        spark, out, "uniform", "default"
    )


def test_what_if_has_no_stop_the_world_pause(spark, planned) -> None:  # type: ignore[no-untyped-def]
    out, _ = planned
    costs = {
        (r["group_id"], r["strategy"], r["scenario"]): r
        for r in table(spark, out, "rebalance_costs")
    }
    join = costs[("range", "server-range", "member_join")]
    # ranges 0-1/2-3/4-5 become 0-1/2-3/4/5 on t and 0/1/2/- on u: only t5 moves, and only
    # it pauses (the client-side range, eager, pauses all 9 owned partitions)
    assert (join["moved_partition_count"], join["paused_partition_count"]) == (1, 1)
    assert (join["rebalances"], join["rounds"]) == (1, 1)
    assert costs[("range", "range", "member_join")]["paused_partition_count"] == 9
    for strategy in ("uniform", "server-range"):
        # nobody leaves on a join: what pauses is exactly what is revoked and reassigned
        row = costs[("default", strategy, "member_join")]
        assert row["paused_partition_count"] == row["moved_partition_count"]
        restart = costs[("default", strategy, "rolling_restart")]["paused_partition_count"]
        assert restart < costs[("default", "range", "rolling_restart")]["paused_partition_count"]


def test_recommendations_of_consumer_groups(spark, planned) -> None:  # type: ignore[no-untyped-def]
    out, _ = planned
    recs = {r["group_id"]: r for r in table(spark, out, "recommendations")}
    # a KIP-848 group compares the broker-side assignors too, and says what to set
    r = recs["range"]
    assert (r["current_strategy"], r["recommended_strategy"]) == ("server-range", "uniform")
    assert (r["current_restart_paused"], r["recommended_restart_paused"]) == (24, 18)
    assert r["reason"] == (
        "uniform: a rolling restart pauses 18 partitions instead of 24; a member join moves"
        " 2 partitions instead of 1 (broker-side: set group.remote.assignor=uniform)"
    )
    # the broker default is already the best of the candidates here
    assert (recs["default"]["current_strategy"], recs["default"]["recommended_strategy"]) == (
        "uniform",
        "uniform",
    )
    # classic groups: client-side candidates only, no protocol note
    assert recs["classic"]["recommended_strategy"] == "cooperative-sticky"
    assert "group." not in recs["classic"]["reason"]


def test_classic_rows_are_unchanged(spark, planned) -> None:  # type: ignore[no-untyped-def]
    out, before = planned
    for name in ("assignments", "balance_metrics", "rebalance_costs", "recommendations"):
        now = [r for r in table(spark, out, name) if r["group_id"].startswith("classic")]
        then = table(spark, before, name)
        assert now, name
        assert sorted(json.dumps(r, sort_keys=True) for r in now) == sorted(
            json.dumps(r, sort_keys=True) for r in then
        ), name
    old = ("group_id", "elected_strategy", "candidate_strategies", "error")
    now_e = sorted(
        json.dumps([r[c] for c in old])
        for r in table(spark, out, "elections")
        if r["group_id"].startswith("classic")
    )
    then_e = sorted(json.dumps([r[c] for c in old]) for r in table(spark, before, "elections"))
    assert now_e == then_e


def test_report_counts_consumer_groups_apart(planned) -> None:  # type: ignore[no-untyped-def]
    out, _ = planned
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "server-range (consumer protocol, chosen by the broker)" in html
    assert "uniform (consumer protocol, chosen by the broker)" in html
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["config"]["group_consumer_assignors"] == ["uniform", "range"]
    # the mixed group is planned (a consumer group mid-migration); bad-protocol is not
    assert manifest["groups"] == {"input": 10, "planned": 9, "rejected": 1}


def test_plan_group_equals_the_job_for_consumer_groups(planned) -> None:  # type: ignore[no-untyped-def]
    """`python -m jobs.plan_group` on one KIP-848 group gives the job's rows: it reads
    `group_protocol` and the broker's assignor list like the job does."""
    out, _ = planned
    root = out.parent
    groups = group_read.distinct_groups(str(out / "elections"))
    assert {"default", "range", "conflict", "tie", "static"} <= set(groups)
    for group in groups:
        args = SimpleNamespace(
            config=str(root / "planner.toml"), strategies=None, input=str(root / "in"), group=group
        )
        result, _ = read_group(args, [])
        mine = table_rows(result)
        for name, rows in group_read.read_output(str(out), group).tables.items():
            expected = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
            got = sorted(json.dumps(r, sort_keys=True, default=str) for r in mine[name])
            assert got == expected, (group, name)
