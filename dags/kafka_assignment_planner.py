"""Daily Kafka assignment plan: wait for the day's snapshot, then run the planner on Spark.

    wait_for_snapshot  ->  plan_assignments
    (<snapshot_root>/ds=<ds>/<marker>)   (spark-submit jobs/plan_assignments.py
                                          --input <snapshot_root>/ds=<ds>
                                          --output <output_root>/ds=<ds> --ds <ds>)

Airflow 3 (`airflow.sdk`) with apache-airflow-providers-apache-spark; versions verified in
dags/requirements-airflow.txt. Every knob is a DAG param, so one run can be retargeted from
"Trigger DAG w/ config" (e.g. a backfill of one day into another output root).

- The sensor waits in `reschedule` mode (a snapshot may land hours late: the task frees its
  worker slot between pokes) and fails with a message naming the missing marker when
  `sensor_timeout_seconds` passes; a sensor timeout is not retried.
- The Spark task retries: the job writes a hidden temporary directory and swaps it in only
  when every table and `_manifest.json` are complete, so a retried run never mixes with a
  half-written one. Exit codes 2 (schema/config error) and 3 (ran, needs attention) are the
  job's verdict on the input, so they fail the task at once instead of retrying. Exit 4 (the
  output is locked by another run that is still alive) and 143 (terminated) are retried after
  `retry_delay`: a run that died without releasing its lock stops renewing it, and the lock
  expires `[output] lock_lease_s` (default 5 minutes) after its last renewal.
- `spark_master` empty: the master of connection `spark_conn_id` (spark-submit must be on the
  worker's PATH, as the provider requires). `python` empty: the interpreter spark-submit and
  the cluster choose; set it to a Python that has the project's pinned runtime dependencies.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, BaseSensorOperator, ObjectStoragePath, Param
from airflow.sdk.exceptions import AirflowException, AirflowFailException, AirflowSensorTimeout

# Where jobs/plan_assignments.py and dist/planner.zip (`make dist`) live on the workers: the
# repository this file belongs to, unless PLANNER_HOME says otherwise (DAG copied elsewhere).
PLANNER_HOME = os.environ.get("PLANNER_HOME") or str(Path(__file__).resolve().parent.parent)
# The job's exit codes that retrying cannot change (docs/data-contract.md).
FINAL_EXIT_CODES = {
    2: "schema or configuration error, nothing written",
    3: "the run completed but needs attention (nothing planned, or an internal error)",
}
# The exit codes a later try can change, retried after retry_delay (any other code is too).
RETRIED_EXIT_CODES = {
    1: "unexpected failure",
    4: "the output is locked by another run that is still alive",
    130: "interrupted",
    143: "terminated (SIGTERM)",
}


class SnapshotReadySensor(BaseSensorOperator):
    """Waits for `marker` (a plain path or an ObjectStoragePath URL such as
    `s3://conn_id@bucket/key`) to exist. `timeout_seconds` and `poke_interval_seconds` are
    templated, so DAG params can set them per run."""

    template_fields = ("marker", "timeout_seconds", "poke_interval_seconds")

    def __init__(
        self, *, marker: str, timeout_seconds: str, poke_interval_seconds: str, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.marker = marker
        self.timeout_seconds = timeout_seconds
        self.poke_interval_seconds = poke_interval_seconds

    def poke(self, context: Any) -> bool:
        self.log.info("waiting for the snapshot marker %s", self.marker)
        if "://" in self.marker:
            return bool(ObjectStoragePath(self.marker).exists())
        return os.path.exists(self.marker)

    def execute(self, context: Any) -> Any:
        self.timeout = float(self.timeout_seconds)
        self.poke_interval = float(self.poke_interval_seconds)
        try:
            return super().execute(context)
        except AirflowSensorTimeout as exc:
            raise AirflowSensorTimeout(
                f"snapshot for ds={context['ds']} is not complete: {self.marker} did not appear "
                f"within {self.timeout:g} s, so nothing was planned. Check the snapshot export, "
                "or the run's snapshot_root/marker params."
            ) from exc


class PlannerSubmitOperator(SparkSubmitOperator):
    """SparkSubmitOperator whose connection id and master come from templates (DAG params),
    that drops options left empty, and that does not retry the job's final exit codes."""

    template_fields = (*SparkSubmitOperator.template_fields, "spark_conn_id", "spark_master")

    def __init__(self, *, spark_conn_id: str, spark_master: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spark_conn_id = spark_conn_id
        self.spark_master = spark_master

    def execute(self, context: Any) -> None:
        self.conf = {k: v for k, v in (self.conf or {}).items() if v not in ("", None)}
        self.application_args = drop_empty_options(self.application_args or [])
        try:
            super().execute(context)
        except AirflowException as exc:
            process = getattr(self._hook, "_submit_sp", None)
            code = getattr(process, "returncode", None)
            if code in FINAL_EXIT_CODES:
                raise AirflowFailException(
                    f"the planner exited {code}: {FINAL_EXIT_CODES[code]}; not retrying"
                ) from exc
            if code in RETRIED_EXIT_CODES:
                raise AirflowException(
                    f"the planner exited {code}: {RETRIED_EXIT_CODES[code]}; retried later"
                ) from exc
            raise

    def _get_hook(self) -> Any:
        self._conn_id = self.spark_conn_id  # rendered from the params by now
        hook = super()._get_hook()
        if self.spark_master:
            # The provider takes the master from the connection only; a run may override it.
            hook._connection["master"] = self.spark_master
            hook._is_yarn = "yarn" in self.spark_master
            hook._is_yarn_cluster_mode = (
                hook._is_yarn and hook._connection["deploy_mode"] == "cluster"
            )
            hook._is_kubernetes = "k8s" in self.spark_master
            hook._should_track_driver_status = hook._resolve_should_track_driver_status()
        return hook


def drop_empty_options(args: list[Any]) -> list[Any]:
    """`["--a", "x", "--b", ""]` -> `["--a", "x"]`: an empty param means "job default"."""
    out: list[Any] = []
    i = 0
    while i < len(args):
        flag = args[i]
        value = args[i + 1] if i + 1 < len(args) else None
        if isinstance(flag, str) and flag.startswith("--") and value is not None:
            if value != "":
                out += [flag, value]
            i += 2
        else:
            out.append(flag)
            i += 1
    return out


with DAG(
    dag_id="kafka_assignment_planner",
    description="Plan every Kafka consumer group's assignment under each strategy, daily",
    schedule="@daily",
    start_date=datetime(2026, 1, 1, tzinfo=UTC),
    catchup=False,
    max_active_runs=1,
    tags=["kafka", "spark"],
    doc_md=__doc__,
    params={
        "snapshot_root": Param(
            "/data/kafka-snapshots",
            type="string",
            description="The day's snapshot is <snapshot_root>/ds=<ds> (a path or URL)",
        ),
        "output_root": Param(
            "/data/kafka-planner",
            type="string",
            description="The day's output goes to <output_root>/ds=<ds>, replaced as a whole",
        ),
        "strategies": Param(
            "", type="string", description="--strategies (comma-separated); empty: the config's"
        ),
        "config": Param("", type="string", description="--config TOML path; empty: the default"),
        "spark_conn_id": Param("spark_default", type="string", description="Spark connection"),
        "spark_master": Param(
            "", type="string", description="Overrides the connection's master when set"
        ),
        "python": Param(
            "",
            type="string",
            description="spark.pyspark.python: a Python with the pinned runtime dependencies",
        ),
        "planner_home": Param(
            PLANNER_HOME,
            type="string",
            description="Holds jobs/plan_assignments.py and dist/planner.zip (make dist)",
        ),
        "marker": Param(
            "_SUCCESS", type="string", description="File that marks the day's snapshot complete"
        ),
        "sensor_timeout_seconds": Param(6 * 3600, type="integer", minimum=1),
        "poke_interval_seconds": Param(300, type="integer", minimum=1),
    },
) as dag:
    wait_for_snapshot = SnapshotReadySensor(
        task_id="wait_for_snapshot",
        marker="{{ params.snapshot_root }}/ds={{ ds }}/{{ params.marker }}",
        timeout_seconds="{{ params.sensor_timeout_seconds }}",
        poke_interval_seconds="{{ params.poke_interval_seconds }}",
        mode="reschedule",
    )
    plan_assignments = PlannerSubmitOperator(
        task_id="plan_assignments",
        spark_conn_id="{{ params.spark_conn_id }}",
        spark_master="{{ params.spark_master }}",
        application="{{ params.planner_home }}/jobs/plan_assignments.py",
        py_files="{{ params.planner_home }}/dist/planner.zip",
        application_args=[
            "--input",
            "{{ params.snapshot_root }}/ds={{ ds }}",
            "--output",
            "{{ params.output_root }}/ds={{ ds }}",
            "--ds",
            "{{ ds }}",
            "--strategies",
            "{{ params.strategies }}",
            "--config",
            "{{ params.config }}",
        ],
        conf={"spark.pyspark.python": "{{ params.python }}"},
        name="kafka-assignment-planner-{{ ds }}",
        retries=2,
        retry_delay=timedelta(minutes=10),
        execution_timeout=timedelta(hours=4),
    )
    wait_for_snapshot >> plan_assignments
