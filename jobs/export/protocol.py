"""The consumer protocol's byte layouts and ConsumerGroupDescribe, as the exporter reads them.

DescribeGroups returns each member's metadata (its subscription) and assignment as opaque
bytes: the broker never looks inside them. They are Kafka's `ConsumerProtocolSubscription`
and `ConsumerProtocolAssignment` (versions 0-3), read and written with the messages
kafka-python generates from Kafka's schemas (kafka.protocol.consumer.metadata). Around them,
what Java's consumer does and kafka-python's decoder does not: a newer version is read with
the v3 layout (fields are only ever appended), a writer that stops early after a field keeps
the later ones at their defaults, and bytes left over are refused. ConsumerGroupDescribe
(KIP-848 groups) comes from jobs/export/schemas/ the same way.

The sticky assignors' user data has no schema of Kafka's (Java writes it with a hand-made
struct), so its layouts stay written out here: Java's and librdkafka's (`StickyAssignorUserData`
v1, else v0, no version header; the cooperative sticky assignor's user data is the generation
alone) and kafka-python's (the same fields behind an int16 version).

Everything here is pure: bytes in, values out, `DecodeError` on anything malformed. Encoders
exist for tests and for round trips.
"""

from __future__ import annotations

import struct
import uuid
from dataclasses import dataclass, field
from typing import Any

TopicPartitions = list[tuple[str, list[int]]]

# What kafka-python's generated decoders raise on bytes that do not fit the layout.
_UNDECODABLE = (ValueError, struct.error, IndexError, TypeError)


class DecodeError(ValueError):
    """The bytes are not what the layout says (truncated, negative lengths, trailing bytes)."""


