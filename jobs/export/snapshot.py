"""A live cluster to the input tables: which groups, their members, partitions, offsets.

One failing group never stops the export: it is recorded (`failed` when the cluster could not
answer for it, `skipped` when it is not a consumer group this planner can plan) and the rest
is exported. Only cluster-wide failures (unreachable, a missing API or ACL) raise ExportError.

Each exported group's state is kept (`states`, written as `subscriptions.group_state`): a group
caught rebalancing has members but not yet their partitions, so its owned partitions are no
baseline for movement figures; such groups are listed in `rebalancing()`.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jobs.export.client import (
    GROUP_ID_NOT_FOUND,
    RETRIABLE,
    Client,
    ClusterInfo,
    RawGroup,
    RequestFailed,
    describe_error,
)
from jobs.export.libraries import client_library
from jobs.export.protocol import (
    CONSUMER_GROUP_DESCRIBE,
    ConsumerGroup,
    DecodeError,
    Subscription,
    TopicIdPartitions,
    decode_assignment,
    decode_sticky_user_data,
    decode_subscription,
    member_generation,
)

log = logging.getLogger("exporter")

# The states in which a group's members are known but their partitions are not settled: a
# classic group between JoinGroup and SyncGroup (PreparingRebalance, CompletingRebalance), a
# KIP-848 group whose target assignment is being computed or handed out (Assigning,
# Reconciling). Kafka's own names, as kafka-consumer-groups.sh --describe --state shows them.
REBALANCING_STATES = frozenset(
    {"PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"}
)
_REBALANCING = {s.lower() for s in REBALANCING_STATES}


def rebalancing(state: str | None) -> bool:
    return state is not None and state.lower() in _REBALANCING


@dataclass
class Options:
    groups: str | None = None
    exclude_groups: str | None = None
    all_topics: bool = False
    # `--group` (repeatable): only these groups; empty = every group the cluster lists.
    group_ids: tuple[str, ...] = ()
    # Groups described, fetched and turned into rows at a time: the export holds one chunk's
    # rows, whatever the estate's size, when a sink takes them (`collect`).
    chunk_groups: int = 2000


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
    # Kafka's name of each exported group's state (DescribeGroups or ConsumerGroupDescribe).
    states: dict[str, str] = field(default_factory=dict)
    cluster: ClusterInfo | None = None
    # KIP-848 groups: the broker's target assignment (ConsumerGroupDescribe's TargetAssignment).
    target_assignment: list[dict[str, Any]] = field(default_factory=list)
    # Per (group, member): its client library (libraries.client_library; None: no evidence)
    # and whether its assignment bytes carry user data (classic members; None: unknown).
    libraries: dict[tuple[str, str], str | None] = field(default_factory=dict)
    user_data: dict[tuple[str, str], bool | None] = field(default_factory=dict)
    # Where each finished chunk's member and offset rows go (table name, rows); None keeps
    # them in the lists above. What went to the sink is remembered only as counts, the
    # exported group ids and those caught rebalancing.
    sink: Callable[[str, list[dict[str, Any]]], None] | None = None
    _sunk_rows: dict[str, int] = field(default_factory=dict)
    _sunk_groups: list[str] = field(default_factory=list)
    _sunk_rebalancing: dict[str, str] = field(default_factory=dict)

    def subscription_rows(self) -> list[dict[str, Any]]:
        """The subscriptions table: each member row with its group's state, its client library
        and whether its assignment carries user data."""
        return [
            {
                **r,
                "group_state": self.states.get(r["group_id"]),
                "client_library": self.libraries.get((r["group_id"], r["member_id"])),
                "assignment_user_data": self.user_data.get((r["group_id"], r["member_id"])),
            }
            for r in self.subscriptions
        ]

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """Every input table the exporter writes, by name (target_assignment may be empty)."""
        return {
            "topic_partitions": self.topic_partitions,
            "subscriptions": self.subscription_rows(),
            "current_assignment": self.current_assignment,
            "target_assignment": self.target_assignment,
            "offsets": self.offsets,
        }

    def rebalancing(self) -> dict[str, str]:
        """Exported groups caught mid-rebalance, with their state."""
        exported = {r["group_id"] for r in self.subscriptions}
        held = {
            g: state for g, state in self.states.items() if g in exported and rebalancing(state)
        }
        return dict(sorted((self._sunk_rebalancing | held).items()))

    def exported_groups(self) -> list[str]:
        """Every group with member rows, sorted."""
        return sorted({*self._sunk_groups, *(r["group_id"] for r in self.subscriptions)})

    def row_counts(self) -> dict[str, int]:
        """Rows of each table, those passed to the sink included."""
        held = {
            "topic_partitions": len(self.topic_partitions),
            "subscriptions": len(self.subscriptions),
            "current_assignment": len(self.current_assignment),
            "target_assignment": len(self.target_assignment),
            "offsets": len(self.offsets),
        }
        return {name: self._sunk_rows.get(name, 0) + n for name, n in held.items()}

    def absorb(self, chunk: Snapshot) -> None:
        """Take a finished chunk's rows: into the sink when there is one, else into the lists."""
        if self.sink is None:
            self.subscriptions.extend(chunk.subscriptions)
            self.current_assignment.extend(chunk.current_assignment)
            self.target_assignment.extend(chunk.target_assignment)
            self.offsets.extend(chunk.offsets)
            self.states.update(chunk.states)
            self.libraries.update(chunk.libraries)
            self.user_data.update(chunk.user_data)
            return
        self._sunk_rebalancing.update(chunk.rebalancing())
        self._sunk_groups.extend(dict.fromkeys(r["group_id"] for r in chunk.subscriptions))
        for name, rows in chunk.tables().items():
            if name != "topic_partitions":  # the cluster's, written once at the end
                self.sink(name, rows)
                self._sunk_rows[name] = self._sunk_rows.get(name, 0) + len(rows)


