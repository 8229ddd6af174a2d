"""A live cluster to the four input tables: which groups, their members, partitions, offsets.

One failing group never stops the export: it is recorded (`failed` when the cluster could not
answer for it, `skipped` when it is not a consumer group this planner can plan) and the rest
is exported. Only cluster-wide failures (unreachable, a missing API or ACL) raise ExportError.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from jobs.export.client import Client, ClusterInfo, RawGroup, describe_error
from jobs.export.protocol import (
    DecodeError,
    decode_assignment,
    decode_subscription,
    member_generation,
)

log = logging.getLogger("exporter")


@dataclass
class Options:
    groups: str | None = None
    exclude_groups: str | None = None
    all_topics: bool = False


@dataclass
class Snapshot:
    topic_partitions: list[dict[str, Any]] = field(default_factory=list)
    subscriptions: list[dict[str, Any]] = field(default_factory=list)
    current_assignment: list[dict[str, Any]] = field(default_factory=list)
    offsets: list[dict[str, Any]] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    empty: list[str] = field(default_factory=list)
    cluster: ClusterInfo | None = None


def _select(group_ids: list[str], opts: Options) -> list[str]:
    inc = re.compile(opts.groups) if opts.groups else None
    exc = re.compile(opts.exclude_groups) if opts.exclude_groups else None
    return [
        g
        for g in group_ids
        if (inc is None or inc.fullmatch(g)) and (exc is None or not exc.fullmatch(g))
    ]


def _member_rows(group: RawGroup, snap: Snapshot) -> tuple[list[dict[str, Any]], list[Any]] | None:
    """Subscriptions and owned partitions of a classic consumer group; None = skipped."""
    subs: list[dict[str, Any]] = []
    owned: list[dict[str, Any]] = []
    for m in group.members:
        try:
            sub = decode_subscription(m.metadata)
            assignment = decode_assignment(m.assignment) if m.assignment else None
        except DecodeError as exc:
            snap.skipped[group.group_id] = (
                f"member {m.member_id}'s metadata does not decode as the consumer protocol: {exc}"
            )
            return None
        subs.append(
            {
                "group_id": group.group_id,
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id or None,
                # librdkafka sends an empty rack for "none"
                "client_rack": sub.rack_id or None,
                "topics": list(sub.topics),
                "topic_pattern": None,
                # The broker keeps only the elected protocol, not each member's list.
                "assignment_strategies": [group.protocol] if group.protocol else None,
                "generation": member_generation(sub, group.protocol),
                "group_protocol": "classic",
            }
        )
        for topic, parts in assignment.partitions if assignment else []:
            owned.extend(
                {
                    "group_id": group.group_id,
                    "member_id": m.member_id,
                    "topic": topic,
                    "partition": p,
                }
                for p in parts
            )
    return subs, owned


def _classify(groups: dict[str, RawGroup], snap: Snapshot) -> list[str]:
    """Exported group ids; everything else recorded as skipped, failed or empty."""
    exported = []
    for gid, g in sorted(groups.items()):
        if g.error_code:
            snap.failed[gid] = f"DescribeGroups: {describe_error(g.error_code, gid)}"
        elif g.state == "Dead":
            snap.skipped[gid] = "the group disappeared between ListGroups and DescribeGroups"
        elif g.protocol_type not in ("consumer", ""):
            snap.skipped[gid] = (
                f"protocol type {g.protocol_type!r} is not a consumer group (Kafka Connect"
                " workers, Schema Registry and similar coordinate other resources)"
            )
        elif not g.members:
            snap.empty.append(gid)
        elif g.protocol_type == "":
            snap.skipped[gid] = "members without a protocol type"
        else:
            rows = _member_rows(g, snap)
            if rows is None:
                continue
            snap.subscriptions.extend(rows[0])
            snap.current_assignment.extend(rows[1])
            exported.append(gid)
    return exported


def _leaders(info: ClusterInfo, tps: set[tuple[str, int]]) -> dict[int, list[tuple[str, int]]]:
    by_leader: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for topic, parts in info.topics.items():
        for p in parts:
            if (topic, p.partition) in tps:
                by_leader[p.leader].append((topic, p.partition))
    return by_leader


def collect(client: Client, opts: Options) -> Snapshot:
    snap = Snapshot()
    started = time.monotonic()
    info = client.metadata()
    snap.cluster = info
    log.info(
        "cluster %s: %d brokers, %d topics", info.cluster_id, len(info.brokers), len(info.topics)
    )
    listed = client.list_groups(sorted(info.brokers))
    types = {g: t for g, t, _ in listed}
    kinds = {g: k for g, _, k in listed}
    wanted = _select([g for g, _, _ in listed], opts)
    log.info("groups listed: %d, selected: %d", len(listed), len(wanted))
    for gid in wanted:
        if kinds[gid] == "consumer":
            snap.skipped[gid] = (
                "a KIP-848 consumer group (group.protocol=consumer): ConsumerGroupDescribe is"
                " not read by this exporter yet"
            )
        elif types[gid] not in ("consumer", ""):
            snap.skipped[gid] = (
                f"protocol type {types[gid]!r} is not a consumer group (Kafka Connect workers,"
                " Schema Registry and similar coordinate other resources)"
            )
    candidates = [g for g in wanted if g not in snap.skipped]
    coordinator, no_coordinator = client.coordinators(candidates)
    snap.failed.update(no_coordinator)
    by_coord: dict[int, list[str]] = defaultdict(list)
    for g in candidates:
        if g in coordinator:
            by_coord[coordinator[g]].append(g)
    described = client.describe_groups(by_coord)
    for g in candidates:
        if g in coordinator and g not in described:
            snap.failed[g] = "DescribeGroups: the coordinator did not answer for this group"
    exported = _classify(described, snap)
    exp_by_coord = {n: [g for g in gs if g in set(exported)] for n, gs in by_coord.items()}
    committed, offset_failed = client.fetch_offsets(
        {n: gs for n, gs in exp_by_coord.items() if gs}, {}
    )
    for g, reason in offset_failed.items():
        snap.failed[g] = reason
    _finish(client, info, snap, exported, committed, opts)
    snap.report = {
        "seconds": round(time.monotonic() - started, 3),
        "groups_listed": len(listed),
        "groups_selected": len(wanted),
    }
    return snap


def _finish(
    client: Client,
    info: ClusterInfo,
    snap: Snapshot,
    exported: list[str],
    committed: dict[str, dict[tuple[str, int], int | None]],
    opts: Options,
) -> None:
    failed = set(snap.failed)
    keep = [g for g in exported if g not in failed]
    snap.subscriptions = [r for r in snap.subscriptions if r["group_id"] not in failed]
    snap.current_assignment = [r for r in snap.current_assignment if r["group_id"] not in failed]
    used: set[str] = set()
    for r in snap.subscriptions:
        used.update(r["topics"] or [])
    used.update(r["topic"] for r in snap.current_assignment)
    for g in keep:
        used.update(t for t, _ in committed.get(g, {}))
    topics = set(info.topics) - info.internal | (used & info.internal) if opts.all_topics else used
    topics &= set(info.topics)
    for t in sorted(topics):
        for pi in info.topics[t]:
            brokers = [info.brokers[b] for b in pi.replicas if b in info.brokers]
            racks = sorted({b.rack for b in brokers if b.rack is not None})
            snap.topic_partitions.append(
                {
                    "topic": t,
                    "partition": pi.partition,
                    "replica_racks": racks or None,
                    "weight": None,
                }
            )
    log.info("partitions listed: %d of %d topics", len(snap.topic_partitions), len(topics))
    # Offsets of every partition a group subscribes to, owns or has committed: a subscribed
    # partition never committed is a row with a null committed offset (unknown lag).
    wanted: dict[str, set[tuple[str, int]]] = defaultdict(set)
    parts = {t: [p.partition for p in info.topics[t]] for t in topics}
    for r in snap.subscriptions:
        for t in r["topics"] or []:
            wanted[r["group_id"]].update((t, p) for p in parts.get(t, []))
    for r in snap.current_assignment:
        wanted[r["group_id"]].add((r["topic"], r["partition"]))
    for g in keep:
        wanted[g].update(tp for tp in committed.get(g, {}) if tp[0] in parts)
    all_tps = set().union(*wanted.values()) if wanted else set()
    ends, end_failed = client.end_offsets(_leaders(info, all_tps))
    for tp, reason in sorted(end_failed.items()):
        log.warning("log end offset of %s-%d: %s", tp[0], tp[1], reason)
    for g in keep:
        for t, p in sorted(wanted[g]):
            snap.offsets.append(
                {
                    "group_id": g,
                    "topic": t,
                    "partition": p,
                    "committed_offset": committed.get(g, {}).get((t, p)),
                    "log_end_offset": ends.get((t, p)),
                }
            )
