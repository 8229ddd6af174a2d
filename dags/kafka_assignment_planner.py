"""Daily Kafka assignment plan: the day's snapshot (waited for, or exported), then the planner
on Spark.

    wait_for_snapshot  ->  plan_assignments
    (<snapshot_root>/ds=<ds>/<marker>,   (spark-submit jobs/plan_assignments.py
     or export it when                    --input <snapshot_root>/ds=<ds>
     bootstrap_servers is set)            --output <output_root>/ds=<ds> --ds <ds>)

Airflow 3 (`airflow.sdk`) with apache-airflow-providers-apache-spark; versions verified in
dags/requirements-airflow.txt. Every knob is a DAG param, so one run can be retargeted from
"Trigger DAG w/ config" (e.g. a backfill of one day into another output root).

- The sensor waits in `reschedule` mode (a snapshot may land hours late: the task frees its
  worker slot between pokes) and fails with a message naming the missing marker when
  `sensor_timeout_seconds` passes; a sensor timeout is not retried.
- `bootstrap_servers` set: the same task exports the snapshot instead of waiting for it
  (`python -m jobs.export_snapshot`, docs/exporter.md) into <snapshot_root>/ds=<ds>, which
  must be a local path. Client properties (security.protocol, sasl.*, ssl.*) come from the
  extras of connection `kafka_conn_id`, written to a private temporary file for
  --command-config. Exit 3 (some groups skipped or failed, the rest exported) is a warning and
  planning goes on; 2 (configuration, unreachable cluster) fails at once; any other code is
  retried like the Spark task: 4 (the snapshot is locked by another export that is still
  alive, or by a killed one whose lock has not expired yet) and 143 (terminated) among them.
- The Spark task retries: the job writes a hidden temporary directory and swaps it in only
  when every table and `_manifest.json` are complete, so a retried run never mixes with a
  half-written one. Exit codes 2 (schema/config error) and 3 (ran, needs attention) are the
  job's verdict on the input, so they fail the task at once instead of retrying. Exit 4 (the
  output is locked by another run that is still alive) and 143 (terminated) are retried after
  `retry_delay`: a run that died without releasing its lock stops renewing it, and the lock
  expires `[output] lock_lease_s` (default 5 minutes) after its last renewal.
- `snapshot_date` (YYYY-MM-DD) chooses the day; empty: the run's `ds`, or for a run without a
  logical date (manual, or triggered by an asset) the day it was queued for. In this DAG's
  templates `ds` is that date, so every path and `--ds` follow it; `previous_ds` is the day
  before it, whose output the job gets as `--previous` (the `changes` table).
- A successful plan emits an event on the asset `kafka_assignment_plan` (PLAN_ASSET), the
  day's `ds` and output folder in its extra: downstream DAGs schedule on it.
- `spark_master` empty: the master of connection `spark_conn_id` (spark-submit must be on the
  worker's PATH, as the provider requires); set: that master with the connection's other
  settings (RUN_SPARK_CONN_ID below). `python` empty: the interpreter spark-submit and
  the cluster choose; set it to a Python that has the project's pinned runtime dependencies.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import (
    DAG,
    Asset,
    BaseHook,
    BaseSensorOperator,
    Connection,
    ObjectStoragePath,
    Param,
)
from airflow.sdk.exceptions import (
    AirflowException,
    AirflowFailException,
    AirflowNotFoundException,
    AirflowSensorTimeout,
)
from airflow.sdk.log import mask_secret

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
# The exporter's exit codes (docs/exporter.md). 3 is a warning here: the groups it could read
# are exported and planned, the others are listed in the snapshot's _snapshot.json.
EXPORT_PARTIAL = 3
EXPORT_FINAL_EXIT_CODES = {
    2: "configuration error or cluster unreachable (named above), nothing written",
}
EXPORT_RETRIED_EXIT_CODES = {
    1: "unexpected failure, nothing written",
    4: "the snapshot is locked by another export that is still alive, nothing written",
    130: "interrupted, nothing written",
    143: "terminated (SIGTERM), nothing written",
    # Negative: the signal that ended a process that did not exit by itself (Popen's code).
    -9: "killed",
    -15: "terminated (SIGTERM)",
}
# Connection extras that are not client security settings: the Kafka provider's connections
# (and Airflow's default kafka_default) carry them; the bootstrap servers come from the param
# and the exporter never joins a group. Any other key goes to the exporter, which refuses what
# it cannot honour rather than connecting without the security it was asked for.
IGNORED_EXTRAS = {"bootstrap.servers", "group.id"}
# Values that never appear in a log line (the task log masks them if anything echoes them).
SECRET_PROPERTIES = {"sasl.password", "sasl.jaas.config", "ssl.key.password"}
# The planner's output root unless a run's output_root param names another, and the asset the
# daily plans are published as. Each successful plan_assignments emits one event on it whose
# extra names the day: {"ds", "output", "output_root", "snapshot"}. A downstream DAG schedules
# on it (`schedule=[Asset(name="kafka_assignment_plan")]`) and reads the day's folder from its
# triggering event's extra["output"] (a run with another output_root emits on the same asset;
# its extra says where that run wrote).
OUTPUT_ROOT = "/data/kafka-planner"
PLAN_ASSET = Asset(name="kafka_assignment_plan", uri=f"file://{OUTPUT_ROOT}")
# The connection id the Spark provider's hook is given. It is defined, as AIRFLOW_CONN_<ID>,
# in the task's own process while the task submits: a copy of the run's spark_conn_id
# connection, its master replaced by the spark_master param when that is set.
RUN_SPARK_CONN_ID = "kafka_assignment_planner_run"
# Where a failure's message names the job's exit code, most specific first. The provider's
# hook raises "Cannot execute: <command>. Error code is: N." when spark-submit exits N (in
# client mode, the job's own code), plus "Kubernetes spark exit code is: N" on Kubernetes
# (the driver's); its Kubernetes API tracking raises "... exit_code=N reason=...".
EXIT_CODE_PATTERNS = (
    re.compile(r"Kubernetes spark exit code is: (-?\d+)"),
    re.compile(r"\bexit_code=(-?\d+)"),
    re.compile(r"Error code is: (-?\d+)"),
    re.compile(r"\bexited (-?\d+)"),
)
# The tail of spark-submit's output that the hook appends to its message: the job's own log
# lines, never read for a code.
SUBMIT_OUTPUT_TAIL = "\nLast spark-submit output:"


def snapshot_date(context: Any) -> str:
    """The day a run snapshots and plans: the `snapshot_date` param when set, else the run's
    `ds`, else the date the run was queued for (`run_after`: a manual run without a logical
    date, or one triggered by an asset)."""
    chosen = str((context.get("params") or {}).get("snapshot_date") or "").strip()
    if chosen:
        try:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", chosen):
                raise ValueError("not YYYY-MM-DD")
            return date.fromisoformat(chosen).isoformat()
        except ValueError as exc:
            raise AirflowFailException(
                f"snapshot_date {chosen!r} is not a date (YYYY-MM-DD): {exc}"
            ) from exc
    if context.get("ds"):
        return str(context["ds"])
    run_after = getattr(context.get("dag_run"), "run_after", None)
    if run_after is not None:
        return run_after.astimezone(UTC).strftime("%Y-%m-%d")
    raise AirflowFailException("the run has no date: set the snapshot_date param (YYYY-MM-DD)")


class SnapshotDateTemplates:
    """In this DAG's templates `ds` (and `ds_nodash`) is the snapshot date (`snapshot_date`),
    so a manual run given a date, and a run without a logical date, render the same paths as
    a scheduled run; `previous_ds` is the day before it."""

    def render_template_fields(self, context: Any, jinja_env: Any = None) -> None:
        day = snapshot_date(context)
        previous = (date.fromisoformat(day) - timedelta(days=1)).isoformat()
        dated = {**context, "ds": day, "ds_nodash": day.replace("-", ""), "previous_ds": previous}
        super().render_template_fields(dated, jinja_env)  # type: ignore[misc]


def exit_code(exc: BaseException) -> int | None:
    """The exit code a failure's message (or its cause's) names, if any."""
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        head = str(error).split(SUBMIT_OUTPUT_TAIL, 1)[0]
        for pattern in EXIT_CODE_PATTERNS:
            match = pattern.search(head)
            if match:
                return int(match.group(1))
        error = error.__cause__ or error.__context__
    return None


class SnapshotReadySensor(SnapshotDateTemplates, BaseSensorOperator):
    """Makes the day's snapshot ready. By default waits for `marker` (a plain path or an
    ObjectStoragePath URL such as `s3://conn_id@bucket/key`) to exist. With
    `bootstrap_servers` set it exports the snapshot into `snapshot` itself instead
    (`python -m jobs.export_snapshot`), within the same `timeout_seconds`. Every field is
    templated, so DAG params can set them per run."""

    template_fields = (
        "marker",
        "timeout_seconds",
        "poke_interval_seconds",
        "snapshot",
        "bootstrap_servers",
        "kafka_conn_id",
        "export_args",
        "python",
        "planner_home",
    )

    def __init__(
        self,
        *,
        marker: str,
        timeout_seconds: str,
        poke_interval_seconds: str,
        snapshot: str = "",
        bootstrap_servers: str = "",
        kafka_conn_id: str = "",
        export_args: list[str] | None = None,
        python: str = "",
        planner_home: str = PLANNER_HOME,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.marker = marker
        self.timeout_seconds = timeout_seconds
        self.poke_interval_seconds = poke_interval_seconds
        self.snapshot = snapshot
        self.bootstrap_servers = bootstrap_servers
        self.kafka_conn_id = kafka_conn_id
        self.export_args = export_args or []
        self.python = python
        self.planner_home = planner_home
        self._export: subprocess.Popen[str] | None = None

    def poke(self, context: Any) -> bool:
        self.log.info("waiting for the snapshot marker %s", self.marker)
        try:
            if "://" in self.marker:
                return bool(ObjectStoragePath(self.marker).exists())
            return os.path.exists(self.marker)
        except Exception as exc:
            # The task has retries for the export; a failing check of the marker still fails
            # at once, as it did before.
            raise AirflowFailException(
                f"cannot check the snapshot marker {self.marker}: {exc}"
            ) from exc

    def execute(self, context: Any) -> Any:
        self.timeout = float(self.timeout_seconds)
        self.poke_interval = float(self.poke_interval_seconds)
        if self.bootstrap_servers.strip():
            return self.export(context)
        try:
            return super().execute(context)
        except AirflowSensorTimeout as exc:
            day = snapshot_date(context)
            raise AirflowSensorTimeout(
                f"snapshot for ds={day} is not complete: {self.marker} did not appear "
                f"within {self.timeout:g} s, so nothing was planned. Check the snapshot export, "
                "or the run's snapshot_root/marker params."
            ) from exc

    # --- bootstrap_servers set: export the snapshot ------------------------------------

    def export(self, context: Any) -> None:
        if "://" in self.snapshot:
            raise AirflowFailException(
                f"the exporter writes a local path, not {self.snapshot}: set snapshot_root to a "
                "local path (or leave bootstrap_servers empty and wait for the marker)"
            )
        python = self.python or "python3"
        with tempfile.TemporaryDirectory(prefix="planner-export-") as tmp:
            command = [
                python,
                "-m",
                "jobs.export_snapshot",
                "--bootstrap-servers",
                self.bootstrap_servers.strip(),
                "--output",
                self.snapshot,
                *drop_empty_options(self.export_args),
            ]
            properties = self.client_properties()
            if properties:
                config = Path(tmp) / "client.properties"
                config.touch(mode=0o600)  # private before any secret is written
                config.write_text(render_properties(properties), encoding="utf-8")
                command += ["--command-config", str(config)]
            code = self.run_exporter(command)
        self.check_export(code, context)

    def client_properties(self) -> dict[str, str]:
        """The connection's extras (and login/password as sasl.username/sasl.password)."""
        if not self.kafka_conn_id:
            self.log.info("kafka_conn_id is empty: the exporter connects with PLAINTEXT")
            return {}
        try:
            conn = BaseHook.get_connection(self.kafka_conn_id)
        except AirflowNotFoundException as exc:
            raise AirflowFailException(
                f"Kafka connection {self.kafka_conn_id!r} is not defined: create it (its extras "
                "hold the client properties), or set kafka_conn_id to '' for PLAINTEXT"
            ) from exc
        props: dict[str, str] = {}
        if conn.login:
            props["sasl.username"] = conn.login
        if conn.password:
            props["sasl.password"] = conn.password
        for key, value in conn.extra_dejson.items():
            if key in IGNORED_EXTRAS:
                continue
            props[key] = property_value(value)
        for key, value in props.items():
            if key in SECRET_PROPERTIES and value:
                mask_secret(value, key)
            if "\n" in value or "\r" in value or value.endswith("\\"):
                # A line break or a trailing backslash would run into the next property.
                raise AirflowFailException(
                    f"connection {self.kafka_conn_id!r}: {key} cannot be written as one "
                    "property line (a line break or a trailing backslash)"
                )
        self.log.info(
            "client properties from connection %r (values not logged): %s",
            self.kafka_conn_id,
            ", ".join(sorted(props)) or "none",
        )
        return props

    def run_exporter(self, command: list[str]) -> int:
        """Runs the exporter from `planner_home` (its code first on the path), its output
        streamed into the task log; killed when `timeout_seconds` passes."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (self.planner_home, env.get("PYTHONPATH", "")) if p
        )
        self.log.info("exporting the snapshot: %s", shlex.join(command))
        self._export = subprocess.Popen(
            command,
            cwd=self.planner_home,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # on_kill and the timeout stop the whole process group
        )
        timer = threading.Timer(self.timeout, self.stop_exporter, args=("timed out",))
        timer.start()
        try:
            assert self._export.stdout is not None
            for line in self._export.stdout:
                self.log.info("%s", line.rstrip())
            return self._export.wait()
        finally:
            timer.cancel()

    def stop_exporter(self, why: str) -> None:
        process = self._export
        if process is None or process.poll() is not None:
            return
        self.log.warning("stopping the exporter (%s)", why)
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def on_kill(self) -> None:
        self.stop_exporter("task killed")

    def check_export(self, code: int, context: Any) -> None:
        if code in EXPORT_FINAL_EXIT_CODES:
            raise AirflowFailException(
                f"the exporter exited {code}: {EXPORT_FINAL_EXIT_CODES[code]}; not retrying"
            )
        if code not in (0, EXPORT_PARTIAL):
            why = EXPORT_RETRIED_EXIT_CODES.get(code, "failed")
            raise AirflowException(f"the exporter exited {code}: {why}; retried later")
        marker = os.path.join(self.snapshot, "_SUCCESS")
        if not os.path.exists(marker):
            raise AirflowException(f"the exporter exited {code} but wrote no {marker}")
        if code == EXPORT_PARTIAL:
            meta = json.loads(Path(self.snapshot, "_snapshot.json").read_text(encoding="utf-8"))
            self.log.warning(
                "the exporter exited 3: some groups were not exported (skipped: %s; failed: %s;"
                " reasons in %s/_snapshot.json); planning the %d exported groups",
                ", ".join(meta.get("groups_skipped", {})) or "none",
                ", ".join(meta.get("groups_failed", {})) or "none",
                self.snapshot,
                len(meta.get("groups_exported", [])),
            )
        self.log.info("snapshot for ds=%s exported to %s", snapshot_date(context), self.snapshot)


def property_value(value: Any) -> str:
    """A JSON extra as a property value: true/false as Java writes them, null as empty."""
    if isinstance(value, bool):
        return str(value).lower()
    return "" if value is None else str(value)


def render_properties(props: dict[str, str]) -> str:
    """A Java .properties file as the exporter's --command-config reads it: key=value lines."""
    return "".join(f"{key}={value}\n" for key, value in sorted(props.items()))


