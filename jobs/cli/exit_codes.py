"""The exit codes of the commands of jobs/: the planner job, the snapshot exporter,
`describe`, `plan_group` and the report. The DAG retries or fails a task by them
(`FINAL_EXIT_CODES`, `RETRIED_EXIT_CODES` in dags/kafka_assignment_planner.py)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_BAD_INPUT = 2
EXIT_NEEDS_ATTENTION = 3
# Another live run (or export) holds the output: the input, or the cluster, is fine; retry later.
EXIT_LOCKED = 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
EXIT_TERMINATED = 143  # 128 + SIGTERM
