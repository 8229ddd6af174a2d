"""Command line and exit codes of the job (docs/data-contract.md).

Exit codes: 0 planned (possibly with rejected rows); 2 schema, configuration or output-location
error, nothing written; 3 completed but needs attention (nothing planned at all, or an
internal error in some group: the tables are written); 130 interrupted (Ctrl-C), nothing
written; 1 unexpected failure, nothing written (output appears atomically).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys

from jobs.config import ConfigError, load_config, session_error, valid_ds
from jobs.output import OutputError
from jobs.pipeline import check_strategies, run
from jobs.schemas import SchemaError
from jobs.session import build_session
from jobs.summary import format_summary, needs_attention

log = logging.getLogger("planner")
EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_BAD_INPUT = 2
EXIT_NEEDS_ATTENTION = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="plan_assignments",
        description="Plan Kafka consumer-group partition assignments offline, as Kafka would.",
    )
    p.add_argument("--input", required=True, help="directory with one Parquet dataset per table")
    p.add_argument(
        "--output",
        required=True,
        help="output directory: absent, empty or a previous output (replaced atomically)",
    )
    p.add_argument("--config", default=None, help="planner TOML (default: conf/planner.toml)")
    p.add_argument("--strategies", default=None, help="comma-separated, overrides the config")
    p.add_argument("--ds", default=None, help="snapshot date YYYY-MM-DD, recorded in the manifest")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace a non-empty --output that is not a previous output (never the input)",
    )
    p.add_argument(
        "--no-report",
        dest="report",
        action="store_false",
        help="do not write report.html (the estate report) beside the tables",
    )
    args = p.parse_args(argv)
    if args.ds is not None and not valid_ds(args.ds):
        p.error(f"--ds must be a date YYYY-MM-DD, got {args.ds!r}")
    return args


def main(argv: list[str] | None = None) -> int:
    # The planner's progress at INFO; libraries (py4j) only from WARNING up.
    logging.basicConfig(
        level=logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    log.setLevel(logging.INFO)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_not_an_interrupt)
    args = parse_args(argv)
    try:
        return _plan(args)
    except KeyboardInterrupt:
        # One line, no traceback: the temporary output is already gone (the output module
        # deletes it on any exception) and a previous output is untouched.
        print("interrupted: nothing written, any previous output is unchanged", file=sys.stderr)
        return EXIT_INTERRUPTED


_interrupted = False


def _on_sigint(signum: int, frame: object) -> None:
    """Python's own Ctrl-C behaviour (KeyboardInterrupt), remembering that it happened."""
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def _not_an_interrupt(record: logging.LogRecord) -> bool:
    """Drop py4j's tracebacks of an interrupted call: the KeyboardInterrupt that Ctrl-C
    raises mid-call, and, once Ctrl-C was pressed, the broken-connection errors py4j logs
    while the jobs are cancelled (the user asked for the stop; one line says so)."""
    if not record.exc_info:
        return True
    if record.exc_info[0] is KeyboardInterrupt:
        return False
    return not (_interrupted and record.name in ("root", "py4j.java_gateway", "py4j.clientserver"))


def _plan(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config, args.strategies)
        check_strategies(config)
    except ConfigError as exc:
        log.error("configuration error: %s", exc)
        return EXIT_BAD_INPUT
    try:
        spark = build_session(config)
    except Exception as exc:  # the JVM did not start, or Spark refused a [spark] property
        log.error("configuration error: %s", session_error(exc, config))
        return EXIT_BAD_INPUT
    # PySpark's own SIGINT handler cancels jobs through the very py4j connection that is
    # waiting for an answer (a reentrant call that prints tracebacks); plain Python's raises
    # KeyboardInterrupt, and the output module stops the jobs before removing its temporary.
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        result = run(
            spark,
            args.input,
            args.output,
            config,
            ds=args.ds,
            force=args.force,
            report=args.report,
        )
    except (SchemaError, ConfigError) as exc:
        log.error("input error, nothing written: %s", exc)
        return EXIT_BAD_INPUT
    except OutputError as exc:
        log.error("output refused, nothing written: %s", exc)
        return EXIT_BAD_INPUT
    except Exception:
        if _interrupted:
            # Ctrl-C reaches the JVM too (one process group): a py4j call made while
            # handling the KeyboardInterrupt then fails on the closed connection.
            raise KeyboardInterrupt from None
        log.exception("unexpected failure, nothing written")
        return EXIT_UNEXPECTED
    print(format_summary(result))
    attention = needs_attention(result.manifest)
    if attention:
        log.error("completed, needs attention (exit 3): %s", "; ".join(attention))
        return EXIT_NEEDS_ATTENTION
    return EXIT_OK
