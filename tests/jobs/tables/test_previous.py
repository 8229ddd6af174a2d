"""Reading a run's small tables as columns (jobs/tables/previous.py): the member figures of
`elections` when the output has them, and `compare_runs` giving the rows the rules of
jobs/tables/changes.py give on every group's figures. No JVM."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from jobs.tables import changes as ch
from jobs.tables.changes import Figures
from jobs.tables.previous import (
    FIGURES_SCHEMA,
    RunFigures,
    compare_runs,
    local_reader,
    read_previous,
    run_figures,
)


def output(root: Path, tables: dict[str, list[dict[str, Any]]]) -> Path:
    root.mkdir(parents=True)
    (root / "_manifest.json").write_text(json.dumps({"version": "0.1.0", "ds": "2026-12-01"}))
    for name, rows in tables.items():
        (root / name).mkdir()
        pq.write_table(pa.Table.from_pylist(rows), root / name / "part-00000.parquet")
    return root


def metrics(g: str, strategy: str, members: int = 2, gap: int = 0) -> dict[str, Any]:
    return {
        "group_id": g,
        "strategy": strategy,
        "member_count": members,
        "partition_count": 4,
        "balance_gap": gap,
        "total_lag": 10,
    }


def election(g: str, elected: str | None = "range", **member_figures: Any) -> dict[str, Any]:
    return {"group_id": g, "elected_strategy": elected, "error": None, **member_figures}


def test_the_member_figures_are_read_when_elections_has_them(tmp_path: Path) -> None:
    out = output(
        tmp_path / "new",
        {
            "balance_metrics": [metrics("a", "elected"), metrics("a", "range")],
            "elections": [election("a", max_generation=7, members_digest="d1")],
            "recommendations": [{"group_id": "a", "recommended_strategy": "range"}],
        },
    )
    run = read_previous(str(out)).run
    assert run.member_figures
    assert run.figures["a"] == Figures("a", 2, 4, "range", None, 0, 10, "range", None, 7, "d1")


def test_an_older_output_without_them_still_compares(tmp_path: Path) -> None:
    out = output(
        tmp_path / "old",
        {
            "balance_metrics": [metrics("a", "elected")],
            "elections": [election("a")],
            "recommendations": [{"group_id": "a", "recommended_strategy": "range"}],
        },
    )
    before = read_previous(str(out)).run
    assert not before.member_figures
    assert (before.figures["a"].max_generation, before.figures["a"].members_digest) == (None, None)
    today = output(
        tmp_path / "today",
        {
            "balance_metrics": [metrics("a", "elected", members=3)],
            "elections": [election("a", max_generation=7, members_digest="d1")],
            "recommendations": [{"group_id": "a", "recommended_strategy": "range"}],
        },
    )
    rows = compare_runs(before, run_figures(local_reader(str(today))))
    assert [r["change"] for r in rows] == [ch.MEMBERS_CHANGED, ch.REBALANCED]
    assert ch.NO_MEMBER_FIGURES in rows[1]["detail"]


def test_a_table_of_duplicate_elected_rows_is_ranked_row_by_row(tmp_path: Path) -> None:
    # two `elected` rows for a: the first in the table's order counts, as for any strategy
    out = output(
        tmp_path / "dup",
        {
            "balance_metrics": [
                metrics("a", "roundrobin", gap=5),
                metrics("a", "elected", gap=1),
                metrics("a", "elected", gap=2),
                metrics("b", "roundrobin", gap=3, members=6),
                metrics("b", "sticky", gap=4, members=6),
            ],
            "elections": [election("a"), election("b", elected="sticky"), election("c", None)],
            "recommendations": [{"group_id": "a", "recommended_strategy": "range"}],
        },
    )
    f = read_previous(str(out)).run.figures
    assert (f["a"].balance_gap, f["b"].balance_gap, f["b"].members) == (1, 4, 6)
    assert f["c"] == Figures("c")


def random_figures(rng: random.Random, g: str) -> Figures:
    def pick(*values: Any) -> Any:
        return rng.choice(values)

    return Figures(
        g,
        members=pick(None, 2, 3),
        partitions=pick(None, 4, 6),
        elected=pick(None, "range", "sticky"),
        error=pick(None, "NOT_PLANNED"),
        balance_gap=pick(None, 0, 1),
        total_lag=pick(None, 0, 5_000, 20_000),
        recommended=pick(None, "range", "sticky"),
        verdict=pick(None, "MATCHES", "DIFFERS"),
        max_generation=pick(None, 4, 5),
        members_digest=pick(None, "aa", "bb"),
    )


def run_of(figures: dict[str, Figures], live: bool, member_figures: bool) -> RunFigures:
    table = pa.Table.from_pylist(
        [f.__dict__ for _, f in sorted(figures.items())], schema=FIGURES_SCHEMA
    )
    return RunFigures(table, has_live_check=live, member_figures=member_figures)


def test_compare_runs_gives_the_rows_of_compare_on_every_group() -> None:
    rng = random.Random(20261202)
    for trial in range(20):
        groups = [f"g{i:03d}" for i in range(300)]
        before = {g: random_figures(rng, g) for g in groups if rng.random() < 0.9}
        after = {
            g: (before[g] if g in before and rng.random() < 0.5 else random_figures(rng, g))
            for g in groups
            if rng.random() < 0.9
        }
        live, members = trial % 2 == 0, trial % 3 != 0
        expected = ch.compare(before, after, 1_000, verdicts=live, member_figures=members)
        got = compare_runs(run_of(before, live, members), run_of(after, live, members), 1_000)
        assert got == expected
        assert expected  # the trial has changes to find


def test_file_uris_are_os_paths_on_this_host_only() -> None:
    from jobs.tables.previous import os_path

    assert os_path("file:///data/out/ds=2026-12-01") == "/data/out/ds=2026-12-01"
    assert os_path("file:/data/out") == "/data/out"
    assert os_path("file://localhost/data/a%20b") == "/data/a b"
    assert os_path("file://other-host/data/out") is None
    assert os_path("hdfs://nn/data/out") is None


def test_describe_names_a_previous_output_on_another_file_system(tmp_path: Path) -> None:
    from jobs.tables.previous import group_since

    today = output(
        tmp_path / "today",
        {
            "balance_metrics": [metrics("a", "elected")],
            "elections": [election("a", max_generation=7, members_digest="d1")],
            "recommendations": [{"group_id": "a", "recommended_strategy": "range"}],
        },
    )
    remote = {"previous": {"path": "hdfs://nn/out/ds=2026-12-01", "ds": "2026-12-01"}}
    shown = group_since(str(today), remote, "a")
    assert shown is not None
    assert shown["after"] == Figures("a", 2, 4, "range", None, 0, 10, "range", None, 7, "d1")
    assert "not on the local file system" in shown["unusable"]
    local = {"previous": {"path": today.as_uri(), "ds": "2026-12-01"}}
    again = group_since(str(today), local, "a")
    assert again is not None
    assert again["before"] == again["after"]
    assert "unusable" not in again
