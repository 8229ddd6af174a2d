"""A real Spark standalone cluster: a master and two workers on 127.0.0.1, started from the
pyspark distribution, run the job submitted in client mode, the code shipped both ways:

- `--py-files dist/planner.zip` (the sources), on executors whose Python has the pinned
  dependencies but not the project (.venv-exec): they plan with the pure-Python core;
- `--archives dist/planner-env.tar.gz#environment` with `spark.pyspark.python=
  ./environment/bin/python`: the executors' Python is the archive's, and they plan with its
  compiled core.

Either output must equal a local run, and the manifest says which core planned the buckets.

`make test-cluster` runs it (it builds .venv-exec, dist/planner.zip and
dist/planner-env.tar.gz first); elsewhere it is skipped. The daemons are always stopped
(their process groups are killed), pass or fail.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyspark
import pytest
from chispa import assert_df_equality

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(
        os.environ.get("PLANNER_CLUSTER_TESTS") != "1",
        reason="starts a Spark standalone cluster: run `make test-cluster`",
    ),
]

REPO = Path(__file__).resolve().parents[2]
SPARK_HOME = Path(pyspark.__file__).parent
PROJECT_PY = Path(sys.executable)
TABLES = ("assignments", "balance_metrics", "elections", "rejected")
DS = "2026-11-22"


class DaemonFailedError(RuntimeError):
    pass


@dataclass
class Daemon:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def excerpt(self, lines: int = 30) -> str:
        """The log's ERROR lines (a Java stack trace can push them far up), then its tail."""
        text = self.log.read_text(errors="replace") if self.log.exists() else "(no log)"
        all_lines = text.splitlines()
        errors = [line for line in all_lines if " ERROR " in line or "Exception:" in line]
        return "\n".join([*errors[:10], "...", *all_lines[-lines:]])

    def wait_for(self, needle: str, timeout: float = 120.0) -> None:
        """Wait until the daemon logs `needle`; fail with its log if it exits or stalls."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.log.exists() and needle in self.log.read_text(errors="replace"):
                return
            if self.process.poll() is not None:
                raise DaemonFailedError(
                    f"{self.name} exited with {self.process.returncode} before '{needle}'; "
                    f"its log ({self.log}):\n{self.excerpt()}"
                )
            time.sleep(0.5)
        raise DaemonFailedError(
            f"{self.name} did not log '{needle}' within {timeout:g} s; its log ({self.log}):\n"
            f"{self.excerpt()}"
        )

    def stop(self) -> None:
        """Kill the daemon's whole process group (spark-class and the JVM it execs)."""
        if self.process.poll() is None:
            for sig, grace in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(self.process.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.process.wait(grace)
                    break
                except subprocess.TimeoutExpired:
                    continue


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def daemon_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(tmp / "logs"),
        SPARK_WORKER_DIR=str(tmp / "work"),
        SPARK_LOCAL_DIRS=str(tmp / "local"),
        SPARK_DAEMON_MEMORY="256m",  # master and workers only schedule: keep them small
    )
    return env


def start_daemon(name: str, tmp: Path, started: list[Daemon], *args: str) -> Daemon:
    (tmp / "logs").mkdir(parents=True, exist_ok=True)
    log = tmp / "logs" / f"{name}.out"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *args],
            env=daemon_env(tmp),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, killed as a whole
        )
    daemon = Daemon(name, process, log)
    started.append(daemon)
    return daemon


@dataclass
class Cluster:
    master_url: str
    tmp: Path
    workers: list[Daemon]


@pytest.fixture
def daemons() -> Iterator[list[Daemon]]:
    started: list[Daemon] = []
    yield started
    for daemon in reversed(started):
        daemon.stop()


