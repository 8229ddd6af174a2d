"""`python -m jobs.describe`: one group of a planner output, as `kafka-consumer-groups.sh
--describe --group G` shows a live group; pyarrow only, no Spark.

    kafka-planner describe --output DIR --group G [--strategy S] [--format table|json|csv]
        [--input DIR]          # or: python -m jobs.describe ..., the same flags

The members (instance id, rack, subscription, generation) come from the input snapshot the
run read (its path is in `_manifest.json`; `--input` when it moved: a snapshot other than
the manifest's is shown with a warning naming the manifest's). Exit codes: 0 shown; 2 not a
planner output, no such group (the closest group ids are named), or a `--strategy` the run
did not plan (the run's strategies are named).
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from typing import Any

import pyarrow.dataset as ds

from jobs.cli.common import add_verbose, guarded
from jobs.cli.exit_codes import EXIT_BAD_INPUT, EXIT_OK
from jobs.tables import group_read, previous
from jobs.tables.group_view import build_view, render, since_view


def parse_args(argv: list[str] | None, prog: str = "describe") -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog=prog,
        description="One group of a planner output, as `kafka-consumer-groups.sh --describe"
        " --group G --members` shows a live group (pyarrow only, no Spark).",
    )
    p.add_argument("--output", required=True, help="a planner output directory")
    p.add_argument("--group", required=True, help="the consumer group id")
    p.add_argument("--strategy", default=None, help="show this strategy only")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table")
    p.add_argument("--input", default=None, help="the input snapshot (default: the manifest's)")
    add_verbose(p)
    args = p.parse_args(argv)
    args.prog = prog
    return args


def main(argv: list[str] | None = None, prog: str = "describe") -> int:
    args = parse_args(argv, prog)
    return guarded(prog, lambda: describe(args), verbose=args.verbose)


def describe(args: argparse.Namespace) -> int:
    prog = getattr(args, "prog", "describe")
    try:
        found = group_read.read_output(args.output, args.group, args.strategy)
    except group_read.NotFoundError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.strategy is not None:
        known = _strategies(args.output, found.manifest)
        if known and args.strategy not in known:  # none known: an output too old to tell
            print(f"{prog}: {_no_strategy(args.strategy, args.output, known)}", file=sys.stderr)
            return EXIT_BAD_INPUT
    planned_from = found.manifest.get("input")
    if args.input is not None and planned_from and not _same_path(args.input, planned_from):
        # Still shown (a moved snapshot is the reason --input exists), but the members may
        # not be the ones the run planned.
        print(
            f"{prog}: warning: --input {args.input} is not the snapshot {args.output} was"
            f" planned from ({planned_from}, per its {group_read.MANIFEST}); the members"
            f" shown are {args.input}'s",
            file=sys.stderr,
        )
    members, topic_rows, input_dir = _input_side(args.input or planned_from, args.group)
    source = {
        "output": args.output,
        "input": input_dir,
        "ds": found.manifest.get("ds"),
        "missing_tables": found.missing or None,
    }
    order = found.manifest.get("strategies") or ()
    view = build_view(args.group, found.tables, members, topic_rows, source, args.strategy, order)
    view |= _since(args.output, found.manifest, args.group)
    sys.stdout.write(render(view, args.format))
    return EXIT_OK


def _since(output_dir: str, manifest: dict[str, Any], group_id: str) -> dict[str, Any]:
    """The view's `since` (a run with `--previous`): the group's figures then and now, and
    its rows of the `changes` table; nothing for a run without one."""
    figures = previous.group_since(output_dir, manifest, group_id)
    if figures is None:
        return {}
    path = group_read.locate(output_dir, "changes")
    rows = (
        []
        if path is None
        else group_read.rows(group_read.dataset(path), ds.field("group_id") == group_id)
    )
    return {"since": since_view(figures, rows)}


def _strategies(output_dir: str, manifest: dict[str, Any]) -> list[str]:
    """The strategies the run planned: the manifest's list, else (an output written before
    the manifest listed them) the `strategy=` partitions of `assignments/`."""
    listed = manifest.get("strategies")
    if listed:
        return [str(s) for s in listed]
    path = group_read.locate(output_dir, "assignments")
    if path is None or not os.path.isdir(path):
        return []
    return sorted(n.split("=", 1)[1] for n in os.listdir(path) if n.startswith("strategy="))


def _no_strategy(asked: str, output_dir: str, known: list[str]) -> str:
    near = difflib.get_close_matches(asked, known, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return (
        f"strategy {asked!r} is not in {output_dir}{hint}; its strategies:"
        f" {', '.join(known) or 'none'}"
    )


def _same_path(a: str, b: str) -> bool:
    """Whether two paths name one directory (`file:` URIs, trailing slashes and symlinks
    aside); other URIs are compared as written."""

    def local(p: str) -> str:
        p = p.removeprefix("file://") if p.startswith("file://") else p.removeprefix("file:")
        return p if "://" in p else os.path.realpath(p)

    return local(a).rstrip("/") == local(b).rstrip("/")


def _input_side(
    input_dir: str | None, group_id: str
) -> tuple[list[dict[str, object]] | None, list[dict[str, object]], str | None]:
    """The group's members and its topics' partitions from the snapshot, when reachable
    (a moved or deleted snapshot only costs the member details)."""
    if not input_dir or not os.path.isdir(input_dir):
        return None, [], None
    try:
        paths = group_read.check_input(input_dir)
        members = group_read.read_members(paths, group_id)
        topics = {t for m in members for t in (m.get("topics") or ()) if t}
        return members, group_read.read_topics(paths, topics), input_dir
    except (group_read.NotFoundError, OSError, ValueError):
        return None, [], None


if __name__ == "__main__":
    sys.exit(main())
