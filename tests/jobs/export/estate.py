"""A live estate on a real broker: topics, records, and consumer groups held by real clients
(librdkafka through confluent-kafka; kafka-python with its sticky assignor)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

TOPICS = {"orders": 6, "payments": 4, "orders-eu": 3, "audit": 2}


def produced(topic: str, partition: int) -> int:
    """Records produced to each partition: distinct per partition, so a swapped offset shows."""
    return 5 + 3 * partition + len(topic)


def committed(topic: str, partition: int) -> int | None:
    """The offset committed for each partition (None: never committed)."""
    if partition == TOPICS[topic] - 1:
        return None
    return produced(topic, partition) - (partition % 3)


@dataclass
class Group:
    group_id: str
    strategy: str  # librdkafka's partition.assignment.strategy, or "kafka-python-sticky"
    topics: list[str] | str  # a str is a pattern
    members: list[dict[str, Any]] = field(default_factory=list)  # extra client settings
    consumers: list[Any] = field(default_factory=list)

    def expected(self) -> set[tuple[str, int]]:
        import re

        names = (
            [t for t in TOPICS if re.fullmatch(self.topics[1:], t)]
            if isinstance(self.topics, str)
            else self.topics
        )
        return {(t, p) for t in names for p in range(TOPICS[t])}


GROUPS = [
    Group(
        "g-range",
        "range",
        ["orders", "payments"],
        [{"client.rack": "rack-a"}, {"group.instance.id": "static-1"}, {}],
    ),
    Group(
        "g-roundrobin",
        "roundrobin",
        ["orders", "payments", "audit"],
        [{"group.instance.id": "rr-static"}, {"client.rack": "rack-b"}],
    ),
    Group("g-coop", "cooperative-sticky", ["orders"], [{}, {}, {"client.rack": "rack-c"}]),
    Group("g-pattern", "range", "^orders.*", [{}, {}]),
    # Members vote: two prefer roundrobin, one range; all support both.
    Group(
        "g-vote",
        "range,roundrobin",
        ["payments", "audit"],
        [
            {},
            {"partition.assignment.strategy": "roundrobin,range"},
            {"partition.assignment.strategy": "roundrobin,range"},
        ],
    ),
    Group("g-kp-sticky", "kafka-python-sticky", ["payments", "audit"], [{}, {}]),
]


def create_topics(bootstrap: str) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(t, n, 1) for t, n in TOPICS.items()]).values():
        f.result(30)
    producer = Producer({"bootstrap.servers": bootstrap})
    for t, n in TOPICS.items():
        for p in range(n):
            for i in range(produced(t, p)):
                producer.produce(t, value=b"%d" % i, partition=p)
    assert producer.flush(30) == 0


class KafkaPythonMember(threading.Thread):
    """A kafka-python consumer polling in its own thread (its client is not thread-safe)."""

    def __init__(self, bootstrap: str, group: Group) -> None:
        super().__init__(daemon=True)
        from kafka import KafkaConsumer
        from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group.group_id,
            enable_auto_commit=False,
            partition_assignment_strategy=[StickyPartitionAssignor],
        )
        self.consumer.subscribe(topics=group.topics)
        self.stop = threading.Event()
        self.paused = threading.Event()
        self.held: set[tuple[str, int]] = set()
        self.start()

    def run(self) -> None:
        while not self.stop.is_set():
            if self.paused.is_set() and not self.consumer.paused():
                self.consumer.pause(*self.consumer.assignment())
            self.consumer.poll(100)
            self.held = {(tp.topic, tp.partition) for tp in self.consumer.assignment()}
        self.consumer.close()

    def assignment(self) -> set[tuple[str, int]]:
        return set(self.held)


def start_groups(bootstrap: str) -> None:
    from confluent_kafka import Consumer

    for g in GROUPS:
        for extra in g.members:
            if g.strategy == "kafka-python-sticky":
                g.consumers.append(KafkaPythonMember(bootstrap, g))
                continue
            conf = {
                "bootstrap.servers": bootstrap,
                "group.id": g.group_id,
                "enable.auto.commit": False,
                "partition.assignment.strategy": g.strategy,
                # The tests poll only until the groups settle; the planner then runs for
                # minutes, and a member that does not poll within this interval leaves.
                "max.poll.interval.ms": 86400000,
                **extra,
            }
            c = Consumer(conf)
            c.subscribe([g.topics] if isinstance(g.topics, str) else g.topics)
            g.consumers.append(c)


def held(c: Any) -> set[tuple[str, int]]:
    if isinstance(c, KafkaPythonMember):
        return c.assignment()
    return {(tp.topic, tp.partition) for tp in c.assignment()}


def _complete(g: Group) -> bool:
    parts = [held(c) for c in g.consumers]
    union = set().union(*parts)
    return union == g.expected() and sum(map(len, parts)) == len(union) and all(parts)


def wait_stable(patience: float = 120.0, quiet: float = 4.0) -> None:
    """Poll every librdkafka consumer until every group holds all its partitions, each member
    some, and nothing changed for `quiet` seconds."""
    deadline = time.monotonic() + patience
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        for g in GROUPS:
            for c in g.consumers:
                if not isinstance(c, KafkaPythonMember):
                    c.poll(0.05)
        state = [[sorted(held(c)) for c in g.consumers] for g in GROUPS]
        if state != last:
            last, since = state, time.monotonic()
        elif all(map(_complete, GROUPS)) and time.monotonic() - since > quiet:
            return
    raise AssertionError(f"groups did not settle: {last}")


def commit_offsets() -> None:
    from confluent_kafka import TopicPartition

    for g in GROUPS:
        if g.strategy == "kafka-python-sticky":
            continue  # never committed: null committed offsets
        c = g.consumers[0]
        offsets = [
            TopicPartition(t, p, committed(t, p))
            for t, p in sorted(g.expected())
            if committed(t, p) is not None
        ]
        c.commit(offsets=offsets, asynchronous=False)


def pause_fetching() -> None:
    """Stop fetching once the groups have settled; the members stay in their groups.

    An idle consumer re-fetches as soon as the broker answers, and a broker that answers an
    empty fetch at once keeps the machine's cores busy: the planner run beside them then
    takes ten times longer.
    """
    for g in GROUPS:
        for c in g.consumers:
            if isinstance(c, KafkaPythonMember):
                c.paused.set()
            else:
                c.pause(c.assignment())


def member_id(c: Any) -> str:
    if isinstance(c, KafkaPythonMember):
        return str(c.consumer._coordinator._generation.member_id)
    return str(c.memberid())


def stop_groups() -> None:
    for g in GROUPS:
        for c in g.consumers:
            if isinstance(c, KafkaPythonMember):
                c.stop.set()
                c.join(10)
            else:
                c.close()
        g.consumers.clear()


def raw_member(
    bootstrap: str,
    group_id: str,
    protocol_type: str,
    protocol: str,
    metadata: bytes,
    assignment: bytes,
) -> Any:
    """A one-member group joined with raw JoinGroup and SyncGroup requests: any protocol type
    and any metadata bytes (a Kafka Connect worker, or a client writing garbage). Returns the
    admin client holding the session (close it to let the group expire)."""
    from kafka.admin import KafkaAdminClient
    from kafka.protocol.consumer.group import JoinGroupRequest, SyncGroupRequest

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    manager = admin._manager

    async def join() -> None:
        coordinator = await admin._find_coordinator_id(group_id)
        member_id = ""
        for _ in range(3):
            request = JoinGroupRequest(
                group_id=group_id,
                session_timeout_ms=60000,
                rebalance_timeout_ms=60000,
                member_id=member_id,
                group_instance_id=None,
                protocol_type=protocol_type,
                protocols=[
                    JoinGroupRequest.JoinGroupRequestProtocol(name=protocol, metadata=metadata)
                ],
            )
            r = await manager.send(request, node_id=coordinator)
            member_id = r.member_id
            if r.error_code == 79:  # MEMBER_ID_REQUIRED: join again with the given id
                continue
            assert r.error_code == 0, r
            sync = SyncGroupRequest(
                group_id=group_id,
                generation_id=r.generation_id,
                member_id=member_id,
                group_instance_id=None,
                protocol_type=protocol_type,
                protocol_name=protocol,
                assignments=[
                    SyncGroupRequest.SyncGroupRequestAssignment(
                        member_id=member_id, assignment=assignment
                    )
                ],
            )
            s = await manager.send(sync, node_id=coordinator)
            assert s.error_code == 0, s
            return
        raise AssertionError("JoinGroup kept asking for a member id")

    manager.run(join)
    return admin
