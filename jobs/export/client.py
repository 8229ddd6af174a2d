"""Read-only access to a cluster through kafka-python 3.0.x's connection manager.

Only these requests are ever sent: Metadata, ListGroups, FindCoordinator, DescribeGroups,
ConsumerGroupDescribe, OffsetFetch and ListOffsets (plus the client's own ApiVersions and SASL
handshake). Nothing joins a group, commits an offset or creates a topic (the Metadata request
never asks for auto-creation). Requests are batched: one ListGroups per broker, one
FindCoordinator for all groups (v4+), DescribeGroups, ConsumerGroupDescribe and OffsetFetch per
coordinator in chunks, one ListOffsets per partition leader, at most `max_in_flight`
outstanding at a time. Every request is one of kafka-python's messages generated from Kafka's
schemas (ConsumerGroupDescribe's from jobs/export/schemas/, as kafka-python 3.0.12 has none).
Raw member bytes are returned untouched: decoding them is `protocol.py`'s.
"""

from __future__ import annotations

import functools
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from jobs.export.protocol import (
    ConsumerGroup,
    ConsumerGroupDescribeRequest,
    DecodeError,
    consumer_group_describe_request,
    consumer_groups,
)

log = logging.getLogger("exporter")

# Errors a coordinator or leader answers while it moves or loads: asked again after a pause.
RETRIABLE = {
    5: "LEADER_NOT_AVAILABLE",
    6: "NOT_LEADER_OR_FOLLOWER",
    7: "REQUEST_TIMED_OUT",
    14: "COORDINATOR_LOAD_IN_PROGRESS",
    15: "COORDINATOR_NOT_AVAILABLE",
    16: "NOT_COORDINATOR",
}
GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED = 30, 29, 31
GROUP_ID_NOT_FOUND = 69
# The ACL each authorization error means, in kafka-acls.sh's words.
MISSING_ACL = {
    GROUP_AUTHORIZATION_FAILED: "Describe on Group:{name}",
    TOPIC_AUTHORIZATION_FAILED: "Describe on Topic:{name}",
    CLUSTER_AUTHORIZATION_FAILED: "Describe on Cluster:kafka-cluster",
}


class ExportError(Exception):
    """The cluster cannot be exported at all (exit 2): unreachable, missing API, no ACL."""


class RequestFailed(ExportError):
    """One request got no usable answer: none within the timeout, after its retries, or bytes
    that do not decode. A coordinator's requests turn it into failed groups (the others are
    exported); any other request's stops the export."""


# The highest ApiVersions version the exporter asks for. librdkafka's mock cluster serves
# ApiVersions 0-2 only and refuses v3/v4 with an answer kafka-python 3.0.12 cannot parse (it
# then never connects). v2 is served by every broker since Kafka 2.0 and lists the same API
# table; v3+ only adds the client's software name and feature flags, unused here. An older
# broker refuses v2 in the v0 layout, which kafka-python parses and steps down from.
API_VERSIONS_MAX = 2


def _capped_client(lost: list[BaseException], **configs: Any) -> Any:
    """kafka-python's network client (its `kafka_client` hook), every connection opened with
    ApiVersions at most API_VERSIONS_MAX; why each connection was lost goes to `lost` (what
    tells an unreachable bootstrap server from one that answers nothing, or garbage)."""
    from kafka.net.compat import KafkaNetClient

    client = KafkaNetClient(**configs)
    manager = client._manager
    open_connection = manager.get_connection

    def get_connection(*args: Any, **kwargs: Any) -> Any:
        conn = open_connection(*args, **kwargs)
        # Read when the connection first sends ApiVersions (scheduled, not yet run here).
        conn._api_versions_idx = min(conn._api_versions_idx, API_VERSIONS_MAX)
        if not getattr(conn, "_export_watched", False):
            conn._export_watched = True
            conn.close_future.add_errback(lost.append)
        return conn

    manager.get_connection = get_connection
    return client


def _timed_out(exc: BaseException | None) -> bool:
    import kafka.errors as errors

    return isinstance(exc, errors.KafkaTimeoutError | errors.RequestTimedOutError)


