"""The front door: what the entry point may replace, locks, exit codes.

Each test goes through `jobs.plan_assignments.main`, as a user does, in this process (it reuses
the test session); tests/e2e/test_front_door_process.py covers what needs a process of its own.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.estate import member, write_estate
from helpers.front_door import siblings, snapshot

from jobs import fs
from jobs.output import swap
from jobs.plan_assignments import Manifest, main

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


def small_estate(root: Path) -> Path:
    return write_estate(root, {"t": 3}, [member("g", "a", ["t"]), member("g", "b", ["t"])])


def plan(*args: str | Path, capsys: Any = None) -> tuple[int, str]:
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse errors
        code = int(exc.code or 0)
    out = capsys.readouterr() if capsys is not None else None
    return code, (out.out + out.err if out else "")


# --- 1. never delete what is not ours --------------------------------------------------------


@pytest.mark.parametrize(
    ("layout", "force"),
    [
        ("same", False),
        ("same", True),
        ("parent", False),  # --input snaps/ds=2026-11-22 --output snaps
        ("parent", True),
        ("inside", False),
        ("uri", False),  # the same directory as a file: URI
        ("symlink", True),  # a symlink to the input's parent
    ],
)
def test_output_overlapping_the_input_is_refused_before_planning(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, caplog, capsys, layout: str, force: bool
) -> None:
    snaps = tmp_path / "snaps"
    estate = small_estate(snaps / "ds=2026-11-22")
    out = {
        "same": str(estate),
        "parent": str(snaps),
        "inside": str(estate / "planned"),
        "uri": f"file://{estate}/",
        "symlink": str(tmp_path / "link"),
    }[layout]
    if layout == "symlink":
        (tmp_path / "link").symlink_to(snaps)
    before = snapshot(tmp_path)
    code, _ = plan(
        "--input", estate, "--output", out, "--strategies", "range",
        *(["--force"] if force else []), capsys=capsys,
    )  # fmt: skip
    assert code == 2
    assert "overlaps --input" in caplog.text
    assert "reading inputs" not in caplog.text, "refused before reading or planning"
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("force", [False, True])
def test_an_existing_file_is_never_replaced(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, caplog, force: bool
) -> None:
    estate = small_estate(tmp_path / "in")
    target = tmp_path / "report.csv"
    target.write_text("precious\n")
    code, _ = plan(
        "--input", estate, "--output", target, *(["--force"] if force else []),
    )  # fmt: skip
    assert code == 2
    assert "is an existing file" in caplog.text
    assert target.read_text() == "precious\n"
    assert siblings(target) == []


@pytest.mark.slow
def test_a_foreign_directory_needs_force_and_an_empty_one_does_not(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, caplog, capsys
) -> None:
    estate = small_estate(tmp_path / "in")
    foreign = tmp_path / "home"
    (foreign / "notes").mkdir(parents=True)
    (foreign / "notes" / "todo.txt").write_text("keep me\n")
    before = snapshot(foreign)
    code, _ = plan("--input", estate, "--output", foreign, "--strategies", "range", capsys=capsys)
    assert code == 2
    assert "non-empty directory without _manifest.json (notes)" in caplog.text
    assert "--force" in caplog.text
    assert snapshot(foreign) == before

    code, _ = plan(
        "--input", estate, "--output", foreign, "--strategies", "range", "--force", capsys=capsys
    )  # fmt: skip
    assert code == 0
    assert (foreign / "_manifest.json").exists()
    assert not (foreign / "notes").exists()

    empty = tmp_path / "empty"
    empty.mkdir()
    code, _ = plan("--input", estate, "--output", empty, "--strategies", "range", capsys=capsys)
    assert code == 0
    assert sorted(p.name for p in empty.iterdir() if not p.name.startswith(".")) == [
        "_manifest.json",
        "assignments",
        "balance_metrics",
        "capacity",
        "capacity.json",
        "elections",
        "live_check",
        "migrations",
        "rebalance_costs",
        "recommendations",
        "rejected",
        "report.html",
    ]
    assert siblings(empty) == []


# --- 1b. the swap never destroys the previous output -----------------------------------------


def _chattr(flag: str, path: Path) -> bool:
    try:
        done = subprocess.run(["chattr", flag, str(path)], capture_output=True, check=False)
    except FileNotFoundError:
        return False
    return done.returncode == 0


@pytest.mark.slow
def test_an_output_that_cannot_be_renamed_is_refused_before_planning(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, caplog, capsys
) -> None:
    """An immutable output directory (like a mount point) cannot be renamed aside: Hadoop's
    local file system would copy and delete instead, emptying the tables under a manifest."""
    estate = small_estate(tmp_path / "in")
    out = tmp_path / "out"
    assert plan("--input", estate, "--output", out, "--strategies", "range", capsys=capsys)[0] == 0
    before = snapshot(out)
    if not _chattr("+i", out):
        pytest.skip("chattr +i needs root on a file system with inode flags")
    caplog.clear()
    try:
        code, _ = plan(
            "--input", estate, "--output", out, "--strategies", "roundrobin", capsys=capsys
        )  # fmt: skip
    finally:
        _chattr("-i", out)
    assert code == 2
    assert "cannot be renamed aside (it (or its parent) is immutable" in caplog.text
    assert "reading inputs" not in caplog.text, "refused before planning"
    assert snapshot(out) == before
    assert siblings(out) == []


def test_a_parent_where_nothing_can_be_renamed_is_refused(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, caplog
) -> None:
    estate = small_estate(tmp_path / "in")
    parent = tmp_path / "frozen"
    parent.mkdir()
    if not _chattr("+i", parent):
        pytest.skip("chattr +i needs root on a file system with inode flags")
    try:
        code, _ = plan("--input", estate, "--output", parent / "out", "--strategies", "range")
    finally:
        _chattr("-i", parent)
    assert code == 2
    assert f"cannot write and rename in {parent}" in caplog.text
    assert list(parent.iterdir()) == []


@pytest.mark.slow
def test_a_failed_swap_keeps_the_previous_output(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, monkeypatch, caplog, capsys
) -> None:
    """If the previous output cannot be moved aside at the end, it stays, byte for byte."""
    estate = small_estate(tmp_path / "in")
    out = tmp_path / "out"
    assert plan("--input", estate, "--output", out, "--strategies", "range", capsys=capsys)[0] == 0
    before = snapshot(out)
    real_rename = os.rename

    def no_exchange(a: str, b: str) -> bool:
        return False

    def refuse_moving_the_output(src: Any, dst: Any) -> None:
        if Path(src) == out:
            raise OSError(16, "Device or resource busy", str(src))
        real_rename(src, dst)

    monkeypatch.setattr(fs, "exchange", no_exchange)
    monkeypatch.setattr(os, "rename", refuse_moving_the_output)
    code, _ = plan("--input", estate, "--output", out, "--strategies", "roundrobin", capsys=capsys)
    assert code == 2
    assert "cannot move the previous output" in caplog.text
    assert "it is kept as it was" in caplog.text
    assert snapshot(out) == before
    assert siblings(out) == []


@pytest.mark.slow
def test_the_output_path_never_vanishes_during_a_rerun(spark, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """With renameat2(RENAME_EXCHANGE) the swap is one step: a poller always finds a manifest."""
    import threading

    estate = small_estate(tmp_path / "in")
    out = tmp_path / "out"
    assert plan("--input", estate, "--output", out, "--strategies", "range", capsys=capsys)[0] == 0
    probe_a, probe_b = tmp_path / "a", tmp_path / "b"
    probe_a.mkdir()
    probe_b.mkdir()
    if not fs.exchange(str(probe_a), str(probe_b)):
        pytest.skip("no renameat2(RENAME_EXCHANGE) here: the swap is two renames")
    missing: list[int] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            if not (out / "_manifest.json").exists():
                missing.append(1)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        code, _ = plan("--input", estate, "--output", out, "--strategies", "roundrobin")
    finally:
        done.set()
        poller.join()
    assert code == 0
    assert missing == []
    assert json.loads((out / "_manifest.json").read_text())["strategies"] == ["roundrobin"]


# --- 9. concurrent runs and what dead runs leave ---------------------------------------------


def test_a_second_run_on_a_locked_output_exits_4_naming_the_holder(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, caplog, capsys
) -> None:
    estate = small_estate(tmp_path / "in")
    out = tmp_path / "out"
    holder = {"pid": os.getpid(), "host": socket.gethostname(), "started": "2026-11-23T10:00:00"}
    lock = tmp_path / ".out.__lock"
    lock.write_text(json.dumps({**holder, "token": "someone"}))
    code, _ = plan("--input", estate, "--output", out, "--strategies", "range", capsys=capsys)
    assert code == 4  # its own exit code: retried later, not a configuration error
    assert f"another run holds {out}: pid {os.getpid()} on host {socket.gethostname()}" in (
        caplog.text
    )
    assert not out.exists()
    assert json.loads(lock.read_text())["token"] == "someone", "the holder's lock is untouched"


@pytest.mark.slow
def test_leftovers_of_a_dead_run_are_removed_by_the_next_one(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, capsys
) -> None:
    estate = small_estate(tmp_path / "in")
    out = tmp_path / "out"
    assert plan("--input", estate, "--output", out, "--strategies", "range", capsys=capsys)[0] == 0
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    (tmp_path / ".out.__lock").write_text(
        json.dumps({"pid": int(dead.stdout), "host": socket.gethostname(), "token": "dead"})
    )
    (tmp_path / ".out.__tmp-0123456789ab" / "assignments").mkdir(parents=True)
    (tmp_path / ".out.__tmp-0123456789ab" / "assignments" / "part-0.parquet").write_text("x")
    unrelated = tmp_path / ".outer.__tmp-0123456789ab"
    unrelated.mkdir()
    code, _ = plan("--input", estate, "--output", out, "--strategies", "roundrobin", capsys=capsys)
    assert code == 0
    assert siblings(out) == []
    assert unrelated.exists(), "only this output's leftovers are removed"


@pytest.mark.slow
def test_a_previous_output_left_aside_by_a_dead_run_is_restored(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, capsys
) -> None:
    """Killed between its two renames, a run leaves the old output aside and none in place."""
    estate = small_estate(tmp_path / "in")
    out = tmp_path / "out"
    assert plan("--input", estate, "--output", out, "--strategies", "range", capsys=capsys)[0] == 0
    out.rename(tmp_path / ".out.__old-0123456789ab")
    missing = small_estate(tmp_path / "broken")
    for f in (missing / "subscriptions").iterdir():
        f.unlink()
    (missing / "subscriptions").rmdir()
    code, _ = plan("--input", missing, "--output", out, "--strategies", "range", capsys=capsys)
    assert code == 2  # a schema error, but the previous output is back in place
    assert json.loads((out / "_manifest.json").read_text())["strategies"] == ["range"]
    assert siblings(out) == []


# --- 8, 10b: exit 3 and the console ----------------------------------------------------------


def test_a_run_that_plans_nothing_exits_3_and_says_so(spark, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    clash = [member("g", "a", ["t"]), member("g", "a", ["t"], client_rack="r1")]
    estate = write_estate(tmp_path / "in", {"t": 2}, clash)
    out = tmp_path / "out"
    code, text = plan("--input", estate, "--output", out, "--strategies", "range,roundrobin",
                      capsys=capsys)  # fmt: skip
    assert code == 3
    assert "NEEDS ATTENTION (exit 3): nothing was planned" in text
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["planned_by_strategy"] == {"range": 0, "roundrobin": 0}
    assert manifest["rejected_by_reason"] == {"error:DUPLICATE_MEMBER_ID": 1}


def test_internal_errors_exit_3(monkeypatch, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Any INTERNAL_ERROR row in the manifest (a built-in assignor's bug) means exit 3."""
    import jobs.cli.plan

    manifest = {
        "groups": {"input": 2, "planned": 2, "rejected": 0},
        "planned_by_strategy": {"range": 2, "sticky": 1},
        "output_rows": {"rejected": 1},
        "rejected_by_reason": {"error:INTERNAL_ERROR": 1},
        "output": str(tmp_path / "out"),
    }
    monkeypatch.setattr(jobs.cli.plan, "build_session", lambda config: None)
    monkeypatch.setattr(jobs.cli.plan, "run", lambda *a, **k: Manifest.from_json(manifest))
    code, text = plan("--input", tmp_path, "--output", tmp_path / "out", "--strategies",
                      "range,sticky", capsys=capsys)  # fmt: skip
    assert code == 3
    assert "NEEDS ATTENTION (exit 3): 1 INTERNAL_ERROR rows" in text
    assert Manifest.from_json({**manifest, "rejected_by_reason": {}}).needs_attention() == []


