"""The shipped Airflow DAG: parsed by a DagBag, and executed with `dag.test()` on local Spark.

Runs with .venv-airflow's Python (`make test-airflow`); the job itself runs with the project's
.venv (its spark-submit and its Python), exactly as an Airflow worker would call it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import live_kafka
import pyarrow.parquet as pq
import pytest

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "dags"
PROJECT_PY = REPO / ".venv" / "bin" / "python"
DAG_ID = "kafka_assignment_planner"
TABLES = ("assignments", "balance_metrics", "elections", "rejected")
CONN_ID = "planner_spark_test"

# Executed in a fresh interpreter per run: Airflow configures itself (home, DB) on import.
RUNNER = """
import json, sys
from datetime import datetime, timezone
from airflow.dag_processing.dagbag import DagBag

from airflow.models.asset import AssetEvent
from airflow.utils.session import create_session

dag = DagBag(dag_folder=sys.argv[1]).dags[sys.argv[2]]
# "none": a run without a logical date, as a manual or an asset-triggered run may be
logical_date = (
    None
    if sys.argv[3] == "none"
    else datetime.fromisoformat(sys.argv[3]).replace(tzinfo=timezone.utc)
)
run = dag.test(logical_date=logical_date, run_conf=json.loads(sys.argv[4]))
tasks = {ti.task_id: [str(ti.state), ti.try_number] for ti in run.get_task_instances()}
with create_session() as session:
    events = [
        {"name": e.asset.name, "uri": e.asset.uri, "task_id": e.source_task_id, "extra": e.extra}
        for e in session.query(AssetEvent).filter_by(source_dag_id=dag.dag_id)
        if e.source_run_id == run.run_id
    ]