class NothingSelected(Exception):
    """`--group` / `--groups` / `--exclude-groups` leave no group of the cluster's to export."""


def _select(group_ids: list[str], opts: Options) -> list[str]:
    inc = re.compile(opts.groups) if opts.groups else None
    exc = re.compile(opts.exclude_groups) if opts.exclude_groups else None
    named = set(opts.group_ids)
    return [
        g
        for g in group_ids
        if (not named or g in named)
        and (inc is None or inc.fullmatch(g))
        and (exc is None or not exc.fullmatch(g))
    ]


def _member_rows(group: RawGroup, snap: Snapshot) -> tuple[list[dict[str, Any]], list[Any]] | None:
    """Subscriptions and owned partitions of a classic consumer group; None = skipped."""
    subs: list[dict[str, Any]] = []
    owned: list[dict[str, Any]] = []
    if rebalancing(group.state) and not any(m.metadata for m in group.members):
        # Kafka's coordinator describes a group that is not Stable without its members'
        # subscriptions and assignments: there is nothing to export until it settles.
        snap.skipped[group.group_id] = (
            f"rebalancing ({group.state}): the coordinator describes its members without their"
            " subscriptions until the rebalance completes"
        )
        return None
    for m in group.members:
        try:
            sub = decode_subscription(m.metadata)
            assignment = decode_assignment(m.assignment) if m.assignment else None
        except DecodeError as exc:
            snap.skipped[group.group_id] = (
                f"member {m.member_id}'s metadata does not decode as the consumer protocol: {exc}"
            )
            return None
        key = (group.group_id, m.member_id)
        snap.libraries[key] = client_library(
            m.client_id, group.group_id, m.group_instance_id or None, _sticky_layout(sub)
        )
        # A member that has not had its SyncGroup answer yet has no assignment bytes: unknown.
        snap.user_data[key] = None if assignment is None else bool(assignment.user_data)
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
                "client_id": m.client_id,
                "client_host": m.client_host,
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


def _sticky_layout(sub: Subscription) -> str | None:
    """The sticky layout the subscription's user data reads as, if it is one."""
    if not sub.user_data:
        return None
    try:
        return decode_sticky_user_data(sub.user_data).layout
    except DecodeError:
        return None


