"""Entry point: plan every consumer group of a snapshot under every strategy.

    spark-submit jobs/plan_assignments.py --input DIR --output DIR \\
        [--config conf/planner.toml] [--strategies range,roundrobin] [--ds YYYY-MM-DD]
    python -m jobs.plan_assignments ...   # same flags; builds a local[*] session

The work is done by jobs/cli.py (flags, exit codes), jobs/plan/session.py (the
SparkSession, code shipping), jobs/plan/pipeline.py (the run) and jobs/plan/summary.py (the
console summary); this module stays the one file spark-submit is given.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script by spark-submit: make `jobs` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jobs.cli import main, parse_args
from jobs.plan.pipeline import run
from jobs.plan.summary import format_summary
from jobs.tables.manifest import Manifest

__all__ = ["Manifest", "format_summary", "main", "parse_args", "run"]

if __name__ == "__main__":
    sys.exit(main())
