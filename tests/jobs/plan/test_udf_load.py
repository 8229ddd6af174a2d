"""The load and rack wiring without a JVM: the catalog's per-partition data, `balance_by`,
the planner's load columns and the bucket function's offsets rows."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers.buckets import cogrouped
from helpers.oracle import split_tables

from assignors.analysis.load import (
    LOAD_METRIC_COLUMNS,
    WEIGHT_SCALE,
    weight_loads,
    weight_lower_bound,
)
from assignors.analysis.metrics import METRIC_COLUMNS
from assignors.catalog.catalog import StrategyCatalog
from assignors.inputs.topics import partition_data
from assignors.inputs.validation import TopicStatus
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.ownership import valid_owned
from assignors.planner import ASSIGNMENT_ROW_FIELDS, GroupLoad, balanced_loads, plan_group
from assignors.strategies.balanced import BalancedAssignor
from assignors.strategies.weighted import assign_by_load
from jobs.plan.udf import (
    INPUT_COLUMNS,
    KIND_MEMBER,
    KIND_OFFSETS,
    KIND_OWNED,
    PlanContext,
    plan_bucket,
)
from jobs.settings.config import ConfigError, load_config
from jobs.settings.run import RunSettings
from jobs.tables.rows import KIND_METRICS

# ------------------------------------------------------------------- catalog: racks, weights


def test_partition_data_normalises_racks_and_keeps_topics_without_them_small() -> None:
    catalog = {"t": TopicStatus(3), "bare": TopicStatus(2), "broken": TopicStatus(0, "X", "x")}
    out, problems = partition_data(
        catalog,
        [
            ("t", 0, ["a", None, "", "a"]),
            ("t", 1, ["b"]),
            ("t", 1, ["c", "b"]),  # a duplicated partition row: the union, any order
            ("t", 7, ["z"]),  # beyond the topic: ignored
            ("bare", 0, [None, ""]),  # nothing but unknown racks: no rack tuple
            ("broken", 0, ["a"]),
            ("unknown", 0, ["a"]),
        ],
        [],
    )
    assert problems == []
    assert out["t"].replica_racks == (frozenset("a"), frozenset("bc"), frozenset())
    assert out["bare"].replica_racks == ()
    assert out["broken"] == catalog["broken"]
    assert out["t"].weights == ()
    assert "unknown" not in out
    assert out["t"].metadata("t") == TopicMetadata("t", 3, out["t"].replica_racks)


def test_partition_data_equal_rack_sets_are_shared() -> None:
    racks = [("t", p, ["a", "b"]) for p in range(50)]
    out, _ = partition_data({"t": TopicStatus(50)}, racks, [])
    assert len({id(r) for r in out["t"].replica_racks}) == 1


def test_partition_data_weights_in_units_with_one_warning_per_topic() -> None:
    catalog = {"t": TopicStatus(4), "u": TopicStatus(1), "v": TopicStatus(2)}
    out, problems = partition_data(
        catalog,
        [],
        [
            ("t", 0, 2.5),
            ("t", 1, -1.0),
            ("t", 2, float("nan")),
            ("t", 3, float("inf")),
            ("u", 0, 0.0),
            ("v", 5, 3.0),  # beyond the topic: ignored
        ],
    )
    assert out["t"].weights == (2_500_000, WEIGHT_SCALE, WEIGHT_SCALE, WEIGHT_SCALE)
    assert out["u"].weights == (0,)
    assert out["v"].weights == ()
    assert [(p.reason, p.topic, p.group_id, p.severity) for p in problems] == [
        ("INVALID_WEIGHT", "t", None, "warning")
    ]


# ------------------------------------------------------------------------------ config


def test_balance_by_config(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("", encoding="utf-8")
    assert load_config(path).planner.balance_by == "count"
    for value in ("count", "weight", "lag"):
        path.write_text(f'[planner]\nbalance_by = "{value}"\n', encoding="utf-8")
        config = load_config(path)
        assert config.planner.balance_by == value
        assert config.as_dict()["balance_by"] == value
    for bad in ('"bytes"', "1", '"Weight"'):
        path.write_text(f"[planner]\nbalance_by = {bad}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=r"planner\.balance_by must be one of"):
            load_config(path)


def test_shipped_config_names_balance_by() -> None:
    assert load_config().planner.balance_by == "count"


# ----------------------------------------------------------------------------- planner


def _group(weights: list[int], members: int = 2, owned: dict[str, list[int]] | None = None):  # type: ignore[no-untyped-def]
    owned = owned or {}
    spec = GroupSpec(
        "g",
        tuple(
            Member(
                f"m{i}",
                frozenset({"t"}),
                owned=tuple(("t", p) for p in owned.get(f"m{i}", [])),
                generation=1 if owned else None,
            )
            for i in range(members)
        ),
        {"t": TopicMetadata("t", len(weights))},
    )
    return spec, {("t", p): w for p, w in enumerate(weights)}


CATALOG = StrategyCatalog.build(("range", "roundrobin", "balanced"))


def test_plan_rows_carry_lag_and_metrics_carry_the_load_columns() -> None:
    spec, weights = _group([3, 1, 1, 1])
    lags = {("t", 0): 7, ("t", 1): None, ("t", 2): 0, ("t", 3): 5}
    plan = plan_group(spec, CATALOG, False, load=GroupLoad(lags, weights))
    bound = weight_lower_bound(spec, weight_loads(spec, weights))
    for sp in plan.plans:
        assert list(sp.metrics) == [name for name, _ in METRIC_COLUMNS]
        rows = [dict(zip(ASSIGNMENT_ROW_FIELDS, r, strict=True)) for r in sp.rows]
        assert {(r["topic"], r["partition"]): r["lag"] for r in rows} == lags
        assert sp.metrics["total_lag"] == 12
        assert sp.metrics["unknown_lag_partition_count"] == 1
        # the same on every strategy row (units written as weights)
        assert sp.metrics["weight_lower_bound"] == bound / WEIGHT_SCALE


def test_without_load_input_the_load_columns_are_null() -> None:
    spec, _ = _group([1, 1, 1])
    plan = plan_group(spec, CATALOG, False)
    for sp in plan.plans:
        assert all(sp.metrics[name] is None for name, _ in LOAD_METRIC_COLUMNS)
        assert all(r[-1] is None for r in sp.rows)


def test_balanced_loads_fall_back_to_counts() -> None:
    spec, weights = _group([2, 2, 2])
    assert balanced_loads(spec, GroupLoad(None, weights, "count")) is None
    assert balanced_loads(spec, GroupLoad(None, None, "weight")) is None
    assert balanced_loads(spec, GroupLoad(None, weights, "lag")) is None  # no offsets
    assert balanced_loads(spec, GroupLoad(None, weights, "weight")) is None  # all equal
    spec, weights = _group([2, 1, 2])
    assert balanced_loads(spec, GroupLoad(None, weights, "weight")) == weights


def test_balanced_by_weight_is_the_load_heuristic() -> None:
    rng = random.Random(5)
    for _ in range(60):
        weights = [rng.choice([0, 1, 2, 5, 9]) for _ in range(rng.randint(2, 9))]
        spec, loads = _group(weights, members=rng.randint(1, 4))
        plan = plan_group(spec, CATALOG, False, load=GroupLoad(None, loads, "weight"))
        balanced = next(sp for sp in plan.plans if sp.strategy == "balanced")
        got = {(r[2], r[3]): r[0] for r in balanced.rows}
        if balanced_loads(spec, GroupLoad(None, loads, "weight")) is None:
            continue
        expected = assign_by_load(spec, loads, {})
        assert got == {tp: m for m, tps in expected.items() for tp in tps}
        assert balanced.metrics["max_member_weight"] >= balanced.metrics["weight_lower_bound"]


def test_balanced_by_load_stays_cooperative() -> None:
    # KIP-429: a partition another live member still owns is revoked first and handed over
    # in a later round, never in the round it is revoked.
    rng = random.Random(11)
    for _ in range(80):
        n = rng.randint(2, 8)
        members = rng.randint(2, 4)
        owned: dict[str, list[int]] = {}
        for p in range(n):
            if rng.random() < 0.7:
                owned.setdefault(f"m{rng.randrange(members)}", []).append(p)
        spec, loads = _group([rng.choice([1, 3, 8]) for _ in range(n)], members, owned)
        result = BalancedAssignor(loads).rebalance(spec)
        previous = {tp: m for m, tps in valid_owned(spec).items() for tp in tps}
        for member_id, tps in result.assignment.items():
            for tp in tps:
                if previous.get(tp, member_id) != member_id:
                    assert result.received_round.get(tp, 1) >= 2, (tp, member_id)


# ---------------------------------------------------------------------- bucket function

TOPICS = {"a": TopicStatus(3), "b": TopicStatus(2, weights=(5_000_000, 0))}


def _bucket(seed: int) -> pd.DataFrame:
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for g in range(5):
        for i in range(rng.randint(1, 3)):
            rows.append(
                {"kind": KIND_MEMBER, "group_id": f"g{g}", "member_id": f"m{i}",
                 "topics": ["a", "b"][: rng.randint(1, 2)]}
            )  # fmt: skip
        rows.append({"kind": KIND_OWNED, "group_id": f"g{g}", "member_id": "m0", "topic": "a",
                     "partition": 0})  # fmt: skip
        for p in range(3):
            committed = None if p == 2 else rng.randint(0, 50)
            rows.append(
                {"kind": KIND_OFFSETS, "group_id": f"g{g}", "topic": "a", "partition": p,
                 "committed_offset": committed, "log_end_offset": 100}
            )  # fmt: skip
    rows.append({"kind": KIND_OFFSETS, "group_id": "ghost", "topic": "a", "partition": 0,
                 "committed_offset": 1, "log_end_offset": 2})  # fmt: skip
    rows.append({"kind": KIND_OFFSETS, "group_id": None, "topic": "a", "partition": 0,
                 "committed_offset": 1, "log_end_offset": 2})  # fmt: skip
    return pd.DataFrame(rows).reindex(columns=list(INPUT_COLUMNS))


def _ctx(has_offsets: bool, has_weights: bool) -> PlanContext:
    return PlanContext(
        RunSettings.of(
            ("range", "balanced"), True, has_offsets=has_offsets, has_weights=has_weights
        )
    )


def test_bucket_offsets_rows_give_lags_and_unknown_group_warnings() -> None:
    pdf = _bucket(3)
    tables = split_tables(plan_bucket(pdf, TOPICS, _ctx(True, True)))
    a = tables["assignments"]
    offsets = pdf[pdf["kind"] == KIND_OFFSETS]
    expected = {
        (r.group_id, r.topic, int(r.partition)): None
        if pd.isna(r.committed_offset)
        else 100 - int(r.committed_offset)
        for r in offsets.itertuples()
        if r.group_id not in (None, "ghost")
    }
    for r in a.itertuples():
        lag = None if pd.isna(r.lag) else int(r.lag)
        assert lag == expected.get((r.group_id, r.topic, r.partition)), r
    reasons = sorted((r.reason, r.group_id) for r in tables["rejected"].itertuples())
    assert ("OFFSETS_UNKNOWN_GROUP", "ghost") in reasons
    assert ("OFFSETS_NULL_KEY", None) in reasons
    metrics = tables["balance_metrics"]
    on_b = metrics["topic_count"] == 2
    assert metrics.loc[on_b, "total_weight"].tolist() == [8.0] * int(on_b.sum())
    # shuffled rows, or members apart from owned and offsets rows (the job's cogroup): the
    # same output
    expected = plan_bucket(pdf, TOPICS, _ctx(True, True))
    shuffled = pdf.sample(frac=1, random_state=1).reset_index(drop=True)
    pd.testing.assert_frame_equal(plan_bucket(shuffled, TOPICS, _ctx(True, True)), expected)
    pd.testing.assert_frame_equal(plan_bucket(cogrouped(pdf), TOPICS, _ctx(True, True)), expected)


def test_bucket_of_partition_rows_alone_reports_each_group() -> None:
    # The job's cogroup calls a bucket whose groups have owned and offsets rows but no member
    # at all with an empty members side: each such group is still reported.
    pdf = _bucket(3)
    rows = pdf[pdf["kind"] != KIND_MEMBER].reset_index(drop=True)
    frames = cogrouped(rows)
    assert frames[0].empty
    assert not frames[1].empty
    got = plan_bucket(frames, TOPICS, _ctx(True, True))
    pd.testing.assert_frame_equal(got, plan_bucket(rows, TOPICS, _ctx(True, True)))
    reasons = {(r.reason, r.group_id) for r in split_tables(got)["rejected"].itertuples()}
    for g in range(5):  # its owned partition, then its offsets
        assert {("NO_MEMBERS", f"g{g}"), ("OFFSETS_UNKNOWN_GROUP", f"g{g}")} <= reasons
    assert ("OFFSETS_UNKNOWN_GROUP", "ghost") in reasons


def test_bucket_without_offsets_or_weights_has_null_load() -> None:
    tables = split_tables(plan_bucket(_bucket(4), TOPICS, _ctx(False, False)))
    assert tables["assignments"]["lag"].isna().all()
    metrics = tables["balance_metrics"]
    assert metrics[[n for n, _ in LOAD_METRIC_COLUMNS]].isna().all().all()


def test_plan_bucket_payload_has_every_load_column() -> None:
    wide = plan_bucket(_bucket(5), TOPICS, _ctx(True, True))
    payload = json.loads(wide[wide["kind"] == KIND_METRICS]["payload"].iloc[0])
    assert [n for n, _ in LOAD_METRIC_COLUMNS] == [
        k for k in payload if k in dict(LOAD_METRIC_COLUMNS)
    ]