@pytest.fixture
def cluster(tmp_path: Path, daemons: list[Daemon]) -> Cluster:
    port = free_port()
    master = start_daemon(
        "master",
        tmp_path,
        daemons,
        *("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"),
        *("--port", str(port), "--webui-port", str(free_port())),
    )
    master.wait_for("I have been elected leader")
    url = f"spark://127.0.0.1:{port}"
    workers = []
    for i in (1, 2):
        work = tmp_path / "work" / f"worker{i}"
        work.mkdir(parents=True)
        worker = start_daemon(
            f"worker{i}",
            tmp_path,
            daemons,
            *("org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1"),
            *("--webui-port", str(free_port()), "--cores", "1", "--memory", "1g"),
            *("--work-dir", str(work)),
        )
        workers.append(worker)
    for worker in workers:
        worker.wait_for("Successfully registered with master")
    return Cluster(url, tmp_path, workers)


@pytest.fixture
def exec_python() -> Path:
    """The executors' Python: pyspark, pyarrow, pandas, numpy at the pinned versions, and
    deliberately not the project, so only the shipped zip can provide its code."""
    value = os.environ.get("PLANNER_EXEC_PYTHON", "")
    if not value or not Path(value).exists():
        pytest.fail("PLANNER_EXEC_PYTHON must name .venv-exec's python: run `make test-cluster`")
    return Path(value)