def _classify(groups: dict[str, RawGroup], snap: Snapshot) -> list[str]:
    """Exported group ids; everything else recorded as skipped, failed or empty."""
    exported = []
    for gid, g in sorted(groups.items()):
        if g.error_code == GROUP_ID_NOT_FOUND:  # DescribeGroups v6+ says so; older: "Dead"
            snap.skipped[gid] = "the group disappeared between ListGroups and DescribeGroups"
        elif g.error_code:
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
            snap.states[gid] = g.state
            exported.append(gid)
    return exported


def _names(
    info: ClusterInfo, gid: str, member: str, tps: list[TopicIdPartitions]
) -> list[tuple[str, int]]:
    """Topic ids to names through Metadata (the ids name the topic the broker assigned, even
    if a topic of the same name was deleted and created again since); the name in the answer
    only when Metadata has no ids (before v10). An id Metadata does not know is a topic
    deleted since: its partitions are left out."""
    out: list[tuple[str, int]] = []
    for tp in tps:
        name = info.topic_ids.get(tp.topic_id) if info.topic_ids else tp.topic_name
        if name is None or name not in info.topics:
            log.warning(
                "group %s member %s: assigned topic %s (id %s) no longer exists",
                gid,
                member,
                tp.topic_name,
                tp.topic_id,
            )
            continue
        out.extend((name, p) for p in tp.partitions)
    return out


# ConsumerGroupDescribe v1's MemberType: the protocol the member itself speaks. A group being
# migrated (classic members joining a consumer group, or the other way) holds both kinds.
MEMBER_PROTOCOL = {0: "classic", 1: "consumer"}


def _consumer_rows(
    info: ClusterInfo, g: ConsumerGroup, snap: Snapshot
) -> tuple[list[Any], list[Any], list[Any]]:
    """A KIP-848 group's members, what they hold and the broker's target for them: the broker
    keeps each one's subscription, epoch and assignments itself (no opaque bytes to decode)."""
    subs: list[dict[str, Any]] = []
    owned: list[dict[str, Any]] = []
    target: list[dict[str, Any]] = []
    for m in g.members:
        key = (g.group_id, m.member_id)
        snap.libraries[key] = client_library(m.client_id, g.group_id, m.instance_id or None)
        # The answer holds no member's assignment bytes, classic members' included.
        snap.user_data[key] = None
        pattern = m.subscribed_topic_regex or None
        subs.append(
            {
                "group_id": g.group_id,
                "member_id": m.member_id,
                "group_instance_id": m.instance_id or None,
                "client_rack": m.rack_id or None,
                # A member subscribes by names or by one regex, never both (the input's
                # TOPICS_AND_PATTERN rule): the regex wins when the broker reports one.
                "topics": None if pattern else list(m.subscribed_topic_names),
                "topic_pattern": pattern,
                # The assignor the coordinator selected for the whole group: the broker keeps
                # no member's own group.remote.assignor in this answer.
                "assignment_strategies": [g.assignor_name] if g.assignor_name else None,
                "generation": m.member_epoch,
                # v1: each member's own protocol; v0 (or unknown): the group's
                "group_protocol": MEMBER_PROTOCOL.get(m.member_type, "consumer"),
                "client_id": m.client_id,
                "client_host": m.client_host,
            }
        )
        owned.extend(
            {"group_id": g.group_id, "member_id": m.member_id, "topic": t, "partition": p}
            for t, p in _names(info, g.group_id, m.member_id, m.assignment)
        )
        target.extend(
            {"group_id": g.group_id, "member_id": m.member_id, "topic": t, "partition": p}
            for t, p in _names(info, g.group_id, m.member_id, m.target_assignment)
        )
    return subs, owned, target