print("RESULT " + json.dumps({"state": str(run.state), "tasks": tasks, "events": events}))
"""


def load_dag() -> Any:
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(DAGS))
    return bag, bag.dags.get(DAG_ID)


def test_dagbag_has_no_import_errors() -> None:
    bag, dag = load_dag()
    assert bag.import_errors == {}
    assert dag is not None


def test_dag_tasks_schedule_and_params() -> None:
    _, dag = load_dag()
    assert sorted(dag.task_ids) == ["plan_assignments", "wait_for_snapshot"]
    sensor, plan = dag.get_task("wait_for_snapshot"), dag.get_task("plan_assignments")
    assert plan.upstream_task_ids == {"wait_for_snapshot"}
    assert dag.schedule == "@daily"
    assert dag.timetable.expression == "0 0 * * *"  # Airflow 3: a CronTriggerTimetable
    assert dag.catchup is False
    assert set(dag.params.keys()) >= {
        "snapshot_root",
        "output_root",
        "strategies",
        "spark_master",
        "spark_conn_id",
        "marker",
        "sensor_timeout_seconds",
    }
    assert dag.params["marker"] == "_SUCCESS"
    assert sensor.mode == "reschedule"
    assert plan.retries >= 1
    assert plan.py_files.endswith("/dist/planner.zip")
    assert plan.application.endswith("/jobs/plan_assignments.py")
    args = " ".join(plan.application_args)
    assert "--input {{ params.snapshot_root }}/ds={{ ds }}" in args
    assert "--output {{ params.output_root }}/ds={{ ds }}" in args
    assert "--ds {{ ds }}" in args


def test_empty_options_are_dropped() -> None:
    sys.path.insert(0, str(DAGS))
    try:
        from kafka_assignment_planner import drop_empty_options
    finally:
        sys.path.remove(str(DAGS))
    args = ["--input", "a", "--strategies", "", "--ds", "d", "--config", ""]
    assert drop_empty_options(args) == ["--input", "a", "--ds", "d"]


def test_spark_master_param_overrides_the_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(DAGS))
    try:
        from kafka_assignment_planner import PlannerSubmitOperator
    finally:
        sys.path.remove(str(DAGS))
    conn = json.dumps({"conn_type": "spark", "host": "yarn"})
    monkeypatch.setenv("AIRFLOW_CONN_PLANNER_YARN", conn)
    kept = PlannerSubmitOperator(task_id="kept", spark_conn_id="planner_yarn", application="a.py")
    assert kept._get_hook()._connection["master"] == "yarn"
    override = PlannerSubmitOperator(
        task_id="override",
        spark_conn_id="planner_yarn",
        spark_master="local[1]",
        application="a.py",
    )
    hook = override._get_hook()
    assert not hook._is_yarn
    assert hook._build_spark_submit_command("a.py")[:3] == ["spark-submit", "--master", "local[1]"]


@pytest.mark.parametrize(("code", "final"), [(2, True), (3, True), (4, False), (143, False)])
def test_exit_codes_fail_at_once_or_are_retried(
    monkeypatch: pytest.MonkeyPatch, code: int, final: bool
) -> None:
    """A verdict on the input (2, 3) fails for good; a locked output (4) or a terminated run
    (143) is retried after retry_delay. The submit itself is a stand-in here."""
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    sys.path.insert(0, str(DAGS))
    try:
        from kafka_assignment_planner import PlannerSubmitOperator
    finally:
        sys.path.remove(str(DAGS))
    operator = PlannerSubmitOperator(task_id="t", spark_conn_id="spark_default", application="a")

    def submit(self: Any, context: Any) -> None:
        self._hook = type("Hook", (), {"_submit_sp": type("P", (), {"returncode": code})()})()
        raise AirflowException(f"spark-submit exited {code}")

    monkeypatch.setattr(SparkSubmitOperator, "execute", submit)
    with pytest.raises(AirflowException) as caught:
        operator.execute({})
    assert isinstance(caught.value, AirflowFailException) is final
    assert ("not retrying" if final else "retried later") in str(caught.value)


def dag_module() -> Any:
    sys.path.insert(0, str(DAGS))
    try:
        import kafka_assignment_planner
    finally:
        sys.path.remove(str(DAGS))
    return kafka_assignment_planner


def test_exit_code_is_read_from_the_providers_messages() -> None:
    """The codes as the Spark provider's hook and its backends word their failures; the tail
    of spark-submit's output (the job's own log lines) is never read for one."""
    from airflow.sdk.exceptions import AirflowException

    exit_code = dag_module().exit_code
    submit = "Cannot execute: spark-submit --master local[2] a.py --ds 2026-11-22. Error code is:"
    tail = "\nLast spark-submit output:\nthe planner exited 4 (locked)"
    assert exit_code(AirflowException(f"{submit} 2.{tail}")) == 2
    assert exit_code(AirflowException(f"{submit} 143.")) == 143
    k8s = f"{submit} 1. Kubernetes spark exit code is: 3{tail}"
    assert exit_code(AirflowException(k8s)) == 3  # the driver's code, not spark-submit's
    no_k8s_code = f"{submit} 1. Kubernetes spark exit code is: None"
    assert exit_code(AirflowException(no_k8s_code)) == 1
    polled = RuntimeError("Spark application app-1 failed (phase=Failed exit_code=2 reason=Error)")
    assert exit_code(polled) == 2
    assert exit_code(RuntimeError("Driver driver-1 exited with status FAILED")) is None
    assert exit_code(AirflowException(f"no driver id is known{tail}")) is None
    outer = RuntimeError("submit failed")
    outer.__cause__ = AirflowException(f"{submit} 4.")
    assert exit_code(outer) == 4


FAKE_SPARK_SUBMIT = """#!/bin/sh
printf '%s\\n' "$@" > "$FAKE_ARGS"
echo "the planner exited 4 (a line of the job's own log)"
exit "$FAKE_EXIT"
"""


@pytest.mark.parametrize(("code", "final"), [(0, None), (2, True), (3, True), (4, False)])
def test_the_provider_submits_with_the_runs_master_and_reports_the_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, code: int, final: bool | None
) -> None:
    """The provider's own execute and hook, spark-submit a stand-in on PATH: the run's master
    replaces the connection's, the connection's other extras stay, the exit code is read from
    the hook's message, and the per-run connection is gone afterwards."""
    from airflow.sdk.exceptions import AirflowException, AirflowFailException

    module = dag_module()
    binary = tmp_path / "spark-submit"
    binary.write_text(FAKE_SPARK_SUBMIT)
    binary.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_ARGS", str(tmp_path / "args"))
    monkeypatch.setenv("FAKE_EXIT", str(code))
    extra = {"deploy-mode": "client", "queue": "planning"}
    conn = json.dumps({"conn_type": "spark", "host": "yarn", "extra": extra})
    monkeypatch.setenv("AIRFLOW_CONN_PLANNER_YARN", conn)
    operator = module.PlannerSubmitOperator(
        task_id="t",
        spark_conn_id="planner_yarn",
        spark_master="local[1]",
        application="a.py",
        application_args=["--ds", "2026-11-22", "--config", ""],
    )
    if final is None:
        operator.execute({})
    else:
        with pytest.raises(AirflowException) as caught:
            operator.execute({})
        assert isinstance(caught.value, AirflowFailException) is final
        assert f"the planner exited {code}" in str(caught.value)
    args = (tmp_path / "args").read_text().split("\n")
    assert args[:2] == ["--master", "local[1]"]
    assert args[args.index("--queue") + 1] == "planning"
    assert args[args.index("--deploy-mode") + 1] == "client"
    assert args[args.index("a.py") :][:3] == ["a.py", "--ds", "2026-11-22"]
    assert f"AIRFLOW_CONN_{module.RUN_SPARK_CONN_ID.upper()}" not in os.environ


