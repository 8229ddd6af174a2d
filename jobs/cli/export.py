"""Entry point: `kafka-planner export --bootstrap-server H:P --output DIR` (or `python -m
jobs.export_snapshot`, the same flags; `--bootstrap-servers` is kept as an alias).

Which groups: every group by default (`--all-groups` says so explicitly), or the ones named
by `--group` (repeatable, as kafka-consumer-groups.sh takes it; the two exclude each other);
`--groups` and `--exclude-groups` (regexes, full match) narrow either selection. A named
group the cluster does not list is skipped (exit 3), as is one it lists but cannot describe.

Exit codes as the planner's: 0 exported; 2 configuration, connection, missing API or ACL, or
output-location error, nothing written; 3 exported, but some groups were skipped or failed
(listed in `_snapshot.json`), or `--group` / `--groups` / `--exclude-groups` left no group
(nothing written); 4 the output is locked by another export that is still alive
(retry later), nothing written; 130 interrupted (Ctrl-C), 143 terminated (SIGTERM), nothing
written, the lock released; 1 the snapshot could not be written (a full disk) or an unexpected
failure, nothing written. A failure prints one line naming its cause; `--verbose` adds the full
trace and kafka-python's own errors.
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import re
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

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
from jobs.export.client import Client, ExportError
from jobs.export.config import CommandConfigError, load_command_config
from jobs.export.snapshot import NothingSelected, Options, Snapshot, collect
from jobs.export.writer import TableSink, snapshot_output, write_snapshot
from jobs.failures import describe
from jobs.output import OutputError, OutputLocked

log = logging.getLogger("exporter")


def parse_args(argv: list[str] | None, prog: str = "export_snapshot") -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Export a live Kafka cluster's consumer groups to the planner's input tables"
        " (read-only: never joins a group, never commits).",
    )
    p.add_argument(
        "--bootstrap-server",
        "--bootstrap-servers",
        dest="bootstrap_servers",
        metavar="HOST:PORT[,HOST:PORT]",
        required=True,
        help="the server(s) to connect to",
    )
    p.add_argument("--output", required=True, help="snapshot directory (replaced atomically)")
    p.add_argument("--command-config", default=None, help="Kafka client properties file")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument(
        "--group",
        dest="group",
        action="append",
        default=None,
        metavar="GROUP",
        help="export this consumer group (repeatable: --group g1 --group g2)",
    )
    scope.add_argument(
        "--all-groups",
        action="store_true",
        help="export every consumer group the cluster lists (the default)",
    )
    p.add_argument("--groups", default=None, help="regex: export only the groups it matches")
    p.add_argument("--exclude-groups", default=None, help="regex: groups to leave out")
    p.add_argument("--all-topics", action="store_true", help="every topic, not just the groups'")
    p.add_argument("--ds", default=None, help="snapshot date YYYY-MM-DD, recorded")
    p.add_argument("--timeout-s", type=float, default=30.0, help="per-request timeout (seconds)")
    add_verbose(
        p, "on a failure, print the full trace and kafka-python's own errors, not only the cause"
    )
    args = p.parse_args(argv)
    if args.ds is not None:
        try:
            dt.date.fromisoformat(args.ds)
        except ValueError:
            p.error(f"--ds must be a date YYYY-MM-DD, got {args.ds!r}")
    for flag in ("groups", "exclude_groups"):
        value = getattr(args, flag)
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                p.error(f"--{flag.replace('_', '-')} is not a valid regex: {exc}")
    if args.timeout_s <= 0:
        p.error("--timeout-s must be positive")
    return args


def _meta(
    args: argparse.Namespace,
    client: Client,
    snap: Snapshot,
    settings: dict[str, str],
    info_brokers: list[dict[str, Any]],
    cluster_id: str | None,
) -> dict[str, Any]:
    return {
        "ds": args.ds,
        "exported_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "bootstrap_servers": args.bootstrap_servers,
        "cluster_id": cluster_id,
        "brokers": info_brokers,
        "client": settings,
        "api_versions": dict(sorted(client.stats.versions.items())),
        "requests": dict(sorted(client.stats.requests.items())),
        "seconds": snap.report.get("seconds"),
        "groups_listed": snap.report.get("groups_listed"),
        "groups_selected": snap.report.get("groups_selected"),
        "row_counts": snap.row_counts(),
        "groups_exported": snap.exported_groups(),
        "groups_empty": sorted(snap.empty),
        "groups_skipped": dict(sorted(snap.skipped.items())),
        "groups_failed": dict(sorted(snap.failed.items())),
        # Exported, but caught mid-rebalance: owned partitions incomplete (movement figures).
        "groups_rebalancing": snap.rebalancing(),
        "assignment_strategies": "a classic group's elected protocol: the broker keeps no"
        " member's own preference list; a KIP-848 group's assignor selected by the broker",
    }


class _WriteFailed(Exception):
    """Writing the tables into the temporary failed with an OSError."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _writing(sink: TableSink) -> Callable[[str, list[dict[str, Any]]], None]:
    """`sink.write`, its OSError (a full disk, a quota, an I/O error) raised as _WriteFailed."""

    def write(name: str, rows: list[dict[str, Any]]) -> None:
        try:
            sink.write(name, rows)
        except OSError as exc:
            raise _WriteFailed(exc) from exc

    return write


