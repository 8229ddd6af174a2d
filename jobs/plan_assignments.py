"""Entry point: plan every consumer group of a snapshot under every strategy.

    spark-submit jobs/plan_assignments.py --input DIR --output DIR \\
        [--config conf/planner.toml] [--strategies range,roundrobin] [--ds YYYY-MM-DD]
    python -m jobs.plan_assignments ...   # same flags; builds a local[*] session
    kafka-planner plan ...                # the same, through the front door

The work is done by jobs/cli/plan.py (flags, exit codes), jobs/plan/session.py (the
SparkSession, code shipping), jobs/plan/pipeline.py (the run) and jobs/plan/summary.py (the
console summary); this module stays the one file spark-submit is given.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __package__ in (None, ""):
    # Run as a script (spark-submit): Python put this file's folder, jobs/, first on the path,
    # where the wings of jobs/ (cli, plan, tables, output, settings, report, export) would
    # shadow any top-level module of the same name. Off it goes; the repository root goes
    # first instead, which makes `jobs` itself importable.
    _HERE = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != _HERE]
    sys.path.insert(0, str(_HERE.parent))

from jobs.cli.plan import main, parse_args
from jobs.plan.pipeline import run
from jobs.plan.summary import format_summary
from jobs.tables.manifest import Manifest

__all__ = ["Manifest", "format_summary", "main", "parse_args", "run"]

if __name__ == "__main__":
    sys.exit(main())
