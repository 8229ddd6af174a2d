"""ConsumerGroupDescribe (API key 69) as Kafka's ConsumerGroupDescribeRequest.json and
ConsumerGroupDescribeResponse.json define it (versions 0-1, flexible in every version).

The expected bytes are written out here field by field with struct, independently of the
exporter's encoder: a compact string or array is its length plus one as an unsigned varint,
a nullable one is 0 for null, every struct ends with a tagged-field section (a varint count),
a UUID is 16 raw bytes. Version 1 of the response appends MemberType (int8) to each member.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

import pytest

from jobs.export import protocol as p

VERSIONS = range(p.CONSUMER_GROUP_DESCRIBE_VERSIONS[0], p.CONSUMER_GROUP_DESCRIBE_VERSIONS[1] + 1)
ORDERS_ID = "6f1c2a4e-8d3b-4c1a-9e2f-0a1b2c3d4e5f"
AUDIT_ID = "00000000-0000-0000-0000-0000000000aa"


def uvarint(n: int) -> bytes:
    out = b""
    while True:
        if n < 0x80:
            return out + bytes([n])
        out += bytes([(n & 0x7F) | 0x80])
        n >>= 7


def cstr(s: str | None) -> bytes:
    if s is None:
        return b"\x00"
    raw = s.encode()
    return uvarint(len(raw) + 1) + raw


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


NO_TAGS = b"\x00"
LONG_GROUP = "g-" + "x" * 200  # a length past 127: a two-byte varint


def test_request_bytes_follow_the_schema() -> None:
    # GroupIds []string, IncludeAuthorizedOperations bool, tagged fields
    want = uvarint(3) + cstr("payments") + cstr(LONG_GROUP) + b"\x01" + NO_TAGS
    assert cstr(LONG_GROUP)[:2] == bytes([0xCB, 0x01])  # 203 = 0x4B | 0x80, then 1
    for version in VERSIONS:  # v1's request is v0's
        req = p.ConsumerGroupDescribeRequest(["payments", LONG_GROUP], True)
        assert p.encode_consumer_group_describe_request(req, version) == want
        assert p.decode_consumer_group_describe_request(want, version) == req


def _assignment(topics: list[tuple[str, str, list[int]]], extra_tags: bytes = NO_TAGS) -> bytes:
    # Assignment: TopicPartitions [TopicId uuid, TopicName string, Partitions []int32, tags],
    # then the Assignment struct's own tags
    out = uvarint(len(topics) + 1)
    for topic_id, name, parts in topics:
        out += uuid.UUID(topic_id).bytes + cstr(name) + uvarint(len(parts) + 1)
        out += b"".join(i32(x) for x in parts) + NO_TAGS
    return out + extra_tags


def response_bytes(version: int, member_tags: bytes = NO_TAGS) -> bytes:
    member_a = (
        cstr("m-a")  # MemberId
        + cstr("static-a")  # InstanceId (nullable)
        + cstr("rack-1")  # RackId (nullable)
        + i32(7)  # MemberEpoch
        + cstr("client-a")  # ClientId
        + cstr("/10.0.0.1")  # ClientHost
        + uvarint(3)
        + cstr("orders")
        + cstr("audit")  # SubscribedTopicNames
        + cstr(None)  # SubscribedTopicRegex (nullable)
        + _assignment([(ORDERS_ID, "orders", [0, 2]), (AUDIT_ID, "audit", [1])])  # Assignment
        + _assignment([(ORDERS_ID, "orders", [0])])  # TargetAssignment
        + (i8(1) if version >= 1 else b"")  # MemberType, v1+
        + member_tags
    )
    member_b = (
        cstr("m-b")
        + cstr(None)
        + cstr(None)
        + i32(6)
        + cstr("client-b")
        + cstr("/10.0.0.2")
        + uvarint(1)  # no names: a regex subscription
        + cstr("orders.*")
        + _assignment([(ORDERS_ID, "orders", [1])])
        + _assignment([])
        + (i8(0) if version >= 1 else b"")
        + NO_TAGS
    )
    group_ok = (
        i16(0)  # ErrorCode
        + cstr(None)  # ErrorMessage (nullable)
        + cstr("payments")  # GroupId
        + cstr("Stable")  # GroupState
        + i32(12)  # GroupEpoch
        + i32(11)  # AssignmentEpoch
        + cstr("uniform")  # AssignorName
        + uvarint(3)
        + member_a
        + member_b  # Members
        + i32(-(2**31))  # AuthorizedOperations
        + NO_TAGS
    )
    group_gone = (
        i16(69)
        + cstr("Group gone is not a consumer group.")
        + cstr("gone")
        + cstr("Dead")
        + i32(-1)
        + i32(-1)
        + cstr("")
        + uvarint(1)
        + i32(-(2**31))
        + NO_TAGS
    )
    return i32(5) + uvarint(3) + group_ok + group_gone + NO_TAGS  # ThrottleTimeMs, Groups, tags


def expected_response(version: int) -> p.ConsumerGroupDescribeResponse:
    a = p.ConsumerGroupMember(
        "m-a",
        "static-a",
        "rack-1",
        7,
        "client-a",
        "/10.0.0.1",
        ["orders", "audit"],
        None,
        [
            p.TopicIdPartitions(ORDERS_ID, "orders", [0, 2]),
            p.TopicIdPartitions(AUDIT_ID, "audit", [1]),
        ],
        [p.TopicIdPartitions(ORDERS_ID, "orders", [0])],
        1 if version >= 1 else -1,
    )
    b = p.ConsumerGroupMember(
        "m-b",
        None,
        None,
        6,
        "client-b",
        "/10.0.0.2",
        [],
        "orders.*",
        [p.TopicIdPartitions(ORDERS_ID, "orders", [1])],
        [],
        0 if version >= 1 else -1,
    )
    return p.ConsumerGroupDescribeResponse(
        5,
        [
            p.ConsumerGroup(0, None, "payments", "Stable", 12, 11, "uniform", [a, b]),
            p.ConsumerGroup(
                69, "Group gone is not a consumer group.", "gone", "Dead", -1, -1, "", []
            ),
        ],
    )


@pytest.mark.parametrize("version", list(VERSIONS))
def test_response_decodes_field_by_field(version: int) -> None:
    assert p.decode_consumer_group_describe_response(
        response_bytes(version), version
    ) == expected_response(version)


@pytest.mark.parametrize("version", list(VERSIONS))
def test_response_encodes_to_the_schema_bytes(version: int) -> None:
    assert p.encode_consumer_group_describe_response(
        expected_response(version), version
    ) == response_bytes(version)


def test_v0_and_v1_differ_by_member_type_only() -> None:
    v0, v1 = response_bytes(0), response_bytes(1)
    assert len(v1) - len(v0) == 2  # one int8 per member
    with pytest.raises(p.DecodeError):
        p.decode_consumer_group_describe_response(v1, 0)  # v1 bytes read as v0: misaligned


def test_unknown_tagged_fields_are_skipped() -> None:
    # A newer broker may add tagged fields: count 1, tag 3, size 2, two bytes.
    tagged = uvarint(1) + uvarint(3) + uvarint(2) + b"\xab\xcd"
    got = p.decode_consumer_group_describe_response(response_bytes(1, member_tags=tagged), 1)
    assert got == expected_response(1)


@pytest.mark.parametrize("cut", [1, 7, 40, 120])
def test_truncated_answer_is_a_decode_error(cut: int) -> None:
    data = response_bytes(1)
    with pytest.raises(p.DecodeError):
        p.decode_consumer_group_describe_response(data[: len(data) - cut], 1)


def test_trailing_bytes_and_unknown_versions_are_refused() -> None:
    with pytest.raises(p.DecodeError):
        p.decode_consumer_group_describe_response(response_bytes(0) + b"\x00", 0)
    with pytest.raises(ValueError, match="v2"):
        p.decode_consumer_group_describe_response(response_bytes(1), 2)
    with pytest.raises(ValueError, match="v2"):
        p.encode_consumer_group_describe_request(p.ConsumerGroupDescribeRequest([]), 2)


def test_kafka_python_frames_and_reads_the_request() -> None:
    """Through kafka-python's own wire parser: request header v2, then the answer read back
    (the generated response registered for API key 69)."""
    from kafka.protocol.parser import KafkaProtocol

    wire = KafkaProtocol(client_id="exporter")
    body = p.encode_consumer_group_describe_request(p.ConsumerGroupDescribeRequest(["payments"]), 1)
    req = p.consumer_group_describe_request(p.ConsumerGroupDescribeRequest(["payments"]))
    req.API_VERSION = 1
    correlation = wire.send_request(req)
    sent = wire.send_bytes()
    # size, api key 69, version 1, correlation id, client id (int16 length), no tags, body
    header = i16(69) + i16(1) + i32(correlation) + i16(8) + b"exporter" + NO_TAGS
    assert sent == i32(len(header) + len(body)) + header + body
    # Response header v1: correlation id, tags (here one unknown tagged field)
    answer = i32(correlation) + uvarint(1) + uvarint(0) + uvarint(1) + b"\x00"
    answer += response_bytes(1)
    [(got_id, response)] = wire.receive_bytes(i32(len(answer)) + answer)
    assert got_id == correlation
    assert response.API_VERSION == 1
    assert response.throttle_time_ms == 5
    assert p.consumer_groups(response) == expected_response(1)


def test_an_answer_that_does_not_decode_is_a_protocol_error() -> None:
    """Trailing or missing bytes: kafka-python's parser reports an undecodable answer (the
    client's RequestFailed), never a partly read one."""
    import kafka.errors as errors
    from kafka.protocol.parser import KafkaProtocol

    for answer_body in (response_bytes(1) + b"\x00", response_bytes(1)[:-7]):
        wire = KafkaProtocol(client_id="exporter")
        req = p.consumer_group_describe_request(p.ConsumerGroupDescribeRequest(["payments"]))
        req.API_VERSION = 1
        correlation = wire.send_request(req)
        answer = i32(correlation) + NO_TAGS + answer_body
        with pytest.raises(errors.KafkaProtocolError):
            wire.receive_bytes(i32(len(answer)) + answer)


