"""Command line and exit codes of the job (DESIGN §5).

Exit codes: 0 planned (possibly with rejected rows), 2 schema or configuration error (nothing
written), 1 unexpected failure (nothing written: output appears atomically).
"""

from __future__ import annotations

import argparse
import logging
import sys

from jobs.config import ConfigError, load_config, session_error, valid_ds
from jobs.pipeline import check_strategies, run
from jobs.schemas import SchemaError
from jobs.session import build_session
from jobs.summary import format_summary

log = logging.getLogger("planner")
EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_BAD_INPUT = 2


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="plan_assignments",
        description="Plan Kafka consumer-group partition assignments offline, as Kafka would.",
    )
    p.add_argument("--input", required=True, help="directory with one Parquet dataset per table")
    p.add_argument("--output", required=True, help="output directory (replaced atomically)")
    p.add_argument("--config", default=None, help="planner TOML (default: conf/planner.toml)")
    p.add_argument("--strategies", default=None, help="comma-separated, overrides the config")
    p.add_argument("--ds", default=None, help="snapshot date YYYY-MM-DD, recorded in the manifest")
    args = p.parse_args(argv)
    if args.ds is not None and not valid_ds(args.ds):
        p.error(f"--ds must be a date YYYY-MM-DD, got {args.ds!r}")
    return args


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    args = parse_args(argv)
    try:
        config = load_config(args.config, args.strategies)
        check_strategies(config)
    except ConfigError as exc:
        log.error("configuration error: %s", exc)
        return EXIT_BAD_INPUT
    try:
        spark = build_session(config)
        spark.conf.get("spark.sql.shuffle.partitions")  # builds the session state: a SQL
        # property Spark refuses fails here, not at the first read of the input
    except Exception as exc:  # the JVM did not start, or Spark refused a [spark] property
        log.error("configuration error: %s", session_error(exc, config))
        return EXIT_BAD_INPUT
    try:
        result = run(spark, args.input, args.output, config, ds=args.ds)
    except (SchemaError, ConfigError) as exc:
        log.error("input error, nothing written: %s", exc)
        return EXIT_BAD_INPUT
    print(format_summary(result))
    return EXIT_OK
