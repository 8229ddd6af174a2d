"""`python -m jobs.report OUTPUT_DIR`: (re)build OUTPUT_DIR/report.html (the same as
`kafka-planner report OUTPUT_DIR`).

The command is jobs/cli/report.py, run here by its module name as `python -m` runs a module:
the report wing itself never imports the commands above it.
"""

from __future__ import annotations

import runpy

runpy.run_module("jobs.cli.report", run_name="__main__", alter_sys=True)