class PlannerSubmitOperator(SnapshotDateTemplates, SparkSubmitOperator):
    """SparkSubmitOperator whose connection id and master come from templates (DAG params),
    that drops options left empty, does not retry the job's final exit codes, and puts
    `outlet_extra` on the events of its outlet assets.

    The provider takes the master from its connection only, and its connection id is fixed
    when the DAG is parsed: the hook is given `RUN_SPARK_CONN_ID`, which this task defines in
    its own process (an `AIRFLOW_CONN_` variable, Airflow's environment secrets backend) from
    connection `spark_conn_id` and `spark_master`. The hook then derives everything else
    (YARN, Kubernetes, standalone driver tracking) from that connection as it always does.
    The exit code is read from the failure's message (`exit_code`)."""

    template_fields = (
        *SparkSubmitOperator.template_fields,
        "spark_conn_id",
        "spark_master",
        "outlet_extra",
    )

    def __init__(
        self,
        *,
        spark_conn_id: str,
        spark_master: str = "",
        outlet_extra: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(conn_id=RUN_SPARK_CONN_ID, **kwargs)
        self.spark_conn_id = spark_conn_id
        self.spark_master = spark_master
        self.outlet_extra = outlet_extra or {}
        self._connection_defined = False

    def execute(self, context: Any) -> None:
        self.conf = {k: v for k, v in (self.conf or {}).items() if v not in ("", None)}
        self.application_args = drop_empty_options(self.application_args or [])
        try:
            with self.spark_connection():
                super().execute(context)
        except Exception as exc:
            code = exit_code(exc)
            if code in FINAL_EXIT_CODES:
                raise AirflowFailException(
                    f"the planner exited {code}: {FINAL_EXIT_CODES[code]}; not retrying"
                ) from exc
            if code in RETRIED_EXIT_CODES:
                raise AirflowException(
                    f"the planner exited {code}: {RETRIED_EXIT_CODES[code]}; retried later"
                ) from exc
            raise
        self.publish(context)

    def publish(self, context: Any) -> None:
        """`outlet_extra` on the event of each outlet asset (emitted when the task succeeds)."""
        events = context.get("outlet_events")
        if events is None or not self.outlet_extra:
            return
        for outlet in self.outlets:
            if isinstance(outlet, Asset):
                events[outlet].extra.update(self.outlet_extra)
                self.log.info("asset %s: %s", outlet.name, json.dumps(self.outlet_extra))

    def run_connection(self) -> Connection:
        """Connection `spark_conn_id` as the hook reads it (type, host, port, extras: never a
        login or password), its master replaced by `spark_master` when that is set."""
        base: Connection | None = None
        if self.spark_conn_id:
            try:
                base = BaseHook.get_connection(self.spark_conn_id)
            except AirflowNotFoundException:
                base = None
        extra = base.extra if base is not None else None
        if self.spark_master:
            return Connection(
                conn_id=RUN_SPARK_CONN_ID, conn_type="spark", host=self.spark_master, extra=extra
            )
        if base is None:
            self.log.warning(
                "Spark connection %r is not defined and spark_master is empty: spark-submit "
                "gets the provider's default master, yarn",
                self.spark_conn_id,
            )
            return Connection(conn_id=RUN_SPARK_CONN_ID, conn_type="spark", host="yarn")
        return Connection(
            conn_id=RUN_SPARK_CONN_ID,
            conn_type=base.conn_type,
            host=base.host,
            port=base.port,
            extra=extra,
        )

    @contextlib.contextmanager
    def spark_connection(self) -> Iterator[None]:
        """`RUN_SPARK_CONN_ID` defined in this process (and restored after)."""
        if self._connection_defined:
            yield
            return
        name = f"AIRFLOW_CONN_{RUN_SPARK_CONN_ID.upper()}"
        saved = os.environ.get(name)
        os.environ[name] = self.run_connection().as_json()
        self._connection_defined = True
        try:
            yield
        finally:
            self._connection_defined = False
            if saved is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = saved

    def _get_hook(self) -> Any:
        # The provider's factory of its hook, wrapped only so that a hook built outside
        # execute (on_kill before a submit, a test) resolves the run's connection too.
        with self.spark_connection():
            return super()._get_hook()


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
        "snapshot_date": Param(
            "",
            type="string",
            pattern=r"^(\d{4}-\d{2}-\d{2})?$",
            description="The day to snapshot and plan (YYYY-MM-DD); empty: the run's ds, or "
            "for a run without a logical date (manual, asset-triggered) the day it was queued",
        ),
        "output_root": Param(
            OUTPUT_ROOT,
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
        "sensor_timeout_seconds": Param(
            6 * 3600,
            type="integer",
            minimum=1,
            description="How long the snapshot may take: waiting for the marker, or the export",
        ),
        "poke_interval_seconds": Param(300, type="integer", minimum=1),
        "bootstrap_servers": Param(
            "",
            type="string",
            description="HOST:PORT[,HOST:PORT]: export the day's snapshot from this cluster "
            "instead of waiting for the marker; empty: wait for the marker",
        ),
        "kafka_conn_id": Param(
            "kafka_default",
            type="string",
            description="Connection whose extras hold the exporter's client properties "
            "(security.protocol, sasl.*, ssl.*); empty: PLAINTEXT",
        ),
        "export_groups": Param(
            "", type="string", description="--groups regex of the export; empty: every group"
        ),
        "export_exclude_groups": Param(
            "", type="string", description="--exclude-groups regex of the export; empty: none"
        ),
        "export_timeout_seconds": Param(
            30, type="integer", minimum=1, description="--timeout-s: the export's per request"
        ),
        "export_python": Param(
            "",
            type="string",
            description="Python on the worker with the project's runtime and export "
            "dependencies; empty: the python param, else python3",
        ),
    },
) as dag:
    wait_for_snapshot = SnapshotReadySensor(
        task_id="wait_for_snapshot",
        marker="{{ params.snapshot_root }}/ds={{ ds }}/{{ params.marker }}",
        timeout_seconds="{{ params.sensor_timeout_seconds }}",
        poke_interval_seconds="{{ params.poke_interval_seconds }}",
        mode="reschedule",
        snapshot="{{ params.snapshot_root }}/ds={{ ds }}",
        bootstrap_servers="{{ params.bootstrap_servers }}",
        kafka_conn_id="{{ params.kafka_conn_id }}",
        export_args=[
            "--ds",
            "{{ ds }}",
            "--groups",
            "{{ params.export_groups }}",
            "--exclude-groups",
            "{{ params.export_exclude_groups }}",
            "--timeout-s",
            "{{ params.export_timeout_seconds }}",
        ],
        python="{{ params.export_python or params.python }}",
        planner_home="{{ params.planner_home }}",
        # For the export (the marker's sensor fails at once): as the Spark task.
        retries=2,
        retry_delay=timedelta(minutes=10),
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
            # The day before's output, for the `changes` table. Always passed: the job checks
            # that it exists (on whatever file system the output is) and, when it does not
            # (the first day, a missed day), says so in its log and plans without it.
            "--previous",
            "{{ params.output_root }}/ds={{ previous_ds }}",
        ],
        conf={"spark.pyspark.python": "{{ params.python }}"},
        name="kafka-assignment-planner-{{ ds }}",
        outlets=[PLAN_ASSET],
        outlet_extra={
            "ds": "{{ ds }}",
            "output": "{{ params.output_root }}/ds={{ ds }}",
            "output_root": "{{ params.output_root }}",
            "snapshot": "{{ params.snapshot_root }}/ds={{ ds }}",
        },
        retries=2,
        retry_delay=timedelta(minutes=10),
        execution_timeout=timedelta(hours=4),
    )
    wait_for_snapshot >> plan_assignments
