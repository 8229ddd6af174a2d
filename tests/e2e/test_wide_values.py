"""Offsets at the edge of Kafka's range, unsigned input columns and repeated part files,
through the job's entry point: every value is read back exactly, never null, never wrapped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.plan_assignments import main
from tools.sample_estate import SCHEMAS

pytestmark = pytest.mark.e2e

LONG_MAX = 2**63 - 1  # Kafka's largest offset (a Java long)


def _table(name: str, rows: dict[str, list[Any]], **types: pa.DataType) -> pa.Table:
    """A table with the contract's types, some columns retyped (`types`), the rest null."""
    n = len(next(iter(rows.values())))
    schema = SCHEMAS[name]
    for column, typ in types.items():
        schema = schema.set(schema.get_field_index(column), pa.field(column, typ))
    return pa.table({f.name: rows.get(f.name, [None] * n) for f in schema}, schema=schema)


def _write(root: Path, name: str, *tables: pa.Table) -> None:
    (root / name).mkdir(parents=True, exist_ok=True)
    for i, table in enumerate(tables):
        pq.write_table(table, root / name / f"part-{i}.parquet")


def _estate(root: Path, groups: list[str]) -> None:
    """Topic `t` (2 partitions); each group has members a and b, and b owned t-0 (so under
    `range` t-0 moves to a: its lag is the group's `lag_moved`)."""
    _write(
        root,
        "topic_partitions",
        _table("topic_partitions", {"topic": ["t", "t"], "partition": [0, 1]}),
    )
    _write(
        root,
        "subscriptions",
        _table(
            "subscriptions",
            {
                "group_id": [g for g in groups for _ in "ab"],
                "member_id": [m for _ in groups for m in "ab"],
                "topics": [["t"] for _ in groups for _ in "ab"],
            },
        ),
    )
    _write(
        root,
        "current_assignment",
        _table(
            "current_assignment",
            {
                "group_id": groups,
                "member_id": ["b"] * len(groups),
                "topic": ["t"] * len(groups),
                "partition": [0] * len(groups),
            },
        ),
    )


def _run(tmp_path: Path, root: Path, caplog: Any) -> tuple[int, str, Path]:
    out = tmp_path / "out"
    caplog.clear()
    code = main(["--input", str(root), "--output", str(out), "--strategies", "range"])
    return code, caplog.text, out


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    return pq.read_table(out / table).to_pylist()


def _offsets(rows: list[tuple[str, int, int | None, int | None]], **types: pa.DataType) -> pa.Table:
    return _table(
        "offsets",
        {
            "group_id": [r[0] for r in rows],
            "topic": ["t"] * len(rows),
            "partition": [r[1] for r in rows],
            "committed_offset": [r[2] for r in rows],
            "log_end_offset": [r[3] for r in rows],
        },
        **types,
    )


def test_lags_up_to_kafkas_largest_offset_are_written_exactly(
    tmp_path: Path, caplog, capsys
) -> None:  # type: ignore[no-untyped-def]
    """A lag past 2^31 (a busy topic after an outage), a lag of 3 between offsets above 2^53,
    the largest lag Kafka can have (2^63-1), and two of those, whose sum saturates."""
    root = tmp_path / "in"
    _estate(root, ["outage", "edge", "sum"])
    _write(
        root,
        "offsets",
        _offsets(
            [
                ("outage", 0, 0, 3_000_000_000),
                ("outage", 1, LONG_MAX - 3, LONG_MAX),  # lag 3: float64 made it 0
                ("edge", 0, 0, LONG_MAX),  # float64 made it 2^63: OverflowError, exit 1
                ("edge", 1, None, 5),  # nothing committed: unknown
                ("sum", 0, 0, LONG_MAX),
                ("sum", 1, 0, LONG_MAX),
            ]
        ),
    )
    code, log, out = _run(tmp_path, root, caplog)
    assert code == 0, log[-3000:]

    metrics = {r["group_id"]: r for r in _rows(out, "balance_metrics")}
    lag_columns = ("total_lag", "max_partition_lag", "max_member_lag", "lag_moved")
    got = {g: tuple(metrics[g][c] for c in lag_columns) for g in metrics}
    assert got == {
        "outage": (3_000_000_003, 3_000_000_000, 3_000_000_000, 3_000_000_000),
        "edge": (LONG_MAX, LONG_MAX, LONG_MAX, LONG_MAX),
        "sum": (LONG_MAX, LONG_MAX, LONG_MAX, LONG_MAX),  # 2^64-2 saturated
    }
    assert {g: metrics[g]["unknown_lag_partition_count"] for g in metrics} == {
        "outage": 0,
        "edge": 1,
        "sum": 0,
    }
    lags = {(r["group_id"], r["partition"]): r["lag"] for r in _rows(out, "assignments")}
    assert lags == {
        ("outage", 0): 3_000_000_000,
        ("outage", 1): 3,
        ("edge", 0): LONG_MAX,
        ("edge", 1): None,
        ("sum", 0): LONG_MAX,
        ("sum", 1): LONG_MAX,
    }
    # what-if rebalances: every row of a group with offsets has its lag_moved, within range
    costs = _rows(out, "rebalance_costs")
    assert costs
    assert all(r["lag_moved"] is not None for r in costs)
    assert max(r["lag_moved"] for r in costs) == LONG_MAX

    saturated = {
        (r["group_id"], r["strategy"])
        for r in _rows(out, "rejected")
        if r["reason"] == "LAG_SATURATED"
    }
    assert ("sum", None) in saturated  # the group's lags sum past 2^63-1
    assert {g for g, strategy in saturated if strategy is None} == {"sum"}
    # what-if scenarios move edge's 2^63-1 partition more than once: that (group, strategy)
    assert ("edge", "range") in saturated
    manifest = json.loads((out / "_manifest.json").read_text())
    assert any("LAG_SATURATED" in k for k in manifest["rejected_by_reason"]), manifest
    # the console's lag column is the number, not "-"
    assert str(LONG_MAX) in capsys.readouterr().out


