"""The pyarrow writer of `balance_metrics` and `rebalance_costs`, without a JVM (Spark's own
write is compared in tests/spark/test_pyarrow_assignments_vs_spark.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.oracle import costs_values

from jobs.output import payload_files
from jobs.output.payload_files import write_files
from jobs.output.spark_layout import group_file_index, spark_string_hash, spark_string_hashes
from jobs.plan.pipeline import SORT_KEYS
from jobs.tables.rows import (
    COSTS_PAYLOAD_COLUMNS,
    KIND_METRICS,
    KIND_REBALANCE_COSTS,
    costs_payload,
)
from jobs.tables.schemas import OUTPUT_SCHEMAS


def test_the_writer_follows_the_pipelines_partitioning_and_order() -> None:
    # `write_file` hashes by group_id alone and sorts by its own copy of the keys.
    for table in payload_files.TABLES.values():
        assert payload_files.SORT_KEYS[table] == SORT_KEYS[table]
    assert set(payload_files.TABLES.values()) == set(payload_files.ROWS_PER_ROW_GROUP)


def _staged(tmp_path: Path, rows: list[tuple[str, str, str]]) -> str:
    """A staged folder as the pipeline writes it (kind, group_id, payload; Spark's names)."""
    folder = tmp_path / "_planned"
    folder.mkdir()
    kinds, groups, payloads = zip(*rows, strict=True) if rows else ((), (), ())
    table = pa.table(
        {
            "kind": pa.array(kinds, pa.string()),
            "group_id": pa.array(groups, pa.string()),
            "payload": pa.array(payloads, pa.string()),
        }
    )
    pq.write_table(table, folder / "part-00000-x.c000.snappy.parquet")
    (folder / "_SUCCESS").touch()
    return str(folder)


def _cost(group: str, strategy: str, scenario: str, moved: int | None) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys(OUTPUT_SCHEMAS["rebalance_costs"].names, 1)
    row.update(group_id=group, strategy=strategy, scenario=scenario, lag_moved=None)
    row["moved_partition_count"] = moved
    return row


def _read(folder: Path) -> list[dict[str, object]]:
    return [r for f in sorted(folder.glob("part-*")) for r in pq.read_table(f).to_pylist()]


def test_cost_rows_are_parsed_as_the_split_reads_them_and_sorted(tmp_path: Path) -> None:
    # A strategy name with commas (a plugin's) stays whole; an empty value is null.
    costs = [
        _cost("g2", "range", "member_leave", 3),
        _cost("g1", "com.example.a,b", "rolling_restart", None),
        _cost("g1", "com.example.a,b", "member_join", 0),
        _cost("é", "sticky", "member_leave", 2**31 - 1),
    ]
    staged = _staged(
        tmp_path, [(KIND_REBALANCE_COSTS, str(r["group_id"]), costs_payload(r)) for r in costs]
    )
    out = tmp_path / "rebalance_costs"
    kinds = [KIND_REBALANCE_COSTS]
    written = [write_files(i, 2, kinds, staged, str(tmp_path), "t", "4") for i in (0, 1)]
    assert sum(w[KIND_REBALANCE_COSTS] for w in written) == len(costs)
    rows = _read(out)
    expected = []
    for r in costs:
        values = costs_values(costs_payload(r))
        assert values["strategy"] == r["strategy"]
        expected.append({"group_id": r["group_id"], **{k: r[k] for k in COSTS_PAYLOAD_COLUMNS}})
    by_key = {(r["group_id"], r["strategy"], r["scenario"]): r for r in rows}
    for r in expected:
        got = by_key[(r["group_id"], r["strategy"], r["scenario"])]
        assert {k: got[k] for k in r} == r
    # each file holds its groups' rows (Spark's hash of group_id), sorted by the keys
    for index in (0, 1):
        path = next(out.glob(f"part-{index:05d}-t.c000.snappy.parquet"), None)
        mine = [r for r in costs if group_file_index(pa.array([r["group_id"]]), 2)[0] == index]
        if not mine:
            assert path is None
            continue
        assert path is not None
        got = pq.read_table(path).to_pylist()
        keys = [(r["group_id"], r["strategy"], r["scenario"]) for r in got]
        utf8 = [tuple(str(k).encode() for k in key) for key in keys]
        assert utf8 == sorted(utf8)
        assert len(got) == len(mine)
        assert pq.read_table(path).schema.names == OUTPUT_SCHEMAS["rebalance_costs"].names


def test_metrics_rows_are_parsed_from_their_json(tmp_path: Path) -> None:
    names = OUTPUT_SCHEMAS["balance_metrics"].names
    row: dict[str, object] = {
        "group_id": "g",
        "strategy": "range",
        "member_count": 3,
        "avg_partitions_per_member": 0.1 + 0.2,  # a float that must round-trip exactly
        "is_fully_balanced": True,
        "bottleneck_topics": ["b", "a"],
        "elected_strategy": None,
    }
    staged = _staged(tmp_path, [(KIND_METRICS, "g", json.dumps(row, separators=(",", ":")))])
    out = tmp_path / "balance_metrics"
    assert write_files(0, 1, [KIND_METRICS], staged, str(tmp_path), "t", "4") == {KIND_METRICS: 1}
    (got,) = _read(out)
    assert list(got) == names
    assert {k: got[k] for k in row} == row
    assert all(got[k] is None for k in names if k not in row)  # missing: null


@pytest.mark.parametrize("index", [0, 1])
def test_an_empty_table_is_one_file_of_schema(tmp_path: Path, index: int) -> None:
    # As Spark: no file for an empty partition, but an empty table still has file 0.
    staged = _staged(tmp_path, [])
    out = tmp_path / "rebalance_costs"
    written = write_files(index, 2, [KIND_REBALANCE_COSTS], staged, str(tmp_path), "t", "4")
    assert written == {KIND_REBALANCE_COSTS: 0}
    files = list(out.glob("part-*"))
    if index == 0:
        (path,) = files
        table = pq.read_table(path)
        assert table.num_rows == 0
        assert table.schema.names == OUTPUT_SCHEMAS["rebalance_costs"].names
    else:
        assert files == []
    assert not list(out.glob(".*"))


def test_the_hash_over_arrays_is_the_hash_of_each_value() -> None:
    # Every length modulo 4, multi-byte UTF-8 (bytes above 127 are mixed as signed bytes),
    # empty strings, and a slice (an array whose offsets do not start at 0).
    rng = random.Random(11)
    alphabet = "abcXYZ-_.09é漢😀\x01\x80ÿ"
    ids = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 23))) for _ in range(3000)]
    values = pa.array(ids)
    assert spark_string_hashes(values).tolist() == [spark_string_hash(g) for g in ids]
    assert spark_string_hashes(values.slice(7, 100)).tolist() == [
        spark_string_hash(g) for g in ids[7:107]
    ]
    assert spark_string_hashes(pa.array([""])).tolist() == [spark_string_hash("")]
    assert spark_string_hashes(pa.array([], pa.string())).tolist() == []


