"""The DAG's optional export step: its params, the choice between waiting for the marker and
exporting, the client properties taken from the Kafka connection, and how the exporter's exit
codes end the task. The exporter itself is a stand-in here (tests/jobs/export covers it); the
end-to-end run against a live broker is in test_dag.py.
"""

from __future__ import annotations

import json
import stat
import sys
import time
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "dags"
DS = "2026-11-26"


def dag_module() -> ModuleType:
    sys.path.insert(0, str(DAGS))
    try:
        import kafka_assignment_planner
    finally:
        sys.path.remove(str(DAGS))
    return kafka_assignment_planner


def load_dag() -> Any:
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(DAGS))
    assert bag.import_errors == {}
    return bag.dags["kafka_assignment_planner"]


def render(task: Any, content: Any, **params: Any) -> Any:
    dag = task.dag
    values = {key: dag.params[key] for key in dag.params}
    values.update(params)
    # the DAG's templates also know the day before (`SnapshotDateTemplates`)
    previous = (date.fromisoformat(DS) - timedelta(days=1)).isoformat()
    return task.render_template(content, {"params": values, "ds": DS, "previous_ds": previous})


def sensor(tmp_path: Path, **kwargs: Any) -> Any:
    fields: dict[str, Any] = {
        "task_id": "wait_for_snapshot",
        "marker": str(tmp_path / "snap" / "_SUCCESS"),
        "timeout_seconds": "60",
        "poke_interval_seconds": "1",
        "snapshot": str(tmp_path / "snap"),
        "export_args": ["--ds", DS, "--groups", "", "--timeout-s", "30"],
        "planner_home": str(REPO),
    }
    fields.update(kwargs)
    return dag_module().SnapshotReadySensor(**fields)


def write_snapshot(snap: Path, skipped: dict[str, str] | None = None) -> None:
    snap.mkdir(parents=True, exist_ok=True)
    meta = {"groups_exported": ["a", "b"], "groups_skipped": skipped or {}, "groups_failed": {}}
    (snap / "_snapshot.json").write_text(json.dumps(meta))
    (snap / "_SUCCESS").touch()


# --- the DAG: params and templates ---------------------------------------------------------


def test_export_params_default_to_waiting_for_the_marker() -> None:
    dag = load_dag()
    assert dag.params["bootstrap_servers"] == ""
    assert dag.params["kafka_conn_id"] == "kafka_default"
    assert dag.params["export_groups"] == ""
    assert dag.params["export_exclude_groups"] == ""
    assert dag.params["export_timeout_seconds"] == 30
    assert dag.params["export_python"] == ""
    snap, plan = dag.get_task("wait_for_snapshot"), dag.get_task("plan_assignments")
    assert render(snap, snap.bootstrap_servers) == ""  # empty: the marker path
    assert snap.retries == plan.retries  # the export retries like the Spark task
    assert snap.retry_delay == plan.retry_delay


def test_export_writes_where_the_sensor_waits_and_the_planner_reads() -> None:
    dag = load_dag()
    snap, plan = dag.get_task("wait_for_snapshot"), dag.get_task("plan_assignments")
    params = {"snapshot_root": "/snapshots", "bootstrap_servers": "k1:9092"}
    folder = render(snap, snap.snapshot, **params)
    assert folder == f"/snapshots/ds={DS}"
    assert render(snap, snap.marker, **params) == f"{folder}/_SUCCESS"
    args = render(plan, plan.application_args, **params)
    assert args[args.index("--input") + 1] == folder
    assert render(snap, snap.bootstrap_servers, **params) == "k1:9092"
    export_args = render(snap, snap.export_args, export_groups="pay-.*")
    drop = dag_module().drop_empty_options
    assert drop(export_args) == ["--ds", DS, "--groups", "pay-.*", "--timeout-s", "30"]


def test_export_python_falls_back_to_the_python_param() -> None:
    snap = load_dag().get_task("wait_for_snapshot")
    assert render(snap, snap.python) == ""  # then python3 on the worker's PATH
    assert render(snap, snap.python, python="/opt/py/bin/python") == "/opt/py/bin/python"
    chosen = render(snap, snap.python, python="/opt/py/bin/python", export_python="/e/python")
    assert chosen == "/e/python"


# --- which branch runs ---------------------------------------------------------------------


