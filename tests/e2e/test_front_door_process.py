"""The entry point as its own process: Ctrl-C, SIGKILL, and what a local run prints.

Each test starts `python -m jobs.plan_assignments` (a JVM of its own), so they are few.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.front_door import siblings, snapshot

from jobs.plan_assignments import main
from tools.sample_estate import generate, write

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PLANNER_MASTER": "local[2]"}
    env.pop("SPARK_LOCAL_IP", None)  # the job must bind to loopback by itself
    return env


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "jobs.plan_assignments", *args],
        cwd=REPO,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )


def _wait_for(proc: subprocess.Popen[bytes], ready: Callable[[], bool], what: str) -> None:
    """Poll until `ready()` (no time limit of our own: the test's subprocess ends it)."""
    while not ready():
        if proc.poll() is not None:
            pytest.fail(f"the job ended (exit {proc.returncode}) before {what}")
        time.sleep(0.05)


def _estate(tmp_path: Path) -> Path:
    estate = tmp_path / "in"
    write(generate(120, seed=3, bad_rows=True), estate)
    return estate


STRATEGIES = "range,roundrobin,sticky,cooperative-sticky,uniform,elected"


@pytest.mark.slow
def test_a_local_run_is_quiet_binds_to_loopback_and_exits_0(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jobs.plan_assignments", "--input", str(_estate(tmp_path)),
         "--output", f"{tmp_path / 'out'}/", "--strategies", "range"],
        cwd=REPO, env=_env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "resolves to a loopback address" not in done.stderr
    assert "planner INFO reading inputs" in done.stderr, "the planner's progress stays visible"
    chatter = [line for line in done.stderr.splitlines() if re.search(r"\bINFO\b", line)]
    assert chatter
    assert all(" planner INFO " in line for line in chatter), chatter[:5]
    assert "//" not in done.stdout


@pytest.mark.slow
def test_ctrl_c_exits_130_with_one_line_and_leaves_nothing(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate, out, log = _estate(tmp_path), tmp_path / "out", tmp_path / "job.log"
    assert main(["--input", str(estate), "--output", str(out), "--strategies", "range"]) == 0
    before = snapshot(out)
    proc = _start(["--input", str(estate), "--output", str(out), "--strategies", STRATEGIES], log)
    _wait_for(proc, lambda: b"inputs read" in log.read_bytes(), "planning started")
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait() == 130, log.read_text()[-3000:]
    text = log.read_text()
    after = text[text.index("inputs read") :]
    assert "Traceback" not in after
    assert not re.search(r"^\s+at [\w.$]+\(", after, re.MULTILINE), "no Java stack trace"
    assert [line for line in after.splitlines() if "interrupted" in line] == [
        "interrupted: nothing written, any previous output is unchanged"
    ]
    assert snapshot(out) == before
    assert siblings(out) == []


@pytest.mark.slow
def test_a_killed_run_leaves_a_stale_lock_that_the_next_run_clears(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate, out, log = _estate(tmp_path), tmp_path / "out", tmp_path / "job.log"
    proc = _start(["--input", str(estate), "--output", str(out), "--strategies", STRATEGIES], log)
    _wait_for(proc, lambda: bool(list(tmp_path.glob(".out.__tmp-*"))), "writing started")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    left = siblings(out)
    assert ".out.__lock" in left
    assert any(n.startswith(".out.__tmp-") for n in left)
    assert json.loads((tmp_path / ".out.__lock").read_text())["pid"] == proc.pid

    assert main(["--input", str(estate), "--output", str(out), "--strategies", "range"]) == 0
    assert siblings(out) == []
    assert json.loads((out / "_manifest.json").read_text())["strategies"] == ["range"]