@pytest.mark.slow
def test_a_normal_run_counts_planned_units_and_prints_no_double_slash(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, capsys
) -> None:
    estate = write_estate(
        tmp_path / "in",
        {"t": 2},
        [
            member("g", "a", ["t"]),
            member("h", "a", ["t"]),
            member("bad", "x", ["t"], topic_pattern="t"),
        ],
    )
    out = tmp_path / "out"
    code, text = plan("--input", estate, "--output", f"{out}/", "--strategies", "range,elected",
                      capsys=capsys)  # fmt: skip
    assert code == 0
    assert "//" not in text
    assert f"{out}/assignments" in text
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["output"] == str(out)
    assert manifest["planned_by_strategy"] == {"range": 2, "elected": 2}
    rejected = spark.read.parquet(str(out / "rejected"))
    assert rejected.columns == [
        "group_id", "member_id", "topic", "strategy", "severity", "reason", "detail"
    ]  # fmt: skip
    assert [(r["group_id"], r["strategy"], r["reason"]) for r in rejected.collect()] == [
        ("bad", None, "TOPICS_AND_PATTERN")
    ]


@pytest.mark.parametrize("ds", ["20261122", "2026-11-22T00:00", "2026-02-30"])
def test_ds_is_only_yyyy_mm_dd(tmp_path: Path, capsys, ds: str) -> None:  # type: ignore[no-untyped-def]
    code, text = plan("--input", tmp_path, "--output", tmp_path / "out", "--ds", ds, capsys=capsys)
    assert code == 2
    assert "--ds must be a date YYYY-MM-DD" in text


