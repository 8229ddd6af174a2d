"""`kafka-planner`: one front door for every command (the `[project.scripts]` entry).

    kafka-planner plan --input DIR --output DIR [...]          # python -m jobs.plan_assignments
    kafka-planner describe --output DIR --group G [...]        # python -m jobs.describe
    kafka-planner plan-group --input DIR --group G [...]       # python -m jobs.plan_group
    kafka-planner export --bootstrap-server H:P --output DIR   # python -m jobs.export_snapshot
    kafka-planner report OUTPUT_DIR                            # python -m jobs.report

Each subcommand is the `python -m` form's own parser and `main`, given another program name:
the same flags, the same output and the same exit codes, whichever door is used. A command's
module is imported only when it runs, so `describe` never loads Spark and `--help` is quick.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from importlib import metadata

from jobs.cli.exit_codes import EXIT_BAD_INPUT

PROG = "kafka-planner"
Main = Callable[..., int]


def _plan() -> Main:
    from jobs.cli import plan

    return plan.main


def _describe() -> Main:
    from jobs.cli import describe

    return describe.main


def _plan_group() -> Main:
    from jobs.cli import plan_group

    return plan_group.main


def _export() -> Main:
    from jobs.cli import export

    return export.main


def _report() -> Main:
    from jobs.cli import report

    return report.main


# name -> (the command's main, loaded on demand; one line for the list of commands)
COMMANDS: dict[str, tuple[Callable[[], Main], str]] = {
    "plan": (_plan, "plan every group of a snapshot under every strategy (Spark)"),
    "describe": (_describe, "show one group of a planner output (no Spark)"),
    "plan-group": (_plan_group, "plan one group of a snapshot and try a change (no Spark)"),
    "export": (_export, "export a live cluster's groups to the planner's input tables"),
    "report": (_report, "(re)build OUTPUT_DIR/report.html"),
}


def _version() -> str:
    try:
        return metadata.version("kafka-assignment-planner")
    except metadata.PackageNotFoundError:  # run from a checkout that pip never installed
        return "unknown"


def parser() -> argparse.ArgumentParser:
    """The front door's own parser: the list of commands, `--help` and `--version`."""
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Plan Kafka consumer-group partition assignments offline, as Kafka would.",
        epilog=f"'{PROG} COMMAND --help' shows a command's flags.",
        formatter_class=lambda prog: argparse.HelpFormatter(prog, max_help_position=20),
    )
    p.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, summary) in COMMANDS.items():
        sub.add_parser(name, help=summary, add_help=False)
    return p


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in COMMANDS:
        load, _ = COMMANDS[args[0]]
        return load()(args[1:], prog=f"{PROG} {args[0]}")
    if not args:  # the list of commands, as a usage error
        parser().print_help(sys.stderr)
        return EXIT_BAD_INPUT
    # An unknown command, --help or --version: argparse prints and exits (2 on an error).
    parser().parse_args(args)
    return EXIT_BAD_INPUT  # not reached: a command was named above, or argparse exited


if __name__ == "__main__":
    sys.exit(main())