def _undecodable(exc: BaseException | None) -> bool:
    """Bytes that are not an answer of the protocol (a frame, a header or a body that does not
    decode); a mismatched correlation id is a transient error, retried."""
    import kafka.errors as errors

    return isinstance(exc, errors.KafkaProtocolError) and not isinstance(
        exc, errors.CorrelationIdError
    )


def bootstrap_failure(servers: str, timeout_s: float, exc: BaseException, lost: list[Any]) -> str:
    """Why no bootstrap server could be used, from what its connections met: "cannot reach"
    only when none could be connected to (refused, no route, unknown host)."""
    if any(_undecodable(e) for e in lost):
        cause = next(e for e in lost if _undecodable(e))
        return (
            f"the bootstrap servers {servers} answered with bytes that are not Kafka's protocol"
            f" ({type(cause).__name__}: {cause}): is it a Kafka listener, and does"
            " security.protocol match it?"
        )
    if any(_timed_out(e) for e in lost):
        return (
            f"the bootstrap servers {servers} accepted the connection but did not answer"
            f" within {timeout_s:g} s (--timeout-s)"
        )
    import kafka.errors as errors

    other = [e for e in lost if not isinstance(e, errors.KafkaConnectionError)]
    if other:  # an authentication failure, an error code in the ApiVersions answer
        return (
            f"the bootstrap servers {servers} answered, but the connection failed:"
            f" {type(other[-1]).__name__}: {other[-1]}"
        )
    if not lost and not isinstance(exc, errors.KafkaTimeoutError):
        # Refused before any connection was tried (the client's own settings).
        return f"cannot connect to the bootstrap servers {servers}: {type(exc).__name__}: {exc}"
    cause = lost[-1] if lost else exc
    return (
        f"cannot reach the bootstrap servers {servers} within {timeout_s:g} s:"
        f" {type(cause).__name__}: {cause}"
    )


def error_name(code: int) -> str:
    import kafka.errors as errors

    cls = errors.for_code(code)
    return str(getattr(cls, "message", cls.__name__))


def describe_error(code: int, name: str) -> str:
    if code in MISSING_ACL:
        return f"{error_name(code)}: missing ACL {MISSING_ACL[code].format(name=name)}"
    return error_name(code)


@dataclass
class Broker:
    node_id: int
    host: str
    port: int
    rack: str | None


@dataclass
class PartitionInfo:
    partition: int
    leader: int
    replicas: list[int]


@dataclass
class ClusterInfo:
    cluster_id: str | None
    controller_id: int | None
    brokers: dict[int, Broker]
    topics: dict[str, list[PartitionInfo]]
    internal: set[str]
    topic_ids: dict[str, str] = field(default_factory=dict)  # id (UUID text) -> name; v10+


@dataclass
class RawMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass
class RawGroup:
    group_id: str
    error_code: int
    state: str
    protocol_type: str
    protocol: str
    members: list[RawMember]


@dataclass
class Stats:
    requests: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    versions: dict[str, int] = field(default_factory=dict)

    def count(self, api: str, version: int) -> None:
        self.requests[api] += 1
        self.versions[api] = version


