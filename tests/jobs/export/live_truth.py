"""Live groups of real clients on one broker, exported, and what each should show against its
plan: the groups (`LiveGroup`), the clients that hold them, and the assertions.

Every group names the verdict an operator should get for it (`LiveGroup.verdict`, the
`live_check` vocabulary): `MATCHES_ELECTED` for a stable group led by a library the planner
models (its `elected` plan, with that library's variant, is exactly what the members hold),
`REBALANCING` for a group caught mid-rebalance, `UNEXPLAINED` for a leader running an assignor
the planner cannot know (a custom one registered under a standard name). `check_group` asserts
what the snapshot and the one-group planner show for each; a verdict computed by the planner
is then one line per group: `assert verdict_of(snap, g.group_id) == g.verdict`.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

MATCHES_ELECTED = "MATCHES_ELECTED"
REBALANCING = "REBALANCING"
UNEXPLAINED = "UNEXPLAINED"

Held = dict[str, set[tuple[str, int]]]

# Short timeouts: groups form and settle in seconds (the session outlives a busy machine's
# pauses; a rebalance waits for slow members this long at most).
SESSION_MS = 10000
HEARTBEAT_MS = 500


@dataclass
class Member:
    """One consumer to start: its library's settings beyond the group's."""

    instance: str | None = None  # group.instance.id (static membership)
    topics: tuple[str, ...] | None = None  # None: the group's topics


@dataclass
class LiveGroup:
    group_id: str
    library: str  # "librdkafka" or "kafka-python": the client the members run
    strategy: str  # the assignor's name, as the members send it
    topics: tuple[str, ...]
    members: list[Member]
    verdict: str
    # kafka-python: what builds the assignor class (None: the library's own for `strategy`)
    assignor: Callable[[], Any] | None = None
    # a client.id of the team's (None: the library's default): then only the metadata layout
    # can name the library, for the members whose metadata carries it
    client_id: str | None = None
    consumers: list[Any] = field(default_factory=list)

    def wanted(self, sizes: dict[str, int]) -> set[tuple[str, int]]:
        names = {t for m in self.members for t in (m.topics or self.topics)}
        return {(t, p) for t in names for p in range(sizes[t])}


class KafkaPythonMember(threading.Thread):
    """A kafka-python consumer polling in its own thread (its client is not thread-safe);
    `hold()` stops polling: the member stays in the group (its heartbeat thread runs) but
    does not rejoin when the group rebalances, so the group waits for it."""

    def __init__(self, bootstrap: str, group: LiveGroup, member: Member, **extra: Any) -> None:
        super().__init__(daemon=True)
        from kafka import KafkaConsumer

        assignor = group.assignor() if group.assignor else _kafka_python_assignor(group.strategy)
        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group.group_id,
            group_instance_id=member.instance,
            enable_auto_commit=False,
            partition_assignment_strategy=[assignor],
            **({"client_id": group.client_id} if group.client_id else {}),
            session_timeout_ms=SESSION_MS,
            heartbeat_interval_ms=HEARTBEAT_MS,
            **extra,
        )
        self.consumer.subscribe(topics=list(member.topics or group.topics))
        self.stop = threading.Event()
        self.holding = threading.Event()
        self.held: set[tuple[str, int]] = set()
        self.member_id = ""
        self.start()

    def run(self) -> None:
        while not self.stop.is_set():
            if self.holding.is_set():
                time.sleep(0.05)
                continue
            self.consumer.poll(100)
            self.held = {(tp.topic, tp.partition) for tp in self.consumer.assignment()}
            self.member_id = str(self.consumer._coordinator._generation.member_id)
        self.consumer.close()

    def hold(self) -> None:
        self.holding.set()


def _kafka_python_assignor(strategy: str) -> Any:
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    return {
        "range": RangePartitionAssignor,
        "roundrobin": RoundRobinPartitionAssignor,
        "sticky": StickyPartitionAssignor,
    }[strategy]


def librdkafka_member(bootstrap: str, group: LiveGroup, member: Member) -> Any:
    from confluent_kafka import Consumer

    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": group.group_id,
        "enable.auto.commit": False,
        "partition.assignment.strategy": group.strategy,
        "session.timeout.ms": SESSION_MS,
        "heartbeat.interval.ms": HEARTBEAT_MS,
        "max.poll.interval.ms": 300000,
    }
    if member.instance is not None:
        conf["group.instance.id"] = member.instance
    if group.client_id:
        conf["client.id"] = group.client_id
    c = Consumer(conf)
    c.subscribe(list(member.topics or group.topics))
    return c


def start(bootstrap: str, group: LiveGroup, count: int | None = None, **extra: Any) -> None:
    """Start the group's members not started yet (`count` of them; default all)."""
    todo = group.members[len(group.consumers) :]
    for m in todo[:count] if count is not None else todo:
        if group.library == "kafka-python":
            group.consumers.append(KafkaPythonMember(bootstrap, group, m, **extra))
        else:
            group.consumers.append(librdkafka_member(bootstrap, group, m))