def test_rows_staged_in_many_files_write_what_one_file_writes(tmp_path: Path) -> None:
    # The staged rows are read a batch at a time: the files hold the same rows, in order.
    rng = random.Random(7)
    rows = []
    for g in range(60):
        group = f"g{g:02d}"
        for strategy in ("range", "sticky"):
            cost = _cost(group, strategy, "member_leave", rng.randrange(9))
            rows.append((KIND_REBALANCE_COSTS, group, costs_payload(cost)))
            metrics = {"group_id": group, "strategy": strategy, "member_count": g % 5}
            rows.append((KIND_METRICS, group, json.dumps(metrics)))
    rng.shuffle(rows)
    whole = tmp_path / "whole"
    whole.mkdir()
    staged = _staged(whole, rows)
    pieces = tmp_path / "pieces"
    pieces.mkdir()
    staged_pieces = _staged(pieces, rows[:7])
    for i in range(7, len(rows), 13):
        columns = zip(*rows[i : i + 13], strict=True)
        names = ("kind", "group_id", "payload")
        table = pa.table({k: pa.array(v, pa.string()) for k, v in zip(names, columns, strict=True)})
        pq.write_table(table, Path(staged_pieces) / f"part-{i:05d}-x.c000.snappy.parquet")
    kinds = [KIND_METRICS, KIND_REBALANCE_COSTS]
    for index in (0, 1, 2):
        one = write_files(index, 3, kinds, staged, str(whole), "t", "4")
        many = write_files(index, 3, kinds, staged_pieces, str(pieces), "t", "4")
        assert one == many
    assert sum(one.values()) > 0
    for table in payload_files.TABLES.values():
        assert _read(whole / table) == _read(pieces / table)
        assert len(_read(pieces / table)) == len(rows) // 2