def _classify_consumer(
    info: ClusterInfo, groups: dict[str, ConsumerGroup], snap: Snapshot
) -> list[str]:
    exported = []
    for gid, g in sorted(groups.items()):
        if g.error_code == GROUP_ID_NOT_FOUND:
            snap.skipped[gid] = (
                "the group disappeared between ListGroups and ConsumerGroupDescribe"
                + (f" ({g.error_message})" if g.error_message else "")
            )
        elif g.error_code:
            snap.failed[gid] = f"ConsumerGroupDescribe: {describe_error(g.error_code, gid)}"
        elif g.group_state.lower() == "dead":
            snap.skipped[gid] = "the group disappeared between ListGroups and ConsumerGroupDescribe"
        elif not g.members:
            snap.empty.append(gid)
        else:
            subs, owned, target = _consumer_rows(info, g, snap)
            snap.subscriptions.extend(subs)
            snap.current_assignment.extend(owned)
            snap.target_assignment.extend(target)
            snap.states[gid] = g.group_state
            exported.append(gid)
    return exported


def _pause(attempt: int) -> None:
    time.sleep(min(0.2 * 2**attempt, 2.0))


def _describe(
    client: Client, classic: list[str], modern: list[str], snap: Snapshot
) -> tuple[dict[str, RawGroup], dict[str, ConsumerGroup], dict[str, int]]:
    """Describe every group at its coordinator. A group whose coordinator moved or is still
    loading (NOT_COORDINATOR and the like) is looked up again and asked again, up to the
    client's retries; then its last answer stands (a failed group). A coordinator that never
    answers, or answers bytes that do not decode, fails its groups (the client has retried)."""
    raw: dict[str, RawGroup] = {}
    cgd: dict[str, ConsumerGroup] = {}
    where: dict[str, int] = {}
    kind = dict.fromkeys(classic, "classic") | dict.fromkeys(modern, "consumer")
    todo = sorted(kind)
    for attempt in range(client.retries + 1):
        coordinator, no_coordinator = client.coordinators(todo)
        snap.failed.update(no_coordinator)
        by_coord: dict[str, dict[int, list[str]]] = {"classic": {}, "consumer": {}}
        for g in todo:
            if g in coordinator:
                by_coord[kind[g]].setdefault(coordinator[g], []).append(g)
        got_raw = client.describe_groups(by_coord["classic"]) if by_coord["classic"] else {}
        got_cgd = (
            client.consumer_group_describe(by_coord["consumer"]) if by_coord["consumer"] else {}
        )
        retry = []
        for g in todo:
            if g not in coordinator:
                continue
            answer = got_raw.get(g) or got_cgd.get(g)
            api = "DescribeGroups" if kind[g] == "classic" else "ConsumerGroupDescribe"
            if answer is None:
                snap.failed[g] = f"{api}: the coordinator did not answer for this group"
            elif isinstance(answer, RequestFailed):  # retried already, and never answered
                snap.failed[g] = str(answer)
            elif answer.error_code in RETRIABLE and attempt < client.retries:
                retry.append(g)
            else:
                where[g] = coordinator[g]
                if isinstance(answer, RawGroup):
                    raw[g] = answer
                else:
                    cgd[g] = answer
        if not retry:
            break
        log.warning("%d groups: coordinator moved or loading, looked up again", len(retry))
        _pause(attempt)
        todo = retry
    return raw, cgd, where


def _offsets(
    client: Client,
    where: dict[str, int],
    groups: list[str],
    fallback: dict[str, list[tuple[str, int]]],
    snap: Snapshot,
) -> dict[str, dict[tuple[str, int], int | None]]:
    """Committed offsets, asked of each group's coordinator; a coordinator that moved since
    DescribeGroups is looked up again and asked again."""
    committed: dict[str, dict[tuple[str, int], int | None]] = {}
    by_coord: dict[int, list[str]] = defaultdict(list)
    for g in groups:
        by_coord[where[g]].append(g)
    for attempt in range(client.retries + 1):
        if not by_coord:
            break
        got, failed, retry = client.fetch_offsets(dict(by_coord), {}, fallback)
        committed.update(got)
        snap.failed.update(failed)
        if not retry:
            break
        if attempt == client.retries:
            for g in retry:
                snap.failed[g] = "OffsetFetch: the coordinator kept moving"
            break
        _pause(attempt)
        coordinator, no_coordinator = client.coordinators(sorted(retry))
        snap.failed.update(no_coordinator)
        by_coord = defaultdict(list)
        for g in sorted(retry):
            if g in coordinator:
                by_coord[coordinator[g]].append(g)
    return committed