def held_by(c: Any) -> set[tuple[str, int]]:
    if isinstance(c, KafkaPythonMember):
        return set(c.held)
    return {(tp.topic, tp.partition) for tp in c.assignment()}


def member_id(c: Any) -> str:
    return c.member_id if isinstance(c, KafkaPythonMember) else str(c.memberid())


def holdings(group: LiveGroup) -> Held:
    """What each member holds, by the member id the client reports."""
    return {member_id(c): held_by(c) for c in group.consumers}


def poll(groups: list[LiveGroup], seconds: float = 0.05) -> None:
    for g in groups:
        for c in g.consumers:
            if not isinstance(c, KafkaPythonMember):
                c.poll(seconds / max(1, len(g.consumers)))


def whole(g: LiveGroup, held: Held, sizes: dict[str, int]) -> bool:
    """Every started member has joined and holds some partitions, each of the group's
    partitions held exactly once."""
    flat = [tp for tps in held.values() for tp in tps]
    joined = len(held) == len(g.consumers) and all(held)
    return joined and sorted(flat) == sorted(g.wanted(sizes)) and all(held.values())


def settle(
    groups: list[LiveGroup],
    sizes: dict[str, int],
    complete: Callable[[LiveGroup, Held], bool] | None = None,
    patience: float = 90.0,
    quiet: float = 3.0,
) -> None:
    """Poll the librdkafka members until every group is `complete` (default: `whole`),
    unchanged for `quiet` seconds."""
    done = complete or (lambda g, held: whole(g, held, sizes))
    deadline = time.monotonic() + patience
    last: list[Held] | None = None
    since = time.monotonic()
    while time.monotonic() < deadline:
        poll(groups)
        now = [holdings(g) for g in groups]
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet and all(
            done(g, h) for g, h in zip(groups, now, strict=True)
        ):
            return
        time.sleep(0.02)
    raise AssertionError(f"the groups did not settle in {patience:g} s: {last}")


def wait_state(bootstrap: str, group_id: str, state: str, patience: float = 30.0) -> None:
    """Until the group's coordinator describes it in `state` (DescribeGroups)."""
    from jobs.export.client import Client, RawGroup

    client = Client(bootstrap, {}, 10)
    seen = None
    try:
        deadline = time.monotonic() + patience
        while time.monotonic() < deadline:
            coordinator, _ = client.coordinators([group_id])
            got = client.describe_groups({coordinator[group_id]: [group_id]})[group_id]
            seen = got.state if isinstance(got, RawGroup) else got
            if seen == state:
                return
            time.sleep(0.2)
    finally:
        client.close()
    raise AssertionError(f"group {group_id} not {state} within {patience:g} s: {seen}")


def stop(groups: list[LiveGroup]) -> None:
    closers = []
    for g in groups:
        for c in g.consumers:
            if isinstance(c, KafkaPythonMember):
                c.stop.set()
                closers.append(c)
            else:
                t = threading.Thread(target=c.close, daemon=True)
                t.start()
                closers.append(t)
        g.consumers.clear()
    deadline = time.monotonic() + 15
    for t in closers:
        t.join(max(0.0, deadline - time.monotonic()))