def test_offsets_outside_kafkas_range_are_warnings(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    """Unsigned offset columns are read exactly: 2^64-1 (-1 written unsigned) is above Kafka's
    range, a warning with the lag unknown; a negative signed offset stays NEGATIVE_OFFSET."""
    root = tmp_path / "in"
    _estate(root, ["unsigned", "signed"])
    _write(
        root,
        "offsets",
        _offsets(
            [("unsigned", 0, 2**64 - 1, 10), ("unsigned", 1, 7, LONG_MAX)],
            committed_offset=pa.uint64(),
            log_end_offset=pa.uint64(),
        ),
        _offsets([("signed", 0, -1, 10), ("signed", 1, 1, 3)]),
    )
    code, log, out = _run(tmp_path, root, caplog)
    assert code == 0, log[-3000:]
    lags = {(r["group_id"], r["partition"]): r["lag"] for r in _rows(out, "assignments")}
    assert lags == {
        ("unsigned", 0): None,
        ("unsigned", 1): LONG_MAX - 7,
        ("signed", 0): None,
        ("signed", 1): 2,
    }
    reasons = {(r["group_id"], r["reason"], r["severity"]) for r in _rows(out, "rejected")}
    assert ("unsigned", "OFFSET_OUT_OF_RANGE", "warning") in reasons
    assert ("signed", "NEGATIVE_OFFSET", "warning") in reasons
    assert not {r for r in reasons if r[2] == "error"}


def test_unsigned_integer_columns_are_accepted_where_they_fit(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    """uint8..uint64 partition and generation columns plan like signed ones."""
    root = tmp_path / "in"
    _write(
        root,
        "topic_partitions",
        _table(
            "topic_partitions", {"topic": ["t", "t"], "partition": [0, 1]}, partition=pa.uint64()
        ),
    )
    _write(
        root,
        "subscriptions",
        _table(
            "subscriptions",
            {
                "group_id": ["g", "g"],
                "member_id": ["a", "b"],
                "topics": [["t"], ["t"]],
                "generation": [3, 2**31 - 1],
            },
            generation=pa.uint32(),
        ),
    )
    _write(
        root,
        "current_assignment",
        _table(
            "current_assignment",
            {"group_id": ["g"], "member_id": ["b"], "topic": ["t"], "partition": [0]},
            partition=pa.uint8(),
        ),
    )
    code, log, out = _run(tmp_path, root, caplog)
    assert code == 0, log[-3000:]
    rows = {
        (r["member_id"], r["partition"], r["previous_member_id"]) for r in _rows(out, "assignments")
    }
    # b (generation 2^31-1, the largest Kafka has) owned t-0: range gives it to a anyway
    assert rows == {("a", 0, "b"), ("b", 1, None)}


def test_an_unsigned_partition_above_2_63_is_refused_by_name(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "in"
    _estate(root, ["g"])
    _write(
        root,
        "offsets",
        _table(
            "offsets",
            {
                "group_id": ["g"],
                "topic": ["t"],
                "partition": [2**64 - 1],
                "committed_offset": [1],
                "log_end_offset": [2],
            },
            partition=pa.uint64(),
        ),
    )
    code, log, out = _run(tmp_path, root, caplog)
    assert code == 2, log[-3000:]
    assert "offsets: column 'partition'" in log
    assert "18446744073709551615" in log
    assert "above 2^63-1" in log
    assert not out.exists()


def test_a_subscriptions_part_file_delivered_twice_is_counted_once(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    """Identical rows (a retried export) are a warning; two different rows with one member
    id still reject their group."""
    root = tmp_path / "in"
    _write(
        root,
        "topic_partitions",
        _table("topic_partitions", {"topic": ["t"] * 4, "partition": [0, 1, 2, 3]}),
    )
    part = _table(
        "subscriptions",
        {
            "group_id": ["twice", "twice"],
            "member_id": ["a", "b"],
            "topics": [["t"], ["t"]],
            "generation": [4, 4],
        },
    )
    clash = _table(
        "subscriptions",
        {
            "group_id": ["clash", "clash"],
            "member_id": ["a", "a"],
            "topics": [["t"], ["t"]],
            "generation": [1, 2],
        },
    )
    _write(root, "subscriptions", part, part, clash)
    code, log, out = _run(tmp_path, root, caplog)
    assert code == 0, log[-3000:]
    assignments = sorted(
        (r["group_id"], r["member_id"], r["partition"]) for r in _rows(out, "assignments")
    )
    assert assignments == [
        ("twice", "a", 0),
        ("twice", "a", 1),
        ("twice", "b", 2),
        ("twice", "b", 3),
    ]
    rejected = sorted(
        (r["group_id"], r["member_id"], r["severity"], r["reason"]) for r in _rows(out, "rejected")
    )
    assert rejected == [
        ("clash", "a", "error", "DUPLICATE_MEMBER_ID"),
        ("twice", "a", "warning", "DUPLICATE_SUBSCRIPTION"),
        ("twice", "b", "warning", "DUPLICATE_SUBSCRIPTION"),
    ]
    metrics = {r["group_id"]: r["member_count"] for r in _rows(out, "balance_metrics")}
    assert metrics == {"twice": 2}