def test_null_where_the_schema_forbids_it_is_a_decode_error() -> None:
    # GroupId is not nullable: a compact length of 0 (null) in its place.
    data = response_bytes(0)
    at = data.index(cstr("payments"))
    broken = data[:at] + b"\x00" + data[at + len(cstr("payments")) :]
    with pytest.raises(p.DecodeError):
        p.decode_consumer_group_describe_response(broken, 0)


class _Manager:
    """kafka-python's connection manager as the client uses it, answering every
    ConsumerGroupDescribe with response_bytes() in the version it was sent in."""

    def __init__(self, broker_range: tuple[int, int] | None) -> None:
        from kafka.protocol.broker_version_data import BrokerVersionData

        served = {} if broker_range is None else {69: broker_range}
        self.broker_version_data = BrokerVersionData((4, 0), served)
        self.sent: list[tuple[int, bytes]] = []

    def run(self, coro: Any, *args: Any) -> Any:
        import asyncio

        return asyncio.run(coro(*args))

    async def send(self, request: Any, node_id: int | None, request_timeout_ms: int) -> Any:
        from jobs.export.schemas import ConsumerGroupDescribeResponse

        version = request.API_VERSION
        self.sent.append((version, bytes(request.encode())))
        return ConsumerGroupDescribeResponse.decode(response_bytes(version), version=version)


