"""`kafka-planner report OUTPUT_DIR` (or `python -m jobs.report OUTPUT_DIR`): (re)build
OUTPUT_DIR/report.html. Exit codes: 0 written; 2 not a planner output, or an error the shared
mapping names (jobs/cli/common.py); 1 an unexpected failure."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from jobs import fs
from jobs.cli import preflight
from jobs.cli.common import add_verbose, configure_logging, guarded
from jobs.cli.exit_codes import EXIT_BAD_INPUT, EXIT_OK
from jobs.plan.session import build_session
from jobs.report import write_report
from jobs.settings.config import PlannerConfig

log = logging.getLogger("jobs.report")


def parse_args(argv: list[str] | None, prog: str = "python -m jobs.report") -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description="(Re)build OUTPUT_DIR/report.html.")
    p.add_argument("output_dir", help="an output directory of the planner")
    add_verbose(p)
    args = p.parse_args(argv)
    args.prog = prog
    return args


def main(argv: list[str] | None = None, prog: str = "python -m jobs.report") -> int:
    # The report's progress and the session's (the `planner` logger) at INFO, libraries not.
    configure_logging((log.name, "planner"), verbose=False)
    args = parse_args(argv, prog)
    return guarded(prog, lambda: report(args), verbose=args.verbose)


def report(args: argparse.Namespace) -> int:
    config = PlannerConfig()
    local = preflight.local_path(args.output_dir, config.spark)
    if local is not None:
        # A local directory is judged before Spark starts (tens of seconds), with the words
        # and exit code of the check below.
        refused = preflight.report_refusal(args.output_dir, os.path.exists, local)
        if refused is not None:
            log.error("%s", refused)
            return EXIT_BAD_INPUT
    spark = build_session(config)
    try:
        refused = preflight.report_refusal(args.output_dir, lambda p: fs.exists(spark, p))
        if refused is not None:
            log.error("%s", refused)
            return EXIT_BAD_INPUT
        print(write_report(spark, args.output_dir))
    finally:
        spark.stop()
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