def export(args: argparse.Namespace) -> int:
    try:
        settings = load_command_config(args.command_config)
    except CommandConfigError as exc:
        log.error("configuration error: %s", exc)
        return exit_code_of(exc)
    named = tuple(dict.fromkeys(getattr(args, "group", None) or ()))
    opts = Options(args.groups, args.exclude_groups, args.all_topics, group_ids=named)
    started = time.monotonic()
    try:
        with snapshot_output(args.output) as tmp:
            sink = TableSink(tmp)
            client = Client(args.bootstrap_servers, settings.kwargs, args.timeout_s)
            try:
                snap = collect(client, opts, _writing(sink))
            finally:
                client.close()
            info = snap.cluster
            assert info is not None  # invariant: collect() starts with the cluster's metadata
            brokers = [
                {"node_id": b.node_id, "host": b.host, "port": b.port, "rack": b.rack}
                for b in sorted(info.brokers.values(), key=lambda b: b.node_id)
            ]
            snap.report["seconds"] = round(time.monotonic() - started, 3)
            meta = _meta(args, client, snap, settings.describe(), brokers, info.cluster_id)
            try:
                write_snapshot(tmp, snap.tables(), meta, sink)
            except OSError as exc:  # a full disk, a quota, an I/O error
                raise _WriteFailed(exc) from exc
    except ExportError as exc:
        _unless_stopping()
        log.error("export failed, nothing written: %s", exc)
        return exit_code_of(exc)
    except NothingSelected as exc:
        log.error(
            "no group to export, nothing written (any previous snapshot is unchanged): %s", exc
        )
        return exit_code_of(exc)
    except OutputLocked as exc:
        log.error("output locked, nothing written (exit 4, retry later): %s", exc)
        return exit_code_of(exc)
    except OutputError as exc:
        log.error("output refused, nothing written: %s", exc)
        return exit_code_of(exc)
    except _WriteFailed as exc:  # the temporary is gone by now
        _unless_stopping()
        log.error(
            "cannot write the snapshot %s, nothing written (any previous snapshot is"
            " unchanged): %s",
            args.output,
            describe(exc.cause),
        )
        return EXIT_UNEXPECTED
    c = meta["row_counts"]
    print(
        f"exported {len(meta['groups_exported'])} groups ({c['subscriptions']} members,"
        f" {c['topic_partitions']} partitions, {c['offsets']} offsets) to {args.output} in"
        f" {meta['seconds']:.1f} s; {len(snap.empty)} empty, {len(snap.skipped)} skipped,"
        f" {len(snap.failed)} failed"
    )
    for kind, groups in (("skipped", snap.skipped), ("failed", snap.failed)):
        for g, reason in sorted(groups.items()):
            log.warning("group %s %s: %s", g, kind, reason)
    rebalancing = meta["groups_rebalancing"]
    if rebalancing:
        shown = ", ".join(f"{g} ({state})" for g, state in list(rebalancing.items())[:5])
        more = f" and {len(rebalancing) - 5} more" if len(rebalancing) > 5 else ""
        log.warning(
            "%s rebalancing when the snapshot was taken: %s%s; their members own only part of"
            " their partitions, so movement figures for them are not reliable"
            " (groups_rebalancing in _snapshot.json)",
            "1 group was" if len(rebalancing) == 1 else f"{len(rebalancing)} groups were",
            shown,
            more,
        )
    return EXIT_NEEDS_ATTENTION if snap.skipped or snap.failed else EXIT_OK


def main(argv: list[str] | None = None, prog: str = "export_snapshot") -> int:
    configure_logging([log.name])
    args = parse_args(argv, prog)
    # kafka-python logs every lost connection, some with a traceback; the exporter names the
    # cause of a failure itself, in one line. --verbose shows kafka-python's errors too.
    logging.getLogger("kafka").setLevel(logging.ERROR if args.verbose else logging.CRITICAL)
    global _stopping
    _stopping = None  # a fresh run (main may be called more than once)
    # SIGTERM (Airflow's timeout, YARN, Kubernetes) unwinds like Ctrl-C: the lock released, the
    # temporary removed, one line. Python's default for SIGTERM is to die at once, lock left.
    previous = signal.signal(signal.SIGTERM, _on_stop)
    previous_int = signal.signal(signal.SIGINT, _on_stop)
    try:
        return export(args)
    except KeyboardInterrupt:
        return _stopped()
    except Exception as exc:
        if _stopping is not None:  # the stop surfaced as another error (a closed socket)
            return _stopped()
        if args.verbose:
            log.exception("unexpected failure, nothing written: %s", describe(exc))
        else:
            log.error(
                "unexpected failure, nothing written: %s (--verbose shows the full trace)",
                describe(exc),
            )
        return EXIT_UNEXPECTED
    finally:
        # An in-process caller (a test) gets its handlers back.
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if previous_int is not None:
            signal.signal(signal.SIGINT, previous_int)


_stopping: int | None = None


def _stopped() -> int:
    """One line for a stop the operator asked for: nothing to explain, nothing written."""
    if _stopping == signal.SIGTERM:
        print(
            "terminated (SIGTERM): nothing written, any previous snapshot is unchanged",
            file=sys.stderr,
        )
        return EXIT_TERMINATED
    print("interrupted: nothing written, any previous snapshot is unchanged", file=sys.stderr)
    return EXIT_INTERRUPTED


def _unless_stopping() -> None:
    """kafka-python turns an interrupt that lands in its socket code into a lost connection:
    once a stop was asked for, any failure is that stop."""
    if _stopping is not None:
        raise KeyboardInterrupt


def _on_stop(signum: int, frame: object) -> None:
    """SIGTERM is a request to stop, as Ctrl-C is: both raise KeyboardInterrupt, which unwinds
    the output's guard (temporary removed, lock released). A second signal while unwinding is
    ignored, so the cleanup finishes."""
    global _stopping
    if _stopping is not None:
        return
    _stopping = signum
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