@dataclass(frozen=True)
class Planned:
    """The estate both ways of shipping plan, and its local run's output (what either
    cluster run must equal): planned once for the module."""

    estate: Path
    local: Path


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> Planned:
    root = tmp_path_factory.mktemp("planned")
    estate, local = root / "estate", root / "out-local"
    generator = [str(PROJECT_PY), "-m", "tools.sample_estate", "--groups", "40"]
    subprocess.run(
        [*generator, "--bad-rows", "--out", str(estate)],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    command = [str(PROJECT_PY), "-m", "jobs.plan_assignments", "--input", str(estate)]
    subprocess.run(
        [*command, "--output", str(local), "--ds", DS],
        cwd=REPO,
        env={**env, "SPARK_LOCAL_IP": "127.0.0.1"},
        check=True,
        capture_output=True,
    )
    return Planned(estate, local)


def test_worker_that_cannot_start_fails_with_its_log(tmp_path: Path, daemons: list[Daemon]) -> None:
    (tmp_path / "a-file").touch()
    worker = start_daemon(  # its work dir cannot be created: it exits at start-up
        "broken-worker",
        tmp_path,
        daemons,
        *("org.apache.spark.deploy.worker.Worker", "spark://127.0.0.1:1", "--host", "127.0.0.1"),
        *("--webui-port", "0", "--cores", "1", "--memory", "1g"),
        *("--work-dir", str(tmp_path / "a-file" / "work")),
    )
    with pytest.raises(DaemonFailedError) as failure:
        worker.wait_for("Successfully registered with master", timeout=120)
    message = str(failure.value)
    assert "broken-worker exited with" in message
    # The daemon's own complaint, from its log.
    assert f"Failed to create directory {tmp_path / 'a-file' / 'work'}" in message


def test_job_on_a_standalone_cluster_equals_a_local_run(  # type: ignore[no-untyped-def]
    spark, cluster: Cluster, exec_python: Path, planned: Planned, tmp_path: Path
) -> None:
    not_installed = subprocess.run(
        [str(exec_python), "-c", "import assignors"], cwd=tmp_path, capture_output=True
    )
    assert not_installed.returncode != 0, "the executors' Python must not have the project"
    estate = planned.estate

    # Only the entry script and the zip: nothing but --py-files can provide assignors/ and jobs/.
    app = tmp_path / "app"
    (app / "jobs").mkdir(parents=True)
    (app / "dist").mkdir()
    shutil.copy(REPO / "jobs" / "plan_assignments.py", app / "jobs" / "plan_assignments.py")
    shutil.copy(REPO / "dist" / "planner.zip", app / "dist" / "planner.zip")
    shutil.copytree(REPO / "conf", app / "conf")
    out = tmp_path / "out-cluster"
    submit = [
        str(PROJECT_PY.parent / "spark-submit"),
        "--master",
        cluster.master_url,
        "--deploy-mode",
        "client",
        "--py-files",
        "dist/planner.zip",
        "--conf",
        f"spark.pyspark.python={exec_python}",
        "--conf",
        "spark.executor.memory=512m",
        "--conf",
        "spark.cores.max=2",
        "--driver-memory",
        "1g",
        "jobs/plan_assignments.py",
        "--config",
        "conf/planner.toml",
        "--input",
        str(estate),
        "--output",
        str(out),
        "--ds",
        DS,
    ]
    env = daemon_env(cluster.tmp)
    done = subprocess.run(submit, cwd=app, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]

    # Both workers ran an executor of the application.
    for worker in cluster.workers:
        work = cluster.tmp / "work" / worker.name
        assert list(work.glob("app-*/*/stderr")), f"{worker.name} ran no executor"

    local = planned.local
    for table in TABLES:
        assert_df_equality(
            spark.read.parquet(str(out / table)),
            spark.read.parquet(str(local / table)),
            ignore_row_order=True,
            ignore_nullable=True,
        )
    assert (out / "_manifest.json").exists()
    # The sources alone: every bucket was planned by the pure-Python core, and the run says so.
    cores = json.loads((out / "_manifest.json").read_text())["phases"]["core"]
    assert cores["compiled"] == 0
    assert cores["pure"] >= 1
    assert f"core compiled 0/{cores['pure']}" in done.stdout + done.stderr


def test_executors_plan_with_the_compiled_core_of_the_shipped_environment(  # type: ignore[no-untyped-def]
    spark, cluster: Cluster, exec_python: Path, planned: Planned, tmp_path: Path
) -> None:
    archive = REPO / "dist" / "planner-env.tar.gz"
    if not archive.exists():
        pytest.fail("dist/planner-env.tar.gz is missing: run `make dist` (make test-cluster does)")
    estate = planned.estate

    # The driver runs from a checkout of the sources (no compiled modules) on .venv-exec; the
    # executors' Python is the archive's, whose planner is this code with its compiled core:
    # the job must see that and ship nothing (a zip of the sources would shadow that core).
    app = tmp_path / "app"
    for name in ("assignors", "jobs", "conf"):
        shutil.copytree(
            REPO / name, app / name, ignore=shutil.ignore_patterns("*.so", "__pycache__")
        )
    (app / "dist").mkdir()
    shutil.copy(archive, app / "dist" / archive.name)
    out = tmp_path / "out-cluster"
    submit = [
        str(PROJECT_PY.parent / "spark-submit"),
        *("--master", cluster.master_url, "--deploy-mode", "client"),
        *("--archives", "dist/planner-env.tar.gz#environment"),
        *("--conf", "spark.pyspark.python=./environment/bin/python"),
        *("--conf", f"spark.pyspark.driver.python={exec_python}"),
        *("--conf", "spark.executor.memory=512m", "--conf", "spark.cores.max=2"),
        *("--driver-memory", "1g", "jobs/plan_assignments.py", "--config", "conf/planner.toml"),
        *("--input", str(estate), "--output", str(out), "--ds", DS),
    ]
    # Nothing of this checkout on any Python's path but the app's copy and the archive.
    env = {k: v for k, v in daemon_env(cluster.tmp).items() if k != "PYTHONPATH"}
    done = subprocess.run(submit, cwd=app, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]

    for worker in cluster.workers:
        work = cluster.tmp / "work" / worker.name
        assert list(work.glob("app-*/*/stderr")), f"{worker.name} ran no executor"
        assert list(work.glob("app-*/*/environment/bin/python")), f"{worker.name}: no archive"
    cores = json.loads((out / "_manifest.json").read_text())["phases"]["core"]
    assert cores["pure"] == 0
    assert cores["compiled"] >= 1
    assert f"core compiled {cores['compiled']}/{cores['compiled']}" in done.stdout + done.stderr

    local = planned.local
    for table in TABLES:
        assert_df_equality(
            spark.read.parquet(str(out / table)),
            spark.read.parquet(str(local / table)),
            ignore_row_order=True,
            ignore_nullable=True,
        )