@pytest.mark.parametrize("servers", ["", "  "])
def test_empty_bootstrap_servers_waits_for_the_marker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, servers: str
) -> None:
    from airflow.sdk import BaseSensorOperator

    calls: list[str] = []
    monkeypatch.setattr(BaseSensorOperator, "execute", lambda self, ctx: calls.append("wait"))
    task = sensor(tmp_path, bootstrap_servers=servers)
    monkeypatch.setattr(task, "export", lambda ctx: calls.append("export"))
    task.execute({"ds": DS})
    assert calls == ["wait"]


def test_bootstrap_servers_exports_instead_of_waiting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from airflow.sdk import BaseSensorOperator

    def wait(self: Any, ctx: Any) -> None:
        raise AssertionError("waited for the marker")

    monkeypatch.setattr(BaseSensorOperator, "execute", wait)
    task = sensor(tmp_path, bootstrap_servers="k1:9092,k2:9092")
    commands: list[list[str]] = []

    def run(command: list[str]) -> int:
        commands.append(command)
        write_snapshot(tmp_path / "snap")
        return 0

    monkeypatch.setattr(task, "run_exporter", run)
    task.execute({"ds": DS})
    assert commands == [
        [
            "python3",
            "-m",
            "jobs.export_snapshot",
            "--bootstrap-servers",
            "k1:9092,k2:9092",
            "--output",
            str(tmp_path / "snap"),
            "--ds",
            DS,
            "--timeout-s",
            "30",
        ]
    ]  # kafka_conn_id empty: no --command-config


def test_export_refuses_a_snapshot_root_url(tmp_path: Path) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    task = sensor(tmp_path, bootstrap_servers="k:9092", snapshot=f"s3://bucket/ds={DS}")
    with pytest.raises(AirflowFailException, match="writes a local path"):
        task.execute({"ds": DS})


# --- the Kafka connection ------------------------------------------------------------------

SECRET = "pa55-w0rd-never-logged"


def test_connection_becomes_a_private_command_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Extras are client properties; login/password are the SASL credentials; the provider's
    bootstrap.servers and group.id are left out. The file is private and gone afterwards, and
    the exporter's own parser reads it back."""
    from jobs.export.config import load_command_config

    conn = {
        "conn_type": "kafka",
        "login": "alice",
        "password": SECRET,
        "extra": {
            "bootstrap.servers": "ignored:9092",
            "group.id": "ignored",
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "ssl.ca.location": "/etc/kafka/ca.pem",
            "ssl.endpoint.identification.algorithm": "",
            "request.timeout.ms": 30000,
        },
    }
    monkeypatch.setenv("AIRFLOW_CONN_PLANNER_KAFKA", json.dumps(conn))
    task = sensor(tmp_path, bootstrap_servers="k:9093", kafka_conn_id="planner_kafka")
    seen: dict[str, Any] = {}

    def run(command: list[str]) -> int:
        path = Path(command[command.index("--command-config") + 1])
        seen.update(
            path=path,
            mode=stat.S_IMODE(path.stat().st_mode),
            text=path.read_text(),
            settings=load_command_config(str(path)),
        )
        write_snapshot(tmp_path / "snap")
        return 0

    monkeypatch.setattr(task, "run_exporter", run)
    task.execute({"ds": DS})
    assert seen["text"].splitlines() == [
        "request.timeout.ms=30000",
        "sasl.mechanism=SCRAM-SHA-512",
        f"sasl.password={SECRET}",
        "sasl.username=alice",
        "security.protocol=SASL_SSL",
        "ssl.ca.location=/etc/kafka/ca.pem",
        "ssl.endpoint.identification.algorithm=",
    ]
    assert seen["mode"] == 0o600
    assert not seen["path"].exists()
    kwargs = seen["settings"].kwargs
    assert kwargs["sasl_plain_username"] == "alice"
    assert kwargs["sasl_plain_password"] == SECRET
    assert kwargs["ssl_check_hostname"] is False
    out = capsys.readouterr()
    assert "sasl.password" in out.out + out.err  # the keys are logged ...
    assert SECRET not in out.out + out.err  # ... never the values


def test_a_missing_connection_fails_at_once(tmp_path: Path) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    task = sensor(tmp_path, bootstrap_servers="k:9092", kafka_conn_id="no_such_kafka")
    with pytest.raises(AirflowFailException, match="'no_such_kafka' is not defined"):
        task.execute({"ds": DS})