def test_an_undefined_connection_without_a_master_gets_the_providers_default() -> None:
    module = dag_module()
    operator = module.PlannerSubmitOperator(
        task_id="t", spark_conn_id="planner_not_defined", application="a.py"
    )
    assert operator.run_connection().host == "yarn"
    operator.spark_master = "local[2]"
    assert operator.run_connection().host == "local[2]"


def test_the_dag_publishes_the_days_plan_as_an_asset() -> None:
    from airflow.sdk import Asset

    module = dag_module()
    _, dag = load_dag()
    plan = dag.get_task("plan_assignments")
    assert plan.outlets == [Asset(name="kafka_assignment_plan", uri="file:///data/kafka-planner")]
    assert plan.outlet_extra == {
        "ds": "{{ ds }}",
        "output": "{{ params.output_root }}/ds={{ ds }}",
        "output_root": "{{ params.output_root }}",
        "snapshot": "{{ params.snapshot_root }}/ds={{ ds }}",
    }
    assert dag.get_task("wait_for_snapshot").outlets == []

    class Event:
        def __init__(self) -> None:
            self.extra: dict[str, Any] = {}

    events: dict[Any, Event] = {}
    operator = module.PlannerSubmitOperator(
        task_id="p",
        spark_conn_id="c",
        application="a.py",
        outlets=[module.PLAN_ASSET],
        outlet_extra={"ds": "2026-11-22", "output": "/o/ds=2026-11-22"},
    )
    operator.publish({"outlet_events": _AutoDict(events, Event)})
    assert events[module.PLAN_ASSET].extra == {"ds": "2026-11-22", "output": "/o/ds=2026-11-22"}


class _AutoDict(dict):  # type: ignore[type-arg]
    """outlet_events as the task runner hands it: an event accessor per asset, made on use."""

    def __init__(self, store: dict[Any, Any], factory: Any) -> None:
        super().__init__()
        self.store, self.factory = store, factory

    def __getitem__(self, key: Any) -> Any:
        return self.store.setdefault(key, self.factory())


