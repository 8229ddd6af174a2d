"""Refusals that need no Spark come before the SparkSession is built (it takes tens of
seconds to start): a locked output (exit 4) and `jobs.report` on a directory that is not a
planner output (exit 2), with the same messages and exit codes as the checks Spark makes.

No test here starts a JVM: the session builder is made to fail if it is called, in this
process (monkeypatch) or in the child process (a wrapper that patches pyspark first).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.estate import member, write_estate

import jobs.cli.plan
import jobs.cli.report as report_main
from jobs.fs import LocalFs
from jobs.output import OutputLocked
from jobs.output import lock as output_lock
from jobs.output.swap import Place, Target
from jobs.plan_assignments import main

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
# Runs a module as `python -m` does, with every way of starting Spark made to fail first.
NO_SPARK = """
import runpy, sys
import pyspark.java_gateway
import pyspark.sql.session

def started(*args, **kwargs):
    raise SystemExit("a SparkSession was started")

pyspark.java_gateway.launch_gateway = started
pyspark.sql.session.SparkSession.Builder.getOrCreate = started
module = sys.argv[1]
sys.argv = [module, *sys.argv[2:]]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


class SparkStarted(Exception):
    pass


def _no_session(*args: Any, **kwargs: Any) -> None:
    raise SparkStarted("a SparkSession was started")


def run_without_spark(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", NO_SPARK, module, *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def small_estate(root: Path) -> Path:
    return write_estate(root, {"t": 3}, [member("g", "a", ["t"]), member("g", "b", ["t"])])


def live_lock(out: Path, **holder: Any) -> Path:
    lock = out.parent / f".{out.name}.__lock"
    lock.write_text(
        json.dumps(
            {"pid": os.getpid(), "host": socket.gethostname(), "started": "2026-11-23T10:00:00",
             "token": "someone", **holder}
        )
    )  # fmt: skip
    return lock


# --- the planner on a locked output --------------------------------------------------------


@pytest.mark.parametrize("spelling", ["plain", "slash", "file-uri"])
def test_a_locked_output_exits_4_before_spark_starts(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, caplog, spelling: str
) -> None:
    monkeypatch.setattr(jobs.cli.plan, "build_session", _no_session)
    estate, out = small_estate(tmp_path / "in"), tmp_path / "out"
    lock = live_lock(out)
    given = {"plain": str(out), "slash": f"{out}/", "file-uri": f"file://{out}"}[spelling]
    code = main(["--input", str(estate), "--output", given, "--strategies", "range"])
    assert code == 4, caplog.text
    shown = given.rstrip("/")
    assert (
        f"output locked, nothing written (exit 4, retry later): another run holds {shown}:"
        f" pid {os.getpid()} on host {socket.gethostname()} since 2026-11-23T10:00:00"
        f" (lock file {lock}; remove it only if that run is gone)"
    ) in caplog.text
    assert not out.exists()
    assert json.loads(lock.read_text())["token"] == "someone", "the holder's lock is untouched"


def test_the_message_is_the_claims_own(tmp_path: Path) -> None:
    """The early check and the claim's lock word a live holder's lock alike."""
    out = tmp_path / "out"
    renewed = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    live_lock(out, renewed=renewed, lease_s=300)
    target = Target(str(out), str(tmp_path), "out", LocalFs(), Place("file", "", str(tmp_path)),
                    "mine", lambda: None)  # fmt: skip
    with pytest.raises(OutputLocked) as claimed:
        output_lock.lock(target)
    with pytest.raises(OutputLocked) as early:
        output_lock.check_free(str(out), str(out))
    assert str(early.value) == str(claimed.value)
    assert f"last renewed {renewed}" in str(early.value)


def test_a_stale_lock_is_left_to_the_claim(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A dead run's lock does not stop the run: the claim removes it once Spark is up."""
    monkeypatch.setattr(jobs.cli.plan, "build_session", _no_session)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    estate, out = small_estate(tmp_path / "in"), tmp_path / "out"
    lock = live_lock(out, pid=int(dead.stdout))
    assert main(["--input", str(estate), "--output", str(out), "--strategies", "range"]) == 2
    assert lock.exists(), "left for the claim, which logs its removal"


def test_an_output_on_another_file_system_is_left_to_spark(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """No local look-up for an HDFS output (a local file of that path is not its lock)."""
    called: list[str] = []

    def fake_check(*args: str) -> None:
        called.append("checked")

    monkeypatch.setattr(jobs.cli.plan, "build_session", _no_session)
    monkeypatch.setattr(jobs.cli.plan, "check_free", fake_check)
    main(["--input", str(tmp_path), "--output", "hdfs://nn:8020/planner/out"])
    assert called == []
    main(["--input", str(tmp_path), "--output", str(tmp_path / "out")])
    assert called == ["checked"]


def test_a_locked_output_refused_in_a_process_that_never_starts_spark(tmp_path: Path) -> None:
    estate, out = small_estate(tmp_path / "in"), tmp_path / "out"
    live_lock(out)
    done = run_without_spark(
        "jobs.plan_assignments", "--input", str(estate), "--output", str(out),
        "--strategies", "range",
    )  # fmt: skip
    assert done.returncode == 4, done.stderr[-3000:]
    assert f"another run holds {out}: pid {os.getpid()}" in done.stderr
    assert "a SparkSession was started" not in done.stderr
    assert "SparkContext" not in done.stderr


# --- jobs.report on a directory that is not a planner output --------------------------------


@pytest.mark.parametrize("what", ["snapshot", "missing", "file-uri"])
def test_report_refuses_a_non_output_before_spark_starts(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, caplog, what: str
) -> None:
    monkeypatch.setattr(report_main, "build_session", _no_session)
    snapshot = small_estate(tmp_path / "in")
    given = {
        "snapshot": str(snapshot),
        "missing": str(tmp_path / "nowhere"),
        "file-uri": f"file://{snapshot}",
    }[what]
    assert report_main.main([given]) == 2
    if what == "missing":
        assert f"no such output directory: {given}" in caplog.text
    else:
        assert f"{given} is not a planner output (no _manifest.json): nothing written" in (
            caplog.text
        )
    assert not (snapshot / "report.html").exists()


def test_report_refuses_in_a_process_that_never_starts_spark(tmp_path: Path) -> None:
    snapshot = small_estate(tmp_path / "in")
    before = sorted(p.name for p in snapshot.iterdir())
    done = run_without_spark("jobs.report", str(snapshot))
    assert done.returncode == 2, done.stderr[-3000:]
    assert f"{snapshot} is not a planner output (no _manifest.json): nothing written" in (
        done.stderr
    )
    assert "a SparkSession was started" not in done.stderr
    assert "SparkContext" not in done.stderr
    assert sorted(p.name for p in snapshot.iterdir()) == before
