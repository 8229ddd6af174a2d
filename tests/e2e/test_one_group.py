"""`jobs.describe` and `jobs.plan_group` on the sample estate, against one run of the job."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jobs.cli.plan_group import read_group
from jobs.plan.one_group import table_rows
from jobs.plan_assignments import run
from jobs.settings.config import load_config
from jobs.tables import group_read
from jobs.tables.group_view import CSV_COLUMNS, compact
from tools.sample_estate import generate, write

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
PLUGIN = "assignors.catalog.examples.random_assignor:RandomAssignor"
CONFIG = f"""
[planner]
strategies = ["range", "cooperative-sticky", "{PLUGIN}", "elected"]
"""
# planned groups of the sample estate (seed 7), one of each kind an operator meets
GROUPS = ("app-000003", "svc-000007", "etl-000008", "stream-000006", "bad-strategy-name")


@pytest.fixture(scope="module")
def estate(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    base = tmp_path_factory.mktemp("one-group")
    write(generate(60, seed=7, bad_rows=True, offsets=True), base / "in")
    config_path = base / "planner.toml"
    config_path.write_text(CONFIG, encoding="utf-8")
    config = load_config(config_path)
    run(spark, str(base / "in"), str(base / "out"), config, report=False)
    groups = group_read.distinct_groups(str(base / "out" / "elections"))
    return SimpleNamespace(
        input=str(base / "in"), output=str(base / "out"), config=str(config_path), groups=groups
    )


def cli(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    # the table's width, not the terminal's (xdist's workers inherit COLUMNS=80): the checks
    # below look for whole lines of it
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "120"}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=False,
    )


def job_rows(estate: SimpleNamespace, group: str) -> dict[str, list[dict[str, Any]]]:
    return group_read.read_output(estate.output, group).tables


def canonical(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def test_the_commands_never_import_spark() -> None:
    code = (
        "import sys, jobs.describe, jobs.plan_group, jobs.tables.group_view,"
        " jobs.tables.group_read, jobs.plan.one_group, assignors.whatif.changes;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_describe_table_shows_members_strategies_costs_and_recommendation(estate) -> None:  # type: ignore[no-untyped-def]
    group = "app-000003"
    done = cli("jobs.describe", "--output", estate.output, "--group", group)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    for heading in ("MEMBERS", "ELECTION", "WHAT-IF REBALANCES", "RECOMMENDATION"):
        assert heading in text
    rows = job_rows(estate, group)
    for strategy in {r["strategy"] for r in rows["balance_metrics"]}:
        assert f"STRATEGY {strategy}" in text
    # every member's partitions of range, as compact ranges, exactly as assigned
    for member in {r["member_id"] for r in rows["assignments"] if r["strategy"] == "range"}:
        mine = [
            (r["topic"], r["partition"])
            for r in rows["assignments"]
            if r["strategy"] == "range" and r["member_id"] == member
        ]
        assert compact(mine) in text
    assert rows["recommendations"][0]["reason"] in text.replace("\n  ", " ")


def test_describe_json_is_the_documented_structure(estate) -> None:  # type: ignore[no-untyped-def]
    group = "svc-000007"
    done = cli("jobs.describe", "--output", estate.output, "--group", group, "--format", "json")
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert (view["format"], view["version"], view["group_id"]) == (
        "kafka-assignment-planner/group",
        1,
        group,
    )
    rows = job_rows(estate, group)
    assert view["election"] == rows["elections"][0]
    assert view["recommendation"] == rows["recommendations"][0]
    assert canonical(view["rebalance_costs"]) == canonical(rows["rebalance_costs"])
    metrics = {r["strategy"]: r for r in rows["balance_metrics"]}
    assert {s["strategy"] for s in view["strategies"]} == set(metrics)
    for s in view["strategies"]:
        m = metrics[s["strategy"]]
        assert len(s["members"]) == m["member_count"]  # idle members included
        assert sum(x["partition_count"] for x in s["members"]) == m["assigned_partition_count"]
        assert s["metrics"]["balance_gap"] == m["balance_gap"]
    assert len(view["members"]) == metrics["range"]["member_count"]


def test_describe_csv_has_one_row_per_assigned_partition(estate) -> None:  # type: ignore[no-untyped-def]
    group = "etl-000008"
    done = cli("jobs.describe", "--output", estate.output, "--group", group, "--format", "csv")
    assert done.returncode == 0, done.stderr
    reader = csv.reader(io.StringIO(done.stdout))
    assert tuple(next(reader)) == CSV_COLUMNS
    got = sorted(tuple(r) for r in reader)
    want = sorted(
        tuple("" if r[c] is None else str(r[c]) for c in CSV_COLUMNS)
        for r in job_rows(estate, group)["assignments"]
    )
    assert got == want
    assert len(got) > 0


def test_describe_a_missing_group_exits_2_naming_the_closest(estate) -> None:  # type: ignore[no-untyped-def]
    done = cli("jobs.describe", "--output", estate.output, "--group", "app-00003")
    assert done.returncode == 2
    assert "'app-00003' is not in" in done.stderr
    assert "app-000003" in done.stderr
    assert done.stdout == ""


def test_describe_a_rejected_group_shows_why(estate) -> None:  # type: ignore[no-untyped-def]
    done = cli("jobs.describe", "--output", estate.output, "--group", "bad-duplicate-member")
    assert done.returncode == 0, done.stderr
    assert "DUPLICATE_MEMBER_ID" in done.stdout
    assert "NOT_PLANNED" in done.stdout
    assert "\nSTRATEGY " not in done.stdout


def test_describe_a_plugin_strategy(estate) -> None:  # type: ignore[no-untyped-def]
    group = "app-000003"
    args = ("--output", estate.output, "--group", group, "--strategy", "random")
    done = cli("jobs.describe", *args, "--format", "json")
    assert done.returncode == 0, done.stderr
    view = json.loads(done.stdout)
    assert [s["strategy"] for s in view["strategies"]] == ["random"]
    want = [r for r in job_rows(estate, group)["assignments"] if r["strategy"] == "random"]
    assert sum(len(m["assigned"]) for m in view["strategies"][0]["members"]) == len(want) > 0
    assert "STRATEGY random" in cli("jobs.describe", *args).stdout


def test_not_a_planner_output_or_input_exits_2(estate, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    done = cli("jobs.describe", "--output", estate.input, "--group", "x")
    assert done.returncode == 2
    assert "not a planner output" in done.stderr
    assert "_manifest.json" in done.stderr
    done = cli("jobs.plan_group", "--input", estate.output, "--group", "x")
    assert done.returncode == 2
    assert "not a planner input" in done.stderr
    assert "subscriptions" in done.stderr


def test_describe_an_unknown_strategy_exits_2_naming_the_run_strategies(estate) -> None:  # type: ignore[no-untyped-def]
    for fmt in ("table", "json", "csv"):
        done = cli(
            "jobs.describe", "--output", estate.output, "--group", "app-000003",
            "--strategy", "cooperative_sticky", "--format", fmt,
        )  # fmt: skip
        assert done.returncode == 2, (fmt, done.stdout[:500])
        assert done.stdout == ""
        assert f"strategy 'cooperative_sticky' is not in {estate.output}" in done.stderr
        assert "did you mean 'cooperative-sticky'?" in done.stderr
        assert "its strategies: range, cooperative-sticky, random, elected" in done.stderr


def test_describe_a_strategy_the_group_was_not_planned_under_is_not_an_error(estate) -> None:  # type: ignore[no-untyped-def]
    """A strategy of the run, for a group rejected under every strategy: shown (its rows are
    empty), exit 0."""
    done = cli(
        "jobs.describe", "--output", estate.output, "--group", "bad-duplicate-member",
        "--strategy", "range",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "DUPLICATE_MEMBER_ID" in done.stdout


def test_describe_with_another_snapshot_warns_naming_the_manifests(  # type: ignore[no-untyped-def]
    estate, tmp_path: Path
) -> None:
    group = "app-000003"
    other = tmp_path / "moved"
    shutil.copytree(estate.input, other)
    done = cli("jobs.describe", "--output", estate.output, "--group", group, "--input", str(other))
    assert done.returncode == 0, done.stderr
    warning = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1, done.stderr
    assert f"--input {other} is not the snapshot" in warning[0]
    assert f"({estate.input}, per its _manifest.json)" in warning[0]
    assert "STRATEGY range" in done.stdout, "still shown"
    # the manifest's own snapshot, however it is spelt: no warning
    for same in (estate.input, f"{estate.input}/", f"file://{estate.input}"):
        done = cli("jobs.describe", "--output", estate.output, "--group", group, "--input", same)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""


def test_plan_group_equals_the_job_for_several_groups(estate) -> None:  # type: ignore[no-untyped-def]
    """Every output table's rows of each group, planned alone, equal the estate job's: all
    64 groups of the sample (planned, rejected, with warnings, with the plugin)."""
    assert set(GROUPS) <= set(estate.groups)
    for group in estate.groups:
        args = SimpleNamespace(
            config=estate.config, strategies=None, input=estate.input, group=group
        )
        result, _ = read_group(args, [])
        mine = table_rows(result)
        job = job_rows(estate, group)
        for table, rows in job.items():
            assert canonical(mine[table]) == canonical(rows), (group, table)
        assert job["elections"], group
        # a planned group (it has a recommendation) has capacity rows, the same ones
        assert bool(job["capacity"]) == bool(job["recommendations"]), group


def test_plan_group_cli_json_matches_describe(estate) -> None:  # type: ignore[no-untyped-def]
    group = "stream-000006"
    planned = cli(
        "jobs.plan_group",
        "--input",
        estate.input,
        "--config",
        estate.config,
        "--group",
        group,
        "--format",
        "json",
    )
    described = cli(
        "jobs.describe", "--output", estate.output, "--group", group, "--format", "json"
    )
    assert planned.returncode == described.returncode == 0, planned.stderr + described.stderr
    a, b = json.loads(planned.stdout), json.loads(described.stdout)
    for key in ("members", "election", "strategies", "rebalance_costs", "recommendation"):
        assert a[key] == b[key], key


def test_bare_what_if_equals_the_configured_scenario(estate) -> None:  # type: ignore[no-untyped-def]
    group = "app-000003"
    done = cli(
        "jobs.plan_group",
        "--input",
        estate.input,
        "--config",
        estate.config,
        "--group",
        group,
        "--format",
        "json",
        "--what-if",
        "member_join",
    )
    assert done.returncode == 0, done.stderr
    costs = {
        r["strategy"]: r
        for r in job_rows(estate, group)["rebalance_costs"]
        if r["scenario"] == "member_join"
    }
    got = json.loads(done.stdout)["what_if"]["strategies"]
    assert {s["strategy"] for s in got} == set(costs)
    for s in got:
        assert {**s["cost"], "scenario": "member_join"} == costs[s["strategy"]]


def test_what_if_named_changes_and_bad_expressions(estate) -> None:  # type: ignore[no-untyped-def]
    group = "app-000003"
    members = job_rows(estate, group)["assignments"]
    leaver = sorted({r["member_id"] for r in members})[0]
    topic = sorted({r["topic"] for r in members})[0]
    base = ("--input", estate.input, "--config", estate.config, "--group", group)
    done = cli(
        "jobs.plan_group",
        *base,
        "--format",
        "json",
        "--what-if",
        f"member_leave:{leaver}",
        "--what-if",
        f"partition_growth:{topic}=8",
    )
    assert done.returncode == 0, done.stderr
    for s in json.loads(done.stdout)["what_if"]["strategies"]:
        assert leaver not in s["assignment"]
        assigned = {(t, p) for tps in s["partitions"].values() for t, p in tps}
        assert {(topic, p) for p in range(8)} <= assigned  # the new partitions too
    bad = cli("jobs.plan_group", *base, "--what-if", "member_crash")
    assert bad.returncode == 2
    assert "accepted forms" in bad.stderr
    assert "partition_growth:TOPIC=N" in bad.stderr
    shrink = cli("jobs.plan_group", *base, "--what-if", f"partition_growth:{topic}=1")
    assert shrink.returncode == 2
    assert "can only" in shrink.stderr


def test_the_report_shows_the_describe_command_of_each_worst_group(spark, estate) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("jinja2", reason="the report needs the `report` dependency group")
    pytest.importorskip("matplotlib", reason="the report needs the `report` dependency group")
    from jobs.report import write_report

    manifest = json.loads((Path(estate.output) / "_manifest.json").read_text(encoding="utf-8"))
    page = Path(write_report(spark, estate.output, manifest)).read_text(encoding="utf-8")
    worst = page.split('<section id="worst">', 1)[1].split("</section>", 1)[0]
    shown = re.findall(r'<td class="id">(.*?)</td>', worst)
    assert shown
    for group in shown:
        command = f"python -m jobs.describe --output {estate.output} --group {group}"
        assert f"<code>{command}</code>" in worst


@pytest.mark.slow
def test_a_run_given_a_relative_input_is_described_from_anywhere(  # type: ignore[no-untyped-def]
    spark, estate, tmp_path: Path
) -> None:
    """The manifest records the input absolute: `describe` finds it, and takes the same path
    given again for the same snapshot, whatever its working directory."""
    out = tmp_path / "out"
    relative = os.path.relpath(estate.input)
    run(spark, relative, str(out), load_config(estate.config), report=False)
    recorded = json.loads((out / "_manifest.json").read_text())["input"]
    assert recorded == os.path.abspath(relative)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = ["--output", str(out), "--group", "app-000003", "--input", estate.input]
    done = subprocess.run(
        [sys.executable, "-m", "jobs.describe", *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