class Client:
    """One exporter's connection to the cluster; every call blocks until answered."""

    def __init__(
        self,
        bootstrap_servers: str,
        settings: dict[str, Any],
        timeout_s: float,
        max_in_flight: int = 5,
        retries: int = 5,
    ) -> None:
        from kafka.admin import KafkaAdminClient

        self.bootstrap = bootstrap_servers
        self.timeout_ms = int(timeout_s * 1000)
        self.max_in_flight = max_in_flight
        self.retries = retries
        self.stats = Stats()
        lost: list[BaseException] = []
        config: dict[str, Any] = {
            "client_id": "kafka-assignment-planner-export",
            "request_timeout_ms": self.timeout_ms,
            "bootstrap_timeout_ms": self.timeout_ms,
            "max_in_flight_requests_per_connection": max_in_flight,
            "kafka_client": functools.partial(_capped_client, lost),
            **settings,
        }
        try:
            self._admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers.split(","), **config)
        except Exception as exc:
            raise ExportError(bootstrap_failure(bootstrap_servers, timeout_s, exc, lost)) from exc
        self._manager = self._admin._manager

    def close(self) -> None:
        self._admin.close()

    # --- plumbing ---

    def _run(self, coro: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        return self._manager.run(coro, *args)

    def version(self, request_cls: Any, api: str, min_version: int = 0) -> int:
        import kafka.errors as errors

        try:
            return int(
                self._manager.broker_version_data.api_version(request_cls, min_version=min_version)
            )
        except errors.IncompatibleBrokerVersion as exc:
            raise ExportError(
                f"the cluster at {self.bootstrap} does not serve {api}: {exc}"
            ) from exc

    def supports(self, request_cls: Any, min_version: int = 0) -> bool:
        import kafka.errors as errors

        try:
            self._manager.broker_version_data.api_version(request_cls, min_version=min_version)
        except errors.IncompatibleBrokerVersion:
            return False
        return True

    def serves(self, api_key: int) -> tuple[int, int] | None:
        """The broker's version range of an API by key (its ApiVersions answer), or None."""
        versions = self._manager.broker_version_data.api_versions or {}
        found = versions.get(api_key)
        return None if found is None else (int(found[0]), int(found[1]))

    async def _send(self, api: str, request: Any, node_id: int | None) -> Any:
        """The answer to `request`, asked again (after a growing pause) while the broker
        cannot be connected to or does not answer within the timeout. RequestFailed when it
        never answers, or answers bytes that do not decode; ExportError when it stays
        unreachable."""
        import kafka.errors as errors

        where = "" if node_id is None else f" to broker {node_id}"
        last: Exception | None = None
        tries = self.retries + 1
        for attempt in range(tries):
            try:
                response = await self._manager.send(
                    request, node_id=node_id, request_timeout_ms=self.timeout_ms
                )
                self.stats.count(api, int(response.API_VERSION))
                return response
            except (errors.NodeNotReadyError, errors.KafkaConnectionError) as exc:
                last = exc
            except (errors.KafkaTimeoutError, errors.RequestTimedOutError) as exc:
                # kafka-python closes the connection of a request that timed out: the next
                # try opens a new one.
                last = exc
            except errors.KafkaProtocolError as exc:
                if _undecodable(exc):  # a broken answer comes back broken: not asked again
                    raise RequestFailed(
                        f"{api}{where}: the answer does not decode as {api}"
                        f" v{getattr(request, 'API_VERSION', '?')} ({type(exc).__name__}: {exc})"
                    ) from exc
                last = exc
            if attempt + 1 < tries:
                log.warning("%s%s failed (%s), retrying", api, where, last)
                await self._manager._net.sleep(min(0.2 * 2**attempt, 2.0))
        if _timed_out(last):
            raise RequestFailed(
                f"{api}{where}: no answer within {self.timeout_ms / 1000:g} s, {tries} tries"
                " (REQUEST_TIMED_OUT)"
            )
        where = "" if node_id is None else f" (broker {node_id})"
        raise ExportError(f"{api} failed{where}: {type(last).__name__}: {last}")

    async def _send_many(
        self, api: str, batch: Sequence[tuple[Any, int | None]], per_request: bool = False
    ) -> list[Any]:
        """Send several requests with at most `max_in_flight` outstanding; answers in order.
        `per_request`: a request that fails (RequestFailed) has its failure in its answer's
        place, and the broker's other requests of the batch get the same failure without
        being sent (one unresponsive broker costs its retries once, not once per request)."""
        out: list[Any] = []
        failed: dict[int | None, RequestFailed] = {}
        for i in range(0, len(batch), self.max_in_flight):
            window = batch[i : i + self.max_in_flight]
            for req, node in window:
                if node in failed:
                    out.append(failed[node])
                    continue
                try:
                    out.append(await self._send(api, req, node))
                except RequestFailed as exc:
                    if not per_request:
                        raise
                    failed[node] = exc
                    out.append(exc)
        return out

    # --- metadata ---

    def metadata(self, topics: list[str] | None = None) -> ClusterInfo:
        return self._run(self._metadata, topics)  # type: ignore[no-any-return]

    async def _metadata(self, topics: list[str] | None) -> ClusterInfo:
        from kafka.protocol.metadata import MetadataRequest

        self.version(MetadataRequest, "Metadata")
        request = MetadataRequest(topics=topics, allow_auto_topic_creation=False)
        r = await self._send("Metadata", request, None)
        brokers = {b.node_id: Broker(b.node_id, b.host, b.port, b.rack or None) for b in r.brokers}
        info = ClusterInfo(r.cluster_id, r.controller_id, brokers, {}, set())
        for t in r.topics:
            if t.error_code in MISSING_ACL:
                raise ExportError(f"Metadata of {t.name}: {describe_error(t.error_code, t.name)}")
            if t.error_code:
                log.warning("topic %s: %s", t.name, error_name(t.error_code))
                continue
            info.topics[t.name] = sorted(
                (
                    PartitionInfo(p.partition_index, p.leader_id, list(p.replica_nodes))
                    for p in t.partitions
                ),
                key=lambda p: p.partition,
            )
            if t.is_internal:
                info.internal.add(t.name)
            topic_id = getattr(t, "topic_id", None)
            if topic_id is not None and topic_id.int != 0:  # zero UUID: no id (older brokers)
                info.topic_ids[str(topic_id)] = t.name
        return info

    # --- groups ---

    def list_groups(self, broker_ids: Iterable[int]) -> list[tuple[str, str, str | None]]:
        return self._run(self._list_groups, list(broker_ids))  # type: ignore[no-any-return]

    async def _list_groups(self, broker_ids: list[int]) -> list[tuple[str, str, str | None]]:
        from kafka.protocol.admin import ListGroupsRequest

        self.version(ListGroupsRequest, "ListGroups")
        seen: dict[str, tuple[str, str, str | None]] = {}
        answers = await self._send_many(
            "ListGroups", [(ListGroupsRequest(), b) for b in broker_ids]
        )
        for broker, r in zip(broker_ids, answers, strict=True):
            if r.error_code:
                raise ExportError(
                    f"ListGroups on broker {broker}: {describe_error(r.error_code, '')}"
                )
            for g in r.groups:
                # ListGroups v5+ names the group type: a KIP-848 group is "consumer", a
                # classic one "classic" (older versions: none, every group is classic).
                seen[g.group_id] = (g.group_id, g.protocol_type, getattr(g, "group_type", None))
        return sorted(seen.values())

    def coordinators(self, group_ids: list[str]) -> tuple[dict[str, int], dict[str, str]]:
        return self._run(self._coordinators, group_ids)  # type: ignore[no-any-return]

    async def _coordinators(self, group_ids: list[str]) -> tuple[dict[str, int], dict[str, str]]:
        """Coordinator of each group, and the reason for each group that has none now."""
        from kafka.protocol.metadata import FindCoordinatorRequest

        found: dict[str, int] = {}
        failed: dict[str, str] = {}
        todo = list(group_ids)
        batched = self.supports(FindCoordinatorRequest, min_version=4)
        for attempt in range(self.retries + 1):
            if not todo:
                break
            if batched:
                chunks = [todo[i : i + 1000] for i in range(0, len(todo), 1000)]
                reqs = [
                    (FindCoordinatorRequest(key_type=0, coordinator_keys=c, min_version=4), None)
                    for c in chunks
                ]
                rows = [
                    (c.key, c.error_code, c.node_id, c.host, c.port)
                    for r in await self._send_many("FindCoordinator", reqs)
                    for c in r.coordinators
                ]
            else:
                reqs = [
                    (FindCoordinatorRequest(key=g, key_type=0, max_version=3), None) for g in todo
                ]
                answers = await self._send_many("FindCoordinator", reqs)
                rows = [
                    (g, r.error_code, r.node_id, r.host, r.port)
                    for g, r in zip(todo, answers, strict=True)
                ]
            todo = []
            for key, code, node, _host, _port in rows:
                if code == 0:
                    found[key] = node
                elif code in RETRIABLE and attempt < self.retries:
                    todo.append(key)
                else:
                    failed[key] = f"FindCoordinator: {describe_error(code, key)}"
            if todo:
                await self._manager._net.sleep(min(0.2 * 2**attempt, 2.0))
        return found, failed

    def describe_groups(
        self, by_coordinator: dict[int, list[str]], chunk: int = 200
    ) -> dict[str, RawGroup | RequestFailed]:
        """Each group's answer, or the failure of the request that asked for it."""
        return self._run(self._describe_groups, by_coordinator, chunk)  # type: ignore[no-any-return]

    async def _describe_groups(
        self, by_coordinator: dict[int, list[str]], chunk: int
    ) -> dict[str, RawGroup | RequestFailed]:
        from kafka.protocol.admin import DescribeGroupsRequest

        self.version(DescribeGroupsRequest, "DescribeGroups")
        batch = [
            (DescribeGroupsRequest(groups=ids[i : i + chunk]), node)
            for node, ids in by_coordinator.items()
            for i in range(0, len(ids), chunk)
        ]
        out: dict[str, RawGroup | RequestFailed] = {}
        done = 0
        answers = await self._send_many("DescribeGroups", batch, per_request=True)
        for (req, _), r in zip(batch, answers, strict=True):
            if isinstance(r, RequestFailed):
                out.update(dict.fromkeys(req.groups, r))
                continue
            for g in r.groups:
                members = [
                    RawMember(
                        m.member_id,
                        getattr(m, "group_instance_id", None),
                        m.client_id,
                        m.client_host,
                        bytes(m.member_metadata or b""),
                        bytes(m.member_assignment or b""),
                    )
                    for m in g.members
                ]
                out[g.group_id] = RawGroup(
                    g.group_id,
                    g.error_code,
                    g.group_state,
                    g.protocol_type,
                    g.protocol_data,
                    members,
                )
            done += len(r.groups)
            log.info("groups described: %d", done)
        return out

    def consumer_group_describe(
        self, by_coordinator: dict[int, list[str]], chunk: int = 200
    ) -> dict[str, ConsumerGroup | RequestFailed]:
        """Each group's answer, or the failure of the request that asked for it."""
        return self._run(self._consumer_group_describe, by_coordinator, chunk)  # type: ignore[no-any-return]

    async def _consumer_group_describe(
        self, by_coordinator: dict[int, list[str]], chunk: int
    ) -> dict[str, ConsumerGroup | RequestFailed]:
        """KIP-848 groups (ConsumerGroupDescribe), per coordinator in chunks like DescribeGroups,
        in the highest version both sides serve (v1 where the broker's ApiVersions lists it)."""
        from jobs.export.schemas import ConsumerGroupDescribeRequest as Wire

        version = self.version(Wire, "ConsumerGroupDescribe")
        chunks = [
            (ids[i : i + chunk], node)
            for node, ids in by_coordinator.items()
            for i in range(0, len(ids), chunk)
        ]
        batch = []
        for ids, node in chunks:
            request = consumer_group_describe_request(ConsumerGroupDescribeRequest(ids))
            request.API_VERSION = version
            batch.append((request, node))
        out: dict[str, ConsumerGroup | RequestFailed] = {}
        answers = await self._send_many("ConsumerGroupDescribe", batch, per_request=True)
        for (ids, node), r in zip(chunks, answers, strict=True):
            if not isinstance(r, RequestFailed):
                try:
                    out.update((g.group_id, g) for g in consumer_groups(r).groups)
                    continue
                except DecodeError as exc:
                    r = RequestFailed(
                        f"ConsumerGroupDescribe to broker {node}: the answer does not decode as"
                        f" ConsumerGroupDescribe v{version} ({exc})"
                    )
            out.update(dict.fromkeys(ids, r))
        return out

    def fetch_offsets(
        self,
        by_coordinator: dict[int, list[str]],
        explicit: dict[str, list[tuple[str, int]]],
        fallback: dict[str, list[tuple[str, int]]] | None = None,
    ) -> tuple[dict[str, dict[tuple[str, int], int | None]], dict[str, str], set[str]]:
        return self._run(self._fetch_offsets, by_coordinator, explicit, fallback or {})  # type: ignore[no-any-return]

    async def _fetch_offsets(
        self,
        by_coordinator: dict[int, list[str]],
        explicit: dict[str, list[tuple[str, int]]],
        fallback: dict[str, list[tuple[str, int]]],
    ) -> tuple[dict[str, dict[tuple[str, int], int | None]], dict[str, str], set[str]]:
        """Committed offsets per group, the reason for each group that failed, and the groups
        whose coordinator moved or is loading (to look up and ask again). A group in
        `explicit` is asked for those partitions, the others for all they have; a group whose
        answer lists no partitions at all (a null array: brokers without "all partitions",
        librdkafka's mock) is asked again for its `fallback` partitions by name."""
        from kafka.protocol.consumer import OffsetFetchRequest

        version = self.version(OffsetFetchRequest, "OffsetFetch")
        if version < 2:  # "all partitions" (null topics) needs v2+
            explicit = {**fallback, **explicit}
        batch = self._offset_requests(version, by_coordinator, explicit)
        answers = await self._send_many("OffsetFetch", batch, per_request=True)
        offsets, failed, retry, unlisted = _parse_offsets([req for req, _ in batch], answers)
        again = {g: fallback[g] for g in sorted(unlisted) if g in fallback}
        for g in unlisted - set(again):
            offsets[g] = {}
        if again:
            log.info("OffsetFetch: %d groups listed no partitions, asked by name", len(again))
            nodes = {n: [g for g in gs if g in again] for n, gs in by_coordinator.items()}
            batch = self._offset_requests(version, {n: gs for n, gs in nodes.items() if gs}, again)
            answers = await self._send_many("OffsetFetch", batch, per_request=True)
            more = _parse_offsets([req for req, _ in batch], answers)
            offsets.update(more[0])
            failed.update(more[1])
            retry |= more[2]
            for g in more[3]:
                offsets[g] = {}
        return offsets, failed, retry

    @staticmethod
    def _offset_requests(
        version: int,
        by_coordinator: dict[int, list[str]],
        explicit: dict[str, list[tuple[str, int]]],
    ) -> list[tuple[Any, int | None]]:
        from kafka.protocol.consumer import OffsetFetchRequest

        group_cls = OffsetFetchRequest.OffsetFetchRequestGroup
        gt_cls = group_cls.OffsetFetchRequestTopics
        t_cls = OffsetFetchRequest.OffsetFetchRequestTopic

        def topics_of(gid: str, cls: Any) -> Any:
            if gid not in explicit:
                return None
            by_topic: dict[str, list[int]] = defaultdict(list)
            for t, p in explicit[gid]:
                by_topic[t].append(p)
            return [cls(name=t, partition_indexes=sorted(ps)) for t, ps in sorted(by_topic.items())]

        batch: list[tuple[Any, int | None]] = []
        for node, gids in by_coordinator.items():
            if version >= 8:
                for i in range(0, len(gids), 100):
                    groups = [
                        group_cls(group_id=g, topics=topics_of(g, gt_cls))
                        for g in gids[i : i + 100]
                    ]
                    batch.append((OffsetFetchRequest(groups=groups, min_version=8), node))
            else:
                for g in gids:
                    req = OffsetFetchRequest(
                        group_id=g,
                        topics=topics_of(g, t_cls),
                        max_version=7,
                        min_version=0 if g in explicit else 2,
                    )
                    batch.append((req, node))
        return batch

    def end_offsets(
        self, leaders: dict[int, list[tuple[str, int]]]
    ) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], str]]:
        return self._run(self._end_offsets, leaders)  # type: ignore[no-any-return]

    async def _end_offsets(
        self, leaders: dict[int, list[tuple[str, int]]]
    ) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], str]]:
        """Log end offsets (ListOffsets latest), one request per leader; a partition whose
        leader moved is asked again of the new leader (metadata refreshed)."""
        from kafka.protocol.consumer import ListOffsetsRequest

        self.version(ListOffsetsRequest, "ListOffsets")
        t_cls = ListOffsetsRequest.ListOffsetsTopic
        p_cls = t_cls.ListOffsetsPartition
        ends: dict[tuple[str, int], int] = {}
        failed: dict[tuple[str, int], str] = {}
        todo = leaders
        for attempt in range(self.retries + 1):
            batch = []
            for node, tps in sorted(todo.items()):
                by_topic: dict[str, list[int]] = defaultdict(list)
                for t, p in tps:
                    by_topic[t].append(p)
                topics = [
                    t_cls(name=t, partitions=[p_cls(partition_index=p, timestamp=-1) for p in ps])
                    for t, ps in sorted(by_topic.items())
                ]
                batch.append(
                    (ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=topics), node)
                )
            retry: list[tuple[str, int]] = []
            answers = await self._send_many("ListOffsets", batch, per_request=True)
            for (_, tps), r in zip(sorted(todo.items()), answers, strict=True):
                if isinstance(r, RequestFailed):  # that leader's partitions: no log end offset
                    failed.update(dict.fromkeys(tps, str(r)))
                    continue
                for t in r.topics:
                    for p in t.partitions:
                        tp = (t.name, p.partition_index)
                        if p.error_code == 0:
                            ends[tp] = p.offset
                        elif p.error_code in RETRIABLE and attempt < self.retries:
                            retry.append(tp)
                        else:
                            failed[tp] = describe_error(p.error_code, t.name)
            if not retry:
                break
            await self._manager._net.sleep(min(0.2 * 2**attempt, 2.0))
            info = await self._metadata(sorted({t for t, _ in retry}))
            todo = defaultdict(list)
            for t, p in retry:
                leader = next((x.leader for x in info.topics.get(t, []) if x.partition == p), -1)
                todo[leader].append((t, p))
        return ends, failed


