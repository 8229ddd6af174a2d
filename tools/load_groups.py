"""Many classic consumer groups on a broker, cheaply: a load generator for the exporter.

    python -m tools.load_groups --bootstrap-servers 127.0.0.1:9092 --groups 20000

Each group's members join through the group protocol itself: JoinGroup (the member id the
broker hands out, then the join that forms the generation) and SyncGroup, carrying real
consumer-protocol subscriptions and the leader's assignments, as a Java consumer would. No
consumer client runs: one process drives many groups at once over a few hundred connections
(a JoinGroup holds its connection until the group forms, so each member of a group in flight
has its own), which is what lets it build tens of thousands of groups in a minute.

Members send no heartbeats: a group stays Stable for its session timeout (`--session-timeout-s`,
within the broker's `group.max.session.timeout.ms`), long enough to export it; the first groups
expire first, so building and exporting must end within it (the tool warns when building alone
took longer). Each leader assigns as `range` does (its protocol's name).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import resource
import struct
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jobs.export.protocol import Assignment, Subscription, encode_assignment, encode_subscription

CLIENT_ID = "kafka-assignment-planner-load"
MEMBER_ID_REQUIRED = 79
TOPIC_ALREADY_EXISTS = 36


@dataclass(frozen=True)
class Shape:
    """Every group alike: `members` members of `topics_per_group` topics, drawn in turn from
    `topics` topics of `partitions` partitions each."""

    members: int = 5
    topics: int = 30
    partitions: int = 6
    topics_per_group: int = 3
    prefix: str = "load"

    def topic_names(self) -> list[str]:
        return [f"{self.prefix}-{i:02d}" for i in range(self.topics)]

    def group(self, i: int) -> tuple[str, list[str]]:
        names = self.topic_names()
        topics = sorted({names[(i + k * 7) % self.topics] for k in range(self.topics_per_group)})
        return f"{self.prefix}-group-{i:06d}", topics


class Connection:
    """One broker connection carrying one request at a time (a JoinGroup blocks it)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer
        self._ids = itertools.count()

    @classmethod
    async def open(cls, host: str, port: int) -> Connection:
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer)

    async def send(self, request: Any, response_cls: Any, version: int) -> Any:
        correlation = next(self._ids)
        request.with_header(correlation_id=correlation, client_id=CLIENT_ID)
        self._writer.write(request.encode(version=version, header=True, framed=True))
        await self._writer.drain()
        (size,) = struct.unpack(">i", await self._reader.readexactly(4))
        response = response_cls.decode(await self._reader.readexactly(size), version, header=True)
        if response._header.correlation_id != correlation:
            raise RuntimeError(
                f"answer {response._header.correlation_id} to request {correlation}: out of order"
            )
        return response

    async def close(self) -> None:
        self._writer.close()
        await self._writer.wait_closed()


@dataclass(frozen=True)
class Versions:
    find_coordinator: int
    join_group: int
    sync_group: int


class Lane:
    """Builds groups one after another: one connection per member slot and coordinator."""

    def __init__(
        self, shape: Shape, versions: Versions, session_ms: int, nodes: dict[int, Any]
    ) -> None:
        self.shape, self.versions, self.session_ms = shape, versions, session_ms
        self._nodes = nodes
        self._pool: dict[int, list[Connection]] = {}
        self._lookup: Connection | None = None

    async def _coordinator(self, gid: str) -> int:
        from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

        if self._lookup is None:
            host, port = next(iter(self._nodes.values()))
            self._lookup = await Connection.open(host, port)
        v = self.versions.find_coordinator
        if v >= 4:
            request = FindCoordinatorRequest(key_type=0, coordinator_keys=[gid])
        else:
            request = FindCoordinatorRequest(key=gid, key_type=0)
        r = await self._lookup.send(request, FindCoordinatorResponse, v)
        found = r.coordinators[0] if v >= 4 else r
        if found.error_code:
            raise RuntimeError(f"FindCoordinator {gid}: error {found.error_code}")
        self._nodes.setdefault(found.node_id, (found.host, found.port))
        return int(found.node_id)

    async def _connections(self, node: int) -> list[Connection]:
        if node not in self._pool:
            host, port = self._nodes[node]
            self._pool[node] = [
                await Connection.open(host, port) for _ in range(self.shape.members)
            ]
        return self._pool[node]

    async def build(self, i: int) -> None:
        from kafka.protocol.consumer.group import (
            JoinGroupRequest,
            JoinGroupResponse,
            SyncGroupRequest,
            SyncGroupResponse,
        )

        gid, topics = self.shape.group(i)
        conns = await self._connections(await self._coordinator(gid))
        meta = encode_subscription(Subscription(3, topics, None, [], -1, None))
        protocols = [JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=meta)]
        vj, vs = self.versions.join_group, self.versions.sync_group

        async def join(conn: Connection, member_id: str) -> Any:
            request = JoinGroupRequest(
                group_id=gid,
                session_timeout_ms=self.session_ms,
                rebalance_timeout_ms=60_000,
                member_id=member_id,
                group_instance_id=None,
                protocol_type="consumer",
                protocols=protocols,
            )
            return await conn.send(request, JoinGroupResponse, vj)

        # Every member has its id (MEMBER_ID_REQUIRED) before any joins with it, so the group
        # forms with all of them in one generation.
        ids = [""] * len(conns)
        if vj >= 4:
            first = await asyncio.gather(*(join(c, "") for c in conns))
            for r in first:
                if r.error_code not in (0, MEMBER_ID_REQUIRED):
                    raise RuntimeError(f"JoinGroup {gid}: error {r.error_code}")
            ids = [r.member_id for r in first]
        joined = await asyncio.gather(*(join(c, m) for c, m in zip(conns, ids, strict=True)))
        for r in joined:
            if r.error_code:
                raise RuntimeError(f"JoinGroup {gid}: error {r.error_code}")
        leader = joined[0].leader
        members = sorted(m.member_id for r in joined for m in r.members)
        assignments = []
        for n, m in enumerate(members):
            owned = [(t, _range(n, len(members), self.shape.partitions)) for t in topics]
            assignments.append(
                SyncGroupRequest.SyncGroupRequestAssignment(
                    member_id=m, assignment=encode_assignment(Assignment(3, owned))
                )
            )

        async def sync(conn: Connection, r: Any) -> Any:
            request = SyncGroupRequest(
                group_id=gid,
                generation_id=r.generation_id,
                member_id=r.member_id,
                group_instance_id=None,
                protocol_type="consumer",
                protocol_name="range",
                assignments=assignments if r.member_id == leader else [],
            )
            return await conn.send(request, SyncGroupResponse, vs)

        synced = await asyncio.gather(*(sync(c, r) for c, r in zip(conns, joined, strict=True)))
        for s in synced:
            if s.error_code:
                raise RuntimeError(f"SyncGroup {gid}: error {s.error_code}")

    async def close(self) -> None:
        for c in itertools.chain([self._lookup] if self._lookup else [], *self._pool.values()):
            await c.close()


