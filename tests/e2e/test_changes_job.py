"""`--previous`: the job run twice, the second time on an edited snapshot with the first
output as its previous run (the `changes` table, the manifest, the report, the console); and
a previous output that cannot be compared (one warning, no `changes`, exit 0)."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from helpers.estate import member, write_estate

from jobs.cli.describe import main as describe_main
from jobs.plan_assignments import main
from tools.sample_estate import write

pytestmark = pytest.mark.e2e


def estate(root: Path, day: int) -> Path:
    """Day 0: keep, gone, grow (2 members), laggy (2,000 behind). Day 1: gone removed, fresh
    added, grow has 3 members, laggy 5,000 behind."""
    members = [
        *(member("keep", f"k{i}", ["t1"]) for i in range(2)),
        *(member("grow", f"g{i}", ["t2"]) for i in range(2 + day)),
        *(member("laggy", f"l{i}", ["t1"]) for i in range(2)),
        *([member("gone", "x0", ["t1"])] if day == 0 else [member("fresh", "f0", ["t2"])]),
    ]
    write_estate(root, {"t1": 4, "t2": 6}, members)
    behind = 500 if day == 0 else 1_250  # per partition: 2,000 then 5,000 in all
    offsets = [("laggy", "t1", p, 1_000, 1_000 + behind) for p in range(4)]
    offsets += [("keep", "t1", p, 10, 10) for p in range(4)]
    cols = ("group_id", "topic", "partition", "committed_offset", "log_end_offset")
    aside = root.with_name(f"{root.name}-offsets")
    write({"offsets": {c: [o[i] for o in offsets] for i, c in enumerate(cols)}}, aside, files=1)
    (aside / "offsets").rename(root / "offsets")
    aside.rmdir()
    return root


def plan(*args: str | Path) -> int:
    return main(["--strategies", "range,roundrobin,elected", *map(str, args)])


def changes_of(out: Path) -> list[tuple[str, str, str | None, str | None]]:
    rows = pq.read_table(out / "changes").to_pylist()
    return [(r["group_id"], r["change"], r["before"], r["after"]) for r in rows]


def test_the_second_run_says_what_changed_since_the_first(
    spark: Any, tmp_path: Path, capsys: Any
) -> None:
    day0, day1 = tmp_path / "out" / "ds=2026-12-01", tmp_path / "out" / "ds=2026-12-02"
    assert plan("--input", estate(tmp_path / "in0", 0), "--output", day0, "--ds", "2026-12-01") == 0
    assert not (day0 / "changes").exists()  # no --previous: no table
    code = plan(
        "--input", estate(tmp_path / "in1", 1), "--output", day1, "--ds", "2026-12-02",
        "--previous", day0,
    )  # fmt: skip
    assert code == 0
    assert changes_of(day1) == [
        ("fresh", "GROUP_NEW", None, "1"),
        ("gone", "GROUP_GONE", "1", None),
        ("grow", "MEMBERS_CHANGED", "2", "3"),
        ("grow", "REBALANCED", None, None),
        ("laggy", "LAG_GREW", "2000", "5000"),
    ]
    written = pq.read_table(day1 / "changes").to_pylist()
    detail = {(r["group_id"], r["change"]): r["detail"] for r in written}
    assert detail[("laggy", "LAG_GREW")] == "total_lag 2,000 -> 5,000 messages (+3,000)"
    assert detail[("grow", "REBALANCED")] == "rebalanced: members 2 -> 3"

    manifest = json.loads((day1 / "_manifest.json").read_text())
    assert manifest["previous"]["path"] == str(day0)
    assert manifest["previous"]["ds"] == "2026-12-01"
    assert manifest["output_rows"]["changes"] == 5
    assert "previous" not in json.loads((day0 / "_manifest.json").read_text())
    printed = capsys.readouterr().out
    assert "since the previous run (2026-12-01): 5 changes" in printed

    page = (day1 / "report.html").read_text()
    assert "Since the previous run" in page
    assert "LAG_GREW" in page
    assert "laggy" in page

    # describe: the group's figures in the previous run beside today's
    assert describe_main(["--output", str(day1), "--group", "grow"]) == 0
    shown = capsys.readouterr().out
    assert "SINCE THE PREVIOUS RUN (ds 2026-12-01" in shown
    assert "MEMBERS_CHANGED" in shown
    members_line = next(line for line in shown.splitlines() if line.strip().startswith("members"))
    assert members_line.split()[1:] == ["2", "3"]

    # the same comparison again: the same rows in the same order (determinism)
    again = tmp_path / "again"
    assert plan("--input", tmp_path / "in1", "--output", again, "--previous", day0) == 0
    assert pq.read_table(again / "changes").equals(pq.read_table(day1 / "changes"))


@pytest.mark.parametrize("damage", ["manifest", "table", "absent"])
def test_a_previous_output_that_cannot_be_compared_is_one_warning(
    spark: Any, tmp_path: Path, caplog: Any, damage: str
) -> None:
    snapshot = estate(tmp_path / "in", 0)
    previous = tmp_path / "previous"
    if damage != "absent":
        assert plan("--input", snapshot, "--output", previous) == 0
        if damage == "manifest":
            (previous / "_manifest.json").write_text("{truncated")
        else:
            for part in (previous / "elections").glob("*.parquet"):
                part.write_bytes(b"PAR1 not parquet")
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING, logger="planner"):
        assert plan("--input", snapshot, "--output", out, "--previous", previous) == 0
    warned = [r.getMessage() for r in caplog.records if "no changes table" in r.getMessage()]
    assert len(warned) == 1, warned
    cause = {
        "manifest": "_manifest.json is unreadable",
        "table": "damaged",
        "absent": "does not exist",
    }
    assert cause[damage] in warned[0]
    assert not (out / "changes").exists()
    assert (out / "elections").is_dir()
    recorded = json.loads((out / "_manifest.json").read_text())["previous"]
    assert recorded["path"] == str(previous)
    assert cause[damage] in recorded["unusable"]
    shutil.rmtree(previous, ignore_errors=True)  # the suite's check reads every manifest


def restarts(root: Path, day: int) -> Path:
    """Day 0 -> day 1: `static` restarted (new member ids, the same group.instance.ids, no
    rebalance: the same generation); `rolled` restarted as dynamic members (new member ids,
    the next generation); `bumped` rebalanced with the same members; `steady` untouched."""
    suffix = "" if day == 0 else "-r"
    members = [
        *(
            member("static", f"s{i}{suffix}", ["t1"], group_instance_id=f"host-{i}", generation=5)
            for i in range(2)
        ),
        *(member("rolled", f"r{i}{suffix}", ["t1"], generation=7 + day) for i in range(2)),
        *(member("bumped", f"b{i}", ["t2"], generation=10 + day) for i in range(2)),
        *(member("steady", f"y{i}", ["t2"], generation=3) for i in range(2)),
    ]
    return write_estate(root, {"t1": 4, "t2": 6}, members)


def test_rebalances_are_told_by_generations_and_members_through_a_remote_previous(
    spark: Any, tmp_path: Path, monkeypatch: Any, caplog: Any
) -> None:
    """The previous output on a file system Hadoop does not call local (`viewfs://`, a mount
    of the local folder): read through Spark, never the OS; and REBALANCED from the
    elections' generations and member digests."""
    from jobs.plan import since

    day0, day1 = tmp_path / "day0", tmp_path / "day1"
    assert plan("--input", restarts(tmp_path / "in0", 0), "--output", day0) == 0
    elections0 = {r["group_id"]: r for r in pq.read_table(day0 / "elections").to_pylist()}
    assert elections0["static"]["max_generation"] == 5
    assert elections0["rolled"]["max_generation"] == 7

    cluster = "since-e2e"
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    conf.set(f"fs.viewfs.mounttable.{cluster}.link./day0", day0.as_uri())
    remote = f"viewfs://{cluster}/day0"
    read_through_spark: list[str] = []
    spark_reader = since.spark_reader

    def spy(session: Any, root: str, own: bool = False) -> Any:
        read_through_spark.append(root)
        return spark_reader(session, root, own)

    def no_os_read(path: str) -> Any:
        raise AssertionError(f"read with the OS: {path}")

    monkeypatch.setattr(since, "spark_reader", spy)
    monkeypatch.setattr(since, "read_previous", no_os_read)
    with caplog.at_level(logging.INFO, logger="planner"):
        code = plan(
            "--input", restarts(tmp_path / "in1", 1), "--output", day1, "--previous", remote
        )
    assert code == 0
    assert read_through_spark == [remote]
    assert not [r for r in caplog.records if "no changes table" in r.getMessage()]
    rows = pq.read_table(day1 / "changes").sort_by([("group_id", "ascending")]).to_pylist()
    assert [(r["group_id"], r["change"], r["detail"]) for r in rows] == [
        ("bumped", "REBALANCED", "rebalanced: generation 10 -> 11"),
        (
            "rolled",
            "REBALANCED",
            "rebalanced: generation 7 -> 8; members replaced (same count, other member ids)",
        ),
    ]
    elections1 = {r["group_id"]: r for r in pq.read_table(day1 / "elections").to_pylist()}
    assert elections1["static"]["members_digest"] == elections0["static"]["members_digest"]
    assert elections1["rolled"]["members_digest"] != elections0["rolled"]["members_digest"]
    manifest = json.loads((day1 / "_manifest.json").read_text())
    assert manifest["previous"] == {"path": remote, "ds": None, "version": manifest["version"]}
    assert manifest["output_rows"]["changes"] == 2
