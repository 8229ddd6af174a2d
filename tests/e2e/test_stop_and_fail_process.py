"""The entry point as its own process, stopped by SIGTERM (what Airflow's execution_timeout,
YARN and Kubernetes send) and failing on a full disk: one line, nothing left behind.

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
from pathlib import Path

import pytest

from tools.sample_estate import generate, write

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PLANNER_MASTER": "local[2]"}
    env.pop("SPARK_LOCAL_IP", None)
    return env


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "jobs.plan_assignments", *args],
        cwd=REPO,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        start_new_session=True,  # SIGTERM goes to the job alone, as a scheduler sends it
    )


def _holds_lock(lock: Path, pid: int) -> bool:
    try:
        return json.loads(lock.read_text()).get("pid") == pid
    except (OSError, ValueError):
        return False


@pytest.mark.slow
def test_sigterm_exits_143_with_one_line_and_releases_the_lock(tmp_path: Path) -> None:
    estate, out, log = tmp_path / "in", tmp_path / "out", tmp_path / "job.log"
    write(generate(200, seed=5), estate)
    lock = tmp_path / ".out.__lock"
    proc = _start(["--input", str(estate), "--output", str(out)], log)
    while not _holds_lock(lock, proc.pid):  # no time limit of our own: pytest's ends it
        if proc.poll() is not None:
            pytest.fail(f"the job ended (exit {proc.returncode}) before it took the lock")
        time.sleep(0.05)
    held = log.read_text()
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait() == 143, log.read_text()[-3000:]
    after = log.read_text()[len(held) :]
    assert "Traceback" not in after
    assert not re.search(r"^\s+at [\w.$]+\(", after, re.MULTILINE), "no Java stack trace"
    words = [line for line in after.splitlines() if "terminated" in line or "ERROR" in line]
    assert words == ["terminated (SIGTERM): nothing written, any previous output is unchanged"]
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []


def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir()
    if os.geteuid() != 0:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


@pytest.mark.slow
def test_a_full_disk_prints_one_line_naming_it(tmp_path: Path) -> None:
    estate, small = tmp_path / "in", tmp_path / "small"
    write(generate(60, seed=5), estate)
    if not _mount_tmpfs(small, "24k"):
        pytest.skip("needs root to mount a small tmpfs")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "jobs.plan_assignments", "--input", str(estate),
             "--output", str(small / "out"), "--strategies", "range", "--no-report"],
            cwd=REPO, env=_env(), capture_output=True, text=True, check=False,
        )  # fmt: skip
        left = sorted(p.name for p in small.iterdir())
    finally:
        subprocess.run(["umount", str(small)], check=False)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert not re.search(r"^\s+at [\w.$]+\(", done.stderr, re.MULTILINE), "no Java stack trace"
    errors = [line for line in done.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1, errors[:5]
    # whichever fills the disk first: Spark writing a table, or a Python worker its bucket's
    # assignment rows
    assert re.search(
        r"unexpected failure, nothing written: (java\.io\.IOException: |a Python worker failed:"
        r" OSError: \[Errno 28\] .*)No space left on device",
        errors[0],
    ), errors[0]
    assert left == []
