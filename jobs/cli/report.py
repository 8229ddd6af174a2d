"""`python -m jobs.report OUTPUT_DIR`: (re)build OUTPUT_DIR/report.html."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from jobs import fs
from jobs.cli import preflight
from jobs.cli.exit_codes import EXIT_BAD_INPUT, EXIT_OK
from jobs.plan.session import build_session
from jobs.report import write_report
from jobs.settings.config import PlannerConfig

log = logging.getLogger("jobs.report")


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    p = argparse.ArgumentParser(
        prog="python -m jobs.report", description="(Re)build OUTPUT_DIR/report.html."
    )
    p.add_argument("output_dir", help="an output directory of the planner")
    args = p.parse_args(argv)
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