class _Reader:
    """The sticky user data's layouts: int16, int32, strings and [topic, [partition]]."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise DecodeError(f"truncated at byte {self.pos} (needs {n} more)")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def int16(self) -> int:
        return int(struct.unpack(">h", self.take(2))[0])

    def int32(self) -> int:
        return int(struct.unpack(">i", self.take(4))[0])

    def text(self) -> str:
        n = self.int16()
        if n < 0:
            raise DecodeError(f"negative string length {n} at byte {self.pos - 2}")
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"string is not UTF-8 at byte {self.pos - n}") from exc

    def count(self) -> int:
        n = self.int32()
        if n < -1:
            raise DecodeError(f"negative array length {n} at byte {self.pos - 4}")
        # Every element takes at least 2 bytes: a length beyond that is garbage, not a huge
        # allocation to attempt.
        if n * 2 > len(self.data) - self.pos:
            raise DecodeError(f"array of {n} elements does not fit in {len(self.data)} bytes")
        return max(n, 0)

    def topic_partitions(self) -> TopicPartitions:
        out: TopicPartitions = []
        for _ in range(self.count()):
            topic = self.text()
            out.append((topic, [self.int32() for _ in range(self.count())]))
        return out

    def end(self) -> None:
        if self.pos != len(self.data):
            raise DecodeError(f"{len(self.data) - self.pos} unexpected trailing bytes")


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int16(self, v: int) -> None:
        self.parts.append(struct.pack(">h", v))

    def int32(self, v: int) -> None:
        self.parts.append(struct.pack(">i", v))

    def topic_partitions(self, tps: TopicPartitions) -> None:
        self.int32(len(tps))
        for topic, parts in tps:
            raw = topic.encode("utf-8")
            self.int16(len(raw))
            self.parts.append(raw)
            self.int32(len(parts))
            for p in parts:
                self.int32(p)

    def value(self) -> bytes:
        return b"".join(self.parts)


# --- kafka-python's generated messages, read strictly ---


def _version_of(data: bytes, what: str) -> int:
    if len(data) < 2:
        raise DecodeError(f"{what}: {len(data)} bytes, no version")
    version = int(struct.unpack_from(">h", data)[0])
    if version < 0:
        raise DecodeError(f"{what} version {version}")
    return version


def _why(exc: BaseException) -> str:
    return f"truncated ({exc})" if isinstance(exc, struct.error | IndexError) else str(exc)


def _decode_exactly(cls: Any, data: bytes, start: int, layout: int, flexible: bool) -> Any:
    """`data` from byte `start` as `cls` version `layout`, and how many bytes are left over.

    kafka-python's compiled decoder (the one its connections use) does not check a length
    against the bytes: it reads what is there and moves on, so a length past the end shows as
    an end position past the end, never as a value of its own. DecodeError then, or when
    the bytes do not fit the layout at all."""
    read = cls._struct.compiled_decode_from(
        layout, compact=flexible, tagged=flexible, data_class=cls
    )
    try:
        msg, pos = read(memoryview(data), start)
    except _UNDECODABLE as exc:
        raise DecodeError(_why(exc)) from exc
    if pos > len(data):
        raise DecodeError(f"truncated: {pos - len(data)} bytes short of the layout")
    return msg, len(data) - pos


def _text(value: str | None, what: str) -> str:
    if value is None:  # kafka-python reads a negative length as null; the schema forbids it
        raise DecodeError(f"null {what}")
    return value


def _tps(rows: Any, what: str) -> TopicPartitions:
    """[topic, [partition]] from a generated TopicPartition array (a null array is empty, as
    in Java's reader)."""
    return [(_text(tp.topic, what), list(tp.partitions or [])) for tp in rows or []]


# --- ConsumerProtocolSubscription (a member's metadata in JoinGroup / DescribeGroups) ---


@dataclass(frozen=True)
class Subscription:
    version: int
    topics: list[str]
    user_data: bytes | None = None
    owned_partitions: TopicPartitions = field(default_factory=list)
    generation_id: int = -1  # v2+; -1 = not sent
    rack_id: str | None = None  # v3+


def decode_subscription(data: bytes) -> Subscription:
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as Wire

    version = _version_of(data, "subscription")
    newest = min(version, Wire.max_version)
    # A writer of version v that stops after a field: the layout of the version that ends
    # there reads all the bytes (every field takes at least two, so at most one does). A
    # version newer than ours may append fields: its v3 part is read, the rest ignored.
    first: DecodeError | None = None
    for layout in range(newest, -1, -1):
        try:
            msg, left = _decode_exactly(Wire, data, 2, layout, False)
        except DecodeError as exc:
            first = first or exc
            continue
        if left == 0 or (layout == newest and version > newest):
            break
        first = first or DecodeError(f"{left} unexpected trailing bytes")
    else:
        assert first is not None  # invariant: the loop ran at least once
        raise first
    return Subscription(
        version,
        [_text(t, "topic name") for t in msg.topics or []],
        None if msg.user_data is None else bytes(msg.user_data),
        _tps(getattr(msg, "owned_partitions", None), "owned topic name") if layout >= 1 else [],
        int(msg.generation_id) if layout >= 2 else -1,
        msg.rack_id if layout >= 3 else None,
    )


def encode_subscription(s: Subscription) -> bytes:
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as Wire

    layout = min(s.version, Wire.max_version)
    body = Wire(
        version=layout,
        topics=list(s.topics),
        user_data=s.user_data,
        owned_partitions=list(s.owned_partitions),
        generation_id=s.generation_id,
        rack_id=s.rack_id,
    ).encode(header=False)
    return struct.pack(">h", s.version) + bytes(body)


# --- ConsumerProtocolAssignment (what the leader gave a member) ---


@dataclass(frozen=True)
class Assignment:
    version: int
    partitions: TopicPartitions
    user_data: bytes | None = None


_NULL_BYTES = struct.pack(">i", -1)


def decode_assignment(data: bytes) -> Assignment:
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as Wire

    version = _version_of(data, "assignment")
    layout = min(version, Wire.max_version)
    try:
        msg, left = _decode_exactly(Wire, data, 2, layout, False)
        if left and version <= Wire.max_version:
            raise DecodeError(f"{left} unexpected trailing bytes")
    except DecodeError as exc:
        # A writer that stops after the partitions sends no user data (null): read as if it
        # had, and only if the partitions then end the bytes exactly.
        try:
            msg, left = _decode_exactly(Wire, data + _NULL_BYTES, 2, layout, False)
        except DecodeError:
            left = -1
        if left != 0:
            raise exc from None
    return Assignment(
        version,
        _tps(msg.assigned_partitions, "assigned topic name"),
        None if msg.user_data is None else bytes(msg.user_data),
    )


def encode_assignment(a: Assignment) -> bytes:
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as Wire

    body = Wire(
        version=min(a.version, Wire.max_version),
        assigned_partitions=list(a.partitions),
        user_data=a.user_data,
    ).encode(header=False)
    return struct.pack(">h", a.version) + bytes(body)


# --- sticky assignors' user data ---


@dataclass(frozen=True)
class StickyUserData:
    layout: str  # "java" (Java and librdkafka), "java-cooperative", "kafka-python"
    previous_assignment: TopicPartitions
    generation: int | None  # None = not encoded (Java's v0)


def _sticky_body(r: _Reader, with_generation: bool) -> tuple[TopicPartitions, int | None]:
    tps = r.topic_partitions()
    generation = r.int32() if with_generation else None
    r.end()
    return tps, generation


def decode_sticky_user_data(data: bytes) -> StickyUserData:
    """Java's StickyAssignor tries v1 then v0 and takes the first that reads all bytes; the
    cooperative sticky assignor sends its generation alone; kafka-python prefixes the v1 body
    with an int16 version. Tried in that order (a kafka-python prefix makes Java's topic
    count at least 65,536, which cannot fit, so the layouts do not shadow each other)."""
    if len(data) == 4:
        return StickyUserData("java-cooperative", [], _Reader(data).int32())
    for with_generation in (True, False):
        try:
            tps, gen = _sticky_body(_Reader(data), with_generation)
            return StickyUserData("java", tps, gen)
        except DecodeError:
            pass
    r = _Reader(data)
    try:
        version = r.int16()
        if version in (0, 1):
            tps, gen = _sticky_body(r, version >= 1)
            return StickyUserData("kafka-python", tps, gen)
    except DecodeError:
        pass
    raise DecodeError("user data is neither Java's, librdkafka's nor kafka-python's sticky layout")


def encode_sticky_user_data(u: StickyUserData) -> bytes:
    w = _Writer()
    if u.layout == "java-cooperative":
        w.int32(-1 if u.generation is None else u.generation)
        return w.value()
    if u.layout == "kafka-python":
        w.int16(0 if u.generation is None else 1)
    w.topic_partitions(u.previous_assignment)
    if u.generation is not None:
        w.int32(u.generation)
    return w.value()


STICKY_FAMILY = frozenset({"sticky", "cooperative-sticky"})


def member_generation(sub: Subscription, protocol: str) -> int | None:
    """The generation of the partitions a member reports owning: subscription v2+ says it;
    otherwise a sticky assignor's user data; otherwise unknown (null)."""
    if sub.version >= 2 and sub.generation_id >= 0:
        return sub.generation_id
    if protocol in STICKY_FAMILY and sub.user_data:
        try:
            gen = decode_sticky_user_data(sub.user_data).generation
        except DecodeError:
            return None
        return gen if gen is not None and gen >= 0 else None
    return None


# --- ConsumerGroupDescribe (API key 69): KIP-848 groups, described by their coordinator ---
#
# The messages jobs/export/schemas/ generates from Kafka's schemas (versions 0-1, flexible in
# every version); v1 only appends MemberType to each member in the response (KIP-1099), the
# request is the same. The client sends the generated request itself; the dataclasses below
# are what the snapshot reads, converted from the generated answer by `consumer_groups`.

CONSUMER_GROUP_DESCRIBE = 69
CONSUMER_GROUP_DESCRIBE_VERSIONS = (0, 1)


def _check_version(version: int) -> None:
    lo, hi = CONSUMER_GROUP_DESCRIBE_VERSIONS
    if not lo <= version <= hi:
        raise ValueError(f"ConsumerGroupDescribe v{version} (this exporter reads v{lo}-v{hi})")


@dataclass(frozen=True)
class ConsumerGroupDescribeRequest:
    group_ids: list[str]
    include_authorized_operations: bool = False


def consumer_group_describe_request(r: ConsumerGroupDescribeRequest) -> Any:
    """The generated request (its version left to kafka-python: the highest both sides serve)."""
    from jobs.export.schemas import ConsumerGroupDescribeRequest as Wire

    return Wire(
        group_ids=list(r.group_ids), include_authorized_operations=r.include_authorized_operations
    )


def encode_consumer_group_describe_request(r: ConsumerGroupDescribeRequest, version: int) -> bytes:
    _check_version(version)
    return bytes(consumer_group_describe_request(r).encode(version=version))


def decode_consumer_group_describe_request(
    data: bytes, version: int
) -> ConsumerGroupDescribeRequest:
    from jobs.export.schemas import ConsumerGroupDescribeRequest as Wire

    _check_version(version)
    msg, left = _decode_exactly(Wire, data, 0, version, True)
    if left:
        raise DecodeError(f"{left} unexpected trailing bytes")
    return ConsumerGroupDescribeRequest(
        [_text(g, "group id") for g in _items(msg.group_ids, "GroupIds")],
        bool(msg.include_authorized_operations),
    )


@dataclass(frozen=True)
class TopicIdPartitions:
    topic_id: str  # UUID text
    topic_name: str
    partitions: list[int]


@dataclass(frozen=True)
class ConsumerGroupMember:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]
    subscribed_topic_regex: str | None
    assignment: list[TopicIdPartitions]
    target_assignment: list[TopicIdPartitions]
    # v1+: 0 a classic-protocol member (of a group being migrated), 1 a consumer-protocol one;
    # -1 unknown. Decoded only: the data contract has no column for it (group_protocol is the
    # group's protocol, which a mixed group's members share).
    member_type: int = -1