def test_a_multi_line_property_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from airflow.sdk.exceptions import AirflowFailException

    conn = {"conn_type": "kafka", "extra": {"client.id": "a\nsecurity.protocol=PLAINTEXT"}}
    monkeypatch.setenv("AIRFLOW_CONN_PLANNER_KAFKA", json.dumps(conn))
    task = sensor(tmp_path, bootstrap_servers="k:9092", kafka_conn_id="planner_kafka")
    with pytest.raises(AirflowFailException, match=r"client\.id cannot be written"):
        task.execute({"ds": DS})


# --- the exporter's exit codes -------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        (0, "ok"),
        (3, "ok"),
        (2, "final"),
        (1, "retried"),
        (130, "retried"),
        (-9, "retried"),
        (7, "retried"),
    ],
)
def test_exporter_exit_codes(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    code: int,
    outcome: str,
) -> None:
    """3 (some groups skipped or failed) is a warning and planning goes on; 2 (configuration,
    unreachable cluster) fails for good; anything else is retried after retry_delay."""
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    task = sensor(tmp_path, bootstrap_servers="k:9092")

    def run(command: list[str]) -> int:
        if code in (0, 3):
            write_snapshot(tmp_path / "snap", {"connect-cluster": "protocol type connect"})
        return code

    monkeypatch.setattr(task, "run_exporter", run)
    if outcome == "ok":
        task.execute({"ds": DS})
        log = "".join(capsys.readouterr())
        assert ("the exporter exited 3" in log) is (code == 3)
        if code == 3:
            assert "connect-cluster" in log
        return
    with pytest.raises(AirflowException) as caught:
        task.execute({"ds": DS})
    assert isinstance(caught.value, AirflowFailException) is (outcome == "final")
    assert f"the exporter exited {code}" in str(caught.value)
    assert ("not retrying" if outcome == "final" else "retried later") in str(caught.value)


@pytest.mark.parametrize("code", [4, 143])
def test_a_locked_or_terminated_export_is_retried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, code: int
) -> None:
    """4: another export that is still alive (or a killed one whose lock has not expired yet)
    holds the snapshot; 143: the exporter was sent SIGTERM. Neither is a verdict on the
    cluster: a later try can succeed."""
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    task = sensor(tmp_path, bootstrap_servers="k:9092")
    monkeypatch.setattr(task, "run_exporter", lambda command: code)
    with pytest.raises(AirflowException, match=f"exited {code}: .*retried later") as caught:
        task.execute({"ds": DS})
    assert not isinstance(caught.value, AirflowFailException)
    if code == 4:
        assert "locked" in str(caught.value)


def test_an_export_without_the_marker_is_retried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    task = sensor(tmp_path, bootstrap_servers="k:9092")
    monkeypatch.setattr(task, "run_exporter", lambda command: 0)
    with pytest.raises(AirflowException, match="wrote no") as caught:
        task.execute({"ds": DS})
    assert not isinstance(caught.value, AirflowFailException)


# --- the exporter process ------------------------------------------------------------------

FAKE_EXPORTER = """
import os, sys, time
print("fake exporter cwd=" + os.getcwd() + " args=" + " ".join(sys.argv[1:]), flush=True)
time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
"""


@pytest.fixture
def fake_home(tmp_path: Path) -> Path:
    """A planner_home whose jobs.export_snapshot is a stand-in."""
    home = tmp_path / "home"
    (home / "jobs").mkdir(parents=True)
    (home / "jobs" / "__init__.py").touch()
    (home / "jobs" / "export_snapshot.py").write_text(FAKE_EXPORTER)
    return home


def test_the_exporter_runs_from_planner_home_its_output_in_the_log(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    fake_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FAKE_EXIT", "5")
    task = sensor(
        tmp_path, bootstrap_servers="k:9092", python=sys.executable, planner_home=str(fake_home)
    )
    task.timeout = 60.0
    assert task.run_exporter([sys.executable, "-m", "jobs.export_snapshot", "--x", "1"]) == 5
    assert f"fake exporter cwd={fake_home} args=--x 1" in "".join(capsys.readouterr())


def test_an_export_past_the_timeout_is_stopped_and_retried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake_home: Path
) -> None:
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    monkeypatch.setenv("FAKE_SLEEP", "120")
    task = sensor(
        tmp_path,
        bootstrap_servers="k:9092",
        python=sys.executable,
        planner_home=str(fake_home),
        timeout_seconds="2",
    )
    started = time.monotonic()
    with pytest.raises(AirflowException, match="exited -15") as caught:
        task.execute({"ds": DS})
    assert time.monotonic() - started < 60
    assert not isinstance(caught.value, AirflowFailException)