# --- the snapshot and the plan ---


def table(snap: Path, name: str) -> pd.DataFrame:
    return pd.read_parquet(snap / name)


def members_of(snap: Path, group_id: str) -> pd.DataFrame:
    subs = table(snap, "subscriptions")
    return subs[subs.group_id == group_id]


def current(snap: Path, group_id: str) -> Held:
    """The group's `current_assignment` rows, every exported member present (maybe empty)."""
    out: Held = {m: set() for m in members_of(snap, group_id).member_id}
    rows = table(snap, "current_assignment")
    for r in rows[rows.group_id == group_id].itertuples():
        out.setdefault(r.member_id, set()).add((r.topic, r.partition))
    return out


def variant(snap: Path, group_id: str) -> str:
    """The strategy the group's leader runs, as the planner names it: the elected protocol,
    qualified by the members' client library (unqualified for Java, or none known)."""
    rows = members_of(snap, group_id)
    [strategy] = {next(iter(s)) for s in rows.assignment_strategies}
    libraries = set(rows.client_library.dropna())
    assert len(libraries) <= 1, libraries
    return f"{strategy}@{libraries.pop()}" if libraries and libraries != {"java"} else strategy


def plan_of(snap: Path, group_id: str, strategy: str) -> Held:
    """The group's plan under `strategy`, from the one-group planner (`jobs.plan_group`, the
    estate job's own code path) on the exported snapshot."""
    from jobs.cli.plan_group import read_group
    from jobs.plan.one_group import table_rows

    args = argparse.Namespace(input=str(snap), group=group_id, config=None, strategies=strategy)
    result, _ = read_group(args, [])
    rows = table_rows(result)
    assert result.plan is not None, (group_id, strategy, rows.get("rejected"))
    out: Held = defaultdict(set)
    for r in rows["assignments"]:
        if r["strategy"] == strategy:
            out[r["member_id"]].add((r["topic"], r["partition"]))
    return dict(out)


def live_of(snap: Path, group_id: str) -> Any:
    """The group's `live_check` row from the one-group planner with the shipped config
    (which plans `elected` with the group's client library); None: the group has none."""
    from jobs.cli.plan_group import read_group

    args = argparse.Namespace(input=str(snap), group=group_id, config=None, strategies=None)
    return read_group(args, [])[0].live


def verdict_of(snap: Path, group_id: str) -> str | None:
    live = live_of(snap, group_id)
    return None if live is None else str(live["verdict"])


def check_group(snap: Path, g: LiveGroup, held: Held) -> None:
    """What the snapshot shows of `g`, by the verdict it should get."""
    rows = members_of(snap, g.group_id)
    libraries = set(rows.client_library)
    if g.client_id is None:  # the library's default client.id names it for every member
        assert libraries == {g.library}, (g.group_id, libraries)
    else:  # named by the layout where the metadata carries it, else no evidence (null)
        assert g.library in libraries, (g.group_id, libraries)
        assert libraries <= {g.library, None}, (g.group_id, libraries)
    states = set(rows.group_state)
    if g.verdict == REBALANCING:
        assert states & {"PreparingRebalance", "CompletingRebalance"}, (g.group_id, states)
        assert verdict_of(snap, g.group_id) in (REBALANCING, None), g.group_id
        return
    assert states == {"Stable"}, (g.group_id, states)
    assert current(snap, g.group_id) == held, g.group_id
    planned = plan_of(snap, g.group_id, variant(snap, g.group_id))
    # A member the plan gives nothing has no assignments row: compare over every member.
    planned = {m: planned.get(m, set()) for m in held}
    live = live_of(snap, g.group_id)
    assert live is not None, g.group_id
    assert live["verdict"] == g.verdict, (g.group_id, live)
    if g.verdict == MATCHES_ELECTED:
        assert planned == held, (g.group_id, planned, held)
    else:
        assert g.verdict == UNEXPLAINED
        assert planned != held, g.group_id
