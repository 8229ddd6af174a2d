"""What every command shares: the logging set-up, the `--verbose` flag, and one mapping of
errors to exit codes (jobs/cli/exit_codes.py) for whatever a command does not handle itself.

A command names the failures it expects in its own words (`configuration error: ...`); an
error that escapes it is mapped here by its class, so that `python -m jobs.X` and
`kafka-planner X` exit alike and print one line naming the cause, never a traceback unless
`--verbose` asks for it.
"""

from __future__ import annotations

import argparse
import logging
import sys
import traceback
from collections.abc import Callable, Iterable

from jobs.cli.exit_codes import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_LOCKED,
    EXIT_NEEDS_ATTENTION,
    EXIT_UNEXPECTED,
)
from jobs.failures import describe

LOG_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"

# Errors by class, named rather than imported: mapping an error must not import Spark or
# kafka-python into a command that never uses them (an instance of a class proves its module
# is loaded). The first class of an error's MRO found here decides; a test checks every name.
ERROR_EXIT_CODES: dict[str, int] = {
    "jobs.output.swap.OutputLocked": EXIT_LOCKED,
    "jobs.output.swap.OutputError": EXIT_BAD_INPUT,
    "jobs.settings.config.ConfigError": EXIT_BAD_INPUT,
    "jobs.tables.schemas.SchemaError": EXIT_BAD_INPUT,
    "jobs.tables.group_read.NotFoundError": EXIT_BAD_INPUT,
    "jobs.cli.plan_group.UsageError": EXIT_BAD_INPUT,
    "jobs.export.config.CommandConfigError": EXIT_BAD_INPUT,
    "jobs.export.client.ExportError": EXIT_BAD_INPUT,
    "jobs.export.snapshot.NothingSelected": EXIT_NEEDS_ATTENTION,
}
_WHAT = {
    EXIT_BAD_INPUT: "error",
    EXIT_LOCKED: "output locked (retry later)",
    EXIT_NEEDS_ATTENTION: "needs attention",
    EXIT_UNEXPECTED: "unexpected failure",
}


def exit_code_of(exc: BaseException) -> int:
    """The exit code of an error no command handled: by its class, else 1 (130 for Ctrl-C)."""
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    for cls in type(exc).__mro__:
        code = ERROR_EXIT_CODES.get(f"{cls.__module__}.{cls.__qualname__}")
        if code is not None:
            return code
    return EXIT_UNEXPECTED


def configure_logging(own: Iterable[str], *, verbose: bool = False) -> None:
    """Log to stderr: the command's own loggers from INFO up (its progress), every library
    from WARNING up; `verbose` shows the command's DEBUG lines too."""
    logging.basicConfig(level=logging.WARNING, format=LOG_FORMAT, stream=sys.stderr)
    for name in own:
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.INFO)


def add_verbose(p: argparse.ArgumentParser, help: str | None = None) -> None:
    p.add_argument(
        "--verbose",
        action="store_true",
        help=help or "on a failure, print the full trace, not only its cause",
    )


def guarded(command: str, run: Callable[[], int], *, verbose: bool = False) -> int:
    """`run()`'s exit code; an error it lets escape becomes one line and its mapped code."""
    try:
        return run()
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        code = exit_code_of(exc)
        if verbose:
            traceback.print_exc(file=sys.stderr)
        hint = "" if verbose or code != EXIT_UNEXPECTED else " (--verbose shows the full trace)"
        print(f"{command}: {_WHAT.get(code, 'error')}: {describe(exc)}{hint}", file=sys.stderr)
        return code