@dataclass(frozen=True)
class ConsumerGroup:
    error_code: int
    error_message: str | None
    group_id: str
    group_state: str
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: list[ConsumerGroupMember]
    authorized_operations: int = -(2**31)


@dataclass(frozen=True)
class ConsumerGroupDescribeResponse:
    throttle_time_ms: int
    groups: list[ConsumerGroup]


def _items(value: list[Any] | None, what: str) -> list[Any]:
    if value is None:  # a compact array of length 0: null, which no field here allows
        raise DecodeError(f"null array {what}")
    return value


def _assignment(a: Any) -> list[TopicIdPartitions]:
    return [
        TopicIdPartitions(
            str(tp.topic_id),
            _text(tp.topic_name, "topic name"),
            list(_items(tp.partitions, "Partitions")),
        )
        for tp in _items(a.topic_partitions, "TopicPartitions")
    ]


def consumer_groups(answer: Any) -> ConsumerGroupDescribeResponse:
    """The generated response (any version) as the dataclasses above; DecodeError when a
    field the schema does not let be null is null."""
    version = int(answer.version)
    groups = []
    for g in _items(answer.groups, "Groups"):
        members = [
            ConsumerGroupMember(
                _text(m.member_id, "member id"),
                m.instance_id,
                m.rack_id,
                int(m.member_epoch),
                _text(m.client_id, "client id"),
                _text(m.client_host, "client host"),
                [_text(t, "topic name") for t in _items(m.subscribed_topic_names, "topics")],
                m.subscribed_topic_regex,
                _assignment(m.assignment),
                _assignment(m.target_assignment),
                int(m.member_type) if version >= 1 else -1,
            )
            for m in _items(g.members, "Members")
        ]
        groups.append(
            ConsumerGroup(
                int(g.error_code),
                g.error_message,
                _text(g.group_id, "group id"),
                _text(g.group_state, "group state"),
                int(g.group_epoch),
                int(g.assignment_epoch),
                _text(g.assignor_name, "assignor name"),
                members,
                int(g.authorized_operations),
            )
        )
    return ConsumerGroupDescribeResponse(int(answer.throttle_time_ms), groups)