def _client(manager: _Manager) -> Any:
    from jobs.export.client import Client, Stats

    client = Client.__new__(Client)
    client.bootstrap, client.timeout_ms, client.max_in_flight, client.retries = "b:9092", 1000, 5, 0
    client.stats = Stats()
    client._manager = manager
    return client


@pytest.mark.parametrize(("broker", "sent"), [((0, 1), 1), ((0, 0), 0), ((0, 3), 1)])
def test_the_client_sends_the_highest_version_both_serve(
    broker: tuple[int, int], sent: int
) -> None:
    manager = _Manager(broker)
    client = _client(manager)
    got = client.consumer_group_describe({1: ["payments", "gone"]})
    assert [v for v, _ in manager.sent] == [sent]
    assert client.stats.versions == {"ConsumerGroupDescribe": sent}  # _snapshot.json's
    assert manager.sent[0][1] == uvarint(3) + cstr("payments") + cstr("gone") + b"\x00" + NO_TAGS
    assert got == {g.group_id: g for g in expected_response(sent).groups}
    assert {m.member_type for m in got["payments"].members} == ({1, 0} if sent else {-1})


def test_a_broker_without_consumer_group_describe_is_an_export_error() -> None:
    from jobs.export.client import ExportError

    with pytest.raises(ExportError, match="does not serve ConsumerGroupDescribe"):
        _client(_Manager(None)).consumer_group_describe({1: ["payments"]})
    with pytest.raises(ExportError, match="does not serve ConsumerGroupDescribe"):
        _client(_Manager((2, 3))).consumer_group_describe({1: ["payments"]})


def test_the_schemas_are_shipped_and_generate_both_versions() -> None:
    """The JSON files are package data (an installed exporter loads them), and kafka-python's
    loader reads them as Kafka's: API key 69, versions 0-1, flexible from v0."""
    import fnmatch
    import tomllib
    from pathlib import Path

    from jobs.export import schemas

    here = Path(schemas.__file__).parent
    data = tomllib.loads((here.parents[2] / "pyproject.toml").read_text())
    globs = data["tool"]["setuptools"]["package-data"]["jobs.export.schemas"]
    files = sorted(f.name for f in here.glob("*.json"))
    assert files == ["ConsumerGroupDescribeRequest.json", "ConsumerGroupDescribeResponse.json"]
    assert all(any(fnmatch.fnmatch(f, g) for g in globs) for f in files)
    for cls in (schemas.ConsumerGroupDescribeRequest, schemas.ConsumerGroupDescribeResponse):
        assert (cls.API_KEY, cls.valid_versions, cls.flexible_version_q(0)) == (69, (0, 1), True)
        assert "Apache License, Version 2.0" in cls.__license__
