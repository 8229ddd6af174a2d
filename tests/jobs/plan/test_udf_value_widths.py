"""Offsets at the edge of Kafka's range, saturating lag sums and repeated subscriptions rows,
in the pure core and the UDF adapter (no JVM)."""

from __future__ import annotations

import pandas as pd
import pytest

from assignors.analysis.load import OffsetRow, load_metrics, partition_lags
from assignors.inputs.validation import MemberRow, TopicStatus, build_group
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.problems import ERROR, INT64_MAX, WARNING, Reason
from assignors.strategies.range import RangeAssignor
from assignors.whatif.simulation import scenario_costs
from jobs.plan.udf import _exact_ints
from jobs.tables.schemas import BALANCE_METRICS_FIELDS, LONG, REBALANCE_COSTS_FIELDS

SPEC = GroupSpec(
    "g",
    (Member("a", frozenset({"t"})), Member("b", frozenset({"t"}))),
    {"t": TopicMetadata("t", 2)},
)


def test_lag_columns_are_bigint() -> None:
    longs = {n for n, t, _ in BALANCE_METRICS_FIELDS if t == LONG}
    assert longs == {"total_lag", "max_partition_lag", "max_member_lag", "lag_moved"}
    assert {n for n, t, _ in REBALANCE_COSTS_FIELDS if t == LONG} == {"lag_moved"}


def test_the_largest_lag_is_exact() -> None:
    lags, problems = partition_lags([OffsetRow("t", 0, 0, INT64_MAX)], {"t": 2}, "g")
    assert lags == {("t", 0): INT64_MAX, ("t", 1): None}
    assert problems == []
    m = load_metrics(SPEC, {"a": [("t", 0)], "b": [("t", 1)]}, lags, None, {("t", 0): "b"})
    assert (m["total_lag"], m["max_partition_lag"], m["max_member_lag"], m["lag_moved"]) == (
        (INT64_MAX,) * 4
    )


def test_lag_sums_saturate_with_one_warning() -> None:
    rows = [OffsetRow("t", 0, 0, INT64_MAX), OffsetRow("t", 1, 0, INT64_MAX)]
    lags, problems = partition_lags(rows, {"t": 2}, "g")
    assert [(p.reason, p.severity, p.group_id) for p in problems] == [
        (Reason.LAG_SATURATED, WARNING, "g")
    ]
    assert str(2 * INT64_MAX) in problems[0].detail
    m = load_metrics(SPEC, {"a": [("t", 0), ("t", 1)], "b": []}, lags, None, {})
    assert m["total_lag"] == m["max_member_lag"] == INT64_MAX


@pytest.mark.parametrize(
    ("committed", "log_end", "reason"),
    [(-1, 10, Reason.NEGATIVE_OFFSET), (2**64 - 1, 10, Reason.OFFSET_OUT_OF_RANGE),
     (0, 2**63, Reason.OFFSET_OUT_OF_RANGE)],
)  # fmt: skip
def test_offsets_outside_kafkas_range_are_warnings(
    committed: int, log_end: int, reason: Reason
) -> None:
    lags, problems = partition_lags([OffsetRow("t", 0, committed, log_end)], {"t": 1}, "g")
    assert lags == {("t", 0): None}
    assert [(p.reason, p.severity, p.topic) for p in problems] == [(reason, WARNING, "t")]


def test_whatif_lag_moved_saturates_with_a_warning_naming_the_strategy() -> None:
    spec = GroupSpec(
        "g",
        (Member("a", frozenset({"t"})), Member("b", frozenset({"t"}))),
        {"t": TopicMetadata("t", 4)},
    )
    planned = RangeAssignor().assign(spec)
    lags = {("t", p): INT64_MAX for p in range(4)}
    rows, problems = scenario_costs(spec, "range", RangeAssignor, planned, lags=lags)
    assert rows
    assert all(0 <= r["lag_moved"] <= INT64_MAX for r in rows)
    assert any(r["lag_moved"] == INT64_MAX for r in rows)
    saturated = [p for p in problems if p.reason == Reason.LAG_SATURATED]
    assert saturated
    assert all(p.strategy == "range" for p in saturated)


def test_exact_ints_never_pass_through_float() -> None:
    assert _exact_ints(pd.Series(["9223372036854775807", None, "3"])) == [INT64_MAX, None, 3]
    assert _exact_ints(pd.Series([2**64 - 1, 5], dtype=object)) == [2**64 - 1, 5]
    assert _exact_ints(pd.Series([INT64_MAX, None], dtype="Int64")) == [INT64_MAX, None]
    assert _exact_ints(pd.Series([1.0, float("nan")])) == [1, None]
    with pytest.raises(TypeError, match="rounded"):
        _exact_ints(pd.Series([2.0**60]))


CATALOG = {"t": TopicStatus(4)}


def _build(rows: list[MemberRow]) -> tuple[object, list[tuple[str, str, str | None]]]:
    spec, problems = build_group("g", rows, (), CATALOG, lambda _: True)
    return spec, [(p.severity, p.reason, p.member_id) for p in problems]


def test_identical_subscriptions_rows_count_once() -> None:
    a, b = MemberRow("a", topics=["t"], generation=3), MemberRow("b", topics=["t"])
    spec, found = _build([a, b, MemberRow("a", topics=["t"], generation=3), b, b])
    assert spec is not None
    assert [m.member_id for m in spec.members] == ["a", "b"]  # type: ignore[attr-defined]
    assert found == [
        (WARNING, Reason.DUPLICATE_SUBSCRIPTION, "a"),
        (WARNING, Reason.DUPLICATE_SUBSCRIPTION, "b"),
    ]
    # the same, whatever order the rows arrive in
    assert _build([b, b, a, b, a]) == (spec, found)


def test_different_rows_with_one_member_id_still_reject_the_group() -> None:
    rows = [MemberRow("a", topics=["t"]), MemberRow("a", topics=["t"]), MemberRow("a", None, "r")]
    spec, found = _build(rows)
    assert spec is None
    assert (WARNING, Reason.DUPLICATE_SUBSCRIPTION, "a") in found
    assert (ERROR, Reason.DUPLICATE_MEMBER_ID, "a") in found
