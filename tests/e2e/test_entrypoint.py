"""The real entry point end to end, on Parquet written to a temp folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from chispa import assert_df_equality
from helpers.estate import member, write_estate

from jobs import fs
from jobs.plan_assignments import run
from jobs.settings.config import PlannerConfig
from jobs.tables.schemas import SchemaError
from tools.sample_estate import SCHEMAS, generate, write

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


WORKED = {
    "topics": {"t1": 5, "t2": 7, "solo": 7},
    "members": [
        *(member("two-topics", f"c{i}", ["t1", "t2"] if i < 3 else ["t2"]) for i in range(5)),
        *(member("one-topic", f"c{i}", ["solo"]) for i in range(5)),
        member("dup", "x", ["t1"]),
        member("dup", "x", ["t1"], client_rack="r1"),  # another row, the same member id
    ],
}


def assignment_rows(spark, out: Path, strategy: str):  # type: ignore[no-untyped-def]
    return (
        spark.read.parquet(str(out / "assignments"))
        .where(f"strategy = '{strategy}'")
        .select("group_id", "member_id", "topic", "partition")
    )


@pytest.mark.slow
def test_worked_examples_through_the_job(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate = write_estate(tmp_path / "in", WORKED["topics"], WORKED["members"])
    out = tmp_path / "out"
    result = run(
        spark, str(estate), str(out), PlannerConfig().replace(strategies=("range", "roundrobin"))
    )

    range_expected = [
        ("two-topics", "c0", "t1", 0), ("two-topics", "c0", "t1", 1),
        ("two-topics", "c0", "t2", 0), ("two-topics", "c0", "t2", 1),
        ("two-topics", "c1", "t1", 2), ("two-topics", "c1", "t1", 3),
        ("two-topics", "c1", "t2", 2), ("two-topics", "c1", "t2", 3),
        ("two-topics", "c2", "t1", 4), ("two-topics", "c2", "t2", 4),
        ("two-topics", "c3", "t2", 5), ("two-topics", "c4", "t2", 6),
        ("one-topic", "c0", "solo", 0), ("one-topic", "c0", "solo", 1),
        ("one-topic", "c1", "solo", 2), ("one-topic", "c1", "solo", 3),
        ("one-topic", "c2", "solo", 4), ("one-topic", "c3", "solo", 5),
        ("one-topic", "c4", "solo", 6),
    ]  # fmt: skip
    rr_expected = [
        ("two-topics", "c0", "t1", 0), ("two-topics", "c0", "t1", 3),
        ("two-topics", "c0", "t2", 3), ("two-topics", "c1", "t1", 1),
        ("two-topics", "c1", "t1", 4), ("two-topics", "c1", "t2", 4),
        ("two-topics", "c2", "t1", 2), ("two-topics", "c2", "t2", 0),
        ("two-topics", "c2", "t2", 5), ("two-topics", "c3", "t2", 1),
        ("two-topics", "c3", "t2", 6), ("two-topics", "c4", "t2", 2),
        ("one-topic", "c0", "solo", 0), ("one-topic", "c0", "solo", 5),
        ("one-topic", "c1", "solo", 1), ("one-topic", "c1", "solo", 6),
        ("one-topic", "c2", "solo", 2), ("one-topic", "c3", "solo", 3),
        ("one-topic", "c4", "solo", 4),
    ]  # fmt: skip
    schema = "group_id string, member_id string, topic string, partition int"
    for strategy, expected in (("range", range_expected), ("roundrobin", rr_expected)):
        assert_df_equality(
            assignment_rows(spark, out, strategy),
            spark.createDataFrame(expected, schema),
            ignore_row_order=True,
            ignore_nullable=True,
        )

    metrics = {
        (r["group_id"], r["strategy"]): r
        for r in spark.read.parquet(str(out / "balance_metrics")).collect()
    }
    m = metrics[("two-topics", "range")]
    assert (m["member_count"], m["partition_count"], m["max_partitions_per_member"]) == (5, 12, 4)
    assert (m["min_partitions_per_member"], m["is_fully_balanced"], m["is_valid"]) == (
        1,
        False,
        True,
    )
    assert m["moved_partition_count"] is None  # no current_assignment given
    assert metrics[("one-topic", "roundrobin")]["is_fully_balanced"] is True

    rejected = spark.read.parquet(str(out / "rejected")).collect()
    assert [(r["group_id"], r["reason"], r["severity"]) for r in rejected] == [
        ("dup", "DUPLICATE_MEMBER_ID", "error")
    ]
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["groups"] == {"input": 3, "planned": 2, "rejected": 1}
    assert manifest["output_rows"] == {
        "assignments": 38,
        "balance_metrics": 4,
        "elections": 3,
        "rejected": 1,
        # per strategy: two-topics runs the 5 scenarios, one-topic 4 (its members
        # subscribe alike: no subscription_change); one recommendation per planned group
        "rebalance_costs": 2 * 5 + 2 * 4,
        "recommendations": 2,
        "capacity": 4,  # one per planned (group, strategy), as balance_metrics
        "live_check": 0,  # no group holds a current assignment
        # per planned group (classic, on range, every member listing cooperative-sticky by
        # default): classic_to_consumer, eager_to_cooperative and its direct bounce
        "migrations": 2 * 3,
    }
    assert manifest["input_rows"]["current_assignment"] is None
    assert result.to_json() == manifest
    assert not list(tmp_path.glob(".out.__*")), "temporary directories must not remain"


def test_the_manifest_and_the_phase_line_say_where_the_run_went(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate = write_estate(tmp_path / "in", WORKED["topics"], WORKED["members"])
    out = tmp_path / "out"
    result = run(
        spark, str(estate), str(out), PlannerConfig().replace(strategies=("range", "sticky"))
    )
    manifest = json.loads((out / "_manifest.json").read_text())
    phases = manifest["phases"]
    assert phases == result.phases
    assert list(result.phases["wall"]) == ["read", "plan", "write", "summary", "report"]
    assert all(s >= 0 for s in phases["wall"].values())
    assert list(result.phases["planning"]) == [
        "validate",
        "plan",
        "metrics and bounds",
        "what-if",
        "capacity",
        "migration",
        "rows",
    ]
    assert phases["planning"]["what-if"] > 0  # the default scenarios ran in the buckets
    # capacity is on by default: its rows are written (its seconds round to 0 on a tiny estate)
    assert phases["planning"]["capacity"] >= 0
    assert manifest["output_rows"]["capacity"] > 0
    # so is migration costing, for the estate's classic groups
    assert phases["planning"]["migration"] >= 0
    assert manifest["output_rows"]["migrations"] > 0
    # The process that planned a bucket (the guard's child) holds at least the interpreter.
    assert 20 < phases["memory"]["peak_bucket_rss_mib"] < 4096
    line = result.phase_line()
    assert line.startswith("phases: read ")
    for part in ("; plan ", "(worker seconds: ", "; write ", "; peak worker memory "):
        assert part in line
    assert line.endswith(" GiB")


def test_movement_against_current_assignment(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # c1 owned p1 and p3; c2 (departed) owned p2; p0 is double-claimed in the same generation.
    estate = write_estate(
        tmp_path / "in",
        {"t": 4},
        [member("g", "c0", ["t"], generation=5), member("g", "c1", ["t"], generation=5)],
        [
            ("g", "c1", "t", 1),
            ("g", "c1", "t", 3),
            ("g", "c2", "t", 2),
            ("g", "c0", "t", 0),
            ("g", "c1", "t", 0),
        ],
    )
    out = tmp_path / "out"
    run(spark, str(estate), str(out), PlannerConfig().replace(strategies=("range",)))
    rows = {
        r["partition"]: (r["member_id"], r["previous_member_id"])
        for r in spark.read.parquet(str(out / "assignments")).collect()
    }
    # range: c0 gets p0,p1 and c1 gets p2,p3.
    assert rows == {0: ("c0", None), 1: ("c0", "c1"), 2: ("c1", "c2"), 3: ("c1", "c1")}
    (m,) = spark.read.parquet(str(out / "balance_metrics")).collect()
    assert m["moved_partition_count"] == 2


@pytest.mark.slow
def test_broken_topic_rejects_only_its_subscribers(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate = write_estate(
        tmp_path / "in",
        {"ok": 2, "gap": 1},
        [member("a", "m", ["ok"]), member("b", "m", ["ok", "gap"]), member("c", "m", ["neg"])],
        extra_partitions=[("gap", 2), ("neg", -1), ("neg", 0), ("ok", 1)],
    )
    out = tmp_path / "out"
    result = run(spark, str(estate), str(out), PlannerConfig().replace(strategies=("range",)))
    rejected = {
        (r["group_id"], r["topic"], r["reason"], r["severity"])
        for r in spark.read.parquet(str(out / "rejected")).collect()
    }
    assert rejected == {
        ("b", "gap", "NON_CONTIGUOUS_PARTITIONS", "error"),
        (None, "gap", "NON_CONTIGUOUS_PARTITIONS", "error"),
        ("c", "neg", "NEGATIVE_PARTITION", "error"),
        (None, "neg", "NEGATIVE_PARTITION", "error"),
        (None, "ok", "DUPLICATE_PARTITION", "warning"),
    }
    assert result.to_json()["groups"] == {"input": 3, "planned": 1, "rejected": 2}


def read_all(spark, out: Path) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    return {
        name: spark.read.parquet(str(out / name)).orderBy(
            *spark.read.parquet(str(out / name)).columns
        )
        for name in ("assignments", "balance_metrics", "rejected")
    }


@pytest.mark.slow
def test_reruns_with_other_shuffle_settings_give_identical_tables(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate = tmp_path / "in"
    write(generate(150, seed=3, bad_rows=True), estate)
    config = PlannerConfig().replace(strategies=("range", "roundrobin"))
    run(spark, str(estate), str(tmp_path / "a"), config)
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "13")
    try:
        run(
            spark,
            str(estate),
            str(tmp_path / "b"),
            PlannerConfig().replace(strategies=("range", "roundrobin"), buckets=5),
        )
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)
    a, b = read_all(spark, tmp_path / "a"), read_all(spark, tmp_path / "b")
    for name in a:
        assert_df_equality(a[name], b[name])
    # Same rows in the same files, too: the data files hold identical data.
    for name in ("assignments", "balance_metrics", "elections", "rejected"):
        files_a = sorted((tmp_path / "a" / name).rglob("part-*.parquet"))
        files_b = sorted((tmp_path / "b" / name).rglob("part-*.parquet"))
        assert len(files_a) == len(files_b) > 0
        assert [pq.read_table(f).to_pydict() for f in files_a] == [
            pq.read_table(f).to_pydict() for f in files_b
        ]


def test_schema_errors_stop_before_writing(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate = write_estate(tmp_path / "in", {"t": 1}, [member("g", "c", ["t"])])
    out = tmp_path / "out"
    config = PlannerConfig().replace(strategies=("range",))
    # wrong type: partition as string
    pq.write_table(
        pa.table({"topic": ["t"], "partition": ["0"]}),
        estate / "topic_partitions" / "part-00000.parquet",
    )
    with pytest.raises(
        SchemaError, match=r"topic_partitions: column 'partition' has type string, expected int"
    ):
        run(spark, str(estate), str(out), config)
    # missing required column
    pq.write_table(pa.table({"topic": ["t"]}), estate / "topic_partitions" / "part-00000.parquet")
    with pytest.raises(
        SchemaError, match=r"topic_partitions: required column 'partition' \(int\) is missing"
    ):
        run(spark, str(estate), str(out), config)
    # missing required table
    pq.write_table(
        pa.table({"topic": ["t"], "partition": pa.array([0], pa.int32())}),
        estate / "topic_partitions" / "part-00000.parquet",
    )
    for f in (estate / "subscriptions").iterdir():
        f.unlink()
    (estate / "subscriptions").rmdir()
    with pytest.raises(SchemaError, match="subscriptions: required input table not found"):
        run(spark, str(estate), str(out), config)
    assert not out.exists()
    assert not list(tmp_path.glob(".out.__*"))


@pytest.mark.slow
def test_failed_run_leaves_previous_output_intact(spark, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    estate = write_estate(tmp_path / "in", {"t": 2}, [member("g", "c", ["t"])])
    out = tmp_path / "out"
    run(spark, str(estate), str(out), PlannerConfig().replace(strategies=("range",)))
    before = sorted(p.relative_to(out) for p in out.rglob("*"))

    def fail(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(fs, "write_json", fail)
    with pytest.raises(OSError, match="disk full"):
        run(spark, str(estate), str(out), PlannerConfig().replace(strategies=("roundrobin",)))
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert not list(tmp_path.glob(".out.__*"))


def _cli(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PLANNER_MASTER": "local[2]"}
    return subprocess.run(
        args, cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.mark.slow
def test_python_module_and_spark_submit_agree(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate = tmp_path / "in"
    write(generate(60, seed=5, bad_rows=True), estate)
    flags = ["--input", str(estate), "--strategies", "range,roundrobin", "--ds", "2026-11-22"]
    module = _cli(
        [sys.executable, "-m", "jobs.plan_assignments", *flags, "--output", str(tmp_path / "m")],
        tmp_path,
    )
    assert module.returncode == 0, module.stderr[-3000:]
    assert "planned 61 of 64 groups (3 rejected)" in module.stdout
    submit_bin = Path(sys.executable).parent / "spark-submit"
    submit = _cli(
        [str(submit_bin), "--master", "local[2]", "--conf", "spark.ui.enabled=false",
         "jobs/plan_assignments.py", *flags, "--output", str(tmp_path / "s")],
        tmp_path,
    )  # fmt: skip
    assert submit.returncode == 0, submit.stderr[-3000:]
    a, b = read_all(spark, tmp_path / "m"), read_all(spark, tmp_path / "s")
    for name in a:
        assert_df_equality(a[name], b[name])
    manifest = json.loads((tmp_path / "m" / "_manifest.json").read_text())
    assert manifest["ds"] == "2026-11-22"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--strategies", "range,stikcy"], "unknown assignment strategy 'stikcy'"),
        (["--config", "/nonexistent/planner.toml"], "cannot read config /nonexistent/planner.toml"),
        (["--ds", "22/11/2026"], "--ds must be a date"),
    ],
)
def test_configuration_errors_exit_nonzero_before_planning(
    tmp_path: Path,
    extra: list[str],
    message: str,
    capsys,
    caplog,  # type: ignore[no-untyped-def]
) -> None:
    from jobs.plan_assignments import main

    args = ["--input", str(tmp_path), "--output", str(tmp_path / "out"), *extra]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse errors
        code = exc.code
    assert code == 2
    assert message in capsys.readouterr().err + caplog.text
    assert not (tmp_path / "out").exists()


def test_bad_rows_become_rejected_rows(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Null keys, int64 values beyond int range, orphan rows: reported, never a crash."""
    estate = tmp_path / "in"
    for name, table in {
        "topic_partitions": pa.table(
            {
                "topic": ["t", "t", None, "huge"],
                "partition": pa.array([0, 1, 0, 2**40], pa.int64()),
            }
        ),
        "subscriptions": pa.table(
            {
                "group_id": ["g", "g", None, "lost"],
                "member_id": ["a", "b", "x", "m"],
                "group_instance_id": [None, "", None, None],
                "client_rack": pa.array([None] * 4, pa.string()),
                "topics": [["t"], ["t"], ["t"], ["huge"]],
                "topic_pattern": pa.array([None] * 4, pa.string()),
                "assignment_strategies": pa.array([None] * 4, pa.list_(pa.string())),
                "generation": pa.array([2**40, 1, None, None], pa.int64()),
            }
        ),
        "current_assignment": pa.table(
            {
                "group_id": ["g", None, "gone"],
                "member_id": ["a", "a", "z"],
                "topic": ["t", "t", "t"],
                "partition": pa.array([2**33, 0, 0], pa.int64()),
            }
        ),
    }.items():
        (estate / name).mkdir(parents=True)
        pq.write_table(table, estate / name / "part-0.parquet")
    out = tmp_path / "out"
    result = run(
        spark, str(estate), str(out), PlannerConfig().replace(strategies=("range", "elected"))
    )
    rejected = {
        (r["group_id"], r["member_id"], r["severity"], r["reason"])
        for r in spark.read.parquet(str(out / "rejected")).collect()
    }
    assert rejected == {
        (None, None, "warning", "NULL_TOPIC"),
        (None, None, "error", "NON_CONTIGUOUS_PARTITIONS"),  # "huge": only partition 2**40
        ("lost", None, "error", "NON_CONTIGUOUS_PARTITIONS"),
        (None, "x", "error", "NULL_GROUP_ID"),
        (None, "a", "warning", "OWNED_NULL_KEY"),
        ("g", "b", "warning", "EMPTY_GROUP_INSTANCE_ID"),
        ("g", "a", "warning", "INVALID_GENERATION"),  # 2**40 is no int32 generation
        ("g", "a", "warning", "OWNED_UNKNOWN_PARTITION"),
        ("gone", None, "warning", "NO_MEMBERS"),
    }
    elections = {
        r["group_id"]: (r["elected_strategy"], r["error"])
        for r in spark.read.parquet(str(out / "elections")).collect()
    }
    assert elections == {"g": ("range", None), "lost": (None, "NOT_PLANNED")}
    assert result.to_json()["groups"] == {"input": 2, "planned": 1, "rejected": 1}
    rows = spark.read.parquet(str(out / "assignments")).where("strategy = 'range'").collect()
    assert sorted((r["member_id"], r["partition"], r["group_instance_id"]) for r in rows) == [
        ("a", 0, None),
        ("b", 1, None),
    ]


@pytest.mark.parametrize(
    ("table", "data", "message"),
    [
        (
            "subscriptions",
            {
                **{c: pa.array([None], pa.string()) for c in SCHEMAS["subscriptions"].names},
                "topics": pa.array([[1]], pa.list_(pa.int32())),
            },
            "subscriptions: column 'topics' has type array<int>, expected array<string>",
        ),
        (
            "topic_partitions",
            None,  # not Parquet at all
            "topic_partitions: cannot read Parquet",
        ),
    ],
)
def test_unreadable_or_mistyped_inputs_are_schema_errors(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, table: str, data: dict[str, Any] | None, message: str
) -> None:
    estate = write_estate(tmp_path / "in", {"t": 1}, [member("g", "c", ["t"])])
    for f in (estate / table).iterdir():
        f.unlink()
    if data is None:
        (estate / table / "part-0.parquet").write_text("this is not parquet")
    else:
        pq.write_table(pa.table(data), estate / table / "part-0.parquet")
    with pytest.raises(SchemaError, match=message):
        run(
            spark,
            str(estate),
            str(tmp_path / "out"),
            PlannerConfig().replace(strategies=("range",)),
        )
    assert not (tmp_path / "out").exists()
