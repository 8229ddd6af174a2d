"""The `changes` table's rules (jobs/tables/changes.py) over plain figures, and the reading of
an output's small tables into figures (jobs/tables/previous.py) over hand-written Parquet: no
JVM."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.settings.config import PlannerConfig, load_config
from jobs.tables import changes as ch
from jobs.tables.changes import Figures, compare
from jobs.tables.group_view import _since_lines, since_view
from jobs.tables.previous import PreviousUnusable, group_since, read_previous

BASE = Figures(
    "g",
    members=3,
    partitions=12,
    elected="range",
    balance_gap=0,
    total_lag=10_000,
    recommended="cooperative-sticky",
)


def one(before: Figures, after: Figures, **kw: Any) -> list[tuple[str, str | None, str | None]]:
    return [
        (r["change"], r["before"], r["after"]) for r in compare({"g": before}, {"g": after}, **kw)
    ]


def fig(**changes: Any) -> Figures:
    return Figures(**{**BASE.__dict__, **changes})


def test_nothing_changed_is_no_row() -> None:
    assert one(BASE, BASE) == []


def test_new_and_gone_groups_have_one_row_each() -> None:
    rows = compare({"old": fig(group_id="old")}, {"new": fig(group_id="new", members=5)})
    assert [(r["group_id"], r["change"], r["before"], r["after"]) for r in rows] == [
        ("new", ch.GROUP_NEW, None, "5"),
        ("old", ch.GROUP_GONE, "3", None),
    ]
    assert rows[0]["detail"] == "new group: 5 members, elected range"
    assert rows[1]["detail"] == "gone: was 3 members, elected range"


def test_members_changed_is_also_a_rebalance() -> None:
    rows = compare({"g": BASE}, {"g": fig(members=5)})
    assert [(r["change"], r["before"], r["after"]) for r in rows] == [
        (ch.MEMBERS_CHANGED, "3", "5"),
        (ch.REBALANCED, None, None),
    ]
    assert rows[0]["detail"] == "3 -> 5 members"
    assert rows[1]["detail"] == "rebalanced: members 3 -> 5"


def test_partitions_added_rebalance_the_group() -> None:
    rows = compare({"g": BASE}, {"g": fig(partitions=16)})
    assert [r["change"] for r in rows] == [ch.REBALANCED]
    assert rows[0]["detail"] == "rebalanced: subscribed partitions 12 -> 16"


def test_a_generation_that_moved_is_a_rebalance() -> None:
    rows = compare({"g": fig(max_generation=41)}, {"g": fig(max_generation=42)})
    assert [(r["change"], r["before"], r["after"]) for r in rows] == [(ch.REBALANCED, None, None)]
    assert rows[0]["detail"] == "rebalanced: generation 41 -> 42"
    # back to a low generation: the group was emptied and formed again, a rebalance too
    assert one(fig(max_generation=41), fig(max_generation=1)) == [(ch.REBALANCED, None, None)]
    # unknown in either run: no evidence either way
    assert one(fig(max_generation=41), fig(max_generation=None)) == []


def test_members_replaced_at_the_same_count_is_a_rebalance() -> None:
    rows = compare({"g": fig(members_digest="aa")}, {"g": fig(members_digest="bb")})
    assert [r["change"] for r in rows] == [ch.REBALANCED]
    assert rows[0]["detail"] == "rebalanced: members replaced (same count, other member ids)"
    # another count already says the members changed: not said twice
    rows = compare(
        {"g": fig(members_digest="aa", max_generation=3)},
        {"g": fig(members=4, members_digest="bb", max_generation=4)},
    )
    assert [r["change"] for r in rows] == [ch.MEMBERS_CHANGED, ch.REBALANCED]
    assert rows[1]["detail"] == "rebalanced: generation 3 -> 4; members 3 -> 4"
    assert one(fig(members_digest="aa"), fig(members_digest="aa")) == []


def test_without_the_previous_runs_member_figures_rebalanced_says_so() -> None:
    before, after = {"g": BASE}, {"g": fig(members=5, max_generation=9, members_digest="x")}
    rows = compare(before, after, member_figures=False)
    assert [r["change"] for r in rows] == [ch.MEMBERS_CHANGED, ch.REBALANCED]
    assert rows[1]["detail"] == f"rebalanced: members 3 -> 5 ({ch.NO_MEMBER_FIGURES})"
    # today's figures alone are no evidence: nothing to compare them with
    assert compare(before, {"g": fig(max_generation=9)}, member_figures=False) == []


def test_elected_changed_rebalances_and_names_both() -> None:
    assert one(BASE, fig(elected="cooperative-sticky")) == [
        (ch.ELECTED_CHANGED, "range", "cooperative-sticky"),
        (ch.REBALANCED, None, None),
    ]


def test_a_group_that_became_inconsistent_names_the_error() -> None:
    rows = compare({"g": BASE}, {"g": fig(elected=None, error="INCONSISTENT_GROUP_PROTOCOL")})
    assert rows[0]["change"] == ch.ELECTED_CHANGED
    assert (rows[0]["before"], rows[0]["after"]) == ("range", None)
    assert rows[0]["detail"] == "elected range -> INCONSISTENT_GROUP_PROTOCOL"


def test_balance_worse_and_better() -> None:
    assert one(BASE, fig(balance_gap=2)) == [(ch.BALANCE_WORSE, "0", "2")]
    assert one(fig(balance_gap=2), BASE) == [(ch.BALANCE_BETTER, "2", "0")]
    assert one(BASE, fig(balance_gap=None)) == []  # not known in one run: nothing said


@pytest.mark.parametrize(
    ("before", "after", "minimum", "expected"),
    [
        (10_000, 20_000, 1_000, ch.LAG_GREW),  # doubled
        (10_000, 19_999, 1_000, None),  # not quite doubled
        (10_000, 5_000, 1_000, ch.LAG_SHRANK),  # halved
        (10_000, 5_001, 1_000, None),
        (300, 900, 1_000, None),  # tripled, but by 600 messages only
        (300, 1_300, 1_000, ch.LAG_GREW),  # by exactly the minimum
        (0, 999, 1_000, None),
        (0, 1_000, 1_000, ch.LAG_GREW),  # from nothing
        (1_000, 0, 1_000, ch.LAG_SHRANK),  # caught up
        (3, 7, 0, ch.LAG_GREW),  # 0: any doubling
        (0, 0, 0, None),  # no move is no change, whatever the minimum
    ],
)
def test_lag_thresholds(before: int, after: int, minimum: int, expected: str | None) -> None:
    got = one(fig(total_lag=before), fig(total_lag=after), min_lag_change=minimum)
    assert got == ([] if expected is None else [(expected, str(before), str(after))])


def test_lag_default_minimum_is_a_thousand_messages() -> None:
    assert ch.DEFAULT_MIN_LAG_CHANGE == 1_000
    assert one(fig(total_lag=400), fig(total_lag=1_200)) == []
    assert one(fig(total_lag=400), fig(total_lag=1_400))[0][0] == ch.LAG_GREW


def test_lag_unknown_in_one_run_is_no_change() -> None:
    assert one(fig(total_lag=None), fig(total_lag=50_000)) == []


def test_recommendation_changed() -> None:
    assert one(BASE, fig(recommended="sticky")) == [
        (ch.RECOMMENDATION_CHANGED, "cooperative-sticky", "sticky")
    ]


def test_verdict_changed_only_when_both_runs_have_a_live_check() -> None:
    b, a = fig(verdict="MATCHES_ELECTED"), fig(verdict="STALE_OWNERS")
    assert one(b, a) == []
    assert one(b, a, verdicts=True) == [(ch.VERDICT_CHANGED, "MATCHES_ELECTED", "STALE_OWNERS")]
    assert one(fig(verdict=None), a, verdicts=True) == []  # the group had no verdict before


def test_rows_are_sorted_by_group_then_change_and_counted() -> None:
    before = {"b": BASE, "a": fig(group_id="a")}
    after = {
        "b": fig(group_id="b", balance_gap=3, total_lag=90_000),
        "a": fig(group_id="a", members=1),
    }
    rows = compare(before, after)
    assert [(r["group_id"], r["change"]) for r in rows] == sorted(
        (r["group_id"], r["change"]) for r in rows
    )
    counted = ch.counts(rows)
    assert list(counted) == list(ch.CHANGES)
    assert counted[ch.BALANCE_WORSE] == 1
    assert counted[ch.LAG_GREW] == 1
    assert counted[ch.MEMBERS_CHANGED] == 1
    assert counted[ch.GROUP_NEW] == 0
    assert set(rows[0]) == set(ch.COLUMNS)


def test_worse_first_puts_balance_then_the_largest_step_first() -> None:
    rows = [
        {"group_id": "x", "change": ch.LAG_GREW, "before": "0", "after": "5000"},
        {"group_id": "y", "change": ch.BALANCE_WORSE, "before": "0", "after": "1"},
        {"group_id": "z", "change": ch.BALANCE_WORSE, "before": "1", "after": "9"},
        {"group_id": "w", "change": ch.BALANCE_BETTER, "before": "9", "after": "1"},
    ]
    assert [r["group_id"] for r in ch.worse_first(rows, 10)] == ["z", "y", "x"]
    assert len(ch.worse_first(rows, 1)) == 1


# ---- reading an output's small tables ------------------------------------------------------


def write_output(root: Path, *, live: bool = False, version: str = "0.1.0", **drop: Any) -> Path:
    """A hand-written output: two groups, `elected` rows for one, the elected strategy's own
    row for the other."""
    root.mkdir(parents=True)
    (root / "_manifest.json").write_text(json.dumps({"version": version, "ds": "2026-12-01"}))
    metrics = [
        {
            "group_id": "a",
            "strategy": "elected",
            "member_count": 2,
            "partition_count": 4,
            "balance_gap": 1,
            "total_lag": 500,
        },
        {
            "group_id": "a",
            "strategy": "range",
            "member_count": 2,
            "partition_count": 4,
            "balance_gap": 1,
            "total_lag": 500,
        },
        {
            "group_id": "a",
            "strategy": "roundrobin",
            "member_count": 2,
            "partition_count": 4,
            "balance_gap": 0,
            "total_lag": 500,
        },
        {
            "group_id": "b",
            "strategy": "roundrobin",
            "member_count": 5,
            "partition_count": 9,
            "balance_gap": 0,
            "total_lag": None,
        },
        {
            "group_id": "b",
            "strategy": "range",
            "member_count": 5,
            "partition_count": 9,
            "balance_gap": 2,
            "total_lag": None,
        },
    ]
    elections = [
        {"group_id": "a", "elected_strategy": "range", "error": None},
        {"group_id": "b", "elected_strategy": "roundrobin", "error": None},
        {"group_id": "c", "elected_strategy": None, "error": "NOT_PLANNED"},
    ]
    recs = [
        {"group_id": "a", "recommended_strategy": "roundrobin"},
        {"group_id": "b", "recommended_strategy": "roundrobin"},
    ]
    tables = {"balance_metrics": metrics, "elections": elections, "recommendations": recs}
    if live:
        tables["live_check"] = [{"group_id": "a", "verdict": "MATCHES_ELECTED"}]
    for name, rows in tables.items():
        columns = [c for c in rows[0] if c not in drop.get(name, ())]
        table = pa.Table.from_pylist([{c: r[c] for c in columns} for r in rows])
        (root / name).mkdir()
        pq.write_table(table, root / name / "part-00000.parquet")
    return root


def test_an_outputs_figures_are_the_elected_strategys(tmp_path: Path) -> None:
    previous = read_previous(str(write_output(tmp_path / "out", live=True)))
    assert (previous.ds, previous.version) == ("2026-12-01", "0.1.0")
    assert previous.as_manifest() == {
        "path": str(tmp_path / "out"),
        "ds": "2026-12-01",
        "version": "0.1.0",
    }
    f = previous.run.figures
    assert f["a"] == Figures("a", 2, 4, "range", None, 1, 500, "roundrobin", "MATCHES_ELECTED")
    # no `elected` rows for b: the elected strategy's own row
    assert f["b"] == Figures("b", 5, 9, "roundrobin", None, 0, None, "roundrobin", None)
    assert f["c"] == Figures("c", error="NOT_PLANNED")
    assert previous.run.has_live_check


def test_without_a_live_check_there_are_no_verdicts(tmp_path: Path) -> None:
    run = read_previous(str(write_output(tmp_path / "out"))).run
    assert not run.has_live_check
    assert run.figures["a"].verdict is None


def test_live_check_verdicts_light_up_verdict_changed(tmp_path: Path) -> None:
    before = read_previous(str(write_output(tmp_path / "a", live=True))).run
    out = write_output(tmp_path / "b", live=True)
    pq.write_table(
        pa.Table.from_pylist([{"group_id": "a", "verdict": "STALE_OWNERS"}]),
        out / "live_check" / "part-00000.parquet",
    )
    after = read_previous(str(out)).run
    rows = compare(
        before.figures, after.figures, verdicts=before.has_live_check and after.has_live_check
    )
    assert [(r["group_id"], r["change"], r["before"], r["after"]) for r in rows] == [
        ("a", ch.VERDICT_CHANGED, "MATCHES_ELECTED", "STALE_OWNERS")
    ]


@pytest.mark.parametrize(
    ("damage", "cause"),
    [
        (lambda p: (p / "_manifest.json").unlink(), "is not a planner output (no _manifest.json)"),
        (lambda p: (p / "_manifest.json").write_text("{not json"), "_manifest.json is unreadable"),
        (lambda p: (p / "_manifest.json").write_text("[]"), "is not a planner manifest"),
        (
            lambda p: (p / "elections" / "part-00000.parquet").write_bytes(b"PAR1 truncated"),
            "damaged tables",
        ),
        (
            lambda p: [f.unlink() for f in (p / "recommendations").iterdir()],
            "no recommendations table",
        ),
    ],
)
def test_a_damaged_output_is_one_cause(tmp_path: Path, damage: Any, cause: str) -> None:
    out = write_output(tmp_path / "out")
    damage(out)
    with pytest.raises(PreviousUnusable, match=cause.replace("(", r"\(").replace(")", r"\)")):
        read_previous(str(out))
    shutil.rmtree(out)  # the suite's check reads every manifest under the test's directory


def test_an_older_version_without_a_column_is_named(tmp_path: Path) -> None:
    out = write_output(tmp_path / "out", balance_metrics=("balance_gap",))
    with pytest.raises(PreviousUnusable, match="balance_metrics has no column balance_gap"):
        read_previous(str(out))


def test_an_absent_previous_output_is_named(tmp_path: Path) -> None:
    with pytest.raises(PreviousUnusable, match="does not exist"):
        read_previous(str(tmp_path / "nothing"))


def test_describe_shows_the_previous_runs_figures_beside_todays(tmp_path: Path) -> None:
    before = write_output(tmp_path / "a")
    today = write_output(tmp_path / "b")
    pq.write_table(
        pa.Table.from_pylist(
            [{"group_id": "a", "strategy": "elected", "member_count": 3, "partition_count": 4,
              "balance_gap": 2, "total_lag": 500}]
        ),
        today / "balance_metrics" / "part-00000.parquet",
    )  # fmt: skip
    manifest = {"previous": {"path": str(before), "ds": "2026-12-01", "version": "0.1.0"}}
    figures = group_since(str(today), manifest, "a")
    assert figures is not None
    changed = [{"change": "BALANCE_WORSE", "before": "1", "after": "2", "detail": "gap 1 -> 2"}]
    since = since_view(figures, changed)
    by_label = {f["figure"]: (f["previous"], f["today"]) for f in since["figures"]}
    assert by_label["members"] == (2, 3)
    assert by_label["balance_gap (elected)"] == (1, 2)
    assert by_label["highest generation"] == (None, None)  # written without member figures
    text = "\n".join(_since_lines(since, 100))
    assert "SINCE THE PREVIOUS RUN (ds 2026-12-01" in text
    assert "BALANCE_WORSE" in text
    assert group_since(str(today), {}, "a") is None  # a run without --previous: no section
    shutil.rmtree(before)
    gone = group_since(str(today), manifest, "a")
    assert gone is not None
    assert "no longer there" in gone["unusable"]
    shutil.rmtree(today)


def test_min_lag_change_is_read_from_the_config(tmp_path: Path) -> None:
    path = tmp_path / "planner.toml"
    path.write_text("[changes]\nmin_lag_change = 5\n", encoding="utf-8")
    config = load_config(str(path))
    assert config.changes.min_lag_change == 5
    assert config.as_dict()["min_lag_change"] == 5
    assert PlannerConfig().changes.min_lag_change == ch.DEFAULT_MIN_LAG_CHANGE


def test_the_dag_passes_the_day_befores_output_as_previous() -> None:
    """Checked without Airflow (tests/ops runs the DAG in its own venv): the plan task's
    application_args name the previous ds folder after --previous, and the job takes it."""
    import ast

    from jobs.cli.plan import parse_args

    dag = Path(__file__).resolve().parents[3] / "dags" / "kafka_assignment_planner.py"
    call = next(
        node
        for node in ast.walk(ast.parse(dag.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and any(
            k.arg == "task_id" and ast.literal_eval(k.value) == "plan_assignments"
            for k in node.keywords
        )
    )
    args = ast.literal_eval(next(k.value for k in call.keywords if k.arg == "application_args"))
    at = args.index("--previous")
    assert args[at + 1] == "{{ params.output_root }}/ds={{ previous_ds }}"
    assert args[args.index("--output") + 1] == "{{ params.output_root }}/ds={{ ds }}"
    rendered = [
        a.replace("{{ params.output_root }}", "/o").replace("{{ previous_ds }}", "2026-12-01")
        for a in args[at : at + 2]
    ]
    assert parse_args(["--input", "i", "--output", "o", *rendered]).previous == "/o/ds=2026-12-01"