def render(task: Any, dag: Any, **context: Any) -> Any:
    params = {name: dag.params[name] for name in dag.params}
    params.update(context.pop("params", {}))
    task.render_template_fields({"params": params, **context}, dag.get_template_env())
    return task


def test_snapshot_date_param_replaces_ds_in_every_path() -> None:
    _, dag = load_dag()
    conf = {"snapshot_date": "2026-10-01", "snapshot_root": "/s", "output_root": "/o"}
    plan = render(dag.get_task("plan_assignments"), dag, ds="2026-11-22", params=conf)
    args = " ".join(plan.application_args)
    assert "--input /s/ds=2026-10-01 --output /o/ds=2026-10-01 --ds 2026-10-01" in args
    assert plan.name == "kafka-assignment-planner-2026-10-01"
    assert plan.outlet_extra["ds"] == "2026-10-01"
    assert plan.outlet_extra["output"] == "/o/ds=2026-10-01"
    _, dag = load_dag()
    sensor = render(dag.get_task("wait_for_snapshot"), dag, ds="2026-11-22", params=conf)
    assert sensor.marker == "/s/ds=2026-10-01/_SUCCESS"
    assert sensor.snapshot == "/s/ds=2026-10-01"
    assert sensor.export_args[:2] == ["--ds", "2026-10-01"]


def test_snapshot_date_without_a_param_or_a_logical_date() -> None:
    from datetime import UTC, datetime

    from airflow.sdk.exceptions import AirflowFailException

    snapshot_date = dag_module().snapshot_date

    class Run:
        run_after = datetime(2026, 11, 25, 23, 59, tzinfo=UTC)

    assert snapshot_date({"params": {"snapshot_date": ""}, "ds": "2026-11-22"}) == "2026-11-22"
    assert snapshot_date({"params": {"snapshot_date": "2026-10-01"}, "ds": "x"}) == "2026-10-01"
    assert snapshot_date({"params": {}, "dag_run": Run()}) == "2026-11-25"  # no logical date
    for bad in ("2026-02-30", "20261001", "yesterday"):
        with pytest.raises(AirflowFailException, match="is not a date"):
            snapshot_date({"params": {"snapshot_date": bad}})
    with pytest.raises(AirflowFailException, match="set the snapshot_date param"):
        snapshot_date({"params": {}})
    _, dag = load_dag()
    assert dag.params["snapshot_date"] == ""


def test_the_previous_days_output_is_one_line_away() -> None:
    """`previous_ds` (the day before the snapshot date) is in the templates' context, so the
    job's --previous is one line of application_args."""
    module = dag_module()
    _, dag = load_dag()
    operator = module.PlannerSubmitOperator(
        task_id="p",
        spark_conn_id="c",
        application="a.py",
        application_args=["--previous", "{{ params.output_root }}/ds={{ previous_ds }}"],
    )
    render(operator, dag, ds="2026-11-22", params={"output_root": "/o"})
    assert operator.application_args == ["--previous", "/o/ds=2026-11-21"]
    render(operator, dag, ds="2026-11-22", params={"snapshot_date": "2026-03-01"})
    assert operator.application_args == ["--previous", "/o/ds=2026-11-21"]  # rendered once
    fresh = module.PlannerSubmitOperator(
        task_id="q",
        spark_conn_id="c",
        application="a.py",
        application_args=["--previous", "{{ previous_ds }}"],
    )
    render(fresh, dag, ds="2026-11-22", params={"snapshot_date": "2026-03-01"})
    assert fresh.application_args == ["--previous", "2026-02-28"]


# --- dag.test() end to end ---------------------------------------------------------------


