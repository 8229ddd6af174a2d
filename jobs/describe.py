"""`python -m jobs.describe`: one group of a planner output, as `kafka-consumer-groups.sh
--describe --group G` shows a live group; pyarrow only, no Spark.

    python -m jobs.describe --output DIR --group G [--strategy S] [--format table|json|csv]
        [--input DIR]

The members (instance id, rack, subscription, generation) come from the input snapshot the
run read (its path is in `_manifest.json`; `--input` when it moved). Exit codes: 0 shown;
2 not a planner output, or no such group (the closest group ids are named).
"""

from __future__ import annotations

import argparse
import os
import sys

from jobs import group_read
from jobs.group_view import build_view, render

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="describe", description=__doc__.splitlines()[0])
    p.add_argument("--output", required=True, help="a planner output directory")
    p.add_argument("--group", required=True, help="the consumer group id")
    p.add_argument("--strategy", default=None, help="show this strategy only")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table")
    p.add_argument("--input", default=None, help="the input snapshot (default: the manifest's)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        found = group_read.read_output(args.output, args.group, args.strategy)
    except group_read.NotFoundError as exc:
        print(f"describe: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    members, topic_rows, input_dir = _input_side(
        args.input or found.manifest.get("input"), args.group
    )
    source = {
        "output": args.output,
        "input": input_dir,
        "ds": found.manifest.get("ds"),
        "missing_tables": found.missing or None,
    }
    order = found.manifest.get("strategies") or ()
    view = build_view(args.group, found.tables, members, topic_rows, source, args.strategy, order)
    sys.stdout.write(render(view, args.format))
    return EXIT_OK


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
