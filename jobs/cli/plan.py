"""Command line and exit codes of the job (docs/data-contract.md).

Exit codes: 0 planned (possibly with rejected rows); 2 schema, configuration or output-location
error, nothing written; 3 completed but needs attention (nothing planned at all, or an
internal error in some group: the tables are written); 4 the output is locked by another run
that is still alive (retry later), nothing written; 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM, as Airflow's execution_timeout, YARN and Kubernetes send it), nothing written, the
lock released; 1 unexpected failure, nothing written (output appears atomically). A failure
prints one line naming its cause; `--verbose` adds the full trace.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys

from pyspark.sql import SparkSession

from jobs import output
from jobs.cli import preflight
from jobs.cli.common import add_verbose, configure_logging, exit_code_of
from jobs.cli.exit_codes import (  # noqa: F401
    # every code, unused ones too: callers (the DAG's tests) read them from this module
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_LOCKED,
    EXIT_NEEDS_ATTENTION,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_UNEXPECTED,
)
from jobs.failures import describe
from jobs.output import OutputError, OutputLocked
from jobs.output.lock import check_free
from jobs.plan.pipeline import run
from jobs.plan.session import build_session
from jobs.plan.summary import format_summary
from jobs.settings.config import ConfigError, PlannerConfig, session_error, valid_ds
from jobs.settings.run import load_settings
from jobs.tables.schemas import SchemaError

log = logging.getLogger("planner")


def parse_args(argv: list[str] | None, prog: str = "plan_assignments") -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog=prog,
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
        "--previous",
        default=None,
        metavar="DIR",
        help="a previous output of the planner: adds the `changes` table (what changed since"
        " then); absent or unusable, the run goes on without it and says so in the log",
    )
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
    add_verbose(p, "on a failure, print the full Python and Java trace, not only its cause")
    args = p.parse_args(argv)
    if args.ds is not None and not valid_ds(args.ds):
        p.error(f"--ds must be a date YYYY-MM-DD, got {args.ds!r}")
    return args


def main(argv: list[str] | None = None, prog: str = "plan_assignments") -> int:
    # The planner's progress at INFO; libraries (py4j) only from WARNING up.
    configure_logging([log.name])
    for handler in logging.getLogger().handlers:
        handler.addFilter(_not_an_interrupt)
    args = parse_args(argv, prog)
    global _interrupted, _signal
    _interrupted, _signal = False, None  # a fresh run (main may be called more than once)
    # SIGTERM from here on unwinds like Ctrl-C: lock released, temporary removed, one line.
    # (Python's default for SIGTERM is to die at once, leaving the lock behind.)
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _plan(args)
    except KeyboardInterrupt:
        # One line, no traceback: the temporary output is already gone (the output module
        # deletes it on any exception) and a previous output is untouched.
        if _signal == signal.SIGTERM:
            print(
                "terminated (SIGTERM): nothing written, any previous output is unchanged",
                file=sys.stderr,
            )
            return EXIT_TERMINATED
        print("interrupted: nothing written, any previous output is unchanged", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if previous is not None:  # an in-process caller (a test) gets its handler back
            signal.signal(signal.SIGTERM, previous)


_interrupted = False
_signal: int | None = None


def _on_sigint(signum: int, frame: object) -> None:
    """Python's own Ctrl-C behaviour (KeyboardInterrupt), remembering that it happened."""
    global _interrupted, _signal
    _interrupted = True
    _signal = _signal or signum
    raise KeyboardInterrupt


def _on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM is a request to stop, as Ctrl-C is: the same unwinding, its own exit code.
    A second signal while unwinding is ignored, so the cleanup finishes."""
    if _interrupted:
        return
    _on_sigint(signum, frame)


def _not_an_interrupt(record: logging.LogRecord) -> bool:
    """Drop py4j's tracebacks of an interrupted call: the KeyboardInterrupt that Ctrl-C
    raises mid-call, and, once Ctrl-C was pressed, the broken-connection errors py4j logs
    while the jobs are cancelled (the user asked for the stop; one line says so)."""
    if not record.exc_info:
        return True
    if record.exc_info[0] is not None and issubclass(record.exc_info[0], KeyboardInterrupt):
        return False
    return not (_interrupted and record.name in ("root", "py4j.java_gateway", "py4j.clientserver"))


def _quiet_jvm(spark: SparkSession, config: PlannerConfig) -> None:
    """Spark's own log from FATAL up, unless the user chose its level (the config's [spark],
    or spark-submit's --conf): a failing task logs its Java trace once per task, attempt and
    layer (hundreds of lines for one full disk), and the planner prints the cause in one line
    instead. `--verbose` keeps Spark's warnings and errors."""
    if "spark.log.level" in config.spark:
        return
    try:
        sc = spark.sparkContext
        if "PYSPARK_GATEWAY_PORT" in os.environ and sc.getConf().contains("spark.log.level"):
            return
        sc.setLogLevel("FATAL")
    except Exception:  # a session without a JVM context of its own (Spark Connect)
        log.debug("cannot set Spark's log level", exc_info=True)


def _check_before_spark(output_dir: str, config: PlannerConfig) -> None:
    """OutputLocked when a live run holds a local output's lock: found in a second, where the
    claim finds it only once the session has started (and checks again, under the lock)."""
    target = output.normalize(output_dir)
    local = preflight.local_path(target, config.spark)
    if local is not None:
        check_free(target, local)


def _plan(args: argparse.Namespace) -> int:
    try:
        config, settings = load_settings(args.config, args.strategies)
    except ConfigError as exc:
        log.error("configuration error: %s", exc)
        return exit_code_of(exc)
    try:
        _check_before_spark(args.output, config)
    except OutputLocked as exc:
        log.error("output locked, nothing written (exit 4, retry later): %s", exc)
        return exit_code_of(exc)
    try:
        spark = build_session(config)
    except Exception as exc:  # the JVM did not start, or Spark refused a [spark] property
        log.error("configuration error: %s", session_error(exc, config))
        return EXIT_BAD_INPUT
    if not args.verbose:
        _quiet_jvm(spark, config)
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
            settings=settings,
            previous=args.previous,
        )
    except (SchemaError, ConfigError) as exc:
        log.error("input error, nothing written: %s", exc)
        return exit_code_of(exc)
    except OutputLocked as exc:
        log.error("output locked, nothing written (exit 4, retry later): %s", exc)
        return exit_code_of(exc)
    except OutputError as exc:
        log.error("output refused, nothing written: %s", exc)
        return exit_code_of(exc)
    except Exception as exc:
        if _interrupted:
            # Ctrl-C reaches the JVM too (one process group): a py4j call made while
            # handling the KeyboardInterrupt then fails on the closed connection.
            raise KeyboardInterrupt from None
        if args.verbose:
            log.exception("unexpected failure, nothing written: %s", describe(exc))
        else:
            log.error(
                "unexpected failure, nothing written: %s (--verbose shows the full trace)",
                describe(exc),
            )
        return EXIT_UNEXPECTED
    print(format_summary(result))
    attention = result.needs_attention()
    if attention:
        log.error("completed, needs attention (exit 3): %s", "; ".join(attention))
        return EXIT_NEEDS_ATTENTION
    return EXIT_OK