def _parse_offsets(
    requests: list[Any], answers: list[Any]
) -> tuple[dict[str, dict[tuple[str, int], int | None]], dict[str, str], set[str], set[str]]:
    """(offsets, failed, retry: coordinator moved or loading, unlisted: null topics array)."""
    offsets: dict[str, dict[tuple[str, int], int | None]] = {}
    failed: dict[str, str] = {}
    retry: set[str] = set()
    unlisted: set[str] = set()
    for req, r in zip(requests, answers, strict=True):
        if isinstance(r, RequestFailed):
            many = getattr(req, "groups", None)  # v8+: several groups per request
            asked = [g.group_id for g in many] if many else [req.group_id]
            failed.update(dict.fromkeys(asked, str(r)))
            continue
        groups = r.groups if r.API_VERSION >= 8 else [_Single(req.group_id, r)]
        for g in groups:
            if g.error_code in RETRIABLE:
                retry.add(g.group_id)
                continue
            if g.error_code:
                failed[g.group_id] = f"OffsetFetch: {describe_error(g.error_code, g.group_id)}"
                continue
            if g.topics is None:
                unlisted.add(g.group_id)
                continue
            rows: dict[tuple[str, int], int | None] = {}
            for t in g.topics:
                for p in t.partitions:
                    if p.error_code:
                        failed[g.group_id] = (
                            f"OffsetFetch {t.name}-{p.partition_index}: "
                            f"{describe_error(p.error_code, t.name)}"
                        )
                    # -1: nothing committed for this partition
                    rows[(t.name, p.partition_index)] = (
                        p.committed_offset if p.committed_offset >= 0 else None
                    )
            offsets[g.group_id] = rows
    return offsets, failed, retry, unlisted


@dataclass
class _Single:
    """OffsetFetch v0-7 answers one group: shaped like a v8 group row."""

    group_id: str
    response: Any

    @property
    def error_code(self) -> int:
        return int(getattr(self.response, "error_code", 0))

    @property
    def topics(self) -> Any:
        return self.response.topics


def now() -> float:
    return time.monotonic()
