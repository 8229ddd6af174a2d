"""The exporter's own decoders against Kafka's published byte layouts and kafka-python's."""

from __future__ import annotations

import pytest

from jobs.export.protocol import (
    Assignment,
    DecodeError,
    StickyUserData,
    Subscription,
    decode_assignment,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
    encode_sticky_user_data,
    encode_subscription,
    member_generation,
)

# ConsumerProtocolSubscription v3, written out from Kafka's message schema field by field:
# version int16, topics [string], user_data bytes, owned_partitions [topic string,
# partitions [int32]], generation_id int32, rack_id nullable string.
V3 = bytes.fromhex(
    "0003"  # version 3
    "00000001"
    "0001"
    "61"  # topics: ["a"]
    "00000001"
    "78"  # user_data: b"x"
    "00000001"
    "0001"
    "61"
    "00000001"
    "00000001"  # owned: a-1
    "00000004"  # generation 4
    "0001"
    "72"  # rack "r"
)


def test_subscription_v3_matches_the_published_layout() -> None:
    sub = decode_subscription(V3)
    assert sub == Subscription(3, ["a"], b"x", [("a", [1])], 4, "r")
    assert encode_subscription(sub) == V3


def test_subscription_matches_kafka_python_encoding() -> None:
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as Kp

    for version in range(4):
        raw = Kp(
            version=version,
            topics=["t1", "t2"],
            user_data=b"ud",
            owned_partitions=[("t1", [0, 2])],
            generation_id=9,
            rack_id="rk",
        ).encode()
        sub = decode_subscription(raw)
        assert sub.topics == ["t1", "t2"]
        assert sub.user_data == b"ud"
        assert sub.owned_partitions == ([("t1", [0, 2])] if version >= 1 else [])
        assert sub.generation_id == (9 if version >= 2 else -1)
        assert sub.rack_id == ("rk" if version >= 3 else None)
        assert encode_subscription(sub) == raw


def test_newer_subscription_versions_read_as_v3() -> None:
    newer = b"\x00\x05" + V3[2:] + b"\x00\x00\x00\x07"  # an appended future field
    sub = decode_subscription(newer)
    assert (sub.version, sub.generation_id, sub.rack_id) == (5, 4, "r")


def test_null_rack_and_null_user_data() -> None:
    sub = Subscription(3, ["a"], None, [], -1, None)
    assert decode_subscription(encode_subscription(sub)) == sub


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\x00",
        b"\x00\x00\x7f\xff\xff\xff",
        b"\x00\x00\x00\x00\x00\x01\x00\x05ab",
        V3 + b"\x00",
        b"\xff\xff" + V3[2:],
    ],
)
def test_garbage_is_a_decode_error(raw: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_subscription(raw)


def test_assignment_round_trip_and_kafka_python_layout() -> None:
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as Kp

    raw = Kp(version=0, assigned_partitions=[("t", [0, 1]), ("u", [3])], user_data=b"").encode()
    a = decode_assignment(raw)
    assert a == Assignment(0, [("t", [0, 1]), ("u", [3])], b"")
    assert encode_assignment(a) == raw
    # version int16, [topic string, [int32]], user_data bytes
    assert encode_assignment(Assignment(1, [("t", [2])], None)) == bytes.fromhex(
        "0001000000010001740000000100000002ffffffff"
    )


def test_sticky_user_data_java_layouts() -> None:
    # Java's StickyAssignor v1: [topic, [partition]], generation (no version header).
    v1 = bytes.fromhex("0000000100017400000002000000000000000100000005")
    assert decode_sticky_user_data(v1) == StickyUserData("java", [("t", [0, 1])], 5)
    v0 = v1[:-4]
    assert decode_sticky_user_data(v0) == StickyUserData("java", [("t", [0, 1])], None)
    coop = bytes.fromhex("00000007")  # CooperativeStickyAssignor: the generation alone
    assert decode_sticky_user_data(coop).generation == 7
    for u in (StickyUserData("java", [("t", [0])], 3), StickyUserData("java", [], 2)):
        # (an empty v0 body is 4 bytes, read as the cooperative layout: Java writes v1)
        assert decode_sticky_user_data(encode_sticky_user_data(u)) == u


def test_sticky_user_data_kafka_python_layout() -> None:
    from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData

    raw = StickyAssignorUserData([("t", [0, 1]), ("u", [2])], 6).encode()
    u = decode_sticky_user_data(raw)
    assert u == StickyUserData("kafka-python", [("t", [0, 1]), ("u", [2])], 6)
    assert encode_sticky_user_data(u) == raw


def test_sticky_user_data_garbage() -> None:
    with pytest.raises(DecodeError):
        decode_sticky_user_data(b"\x01\x02\x03")


def test_member_generation_sources() -> None:
    ud = encode_sticky_user_data(StickyUserData("kafka-python", [("t", [0])], 8))
    assert member_generation(Subscription(2, ["t"], None, [], 11), "range") == 11
    assert member_generation(Subscription(0, ["t"], ud), "sticky") == 8
    assert member_generation(Subscription(0, ["t"], ud), "range") is None
    assert member_generation(Subscription(0, ["t"], b"\x01"), "sticky") is None
    assert member_generation(Subscription(1, ["t"], None), "cooperative-sticky") is None