def _subscribed_topics(info: ClusterInfo, row: dict[str, Any]) -> list[str]:
    """The topics a member's subscription reaches now: its names, or the existing
    non-internal topics its pattern fully matches."""
    if row.get("topic_pattern"):
        try:
            rx = re.compile(row["topic_pattern"])
        except re.error:
            return []
        return sorted(t for t in info.topics if t not in info.internal and rx.fullmatch(t))
    return list(row["topics"] or [])


def _wanted(info: ClusterInfo, snap: Snapshot) -> dict[str, set[tuple[str, int]]]:
    """Per group, every partition its members subscribe to or own."""
    wanted: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for r in snap.subscriptions:
        for t in _subscribed_topics(info, r):
            wanted[r["group_id"]].update((t, p.partition) for p in info.topics.get(t, []))
    for r in snap.current_assignment:
        wanted[r["group_id"]].add((r["topic"], r["partition"]))
    return wanted


def _leaders(info: ClusterInfo, tps: set[tuple[str, int]]) -> dict[int, list[tuple[str, int]]]:
    by_leader: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for topic, parts in info.topics.items():
        for p in parts:
            if (topic, p.partition) in tps:
                by_leader[p.leader].append((topic, p.partition))
    return by_leader


def collect(
    client: Client,
    opts: Options,
    sink: Callable[[str, list[dict[str, Any]]], None] | None = None,
) -> Snapshot:
    """The cluster's groups as input rows, `opts.chunk_groups` groups at a time: each chunk's
    member and offset rows go to `sink` as it is done (the snapshot keeps them without one);
    topic_partitions, the cluster's, stays in the snapshot."""
    snap = Snapshot(sink=sink)
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
    if (
        not wanted
        and (listed or opts.group_ids)
        and (opts.groups or opts.exclude_groups or opts.group_ids)
    ):
        # A filter that matches nothing is a typo far more often than an empty estate: an
        # empty snapshot in place of the previous one would hide every group tomorrow.
        filters = " and ".join(
            f"{flag} {value!r}"
            for flag, value in (
                ("--group", ",".join(opts.group_ids)),
                ("--groups", opts.groups),
                ("--exclude-groups", opts.exclude_groups),
            )
            if value
        )
        sample = ", ".join(sorted(g for g, _, _ in listed)[:5])
        raise NothingSelected(
            f"none of the {len(listed)} groups the cluster lists passes {filters}"
            + (f" (they include {sample})" if sample else "")
        )
    for gid in opts.group_ids:
        if gid not in types:  # kafka-consumer-groups.sh: "Consumer group 'x' does not exist."
            snap.skipped[gid] = "the cluster lists no such consumer group"
    # ListGroups v5+ names KIP-848 groups; they are read with ConsumerGroupDescribe where the
    # broker's ApiVersions answer lists it.
    reads_consumer = client.serves(CONSUMER_GROUP_DESCRIBE) is not None
    for gid in wanted:
        if kinds[gid] == "consumer" and not reads_consumer:
            snap.skipped[gid] = (
                "a KIP-848 consumer group (group.protocol=consumer): the broker does not serve"
                " ConsumerGroupDescribe"
            )
        elif kinds[gid] != "consumer" and types[gid] not in ("consumer", ""):
            snap.skipped[gid] = (
                f"protocol type {types[gid]!r} is not a consumer group (Kafka Connect workers,"
                " Schema Registry and similar coordinate other resources)"
            )
    candidates = [g for g in wanted if g not in snap.skipped]
    used: set[str] = set()
    ends = _EndOffsets(client)
    # one chunk at least: an estate with no group asks the cluster what one with groups does
    size = max(1, opts.chunk_groups)
    for start in range(0, max(1, len(candidates)), size):
        part = candidates[start : start + size]
        # the chunk records skipped, failed and empty groups in the snapshot's own dicts
        chunk = Snapshot(cluster=info, skipped=snap.skipped, failed=snap.failed, empty=snap.empty)
        raw, cgd, where = _describe(
            client,
            [g for g in part if kinds[g] != "consumer"],
            [g for g in part if kinds[g] == "consumer"],
            chunk,
        )
        exported = _classify(raw, chunk) + _classify_consumer(info, cgd, chunk)
        fallback = {g: sorted(tps) for g, tps in _wanted(info, chunk).items()}
        committed = _offsets(client, where, sorted(exported), fallback, chunk)
        used |= _finish_chunk(info, chunk, exported, committed, ends)
        snap.absorb(chunk)
    snap.topic_partitions = _topic_rows(info, used, opts)
    log.info(
        "partitions listed: %d of %d topics",
        len(snap.topic_partitions),
        len({r["topic"] for r in snap.topic_partitions}),
    )
    snap.report = {
        "seconds": round(time.monotonic() - started, 3),
        "groups_listed": len(listed),
        "groups_selected": len(wanted),
    }
    return snap


