"""Sticky strategies, cooperative rounds, elections, patterns and plugins through the job."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers.estate import member, write_estate

from jobs.plan_assignments import run
from jobs.settings.config import PlannerConfig

pytestmark = pytest.mark.e2e

PLUGIN = textwrap.dedent(
    '''
    class Picky:
        """Fails on purpose: raises on topic "boom", returns a bogus member on topic "bad"."""

        name = "picky"

        def assign(self, partitions_per_topic, subscriptions):
            if "boom" in partitions_per_topic:
                raise RuntimeError("picky cannot handle boom")
            out = {m: [] for m in subscriptions}
            for topic, n in partitions_per_topic.items():
                subscribers = sorted(m for m, s in subscriptions.items() if topic in s.topics)
                for p in range(n):
                    out[subscribers[0]].append((topic, p))
            if "bad" in partitions_per_topic:
                out["nobody"] = [("bad", 0)]
            return out
    '''
)
RANDOM = "assignors.catalog.examples.random_assignor:RandomAssignor"
STRATEGIES = (
    "range",
    "roundrobin",
    "sticky",
    "cooperative-sticky",
    "uniform",
    "elected",
    RANDOM,
    "picky_plugin:Picky",
)


@pytest.fixture(scope="module")
def planned(spark, tmp_path_factory) -> tuple[Path, dict[str, Any]]:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("semantics")
    plugin = root / "picky_plugin.py"
    plugin.write_text(PLUGIN)
    spark.sparkContext.addPyFile(str(plugin))  # driver and executors, as --py-files would
    s_topics = ["s0", "s1", "s2", "s3"]
    members = [
        # the sticky worked example, fresh and after C1 left
        *(member("fresh", f"C{i}", s_topics) for i in range(3)),
        member("after", "C0", s_topics, generation=1),
        member("after", "C2", s_topics, generation=1),
        # a new member joins a group where C0 owns everything: cooperative needs 2 rounds
        member("join", "C0", ["x"], generation=3),
        member("join", "C1", ["x"]),
        # elections
        member("vote", "a", ["x"], assignment_strategies=["roundrobin", "range"]),
        member("vote", "b", ["x"], assignment_strategies=["roundrobin"]),
        member("vote", "c", ["x"], assignment_strategies=["range", "roundrobin"]),
        member("inconsistent", "a", ["x"], assignment_strategies=["range"]),
        member("inconsistent", "b", ["x"], assignment_strategies=["roundrobin"]),
        member("defaults", "a", ["x"]),
        member("by-plugin", "a", ["x"], assignment_strategies=[RANDOM, "range"]),
        member("by-plugin", "b", ["x"], assignment_strategies=[RANDOM]),
        # patterns: full match; "t" matches no topic (a legal empty subscription)
        member("pattern", "a", None, topic_pattern="t[12]"),
        member("pattern", "b", None, topic_pattern="t"),
        member("bad-pattern", "a", None, topic_pattern="(a+)+b"),
        # plugin failures reject only their group
        member("boom-group", "a", ["boom"]),
        member("bad-group", "a", ["bad"]),
    ]
    owned = [
        ("after", "C0", "s0", 0), ("after", "C0", "s1", 1), ("after", "C0", "s3", 0),
        ("after", "C1", "s0", 1), ("after", "C1", "s2", 0), ("after", "C1", "s3", 1),
        ("after", "C2", "s1", 0), ("after", "C2", "s2", 1),
        *(("join", "C0", "x", p) for p in range(4)),
    ]  # fmt: skip
    topics = {**dict.fromkeys(s_topics, 2), "x": 4, "t1": 3, "t2": 3, "t3": 3, "boom": 1, "bad": 1}
    estate = write_estate(root / "in", topics, members, owned)
    out = root / "out"
    result = run(spark, str(estate), str(out), PlannerConfig().replace(strategies=STRATEGIES))
    return out, result.to_json()


def assignment(spark, out: Path, strategy: str, group: str) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    rows = (
        spark.read.parquet(str(out / "assignments"))
        .where(f"strategy = '{strategy}' and group_id = '{group}'")
        .collect()
    )
    result: dict[str, list[str]] = {}
    for r in rows:
        result.setdefault(r["member_id"], []).append(f"{r['topic']}p{r['partition']}")
    return {m: sorted(v) for m, v in sorted(result.items())}


def metrics(spark, out: Path, strategy: str, group: str):  # type: ignore[no-untyped-def]
    (row,) = (
        spark.read.parquet(str(out / "balance_metrics"))
        .where(f"strategy = '{strategy}' and group_id = '{group}'")
        .collect()
    )
    return row


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_sticky_worked_examples(spark, planned, strategy: str) -> None:  # type: ignore[no-untyped-def]
    out, _ = planned
    assert assignment(spark, out, strategy, "fresh") == {
        "C0": ["s0p0", "s1p1", "s3p0"],
        "C1": ["s0p1", "s2p0", "s3p1"],
        "C2": ["s1p0", "s2p1"],
    }
    assert assignment(spark, out, strategy, "after") == {
        "C0": ["s0p0", "s0p1", "s1p1", "s3p0"],
        "C2": ["s1p0", "s2p0", "s2p1", "s3p1"],
    }
    m = metrics(spark, out, strategy, "after")
    # C1's partitions move to the others at once (nobody revokes them), nothing else moves.
    assert (m["moved_partition_count"], m["revoked_partition_count"]) == (3, 0)
    assert m["rebalance_rounds"] == 1


def test_cooperative_takes_two_rounds_eager_one(spark, planned) -> None:  # type: ignore[no-untyped-def]
    out, _ = planned
    expected = {"C0": ["xp0", "xp1"], "C1": ["xp2", "xp3"]}
    for strategy, rounds in (("sticky", 1), ("cooperative-sticky", 2)):
        assert assignment(spark, out, strategy, "join") == expected
        m = metrics(spark, out, strategy, "join")
        assert (m["rebalance_rounds"], m["revoked_partition_count"]) == (rounds, 2)
        assert m["moved_partition_count"] == 2
    received = {
        (r["member_id"], r["partition"]): (r["rebalance_round"], r["previous_member_id"])
        for r in spark.read.parquet(str(out / "assignments"))
        .where("strategy = 'cooperative-sticky' and group_id = 'join'")
        .collect()
    }
    assert received == {
        ("C0", 0): (1, "C0"),
        ("C0", 1): (1, "C0"),
        ("C1", 2): (2, "C0"),
        ("C1", 3): (2, "C0"),
    }


def test_elections(spark, planned) -> None:  # type: ignore[no-untyped-def]
    out, _ = planned
    elections = {
        r["group_id"]: (r["elected_strategy"], list(r["candidate_strategies"]), r["error"])
        for r in spark.read.parquet(str(out / "elections")).collect()
    }
    assert elections["vote"] == ("roundrobin", ["roundrobin"], None)  # b supports only it
    assert elections["inconsistent"] == (None, [], "INCONSISTENT_GROUP_PROTOCOL")
    assert elections["defaults"] == ("range", ["range", "cooperative-sticky"], None)
    assert elections["by-plugin"][0] == "random"
    # `elected` repeats the elected strategy's assignment and names it
    assert assignment(spark, out, "elected", "vote") == assignment(spark, out, "roundrobin", "vote")
    assert metrics(spark, out, "elected", "vote")["elected_strategy"] == "roundrobin"
    assert metrics(spark, out, "roundrobin", "vote")["elected_strategy"] is None
    assert assignment(spark, out, "elected", "by-plugin") == assignment(
        spark, out, "random", "by-plugin"
    )
    assert assignment(spark, out, "elected", "inconsistent") == {}
    assert assignment(spark, out, "range", "inconsistent") == {
        "a": ["xp0", "xp1"],
        "b": ["xp2", "xp3"],
    }


def test_patterns(spark, planned) -> None:  # type: ignore[no-untyped-def]
    out, _ = planned
    assert assignment(spark, out, "range", "pattern") == {
        "a": ["t1p0", "t1p1", "t1p2", "t2p0", "t2p1", "t2p2"]
    }
    m = metrics(spark, out, "range", "pattern")
    assert (m["member_count"], m["topic_count"], m["idle_member_count"]) == (2, 2, 1)


def test_rejections_and_manifest(spark, planned) -> None:  # type: ignore[no-untyped-def]
    out, manifest = planned
    rejected = {
        (r["group_id"], r["severity"], r["reason"]): r["detail"]
        for r in spark.read.parquet(str(out / "rejected")).collect()
    }
    assert set(rejected) == {
        ("bad-pattern", "error", "INVALID_PATTERN"),
        ("boom-group", "error", "ASSIGNOR_FAILED"),
        ("bad-group", "error", "INVALID_ASSIGNMENT"),
        ("inconsistent", "warning", "INCONSISTENT_GROUP_PROTOCOL"),
    }
    assert "picky cannot handle boom" in rejected[("boom-group", "error", "ASSIGNOR_FAILED")]
    assert "nobody" in rejected[("bad-group", "error", "INVALID_ASSIGNMENT")]
    assert manifest["strategies"] == [
        "range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "elected", "random",
        "picky",
    ]  # fmt: skip
    # A failing plugin fails only its own (group, strategy), so
    # boom-group and bad-group are planned under every other strategy; only bad-pattern's
    # group-level error rejects a group.
    assert manifest["groups"] == {"input": 11, "planned": 10, "rejected": 1}
    assert json.loads((out / "_manifest.json").read_text()) == manifest
    # every planned group has a row for every strategy except `elected` where none was elected
    counts = spark.read.parquet(str(out / "balance_metrics")).groupBy("strategy").count().collect()
    per_strategy = {r["strategy"]: r["count"] for r in counts}
    assert per_strategy == {**dict.fromkeys(manifest["strategies"], 10), "picky": 8, "elected": 9}


def test_uniform_is_valid_and_balanced(spark, planned) -> None:  # type: ignore[no-untyped-def]
    out, _ = planned
    rows = spark.read.parquet(str(out / "balance_metrics")).where("strategy = 'uniform'").collect()
    assert rows
    assert all(r["is_valid"] for r in rows)
    assert metrics(spark, out, "uniform", "join")["partition_spread"] == 0
