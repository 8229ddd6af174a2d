"""Byte layouts of the consumer protocol, decoded and encoded by the exporter itself.

DescribeGroups returns each member's metadata (its subscription) and assignment as opaque
bytes: the broker never looks inside them. These are Kafka's `ConsumerProtocolSubscription`
(versions 0-3; a newer version is read with the v3 layout, as Java's consumer does: fields are
only ever appended), `ConsumerProtocolAssignment`, and the sticky assignors' user data in two
layouts: Java's and librdkafka's (`StickyAssignorUserData` v1, else v0, no version header; the
cooperative sticky assignor's user data is the generation alone) and kafka-python's (the same
fields behind an int16 version). Encoders exist for tests and for round trips.

Everything here is pure: bytes in, values out, `DecodeError` on anything malformed.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

TopicPartitions = list[tuple[str, list[int]]]


class DecodeError(ValueError):
    """The bytes are not what the layout says (truncated, negative lengths, trailing bytes)."""


class _Reader:
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

    def string(self, nullable: bool = False) -> str | None:
        n = self.int16()
        if n == -1 and nullable:
            return None
        if n < 0:
            raise DecodeError(f"negative string length {n} at byte {self.pos - 2}")
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"string is not UTF-8 at byte {self.pos - n}") from exc

    def text(self) -> str:
        s = self.string()
        assert s is not None  # invariant: not nullable
        return s

    def bytes_(self) -> bytes | None:
        n = self.int32()
        if n == -1:
            return None
        if n < 0:
            raise DecodeError(f"negative bytes length {n}")
        return self.take(n)

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

    def done(self) -> bool:
        return self.pos == len(self.data)

    def end(self) -> None:
        if not self.done():
            raise DecodeError(f"{len(self.data) - self.pos} unexpected trailing bytes")


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int16(self, v: int) -> None:
        self.parts.append(struct.pack(">h", v))

    def int32(self, v: int) -> None:
        self.parts.append(struct.pack(">i", v))

    def string(self, s: str | None) -> None:
        if s is None:
            self.int16(-1)
            return
        raw = s.encode("utf-8")
        self.int16(len(raw))
        self.parts.append(raw)

    def bytes_(self, b: bytes | None) -> None:
        if b is None:
            self.int32(-1)
            return
        self.int32(len(b))
        self.parts.append(b)

    def topic_partitions(self, tps: TopicPartitions) -> None:
        self.int32(len(tps))
        for topic, parts in tps:
            self.string(topic)
            self.int32(len(parts))
            for p in parts:
                self.int32(p)

    def value(self) -> bytes:
        return b"".join(self.parts)


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
    r = _Reader(data)
    version = r.int16()
    if version < 0:
        raise DecodeError(f"subscription version {version}")
    topics = [r.text() for _ in range(r.count())]
    user_data = r.bytes_()
    owned: TopicPartitions = []
    generation, rack = -1, None
    # Fields are appended version by version; a field absent at the end of the bytes keeps its
    # default (Java reads v1+ tolerantly the same way: older writers of a version stop early).
    if version >= 1 and not r.done():
        owned = r.topic_partitions()
    if version >= 2 and not r.done():
        generation = r.int32()
    if version >= 3 and not r.done():
        rack = r.string(nullable=True)
    if version <= 3:
        r.end()  # newer versions may append fields we do not know: read as v3, ignore the rest
    return Subscription(version, topics, user_data, owned, generation, rack)


def encode_subscription(s: Subscription) -> bytes:
    w = _Writer()
    w.int16(s.version)
    w.int32(len(s.topics))
    for t in s.topics:
        w.string(t)
    w.bytes_(s.user_data)
    if s.version >= 1:
        w.topic_partitions(s.owned_partitions)
    if s.version >= 2:
        w.int32(s.generation_id)
    if s.version >= 3:
        w.string(s.rack_id)
    return w.value()


# --- ConsumerProtocolAssignment (what the leader gave a member) ---


@dataclass(frozen=True)
class Assignment:
    version: int
    partitions: TopicPartitions
    user_data: bytes | None = None


def decode_assignment(data: bytes) -> Assignment:
    r = _Reader(data)
    version = r.int16()
    if version < 0:
        raise DecodeError(f"assignment version {version}")
    partitions = r.topic_partitions()
    user_data = r.bytes_() if not r.done() else None
    if version <= 3:
        r.end()
    return Assignment(version, partitions, user_data)


def encode_assignment(a: Assignment) -> bytes:
    w = _Writer()
    w.int16(a.version)
    w.topic_partitions(a.partitions)
    w.bytes_(a.user_data)
    return w.value()


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
# A flexible API in every version: compact strings and arrays (lengths as unsigned varints,
# plus one), a tagged-field section after every struct, UUIDs as 16 raw bytes. Versions 0-1
# (Kafka's ConsumerGroupDescribeRequest/Response.json); v1 only appends MemberType to each
# member in the response (KIP-1099), the request is the same. kafka-python 3.0.12 has no
# schema for this API, so the exporter writes and reads it here.

CONSUMER_GROUP_DESCRIBE = 69
CONSUMER_GROUP_DESCRIBE_VERSIONS = (0, 1)


class _CompactReader(_Reader):
    def int8(self) -> int:
        return int(struct.unpack(">b", self.take(1))[0])

    def boolean(self) -> bool:
        return self.take(1) != b"\x00"

    def uvarint(self) -> int:
        value, shift = 0, 0
        while True:
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 28:
                raise DecodeError(f"varint longer than 5 bytes at byte {self.pos}")

    def compact_string(self, nullable: bool = False) -> str | None:
        n = self.uvarint() - 1
        if n == -1:
            if nullable:
                return None
            raise DecodeError(f"null string at byte {self.pos - 1}")
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"string is not UTF-8 at byte {self.pos - n}") from exc

    def compact_text(self) -> str:
        s = self.compact_string()
        assert s is not None  # invariant: not nullable
        return s

    def compact_count(self) -> int:
        n = self.uvarint() - 1
        if n < 0:
            raise DecodeError(f"null array at byte {self.pos - 1}")
        if n > len(self.data) - self.pos:  # every element takes at least one byte
            raise DecodeError(f"array of {n} elements does not fit in {len(self.data)} bytes")
        return n

    def uuid(self) -> str:
        import uuid

        return str(uuid.UUID(bytes=self.take(16)))

    def tags(self) -> None:
        """Skip a tagged-field section: fields a newer writer added are ignored."""
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            self.take(self.uvarint())


class _CompactWriter(_Writer):
    def int8(self, v: int) -> None:
        self.parts.append(struct.pack(">b", v))

    def boolean(self, v: bool) -> None:
        self.parts.append(b"\x01" if v else b"\x00")

    def uvarint(self, v: int) -> None:
        out = bytearray()
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
        self.parts.append(bytes(out))

    def compact_string(self, s: str | None) -> None:
        if s is None:
            self.uvarint(0)
            return
        raw = s.encode("utf-8")
        self.uvarint(len(raw) + 1)
        self.parts.append(raw)

    def compact_count(self, n: int) -> None:
        self.uvarint(n + 1)

    def uuid(self, s: str) -> None:
        import uuid

        self.parts.append(uuid.UUID(s).bytes)

    def tags(self) -> None:
        self.uvarint(0)  # no tagged fields


def _check_version(version: int) -> None:
    lo, hi = CONSUMER_GROUP_DESCRIBE_VERSIONS
    if not lo <= version <= hi:
        raise ValueError(f"ConsumerGroupDescribe v{version} (this exporter reads v{lo}-v{hi})")


@dataclass(frozen=True)
class ConsumerGroupDescribeRequest:
    group_ids: list[str]
    include_authorized_operations: bool = False


def encode_consumer_group_describe_request(r: ConsumerGroupDescribeRequest, version: int) -> bytes:
    _check_version(version)
    w = _CompactWriter()
    w.compact_count(len(r.group_ids))
    for g in r.group_ids:
        w.compact_string(g)
    w.boolean(r.include_authorized_operations)
    w.tags()
    return w.value()


def decode_consumer_group_describe_request(
    data: bytes, version: int
) -> ConsumerGroupDescribeRequest:
    _check_version(version)
    r = _CompactReader(data)
    group_ids = [r.compact_text() for _ in range(r.compact_count())]
    include = r.boolean()
    r.tags()
    r.end()
    return ConsumerGroupDescribeRequest(group_ids, include)


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
    member_type: int = -1  # v1+: 0 a classic-protocol member, 1 a consumer-protocol one


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


def _read_assignment(r: _CompactReader) -> list[TopicIdPartitions]:
    out = []
    for _ in range(r.compact_count()):
        topic_id = r.uuid()
        name = r.compact_text()
        parts = [r.int32() for _ in range(r.compact_count())]
        r.tags()
        out.append(TopicIdPartitions(topic_id, name, parts))
    r.tags()  # the Assignment struct's own tagged fields
    return out


def _write_assignment(w: _CompactWriter, tps: list[TopicIdPartitions]) -> None:
    w.compact_count(len(tps))
    for tp in tps:
        w.uuid(tp.topic_id)
        w.compact_string(tp.topic_name)
        w.compact_count(len(tp.partitions))
        for p in tp.partitions:
            w.int32(p)
        w.tags()
    w.tags()


def decode_consumer_group_describe_response(
    data: bytes, version: int
) -> ConsumerGroupDescribeResponse:
    _check_version(version)
    r = _CompactReader(data)
    throttle = r.int32()
    groups = []
    for _ in range(r.compact_count()):
        error_code = r.int16()
        error_message = r.compact_string(nullable=True)
        group_id = r.compact_text()
        state = r.compact_text()
        group_epoch = r.int32()
        assignment_epoch = r.int32()
        assignor = r.compact_text()
        members = []
        for _ in range(r.compact_count()):
            member_id = r.compact_text()
            instance_id = r.compact_string(nullable=True)
            rack_id = r.compact_string(nullable=True)
            epoch = r.int32()
            client_id = r.compact_text()
            client_host = r.compact_text()
            names = [r.compact_text() for _ in range(r.compact_count())]
            regex = r.compact_string(nullable=True)
            assignment = _read_assignment(r)
            target = _read_assignment(r)
            member_type = r.int8() if version >= 1 else -1
            r.tags()
            members.append(
                ConsumerGroupMember(
                    member_id,
                    instance_id,
                    rack_id,
                    epoch,
                    client_id,
                    client_host,
                    names,
                    regex,
                    assignment,
                    target,
                    member_type,
                )
            )
        authorized = r.int32()
        r.tags()
        groups.append(
            ConsumerGroup(
                error_code,
                error_message,
                group_id,
                state,
                group_epoch,
                assignment_epoch,
                assignor,
                members,
                authorized,
            )
        )
    r.tags()
    r.end()
    return ConsumerGroupDescribeResponse(throttle, groups)


def encode_consumer_group_describe_response(
    resp: ConsumerGroupDescribeResponse, version: int
) -> bytes:
    _check_version(version)
    w = _CompactWriter()
    w.int32(resp.throttle_time_ms)
    w.compact_count(len(resp.groups))
    for g in resp.groups:
        w.int16(g.error_code)
        w.compact_string(g.error_message)
        w.compact_string(g.group_id)
        w.compact_string(g.group_state)
        w.int32(g.group_epoch)
        w.int32(g.assignment_epoch)
        w.compact_string(g.assignor_name)
        w.compact_count(len(g.members))
        for m in g.members:
            w.compact_string(m.member_id)
            w.compact_string(m.instance_id)
            w.compact_string(m.rack_id)
            w.int32(m.member_epoch)
            w.compact_string(m.client_id)
            w.compact_string(m.client_host)
            w.compact_count(len(m.subscribed_topic_names))
            for t in m.subscribed_topic_names:
                w.compact_string(t)
            w.compact_string(m.subscribed_topic_regex)
            _write_assignment(w, m.assignment)
            _write_assignment(w, m.target_assignment)
            if version >= 1:
                w.int8(m.member_type)
            w.tags()
        w.int32(g.authorized_operations)
        w.tags()
    w.tags()
    return w.value()