@pytest.fixture(scope="module")
def airflow_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A fresh Airflow home with a SQLite metadata DB, created here; spark-submit and the job's
    Python come from the project's .venv, as on a worker that has the planner installed."""
    if not PROJECT_PY.exists():
        pytest.fail("the project's .venv is missing: run `make venv` (make test-airflow does)")
    if not (REPO / "dist" / "planner.zip").exists():
        pytest.fail("dist/planner.zip is missing: run `make dist` (make test-airflow does)")
    home = tmp_path_factory.mktemp("airflow-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "AIRFLOW"))}
    env.update(
        AIRFLOW_HOME=str(home),
        AIRFLOW__CORE__DAGS_FOLDER=str(DAGS),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{home / 'airflow.db'}",
        PATH=f"{PROJECT_PY.parent}{os.pathsep}{env.get('PATH', '')}",
        SPARK_LOCAL_IP="127.0.0.1",
        **{
            f"AIRFLOW_CONN_{CONN_ID.upper()}": json.dumps(
                {"conn_type": "spark", "host": "local[2]"}
            )
        },
    )
    airflow = Path(sys.executable).parent / "airflow"
    done = subprocess.run(
        [str(airflow), "db", "migrate"], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return env


def make_snapshot(root: Path, ds: str, marker: bool = True) -> Path:
    """A small estate from the project's generator (tools.sample_estate)."""
    day = root / f"ds={ds}"
    subprocess.run(
        [str(PROJECT_PY), "-m", "tools.sample_estate", "--groups", "20", "--out", str(day)],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    if marker:
        (day / "_SUCCESS").touch()
    return day


def run_dag(env: dict[str, str], cwd: Path, ds: str, **params: Any) -> tuple[dict[str, Any], str]:
    conf = {"spark_conn_id": CONN_ID, "python": str(PROJECT_PY), "planner_home": str(REPO)}
    conf.update(params)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(DAGS), DAG_ID, ds, json.dumps(conf)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )
    log = done.stdout + done.stderr
    results = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0, log[-5000:]
    assert results, log[-5000:]
    return json.loads(results[-1].removeprefix("RESULT ")), log


def table_rows(path: Path) -> list[str]:
    return sorted(
        json.dumps(row, sort_keys=True, default=str) for row in pq.read_table(path).to_pylist()
    )


def test_dag_runs_the_job_and_matches_a_direct_run(
    airflow_env: dict[str, str], tmp_path: Path
) -> None:
    ds = "2026-11-22"
    snapshot = make_snapshot(tmp_path / "snapshots", ds)
    result, log = run_dag(
        airflow_env,
        tmp_path,
        ds,
        snapshot_root=str(tmp_path / "snapshots"),
        output_root=str(tmp_path / "planner"),
        poke_interval_seconds=1,
        sensor_timeout_seconds=120,
    )
    assert result["state"] == "success", log[-5000:]
    assert f"--py-files {REPO}/dist/planner.zip" in log  # the code went with the job
    out = tmp_path / "planner" / f"ds={ds}"
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["ds"] == ds
    assert manifest["groups"]["input"] == 20

    direct = tmp_path / "direct"
    env = {k: v for k, v in airflow_env.items() if not k.startswith("AIRFLOW")}
    command = [str(PROJECT_PY), "-m", "jobs.plan_assignments", "--input", str(snapshot)]
    subprocess.run(
        [*command, "--output", str(direct), "--ds", ds],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
    )
    direct_manifest = json.loads((direct / "_manifest.json").read_text())
    assert manifest["output_rows"] == direct_manifest["output_rows"]
    for table in TABLES:
        assert table_rows(out / table) == table_rows(direct / table), table


def test_missing_snapshot_times_out_with_a_clear_message(
    airflow_env: dict[str, str], tmp_path: Path
) -> None:
    ds = "2026-11-20"
    make_snapshot(tmp_path / "snapshots", ds, marker=False)  # export still running: no marker
    result, log = run_dag(
        airflow_env,
        tmp_path,
        ds,
        snapshot_root=str(tmp_path / "snapshots"),
        output_root=str(tmp_path / "planner"),
        poke_interval_seconds=1,
        sensor_timeout_seconds=3,
    )
    assert result["state"] == "failed"
    assert result["tasks"]["wait_for_snapshot"][0] == "failed"
    assert result["tasks"]["plan_assignments"][0] == "upstream_failed"
    marker = tmp_path / "snapshots" / f"ds={ds}" / "_SUCCESS"
    assert f"snapshot for ds={ds} is not complete: {marker} did not appear within 3 s" in log
    assert "Spark-Submit cmd" not in log
    assert not (tmp_path / "planner").exists()


def test_bad_input_fails_at_once_without_retries(
    airflow_env: dict[str, str], tmp_path: Path
) -> None:
    ds = "2026-11-21"
    day = make_snapshot(tmp_path / "snapshots", ds)
    for part in (day / "subscriptions").iterdir():  # a required table is missing: exit 2
        part.unlink()
    (day / "subscriptions").rmdir()
    result, log = run_dag(
        airflow_env,
        tmp_path,
        ds,
        snapshot_root=str(tmp_path / "snapshots"),
        output_root=str(tmp_path / "planner"),
        poke_interval_seconds=1,
    )
    assert result["tasks"]["plan_assignments"] == ["failed", 1]
    assert "the planner exited 2: schema or configuration error" in log
    assert not (tmp_path / "planner" / f"ds={ds}").exists()


def test_a_run_without_a_logical_date_plans_the_given_snapshot_date_and_publishes_it(
    airflow_env: dict[str, str], tmp_path: Path
) -> None:
    """A manual run (no logical date, as an asset-triggered run has none either) given a
    snapshot_date: that day's snapshot is planned into that day's folder, and the plan's
    asset event names it."""
    ds = "2026-11-19"
    make_snapshot(tmp_path / "snapshots", ds)
    result, log = run_dag(
        airflow_env,
        tmp_path,
        "none",
        snapshot_date=ds,
        snapshot_root=str(tmp_path / "snapshots"),
        output_root=str(tmp_path / "planner"),
        poke_interval_seconds=1,
        sensor_timeout_seconds=120,
    )
    assert result["state"] == "success", log[-5000:]
    out = tmp_path / "planner" / f"ds={ds}"
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["ds"] == ds
    assert manifest["groups"]["input"] == 20
    assert result["events"] == [
        {
            "name": "kafka_assignment_plan",
            "uri": "file:///data/kafka-planner",
            "task_id": "plan_assignments",
            "extra": {
                "ds": ds,
                "output": str(out),
                "output_root": str(tmp_path / "planner"),
                "snapshot": str(tmp_path / "snapshots" / f"ds={ds}"),
            },
        }
    ]


# --- the export step: a live cluster exported, then planned ---------------------------------

KAFKA_CONN_ID = "planner_kafka_test"
SECRET = "never-in-the-task-log"


@pytest.fixture(scope="module")
def live_cluster(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, list[live_kafka.Group]]]:
    """A noida-db broker on 127.0.0.1 with three groups of librdkafka consumers, stopped (and
    the consumers closed) when the module's tests are done."""
    with live_kafka.noida_broker(tmp_path_factory.mktemp("noida")) as bootstrap:
        live_kafka.create_topics(bootstrap)
        estate = live_kafka.groups()
        try:
            live_kafka.start_groups(bootstrap, estate)
            live_kafka.wait_stable(estate)
            live_kafka.pause_fetching(estate)
            yield bootstrap, estate
        finally:
            live_kafka.stop_groups(estate)


def test_dag_exports_a_live_cluster_then_plans_it(
    airflow_env: dict[str, str],
    live_cluster: tuple[str, list[live_kafka.Group]],
    tmp_path: Path,
) -> None:
    bootstrap, estate = live_cluster
    held = {g.group_id: {c.memberid(): live_kafka.held(c) for c in g.consumers} for g in estate}
    # Client properties from the connection's extras; the provider's bootstrap.servers and
    # group.id are not client settings, the password must not reach the task log.
    conn = {
        "conn_type": "kafka",
        "login": "planner",
        "password": SECRET,
        "extra": {
            "bootstrap.servers": "not-this-one:9092",
            "group.id": "unused",
            "security.protocol": "PLAINTEXT",
            "client.id": "planner-dag-test",
        },
    }
    env = {**airflow_env, f"AIRFLOW_CONN_{KAFKA_CONN_ID.upper()}": json.dumps(conn)}
    ds = "2026-11-23"
    strategies = ["range", "roundrobin", "cooperative-sticky", "elected"]
    result, log = run_dag(
        env,
        tmp_path,
        ds,
        snapshot_root=str(tmp_path / "snapshots"),
        output_root=str(tmp_path / "planner"),
        bootstrap_servers=bootstrap,
        kafka_conn_id=KAFKA_CONN_ID,
        strategies=",".join(strategies),
        export_timeout_seconds=10,
        sensor_timeout_seconds=600,
    )
    assert result["state"] == "success", log[-5000:]
    assert result["tasks"]["wait_for_snapshot"] == ["success", 1]
    assert "exporting the snapshot:" in log
    assert "--command-config" in log
    assert "waiting for the snapshot marker" not in log  # the export replaced the wait
    assert SECRET not in log

    # The export wrote the day's snapshot where the sensor would have waited for it.
    day = tmp_path / "snapshots" / f"ds={ds}"
    assert (day / "_SUCCESS").exists()
    meta = json.loads((day / "_snapshot.json").read_text())
    assert meta["ds"] == ds
    assert meta["bootstrap_servers"] == bootstrap
    assert meta["client"]["client.id"] == "planner-dag-test"
    assert meta["groups_exported"] == sorted(held)
    assert meta["groups_skipped"] == {}
    assert meta["groups_failed"] == {}

    # The planner's outputs for that ds cover every live group under every strategy.
    out = tmp_path / "planner" / f"ds={ds}"
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["ds"] == ds
    assert manifest["groups"]["input"] == len(estate)
    rows = pq.read_table(out / "assignments").to_pylist()
    for g in estate:
        for strategy in strategies:
            mine = [r for r in rows if r["group_id"] == g.group_id and r["strategy"] == strategy]
            planned = [(r["topic"], r["partition"]) for r in mine]
            assert sorted(planned) == sorted(g.partitions()), (g.group_id, strategy)
            assert {r["member_id"] for r in mine} == set(held[g.group_id]), (g.group_id, strategy)
        if g.strategy in ("range", "roundrobin"):
            # The elected plan is what the live consumers hold (no static members here).
            elected = [
                r for r in rows if r["group_id"] == g.group_id and r["strategy"] == "elected"
            ]
            plan = {
                m: {(r["topic"], r["partition"]) for r in elected if r["member_id"] == m}
                for m in held[g.group_id]
            }
            assert plan == held[g.group_id], g.group_id


def test_export_of_an_unreachable_cluster_fails_at_once(
    airflow_env: dict[str, str], tmp_path: Path
) -> None:
    """Exit 2 (nothing written: the bootstrap servers do not answer) is final: no retry, and
    nothing is planned."""
    ds = "2026-11-24"
    result, log = run_dag(
        airflow_env,
        tmp_path,
        ds,
        snapshot_root=str(tmp_path / "snapshots"),
        output_root=str(tmp_path / "planner"),
        bootstrap_servers=f"127.0.0.1:{live_kafka.free_port()}",  # nothing listens there
        kafka_conn_id="",
        export_timeout_seconds=2,
    )
    assert result["state"] == "failed"
    assert result["tasks"]["wait_for_snapshot"] == ["failed", 1]
    assert result["tasks"]["plan_assignments"][0] == "upstream_failed"
    assert "the exporter exited 2: configuration error or cluster unreachable" in log
    assert not (tmp_path / "snapshots" / f"ds={ds}").exists()
    assert not (tmp_path / "planner").exists()
