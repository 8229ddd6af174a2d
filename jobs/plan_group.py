"""`python -m jobs.plan_group`: plan one group straight from a snapshot, without Spark, and
try an operator's change on it (the command: jobs/cli/plan_group.py; the same as
`kafka-planner plan-group`)."""

from __future__ import annotations

import sys

from jobs.cli.plan_group import main

if __name__ == "__main__":
    sys.exit(main())