def decode_consumer_group_describe_response(
    data: bytes, version: int
) -> ConsumerGroupDescribeResponse:
    from jobs.export.schemas import ConsumerGroupDescribeResponse as Wire

    _check_version(version)
    try:
        answer = Wire.decode(data, version=version)
    except _UNDECODABLE as exc:
        raise DecodeError(_why(exc)) from exc
    return consumer_groups(answer)


def encode_consumer_group_describe_response(
    resp: ConsumerGroupDescribeResponse, version: int
) -> bytes:
    from jobs.export.schemas import ConsumerGroupDescribeResponse as Wire

    _check_version(version)
    group_cls = Wire.DescribedGroup
    member_cls = group_cls.Member
    assignment_cls = member_cls.Assignment
    tp_cls = assignment_cls.TopicPartitions

    def assignment(tps: list[TopicIdPartitions]) -> Any:
        return assignment_cls(
            topic_partitions=[
                tp_cls(
                    topic_id=uuid.UUID(tp.topic_id),
                    topic_name=tp.topic_name,
                    partitions=list(tp.partitions),
                )
                for tp in tps
            ]
        )

    answer = Wire(
        version=version,
        throttle_time_ms=resp.throttle_time_ms,
        groups=[
            group_cls(
                error_code=g.error_code,
                error_message=g.error_message,
                group_id=g.group_id,
                group_state=g.group_state,
                group_epoch=g.group_epoch,
                assignment_epoch=g.assignment_epoch,
                assignor_name=g.assignor_name,
                members=[
                    member_cls(
                        member_id=m.member_id,
                        instance_id=m.instance_id,
                        rack_id=m.rack_id,
                        member_epoch=m.member_epoch,
                        client_id=m.client_id,
                        client_host=m.client_host,
                        subscribed_topic_names=list(m.subscribed_topic_names),
                        subscribed_topic_regex=m.subscribed_topic_regex,
                        assignment=assignment(m.assignment),
                        target_assignment=assignment(m.target_assignment),
                        member_type=m.member_type,
                    )
                    for m in g.members
                ],
                authorized_operations=g.authorized_operations,
            )
            for g in resp.groups
        ],
    )
    return bytes(answer.encode(version=version))
