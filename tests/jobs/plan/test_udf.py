"""The bucket function in plain pandas: order independence and contained failures."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.buckets import cogrouped
from helpers.oracle import split_tables

import jobs.plan.one_group
import jobs.plan.udf
from assignors.inputs.validation import TopicStatus
from assignors.problems import ERROR, NOT_PLANNED
from jobs.plan.udf import (
    INPUT_COLUMNS,
    KIND_MEMBER,
    KIND_OWNED,
    PlanContext,
    plan_bucket,
)
from jobs.settings.run import RunSettings
from jobs.tables.rows import KIND_TIMING, TABLE_OF

TOPICS = {"a": TopicStatus(5), "b": TopicStatus(3), "c": TopicStatus(8)}


def bucket(seed: int = 1, groups: int = 6) -> pd.DataFrame:
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for g in range(groups):
        members = [f"consumer-{rng.randint(0, 99)}-{i}" for i in range(rng.randint(1, 6))]
        for i, m in enumerate(members):
            rows.append(
                {
                    "kind": KIND_MEMBER,
                    "group_id": f"g{g}",
                    "member_id": m,
                    "group_instance_id": f"i{i}" if i % 3 == 0 else None,
                    "topics": [*rng.sample(sorted(TOPICS), rng.randint(1, 3)), "missing"],
                    "assignment_strategies": None if i % 2 else ["roundrobin", "range"],
                    "generation": rng.randint(1, 3),
                }
            )
            for t, status in TOPICS.items():
                for p in range(status.partition_count):
                    if rng.random() < 0.3:
                        owner = m if rng.random() < 0.8 else "departed"
                        rows.append(
                            {"kind": KIND_OWNED, "group_id": f"g{g}", "member_id": owner,
                             "topic": t, "partition": p}
                        )  # fmt: skip
    return pd.DataFrame(rows).reindex(columns=list(INPUT_COLUMNS))


def ctx(*strategies: str) -> PlanContext:
    return PlanContext(
        RunSettings.of(
            strategies=strategies
            or ("range", "roundrobin", "sticky", "cooperative-sticky", "uniform"),
            has_current_assignment=True,
            plan_elected=True,
            default_strategies=("range", "cooperative-sticky"),
        )
    )


def test_output_does_not_depend_on_the_order_rows_arrive_in() -> None:
    # Spark delivers a group's rows in any order (e.g. an estate split into
    # several files); the plans, metrics (floats included) and row order must not change.
    pdf = bucket()
    context = ctx()
    expected = plan_bucket(pdf, TOPICS, context)
    assert (expected["kind"] == "a").sum() > 100
    for seed in range(5):
        shuffled = pdf.sample(frac=1, random_state=seed).reset_index(drop=True)
        pd.testing.assert_frame_equal(plan_bucket(shuffled, TOPICS, context), expected)


def test_members_apart_from_owned_rows_give_the_same_output() -> None:
    # The job cogroups a bucket's members with its owned rows (two frames, each with only its
    # kinds' columns); the output is the one frame's, with or without owned rows.
    pdf = bucket()
    context = ctx()
    expected = plan_bucket(pdf, TOPICS, context)
    assert (pdf["kind"] == KIND_OWNED).sum() > 20
    pd.testing.assert_frame_equal(plan_bucket(cogrouped(pdf), TOPICS, context), expected)
    fresh = pdf[pdf["kind"] == KIND_MEMBER].reset_index(drop=True)
    pd.testing.assert_frame_equal(
        plan_bucket(cogrouped(fresh), TOPICS, context), plan_bucket(fresh, TOPICS, context)
    )


def test_plugin_failure_fails_only_its_strategy() -> None:
    tables = split_tables(
        plan_bucket(bucket(groups=2), TOPICS, ctx("range", "helpers.failing_plugins:Exits"))
    )
    rejected = tables["rejected"]
    failed = rejected[rejected["reason"] == "ASSIGNOR_FAILED"]
    assert sorted(failed["group_id"]) == ["g0", "g1"]
    payload_strategies = {json.loads(p)["strategy"] for p in plan_payloads(bucket(groups=2))}
    assert "exits" in payload_strategies
    assert set(tables["balance_metrics"]["strategy"]) == {"range", "elected"}
    assert "NOT_PLANNED" not in set(tables["elections"]["error"].dropna())


def plan_payloads(pdf: pd.DataFrame) -> list[str]:
    wide = plan_bucket(pdf, TOPICS, ctx("range", "helpers.failing_plugins:Exits"))
    return list(wide.loc[wide["kind"] == "r", "payload"])


@pytest.mark.internal_error_expected
def test_a_planner_bug_in_one_group_leaves_the_others_planned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each group of a bucket is planned by `plan_one`: validation fails there
    real = jobs.plan.one_group.build_group

    def flaky(group_id: str, *args: Any) -> Any:
        if group_id == "g1":
            raise RuntimeError("validation bug")
        return real(group_id, *args)

    monkeypatch.setattr(jobs.plan.one_group, "build_group", flaky)
    tables = split_tables(plan_bucket(bucket(groups=3), TOPICS, ctx("range")))
    errors = tables["rejected"][tables["rejected"]["reason"] == "INTERNAL_ERROR"]
    assert list(errors["group_id"]) == ["g1"]
    assert "RuntimeError: validation bug" in errors["detail"].iloc[0]
    elections = tables["elections"].set_index("group_id")["error"]
    assert elections["g1"] == "NOT_PLANNED"
    assert set(tables["balance_metrics"]["group_id"]) == {"g0", "g2"}


def test_strategies_with_the_same_rows_travel_once_and_come_out_per_strategy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pdf = bucket(seed=3)
    wide = plan_bucket(pdf, TOPICS, ctx())
    rows = wide[wide["kind"] == "a"]
    # `elected` always names a strategy planned anyway here: its rows ride on that one's
    assert "elected" not in set(rows["strategy"])
    shared = rows[rows["payload"].notna()]
    further = set(shared["payload"].astype(object).str.split("\x1f").explode())
    assert "elected" in further
    # cooperative-sticky's rows ride on sticky's, with its own round where a partition moved
    assert {"cooperative-sticky", "cooperative-sticky\x1e2"} <= further
    table = split_tables(wide)["assignments"]
    # the same table as with every strategy's rows sent on their own
    monkeypatch.setattr(
        jobs.plan.udf,
        "_shared_rows",
        lambda plans: [(p.columns, [(p.strategy, p.columns[5])]) for p in plans],
    )
    unshared = plan_bucket(pdf, TOPICS, ctx())
    assert unshared[unshared["kind"] == "a"]["payload"].isna().all()
    expected = split_tables(unshared)["assignments"]
    assert len(rows) < len(table) == len(expected)
    key = list(expected.columns)
    pd.testing.assert_frame_equal(
        table.sort_values(key).reset_index(drop=True),
        expected.sort_values(key).reset_index(drop=True),
    )


def test_a_label_holding_a_separator_is_never_shared() -> None:
    class Plan:
        def __init__(self, strategy: str, columns: Any) -> None:
            self.strategy, self.columns = strategy, columns

    same: Any = ([], [], [], [], [], [], [])
    rounds = same[5]
    plans: Any = [Plan("range", same), Plan("elected", same)]
    assert jobs.plan.udf._shared_rows(plans) == [(same, [("range", rounds), ("elected", rounds)])]
    for odd in ("odd\x1fname", "odd\x1ename"):
        plans = [Plan(odd, same), Plan("elected", same)]
        assert jobs.plan.udf._shared_rows(plans) == [
            (same, [(odd, rounds)]),
            (same, [("elected", rounds)]),
        ]


def test_shared_rows_carry_each_strategys_own_round() -> None:
    class Plan:
        def __init__(self, strategy: str, columns: Any) -> None:
            self.strategy, self.columns = strategy, columns

    m, i, t, p, prev, lag = (
        ["a", "a", "b"],
        [None] * 3,
        ["t"] * 3,
        [0, 1, 2],
        ["a", "b", "a"],
        [None] * 3,
    )
    sticky = (m, i, t, p, prev, [1, 1, 1], lag)
    cooperative = (m, i, t, p, prev, [1, 2, 1], lag)
    odd = (m, i, t, p, prev, [1, None, 1], lag)  # no int to carry: rows of its own
    plans: Any = [Plan("sticky", sticky), Plan("cooperative-sticky", cooperative), Plan("x", odd)]
    shared = jobs.plan.udf._shared_rows(plans)
    assert [[label for label, _ in labels] for _, labels in shared] == [
        ["sticky", "cooperative-sticky"],
        ["x"],
    ]
    labels = shared[0][1]
    assert jobs.plan.udf._further(3, sticky[5], labels[1:]) == [
        "cooperative-sticky",
        "cooperative-sticky\x1e2",
        "cooperative-sticky",
    ]


def test_the_timing_row_comes_last_and_leaves_every_other_row_as_it_was() -> None:
    # The executor's bucket ends with its phase seconds (the run's phase line): appended as
    # the frame is built, after every assignment and small-table row, changing none of them.
    plain = plan_bucket(bucket(), TOPICS, ctx())
    timed = plan_bucket(bucket(), TOPICS, ctx(), timing_row=True)
    assert len(timed) == len(plain) + 1
    pd.testing.assert_frame_equal(timed.iloc[:-1], plain)
    last = timed.iloc[-1]
    assert last["kind"] == KIND_TIMING
    assert pd.isna(last["group_id"])
    seconds = json.loads(last["payload"])
    assert set(seconds) == {*jobs.plan.udf.PHASES, jobs.plan.udf.PEAK_RSS_MIB, jobs.plan.udf.TALLY}
    assert seconds["validate"] > 0
    assert seconds["rows"] > 0
    assert all(pd.isna(last[c]) for c in ("member_id", "topic", "partition", "strategy"))


def test_the_timing_row_tallies_the_rows_the_bucket_wrote() -> None:
    # The manifest's counts are summed from these tallies: they must be the tables' counts.
    pdf = bucket()
    dup = pdf[pdf["kind"] == KIND_MEMBER].iloc[:1].assign(group_id="dup")
    pdf = pd.concat([pdf, dup, dup.assign(client_rack="r9")], ignore_index=True)
    timed = plan_bucket(pdf, TOPICS, ctx(), timing_row=True)
    tally = json.loads(timed.iloc[-1]["payload"])[jobs.plan.udf.TALLY]
    tables = split_tables(timed.iloc[:-1])
    kinds = {table.name: kind for kind, table in TABLE_OF.items()}
    assert tally["rows"] == {
        kinds[t]: len(rows) for t, rows in tables.items() if t != "assignments" and len(rows)
    }
    elections, rejected = tables["elections"], tables["rejected"]
    assert (
        tally["planned_groups"] == (elections["error"] != NOT_PLANNED).sum() == len(elections) - 1
    )
    group_level = rejected[
        (rejected["severity"] == ERROR) & rejected["group_id"].notna() & rejected["strategy"].isna()
    ]
    assert tally["rejected_groups"] == group_level["group_id"].nunique() == 1
    reasons = rejected.groupby(["severity", "reason"]).size()
    assert tally["by_reason"] == {f"{s}:{r}": n for (s, r), n in reasons.items()}
    assert len(reasons) >= 2  # the bucket's warnings too


def test_rows_written_to_a_file_are_the_rows_the_frame_would_hold(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A local run's buckets write their assignment rows as Parquet: the file's rows plus the
    # frame's (the small tables' rows) are the frame of a bucket that returns them all.
    pdf, context = bucket(), ctx()
    expected = plan_bucket(pdf, TOPICS, context, timing_row=False)
    path = str(tmp_path / "bucket-00003.parquet")
    frame = plan_bucket(pdf, TOPICS, context, rows_file=path)
    assert not (frame["kind"] == "a").any()
    rows = pq.read_table(path).to_pandas(types_mapper=pd.ArrowDtype)
    assert len(rows) == (expected["kind"] == "a").sum() > 100
    assert list(rows.columns) == list(expected.columns)
    both = pd.concat([rows, frame], ignore_index=True)
    for name in expected:
        assert both[name].tolist() == expected[name].tolist(), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bucket-00003.parquet"]


def test_a_bucket_file_replaces_the_one_a_failed_attempt_left(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # An attempt retried (or re-planned by the guard) writes the same name: its rows replace
    # the earlier ones, even when it has none, and no partial file stays behind.
    path = str(tmp_path / "rows" / jobs.plan.udf.rows_file("", 7))
    stale = pa.table({"group_id": ["g-old"] * 3})
    jobs.plan.udf.write_rows(stale, path)
    assert pq.read_table(path).num_rows == 3
    jobs.plan.udf.write_rows(stale.slice(0, 0), path)
    assert pq.read_table(path).num_rows == 0
    assert os.listdir(tmp_path / "rows") == ["bucket-00007.parquet"]


def test_a_failed_write_leaves_no_partial_file(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def full_disk(table: pa.Table, where: str) -> None:
        Path(where).write_bytes(b"PAR1 half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq, "write_table", full_disk)
    with pytest.raises(OSError, match="No space"):
        jobs.plan.udf.write_rows(
            pa.table({"group_id": ["g"]}), str(tmp_path / "bucket-00000.parquet")
        )
    assert os.listdir(tmp_path) == []