class _EndOffsets:
    """Log end offsets, asked for each chunk's partitions after its committed offsets (one
    ListOffsets per leader and chunk), so that no committed offset is past its log end."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self.known: dict[tuple[str, int], int] = {}
        self._asked = False

    def of(self, info: ClusterInfo, tps: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
        # every partition the chunk wants, after its committed offsets: committed <= log end
        if tps or not self._asked:  # the first chunk asks even for none (API check)
            got, failed = self._client.end_offsets(_leaders(info, set(tps)))
            for tp, reason in sorted(failed.items()):
                log.warning("log end offset of %s-%d: %s", tp[0], tp[1], reason)
            self.known.update(got)
            self._asked = True
        return self.known


def _finish_chunk(
    info: ClusterInfo,
    chunk: Snapshot,
    exported: list[str],
    committed: dict[str, dict[tuple[str, int], int | None]],
    ends: _EndOffsets,
) -> set[str]:
    """Drop the rows of the chunk's groups that failed, add their offset rows; the topics its
    groups use (subscribe to, own or committed offsets on)."""
    failed = set(chunk.failed)
    keep = [g for g in exported if g not in failed]
    chunk.subscriptions = [r for r in chunk.subscriptions if r["group_id"] not in failed]
    chunk.current_assignment = [r for r in chunk.current_assignment if r["group_id"] not in failed]
    chunk.target_assignment = [r for r in chunk.target_assignment if r["group_id"] not in failed]
    used: set[str] = set()
    for r in chunk.subscriptions:
        used.update(_subscribed_topics(info, r))
    used.update(r["topic"] for r in chunk.current_assignment)
    for g in keep:
        used.update(t for t, _ in committed.get(g, {}))
    # Offsets of every partition a group subscribes to, owns or has committed: a subscribed
    # partition never committed is a row with a null committed offset (unknown lag).
    wanted = _wanted(info, chunk)
    for g in keep:
        wanted[g].update(tp for tp in committed.get(g, {}) if tp[0] in info.topics)
    all_tps = set().union(*wanted.values()) if wanted else set()
    known = ends.of(info, all_tps)
    for g in keep:
        for t, p in sorted(wanted[g]):
            chunk.offsets.append(
                {
                    "group_id": g,
                    "topic": t,
                    "partition": p,
                    "committed_offset": committed.get(g, {}).get((t, p)),
                    "log_end_offset": known.get((t, p)),
                }
            )
    return used


def _topic_rows(info: ClusterInfo, used: set[str], opts: Options) -> list[dict[str, Any]]:
    """The topic_partitions table: the topics the exported groups use (every non-internal
    topic with `--all-topics`), with each partition's replica racks."""
    topics = set(info.topics) - info.internal | (used & info.internal) if opts.all_topics else used
    rows = []
    for t in sorted(topics & set(info.topics)):
        for pi in info.topics[t]:
            brokers = [info.brokers[b] for b in pi.replicas if b in info.brokers]
            racks = sorted({b.rack for b in brokers if b.rack is not None})
            rows.append(
                {
                    "topic": t,
                    "partition": pi.partition,
                    "replica_racks": racks or None,
                    "weight": None,
                }
            )
    return rows
