"""The estate report on synthetic output directories: the full contract, and today's tables.

The full one holds every output table and column of docs/data-contract.md (balance_gap, lag and
weight columns, `rebalance_costs`, `recommendations`, `rejected.strategy`); the other only
what outputs written before those features hold. Every section must be there in both, with a
note saying what is absent in the second.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib", reason="the report needs the `report` dependency group")
pytest.importorskip("jinja2", reason="the report needs the `report` dependency group")

from pyspark.sql import types as T

from assignors.analysis.metrics import METRIC_COLUMNS
from assignors.whatif.simulation import SCENARIOS
from jobs.report import REPORT_FILE, write_report
from jobs.report.ids import MAX_ID_CHARS
from jobs.report.tables import WORST_GROUPS

pytestmark = pytest.mark.spark

STRATEGIES = ["range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "balanced"]
GROUPS = 30
SECTIONS = ("run", "strategies", "gap", "max", "load", "costs", "recommend", "worst")
SECTIONS += ("rejected", "elected", "capacity", "live", "migration")
NEW_METRICS: list[tuple[str, T.DataType]] = [
    ("rack_mismatch_count", T.IntegerType()),
    ("best_max_partitions_per_member", T.IntegerType()),
    ("balance_gap", T.IntegerType()),
    ("bottleneck_topics", T.ArrayType(T.StringType())),
    ("total_weight", T.DoubleType()),
    ("max_member_weight", T.DoubleType()),
    ("min_member_weight", T.DoubleType()),
    ("weight_imbalance", T.DoubleType()),
    ("weight_lower_bound", T.DoubleType()),
    ("total_lag", T.LongType()),
    ("max_partition_lag", T.LongType()),
    ("max_member_lag", T.LongType()),
    ("lag_imbalance", T.DoubleType()),
    ("unknown_lag_partition_count", T.IntegerType()),
    ("lag_moved", T.LongType()),
]
_PY = {int: T.IntegerType(), float: T.DoubleType(), bool: T.BooleanType(), str: T.StringType()}


def _schema(cols: list[tuple[str, T.DataType]]) -> T.StructType:
    return T.StructType([T.StructField(n, t, True) for n, t in cols])


def _metric_row(g: int, k: int, strategy: str, full: bool) -> dict[str, Any]:
    """Made-up but self-consistent figures: strategy k is worse by k on some groups."""
    if strategy == "elected":  # the figures of the strategy the group elects (see _tables)
        k = STRATEGIES.index(_elected(g))
        strategy_figures = _elected(g)
    else:
        strategy_figures = strategy
    members = 2 + g % 5
    partitions = 4 + 3 * g
    best = -(-partitions // members)
    gap = (g * (k + 1)) % 7 if strategy_figures != "balanced" else 0
    row: dict[str, Any] = {
        "group_id": f"g{g:03d}",
        "strategy": strategy,
        "member_count": members,
        "topic_count": 1 + g % 3,
        "partition_count": partitions,
        "assigned_partition_count": partitions,
        "unassigned_partition_count": 0,
        "min_partitions_per_member": max(0, best - gap - 1),
        "max_partitions_per_member": best + gap,
        "avg_partitions_per_member": partitions / members,
        "stddev_partitions_per_member": gap / 2,
        "partition_spread": gap + 1,
        "is_fully_balanced": gap == 0,
        "idle_member_count": 0,
        "max_topic_spread": gap,
        "moved_partition_count": g % 4,
        "is_valid": True,
        "rebalance_rounds": 2 if strategy == "cooperative-sticky" else 1,
        "revoked_partition_count": g % 3,
        "elected_strategy": None,
    }
    if full:
        row |= {
            "rack_mismatch_count": g % 2,
            "best_max_partitions_per_member": best,
            "balance_gap": gap,
            "bottleneck_topics": [] if gap == 0 else [f"t{g}"],
            "total_weight": float(partitions),
            "max_member_weight": float(best + gap),
            "min_member_weight": 1.0,
            "weight_imbalance": 1.0 + gap / 10,
            "weight_lower_bound": float(best),
            "total_lag": 1000 * g,
            "max_partition_lag": 100 * g,
            "max_member_lag": 400 * g,
            "lag_imbalance": 1.0 + (g % 5) / 4 + k / 10,
            "unknown_lag_partition_count": g % 2,
            "lag_moved": 10 * g,
        }
    return row


def _elected(g: int) -> str:
    return ("range", "cooperative-sticky")[g % 2]


def _tables(full: bool) -> dict[str, tuple[list[tuple[str, T.DataType]], list[dict[str, Any]]]]:
    metric_cols = [("group_id", T.StringType()), ("strategy", T.StringType())]
    # Today's columns: the contract's metrics without the best-balance, rack and load columns.
    new = {name for name, _ in NEW_METRICS}
    metric_cols += [(n, _PY[t]) for n, t in METRIC_COLUMNS if n not in new]
    if full:
        metric_cols += NEW_METRICS
    strategies = [*(STRATEGIES if full else STRATEGIES[:5]), "elected"]
    metrics = [
        _metric_row(g, k, s, full)
        for g in range(GROUPS)
        for k, s in enumerate(strategies)
        if g != GROUPS - 1  # the last group is rejected
    ]
    elections = [
        {
            "group_id": f"g{g:03d}",
            "elected_strategy": None if g == GROUPS - 1 else _elected(g),
            "candidate_strategies": [] if g == GROUPS - 1 else ["range", "cooperative-sticky"],
            "error": "NOT_PLANNED" if g == GROUPS - 1 else None,
        }
        for g in range(GROUPS)
    ]
    rejected_cols = [
        ("group_id", T.StringType()),
        ("member_id", T.StringType()),
        ("topic", T.StringType()),
        *([("strategy", T.StringType())] if full else []),
        ("severity", T.StringType()),
        ("reason", T.StringType()),
        ("detail", T.StringType()),
    ]
    rejected = [
        {"group_id": f"g{GROUPS - 1:03d}", "member_id": "m1", "topic": None, "strategy": None,
         "severity": "error", "reason": "DUPLICATE_MEMBER_ID",
         "detail": "member_id appears 2 times"},
        {"group_id": "g001", "member_id": "m2", "topic": None, "strategy": None,
         "severity": "warning", "reason": "UNKNOWN_ASSIGNMENT_STRATEGY",
         "detail": "assignment strategy 'sticky-ish' is not a client-side strategy <b>"},
    ]  # fmt: skip
    if full:
        rejected.append(
            {"group_id": "g002", "member_id": None, "topic": None, "strategy": "uniform",
             "severity": "error", "reason": "SCENARIO_NOT_APPLICABLE", "detail": "no racks"}
        )  # fmt: skip
    tables: dict[str, tuple[list[tuple[str, T.DataType]], list[dict[str, Any]]]] = {
        "balance_metrics": (metric_cols, metrics),
        "elections": (
            [
                ("group_id", T.StringType()),
                ("elected_strategy", T.StringType()),
                ("candidate_strategies", T.ArrayType(T.StringType())),
                ("error", T.StringType()),
            ],
            elections,
        ),
        "rejected": (rejected_cols, rejected),
    }
    if full:
        tables["rebalance_costs"] = _costs()
        tables["recommendations"] = _recommendations()
        tables["capacity"] = _capacity()
        tables["migrations"] = _migrations()
        tables["live_check"] = _live_check()
    return tables


def _live_check() -> tuple[list[tuple[str, T.DataType]], list[dict[str, Any]]]:
    """Every group matches its plan but g004 (unexplained) and g007 (rebalancing)."""
    cols: list[tuple[str, T.DataType]] = [
        ("group_id", T.StringType()), ("elected_strategy", T.StringType()),
        ("client_library", T.StringType()), ("verdict", T.StringType()),
        ("differing_partition_count", T.IntegerType()), ("detail", T.StringType()),
    ]  # fmt: skip
    verdicts = {4: "UNEXPLAINED", 7: "REBALANCING"}
    rows = [
        {
            "group_id": f"g{g:03d}", "elected_strategy": "range", "client_library": "java",
            "verdict": verdicts.get(g, "MATCHES_ELECTED"),
            "differing_partition_count": 3 if g in verdicts else 0, "detail": "evidence",
        }
        for g in range(GROUPS - 1)
    ]  # fmt: skip
    return cols, rows


def _migrations() -> tuple[list[tuple[str, T.DataType]], list[dict[str, Any]]]:
    """A classic_to_consumer row per group: every third blocked, every fifth with a warning;
    the bounce pauses more the higher the group number."""
    strings = T.ArrayType(T.StringType())
    cols: list[tuple[str, T.DataType]] = [
        ("group_id", T.StringType()), ("path", T.StringType()), ("ready", T.BooleanType()),
        ("blockers", strings), ("warnings", strings), ("from_strategy", T.StringType()),
        ("landing_assignor", T.StringType()), ("moved_at_conversion", T.IntegerType()),
        ("bounce_moved", T.IntegerType()), ("bounce_paused", T.IntegerType()),
        ("first_bounce_moved", T.IntegerType()), ("first_bounce_paused", T.IntegerType()),
        ("steps", T.IntegerType()), ("detail", T.StringType()),
    ]  # fmt: skip
    rows = [
        {
            "group_id": f"g{g:03d}", "path": "classic_to_consumer", "ready": g % 3 != 0,
            "blockers": [] if g % 3 else ["ASSIGNMENT_USER_DATA"],
            "warnings": ["RACK_AWARENESS_LOST"] if g % 5 == 1 else [],
            "from_strategy": "range" if g % 2 else "sticky",
            "landing_assignor": "server-range" if g % 2 else "uniform",
            "moved_at_conversion": 1, "bounce_moved": g, "bounce_paused": 2 * g,
            "first_bounce_moved": None, "first_bounce_paused": None, "steps": 4, "detail": "",
        }
        for g in range(GROUPS - 1)
    ]  # fmt: skip
    return cols, rows


def _capacity() -> tuple[list[tuple[str, T.DataType]], list[dict[str, Any]]]:
    cols: list[tuple[str, T.DataType]] = [
        ("group_id", T.StringType()),
        ("strategy", T.StringType()),
        ("members", T.IntegerType()),
        ("active_members", T.IntegerType()),
        ("max_useful_members", T.IntegerType()),
        ("members_for_target", T.IntegerType()),
        ("target", T.StringType()),
        ("detail", T.StringType()),
    ]
    rows = [
        {
            "group_id": f"g{g:03d}",
            "strategy": s,
            "members": 4 + g % 3,
            "active_members": 3 + (g + k) % 2,
            "max_useful_members": 4 + (g + k) % 3,
            "members_for_target": None,
            "target": None,
            "detail": None,
        }
        for g in range(GROUPS - 1)
        for k, s in enumerate([*STRATEGIES, "elected"])
    ]
    return cols, rows


def _costs() -> tuple[list[tuple[str, T.DataType]], list[dict[str, Any]]]:
    cols: list[tuple[str, T.DataType]] = [
        ("group_id", T.StringType()),
        ("strategy", T.StringType()),
        ("scenario", T.StringType()),
        ("rebalances", T.IntegerType()),
        ("rounds", T.IntegerType()),
        ("moved_partition_count", T.IntegerType()),
        ("paused_partition_count", T.IntegerType()),
        ("lag_moved", T.LongType()),
        ("max_partitions_per_member_after", T.IntegerType()),
        ("partition_spread_after", T.IntegerType()),
        ("balance_gap_after", T.IntegerType()),
    ]
    rows = [
        {
            "group_id": f"g{g:03d}",
            "strategy": s,
            "scenario": sc,
            "rebalances": 2 if sc == "rolling_restart" else 1,
            "rounds": 2,
            "moved_partition_count": (g + k + j) % 6,
            "paused_partition_count": (4 + 3 * g) if k < 3 else (g + j) % 5,
            "lag_moved": 10 * g,
            "max_partitions_per_member_after": 3,
            "partition_spread_after": 1,
            "balance_gap_after": (g + k) % 3,
        }
        for g in range(GROUPS - 1)
        for k, s in enumerate(STRATEGIES)
        for j, sc in enumerate(SCENARIOS)
    ]
    return cols, rows


def _recommendations() -> tuple[list[tuple[str, T.DataType]], list[dict[str, Any]]]:
    cols: list[tuple[str, T.DataType]] = [
        ("group_id", T.StringType()),
        ("current_strategy", T.StringType()),
        ("recommended_strategy", T.StringType()),
        ("reason", T.StringType()),
        ("current_max_partitions_per_member", T.IntegerType()),
        ("recommended_max_partitions_per_member", T.IntegerType()),
        ("current_balance_gap", T.IntegerType()),
        ("recommended_balance_gap", T.IntegerType()),
        ("current_rolling_restart_paused", T.IntegerType()),
        ("recommended_rolling_restart_paused", T.IntegerType()),
        ("current_member_join_moved", T.IntegerType()),
        ("recommended_member_join_moved", T.IntegerType()),
    ]
    rows = []
    for g in range(GROUPS - 1):
        current = ("range", "cooperative-sticky")[g % 2]
        rec = "cooperative-sticky" if g % 3 else "uniform"
        rows.append(
            {
                "group_id": f"g{g:03d}",
                "current_strategy": current,
                "recommended_strategy": rec,
                "reason": f"balance_gap {g % 7} -> 0 (rec-{g:03d})",
                "current_max_partitions_per_member": 5,
                "recommended_max_partitions_per_member": 4,
                "current_balance_gap": g % 7,
                "recommended_balance_gap": 0,
                "current_rolling_restart_paused": 40,
                "recommended_rolling_restart_paused": 4,
                "current_member_join_moved": 3,
                "recommended_member_join_moved": 2,
            }
        )
    return cols, rows


def _manifest(out: Path, full: bool) -> dict[str, Any]:
    return {
        "version": "0.1.0",
        "ds": "2026-11-23",
        "input": "/data/estate/ds=2026-11-23",
        "output": str(out),
        "strategies": [*(STRATEGIES if full else STRATEGIES[:5]), "elected"],
        "input_rows": {"subscriptions": 120, "topic_partitions": 900, "offsets": None},
        "output_rows": {"rejected": 3 if full else 2},
        "topics": 40,
        "groups": {"input": GROUPS, "planned": GROUPS - 1, "rejected": 1},
        "rejected_by_reason": {"error:DUPLICATE_MEMBER_ID": 1},
        "spark_version": "4.3.0",
        "duration_seconds": 12.345,
    }


def write_output(spark: Any, out: Path, full: bool) -> Path:
    for name, (cols, rows) in _tables(full).items():
        records = [tuple(r.get(c) for c, _ in cols) for r in rows]
        df = spark.createDataFrame(records, _schema(cols))
        df.write.parquet(str(out / name))
    (out / "_manifest.json").write_text(json.dumps(_manifest(out, full), indent=2))
    return out


@pytest.fixture(scope="module")
def outputs(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("report")
    return {
        "full": write_output(spark, base / "full", True),
        "today": write_output(spark, base / "today", False),
    }


@pytest.fixture(scope="module")
def pages(spark: Any, outputs: dict[str, Path]) -> dict[str, str]:
    out = {}
    for name, path in outputs.items():
        written = write_report(spark, str(path))
        assert written == f"{path}/{REPORT_FILE}"
        out[name] = Path(written).read_text(encoding="utf-8")
    return out


def _section(page: str, name: str) -> str:
    m = re.search(rf'<section id="{name}">(.*?)</section>', page, re.S)
    assert m, f"section {name} missing"
    return m.group(1)


def test_full_contract_every_section_and_strategy(pages: dict[str, str]) -> None:
    page = pages["full"]
    for name in SECTIONS:
        _section(page, name)
    for s in [*STRATEGIES, "elected"]:
        assert f">{s}</span>" in _section(page, "strategies"), s
    for s in STRATEGIES:
        assert f">{s}</span>" in _section(page, "costs"), s
    for sc in SCENARIOS:
        assert f">{sc}</th>" in _section(page, "costs"), sc
    # charts of every section with data
    for name in ("gap", "max", "load", "costs", "elected"):
        assert "<svg" in _section(page, name), name
    # nothing is reported absent when everything is there
    assert 'class="note"' not in page
    # the header
    run = _section(page, "run")
    assert "2026-11-23" in run
    assert "12.3 s" in run
    assert "/data/estate/ds=2026-11-23" in run


def test_full_contract_figures(pages: dict[str, str]) -> None:
    page = pages["full"]
    strategies = _section(page, "strategies")
    # balanced has gap 0 on every planned group (see _metric_row): 100 %
    balanced_row = re.search(r">balanced</span>.*?</tr>", strategies, re.S)
    assert balanced_row
    assert "100.0%" in balanced_row.group(0)
    # worst groups: WORST_GROUPS rows, with each group's recommendation and elected strategy
    worst = _section(page, "worst")
    assert worst.count('<td class="id">') == WORST_GROUPS
    assert "rec-" in worst
    assert ">range</span>" in worst or ">cooperative-sticky</span>" in worst
    # rejected: by reason, with the strategy column, detail escaped (autoescape)
    rejected = _section(page, "rejected")
    assert "SCENARIO_NOT_APPLICABLE" in rejected
    assert "<th>strategy</th>" in rejected
    assert "&lt;b&gt;" in rejected
    assert "<b>" not in rejected
    # recommendations: current -> recommended mix
    assert "uniform" in _section(page, "recommend")
    assert "not planned (rejected)" in _section(page, "elected")


def test_migration_section_counts_and_ranks(pages: dict[str, str]) -> None:
    section = _section(pages["full"], "migration")
    # groups g000-g028: g000, g003, ..., g027 (10) are blocked, the other 19 ready; of the
    # ready ones, g001, g011, g016, g026 carry a warning (g006 and g021 are blocked)
    assert '<td class="n">29</td><td class="n">19</td>' in section
    assert re.search(r'<td class="n">4</td>\s*<td class="n bad">10</td>', section)
    assert '<code>ASSIGNMENT_USER_DATA</code></td><td class="n">10</td>' in section
    # server-range: the 14 odd groups, bounce_moved 1 + 3 + ... + 27 = 196, paused twice that
    assert '<td class="n">196</td><td class="n">392</td>' in section
    # the group whose bounce pauses most comes first
    assert section.index(">g028<") < section.index(">g027<")


def test_worst_groups_ranked_by_gap_then_lag(pages: dict[str, str]) -> None:
    worst = _section(pages["full"], "worst")
    shown = []
    for row in re.findall(r"<tr>\s*<td class=\"id\">.*?</tr>", worst, re.S):
        group = re.search(r'<td class="id">(.*?)</td>', row)
        cells = re.findall(r'<td class="n[^"]*">(.*?)</td>', row)
        assert group
        # members, partitions, max / member, best max, gap, spread, lag imbalance
        shown.append((group.group(1), int(cells[4]), float(cells[6])))
    # the oracle: the elected rows of the synthetic tables, ranked in plain Python
    rows = [_metric_row(g, 0, "elected", True) for g in range(GROUPS - 1)]
    rows.sort(
        key=lambda r: (
            -r["balance_gap"],
            -r["lag_imbalance"],
            -r["max_partitions_per_member"],
            r["group_id"],
        )
    )
    expected = [
        (r["group_id"], r["balance_gap"], round(r["lag_imbalance"], 2)) for r in rows[:WORST_GROUPS]
    ]
    assert shown == expected
    assert len({gap for _, gap, _ in shown}) > 1  # the ranking is not decided by ties alone
    # each row names the strategy the group runs today, not the pseudo-strategy
    assert ">elected</span>" not in worst


def test_todays_output_degrades_gracefully(pages: dict[str, str]) -> None:
    page = pages["today"]
    for name in SECTIONS:
        _section(page, name)
    for s in [*STRATEGIES[:5], "elected"]:
        assert f">{s}</span>" in _section(page, "strategies"), s
    assert "No rebalance_costs table in this output" in _section(page, "costs")
    assert "No recommendations table in this output" in _section(page, "recommend")
    assert "No balance_gap column in balance_metrics" in _section(page, "gap")
    assert "partition_spread" in _section(page, "gap")
    assert "No lag_imbalance or weight_imbalance column" in _section(page, "load")
    assert "No strategy column in rejected" in _section(page, "rejected")
    # what is there is still drawn
    for name in ("gap", "max", "elected"):
        assert "<svg" in _section(page, name), name
    assert "<svg" not in _section(page, "costs")


def test_self_contained(pages: dict[str, str]) -> None:
    for page in pages.values():
        assert "http://" not in page
        assert "https://" not in page
        assert "<script" not in page
        assert "<link" not in page
        assert "url(" not in page.replace("url(#", "")  # only in-page SVG references
        assert "xmlns" not in page
        assert "<?xml" not in page


def test_two_builds_give_identical_bytes(
    spark: Any, outputs: dict[str, Path], pages: dict[str, str]
) -> None:
    # another shuffle layout must not change a byte either
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "3")
    try:
        for name, path in outputs.items():
            again = Path(write_report(spark, str(path))).read_text(encoding="utf-8")
            assert again == pages[name], name
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)


def test_missing_manifest_is_said(spark: Any, outputs: dict[str, Path], tmp_path: Path) -> None:
    copy = tmp_path / "no-manifest"
    shutil.copytree(outputs["today"], copy)
    (copy / "_manifest.json").unlink()
    page = Path(write_report(spark, str(copy))).read_text(encoding="utf-8")
    run = _section(page, "run")
    assert "No _manifest.json in this output" in run
    # group counts still come from the elections table
    assert f'<div class="value">{GROUPS}</div>' in run


def test_given_manifest_wins_over_the_file(spark: Any, outputs: dict[str, Path]) -> None:
    manifest = _manifest(outputs["today"], False) | {"ds": "1999-01-02"}
    page = Path(write_report(spark, str(outputs["today"]), manifest)).read_text("utf-8")
    assert "1999-01-02" in _section(page, "run")
    write_report(spark, str(outputs["today"]))  # leave the shared page as the fixture made it


def test_nothing_planned_and_tables_absent(spark: Any, tmp_path: Path) -> None:
    """An output where every group was rejected: empty metrics, no rejected table at all."""
    tables = _tables(False)
    cols, _ = tables["balance_metrics"]
    spark.createDataFrame([], _schema(cols)).write.parquet(str(tmp_path / "balance_metrics"))
    ecols, _ = tables["elections"]
    spark.createDataFrame([("g1", None, [], "NOT_PLANNED")], _schema(ecols)).write.parquet(
        str(tmp_path / "elections")
    )
    page = Path(write_report(spark, str(tmp_path))).read_text(encoding="utf-8")
    for name in SECTIONS:
        _section(page, name)
    assert "balance_metrics is empty" in _section(page, "strategies")
    assert "No rejected table in this output" in _section(page, "rejected")
    assert "No planned group." in _section(page, "worst")
    assert "not planned (rejected)" in _section(page, "elected")
    assert "<svg" not in _section(page, "gap")


# ---- a real browser ----------------------------------------------------------------------


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(
    _chromium() is None,
    reason="chromium is not installed: `make chromium` installs it (needs root with apt)",
)
def test_renders_in_headless_chromium(outputs: dict[str, Path], pages: dict[str, str]) -> None:
    from PIL import Image, ImageStat  # pillow comes with matplotlib (the `report` group)

    page = outputs["full"] / REPORT_FILE
    with tempfile.TemporaryDirectory() as tmp:
        shot = Path(tmp) / "shot.png"
        subprocess.run(
            [
                str(_chromium()),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                f"--user-data-dir={tmp}/profile",
                f"--screenshot={shot}",
                "--window-size=1280,2000",
                page.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
            env={**os.environ, "HOME": tmp},
        )
        assert shot.exists()
        with Image.open(shot) as img:
            rgb = img.convert("RGB")
            assert rgb.size == (1280, 2000)
            # a blank page is one colour; the report has text, tables and coloured bars
            colours = rgb.getcolors(maxcolors=1 << 20)
            assert colours is not None
            assert len(colours) > 50
            assert max(ImageStat.Stat(rgb).stddev) > 20
            # the gap chart is drawn: a large area of its "gap 0" green (#56A64B)
            green = sum(n for n, (r, g, b) in colours if (r, g, b) == (0x56, 0xA6, 0x4B))
            assert green > 2000


# Group ids of thousands of characters: the report's tables show them shortened, with the
# full id in the cell's tooltip, so the page keeps its layout.
LONG = 3000


def _long(group_id: Any) -> Any:
    """Every group id made thousands of characters long (a distinct tail keeps them apart)."""
    return None if group_id is None else f"{'payments-' * (LONG // 9)}{group_id}"


def test_long_group_ids_are_shortened_with_a_tooltip(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    for name, (cols, rows) in _tables(True).items():
        records = [
            tuple(_long(r.get(c)) if c == "group_id" else r.get(c) for c, _ in cols) for r in rows
        ]
        spark.createDataFrame(records, _schema(cols)).write.parquet(str(out / name))
    (out / "_manifest.json").write_text(json.dumps(_manifest(out, True)))
    page = Path(write_report(spark, str(out))).read_text(encoding="utf-8")
    worst = _section(page, "worst")
    cells = re.findall(r'<td class="id"><span title="([^"]*)">([^<]*)</span></td>', worst)
    assert cells, "the worst groups' ids are shortened"
    for title, shown in cells:
        full = html.unescape(title)
        assert len(full) > LONG
        assert full.startswith("payments-")
        assert len(html.unescape(shown)) == MAX_ID_CHARS
        assert html.unescape(shown).endswith(full[-5:]), "the distinct tail stays visible"
    assert not re.search(r"<td[^>]*>[^<]{200,}</td>", page), "no table cell holds a long id"
    assert "payments-" * 20 not in re.sub(r'title="[^"]*"', "", page), "only tooltips hold it"


# ---- the layout at 1280 px, in a real browser --------------------------------------------

# Measures the page as laid out, into a <pre> that `--dump-dom` prints. For every card
# (section): its box against the page, and whether its content overflows it; for every table:
# whether its last column ends past its card, and whether it scrolls there instead.
LAYOUT_PROBE = """<script>
(() => {
  const page = document.documentElement.clientWidth;
  const out = {page: page, pageScroll: document.documentElement.scrollWidth, cards: [], tables: []};
  for (const s of document.querySelectorAll("section")) {
    const r = s.getBoundingClientRect();
    out.cards.push({id: s.id, left: r.left, right: r.right,
                    scrollWidth: s.scrollWidth, clientWidth: s.clientWidth});
  }
  for (const t of document.querySelectorAll("section table")) {
    const card = t.closest("section");
    const style = getComputedStyle(card);
    const inner = card.getBoundingClientRect().right - parseFloat(style.borderRightWidth)
      - parseFloat(style.paddingRight);
    const last = t.rows[t.rows.length - 1];
    const lastRight = last.cells[last.cells.length - 1].getBoundingClientRect().right;
    let box = t.parentElement, scrolls = false;
    while (box !== card) {
      const o = getComputedStyle(box).overflowX;
      if ((o === "auto" || o === "scroll") && box.getBoundingClientRect().right <= inner + 0.5) {
        scrolls = true;
      }
      box = box.parentElement;
    }
    out.tables.push({card: card.id, width: t.getBoundingClientRect().width,
                     cardInner: inner - card.getBoundingClientRect().left
                       - parseFloat(style.borderLeftWidth) - parseFloat(style.paddingLeft),
                     lastRight: lastRight, inner: inner, scrolls: scrolls});
  }
  const pre = document.createElement("pre");
  pre.id = "layout-probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def _wide_id(group_id: Any) -> Any:
    """A long group id with no line-break opportunity (underscores, no hyphen or space)."""
    return None if group_id is None else f"{'payments_eu_west_1_orders_' * 12}{group_id}"


def _wide_output(spark: Any, out: Path) -> Path:
    """The full contract with wide content: long unbreakable group ids (the worst groups'
    id and terminal-command columns), rebalance costs of a large estate (15 columns of
    ten-digit figures, which never wrap)."""
    big = {"paused_partition_count", "moved_partition_count", "lag_moved"}
    for name, (cols, rows) in _tables(True).items():
        records = [
            tuple(
                _wide_id(r.get(c))
                if c == "group_id"
                else r.get(c) * 10_000_000
                if name == "rebalance_costs" and c in big
                else r.get(c)
                for c, _ in cols
            )
            for r in rows
        ]
        spark.createDataFrame(records, _schema(cols)).write.parquet(str(out / name))
    (out / "_manifest.json").write_text(json.dumps(_manifest(out, True)))
    return out


def _dump_dom(page: Path, width: int, tmp: str) -> str:
    done = subprocess.run(
        [
            str(_chromium()),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={tmp}/profile",
            f"--window-size={width},900",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
        env={**os.environ, "HOME": tmp},
        text=True,
    )
    return done.stdout


@pytest.mark.skipif(
    _chromium() is None,
    reason="chromium is not installed: `make chromium` installs it (needs root with apt)",
)
def test_wide_tables_scroll_inside_their_cards_at_1280_px(spark: Any, tmp_path: Path) -> None:
    out = _wide_output(spark, tmp_path / "wide")
    page = Path(write_report(spark, str(out)))
    probed = tmp_path / "probed.html"  # a copy: the report itself has no script
    html_text = page.read_text(encoding="utf-8")
    assert html_text.count("</body>") == 1
    probed.write_text(html_text.replace("</body>", LAYOUT_PROBE + "</body>"), encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        dom = _dump_dom(probed, 1280, tmp)
    m = re.search(r'<pre id="layout-probe">(.*?)</pre>', dom, re.S)
    assert m, "the probe did not run"
    layout = json.loads(html.unescape(m.group(1)))
    assert layout["page"] == 1280
    cards = {c["id"]: c for c in layout["cards"]}
    assert set(cards) == set(SECTIONS)
    tables = {t["card"]: t for t in layout["tables"]}
    # the premise: these two tables are wider than their card at 1280 px
    for name in ("costs", "worst"):
        assert tables[name]["width"] > tables[name]["cardInner"] + 1, name
    for card in layout["cards"]:
        assert card["left"] >= 0, card
        assert card["right"] <= layout["page"], card
        assert card["scrollWidth"] <= card["clientWidth"], f"content overflows card {card}"
    for t in layout["tables"]:
        # every table fits in its card, or scrolls inside it: no column is cut off
        assert t["lastRight"] <= t["inner"] + 0.5 or t["scrolls"], t
    assert layout["pageScroll"] <= layout["page"], "the page scrolls sideways"