# --- 10c: the sample estate explains what it planted -----------------------------------------


@pytest.mark.slow
def test_the_sample_estate_explains_its_planted_groups(spark, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    made = subprocess.run(
        [sys.executable, "-m", "tools.sample_estate", "--groups", "5", "--bad-rows",
         "--out", str(tmp_path / "in")],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    explained = {
        line.split(":")[0].strip(): line
        for line in made.stdout.splitlines()
        if line.startswith("  bad-")
    }
    assert "planted on purpose (--bad-rows): 3 groups to reject, 1 warning" in made.stdout
    code, _ = plan("--input", tmp_path / "in", "--output", tmp_path / "out", "--strategies",
                   "range", capsys=capsys)  # fmt: skip
    assert code == 0
    rows = spark.read.parquet(str(tmp_path / "out" / "rejected")).where("group_id LIKE 'bad-%'")
    found = {(r["group_id"], r["severity"], r["reason"]) for r in rows.collect()}
    assert set(explained) == {g for g, _, _ in found}
    for group, severity, reason in found:
        assert f"{severity} {reason}" in explained[group]


# --- the same rules through Hadoop's FileSystem (HDFS, object stores) -------------------------


@pytest.mark.slow
def test_hadoop_file_systems_get_the_same_claim_lock_and_swap(  # type: ignore[no-untyped-def]
    spark, tmp_path: Path, monkeypatch, caplog, capsys
) -> None:
    """Paths that are not local go through Hadoop's FileSystem; exercised here on file: URIs."""
    monkeypatch.setattr(swap.Place, "local", property(lambda self: False))
    estate = small_estate(tmp_path / "in")
    out = tmp_path / "out"
    assert plan("--input", estate, "--output", out, "--strategies", "range", capsys=capsys)[0] == 0
    code, _ = plan("--input", estate, "--output", out, "--strategies", "roundrobin", capsys=capsys)
    assert code == 0
    assert json.loads((out / "_manifest.json").read_text())["strategies"] == ["roundrobin"]
    assert siblings(out) == []

    lock = tmp_path / ".out.__lock"
    lock.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "token": "x"}))
    assert plan("--input", estate, "--output", out, capsys=capsys)[0] == 4
    assert f"pid {os.getpid()} on host" in caplog.text
    lock.unlink()
    (out / "_manifest.json").unlink()
    (out / "._manifest.json.crc").unlink(missing_ok=True)
    code, _ = plan("--input", estate, "--output", out, capsys=capsys)
    assert code == 2
    assert "non-empty directory without _manifest.json" in caplog.text