def _range(n: int, members: int, partitions: int) -> list[int]:
    """The partitions of a topic that `range` gives the `n`-th of `members` members (sorted by
    member id, all subscribed): consecutive ones, the first members one more when they do not
    divide evenly."""
    each, extra = divmod(partitions, members)
    start = n * each + min(n, extra)
    return list(range(start, start + each + (1 if n < extra else 0)))


def _negotiate(bootstrap: str) -> tuple[Versions, dict[int, Any]]:
    """The versions both sides serve (kafka-python's ApiVersions exchange) and the brokers."""
    from kafka.admin import KafkaAdminClient
    from kafka.protocol.consumer.group import JoinGroupRequest, SyncGroupRequest
    from kafka.protocol.metadata import FindCoordinatorRequest

    admin = KafkaAdminClient(bootstrap_servers=bootstrap.split(","), client_id=CLIENT_ID)
    try:
        data = admin._manager.broker_version_data
        versions = Versions(
            data.api_version(FindCoordinatorRequest),
            data.api_version(JoinGroupRequest),
            data.api_version(SyncGroupRequest),
        )
        nodes = {int(b.node_id): (b.host, int(b.port)) for b in admin._manager.cluster.brokers()}
    finally:
        admin.close()
    return versions, nodes


def create_topics(bootstrap: str, shape: Shape) -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = [NewTopic(t, shape.partitions, 1) for t in shape.topic_names()]
    for f in admin.create_topics(new).values():
        try:
            f.result(30)
        except KafkaException as exc:  # a second build on the same broker reuses the topics
            if exc.args[0].code() != TOPIC_ALREADY_EXISTS:
                raise


async def _build(
    bootstrap: str, groups: Sequence[int], shape: Shape, lanes: int, session_ms: int
) -> None:
    versions, nodes = _negotiate(bootstrap)
    todo = iter(groups)
    done = 0
    step = max(1, len(groups) // 10)

    async def lane() -> None:
        nonlocal done
        worker = Lane(shape, versions, session_ms, nodes)
        try:
            for i in todo:
                await worker.build(i)
                done += 1
                if done % step == 0:
                    print(f"  {done} groups joined", file=sys.stderr, flush=True)
        finally:
            await worker.close()

    await asyncio.gather(*(lane() for _ in range(min(lanes, len(groups)))))


def build(
    bootstrap: str,
    groups: int,
    shape: Shape = Shape(),
    lanes: int = 64,
    session_timeout_s: float = 600,
) -> float:
    """Create the shape's topics and `groups` Stable groups on the cluster; the seconds it took
    to form the groups (topics not counted)."""
    _open_files(lanes * (shape.members + 1) + 64)
    create_topics(bootstrap, shape)
    t = time.monotonic()
    asyncio.run(_build(bootstrap, range(groups), shape, lanes, int(session_timeout_s * 1000)))
    seconds = time.monotonic() - t
    if seconds > session_timeout_s:
        print(
            f"warning: building took {seconds:.0f} s, past the {session_timeout_s:.0f} s session"
            " timeout: the first groups have expired (raise --session-timeout-s)",
            file=sys.stderr,
        )
    return seconds


def _open_files(needed: int) -> None:
    """Raise this process's open-file limit to `needed` connections where the hard limit
    allows (each lane holds a connection per member and coordinator)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        want = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bootstrap-servers", required=True)
    p.add_argument("--groups", type=int, default=20_000)
    p.add_argument("--members", type=int, default=Shape.members)
    p.add_argument("--lanes", type=int, default=64, help="groups formed at once")
    p.add_argument("--session-timeout-s", type=float, default=600)
    p.add_argument("--prefix", default=Shape.prefix)
    args = p.parse_args(argv)
    shape = Shape(members=args.members, prefix=args.prefix)
    seconds = build(args.bootstrap_servers, args.groups, shape, args.lanes, args.session_timeout_s)
    print(f"{args.groups} groups of {args.members} members formed in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
