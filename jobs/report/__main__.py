"""`python -m jobs.report OUTPUT_DIR`: (re)build OUTPUT_DIR/report.html."""

from __future__ import annotations

import argparse
import logging
import sys

from jobs import fs
from jobs.config import PlannerConfig
from jobs.manifest import MANIFEST_FILE
from jobs.report import write_report
from jobs.session import build_session

log = logging.getLogger("jobs.report")


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    p = argparse.ArgumentParser(
        prog="python -m jobs.report", description="(Re)build OUTPUT_DIR/report.html."
    )
    p.add_argument("output_dir", help="an output directory of the planner")
    args = p.parse_args(argv)
    spark = build_session(PlannerConfig())
    try:
        if not fs.exists(spark, args.output_dir):
            log.error("no such output directory: %s", args.output_dir)
            return 2
        if not fs.exists(spark, f"{args.output_dir.rstrip('/')}/{MANIFEST_FILE}"):
            # never write a page into a snapshot or any folder the planner did not write
            log.error(
                "%s is not a planner output (no %s): nothing written",
                args.output_dir,
                MANIFEST_FILE,
            )
            return 2
        print(write_report(spark, args.output_dir))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
