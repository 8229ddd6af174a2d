"""Which client library a member runs, from its client.id and its metadata, and whether its
assignment carries user data (`subscriptions.client_library`, `assignment_user_data`).

The member bytes below are what the libraries sent to a noida-db broker, as DescribeGroups
returned them: a librdkafka 2.16.0 consumer (confluent-kafka 2.16.1, `client.id` left at its
default `rdkafka`) and a kafka-python 3.0.12 one (`kafka-python-3.0.12`), each in a fresh
group on one topic `t` of 4 partitions."""

from __future__ import annotations

import pytest

from jobs.export.client import RawGroup, RawMember
from jobs.export.libraries import client_library, library_of_client_id
from jobs.export.protocol import (
    Assignment,
    StickyUserData,
    Subscription,
    encode_assignment,
    encode_sticky_user_data,
    encode_subscription,
)
from jobs.export.snapshot import Snapshot, _member_rows

# librdkafka: subscription v3, empty (not null) user data, no owned partitions, generation -1,
# an empty rack; the leader's assignment v0 with empty user data.
RDKAFKA_META = "0003000000010001740000000000000000ffffffff0000"
RDKAFKA_ASSIGNMENT = "00000000000100017400000002000000000000000100000000"
# kafka-python: subscription v0 with empty user data; assignment v0 with empty user data.
KAFKA_PYTHON_META = "00000000000100017400000000"
KAFKA_PYTHON_ASSIGNMENT = "00000000000100017400000002000000020000000300000000"


@pytest.mark.parametrize(
    ("client_id", "group", "instance", "library"),
    [
        ("rdkafka", "g", None, "librdkafka"),
        ("rdkafka", "g", "static-1", "librdkafka"),
        ("kafka-python-3.0.12", "g", None, "kafka-python"),
        ("kafka-python-2.0.2", "g", None, "kafka-python"),
        ("kafka-python-2.0.3.dev0", "g", None, "kafka-python"),
        # Java: consumer-<group>-<sequence>, or -<group.instance.id> for a static member
        ("consumer-payments-1", "payments", None, "java"),
        ("consumer-payments-12", "payments", None, "java"),
        ("consumer-payments-static-a", "payments", "static-a", "java"),
        ("consumer-my-group-3", "my-group", None, "java"),
        # not a default shape: no evidence
        ("consumer-payments-0", "payments", None, None),
        ("consumer-payments-x", "payments", None, None),
        ("consumer-payments-1", "payments", "static-a", None),
        ("consumer-billing-1", "payments", None, None),
        ("payments-service", "payments", None, None),
        ("rdkafka-2", "g", None, None),
        ("kafka-python", "g", None, None),
        ("kafka-python-default-group", "g", None, None),
        ("", "g", None, None),
        (None, "g", None, None),
    ],
)
def test_default_client_ids(
    client_id: str | None, group: str, instance: str | None, library: str | None
) -> None:
    assert library_of_client_id(client_id, group, instance) == library
    assert client_library(client_id, group, instance) == library


def test_client_id_wins_over_the_layout() -> None:
    assert client_library("rdkafka", "g", None, "kafka-python") == "librdkafka"
    assert client_library("orders-app", "g", None, "kafka-python") == "kafka-python"
    # Java's and librdkafka's sticky layout is the same bytes: no evidence either way
    assert client_library("orders-app", "g", None, "java") is None
    assert client_library("orders-app", "g", None, None) is None


def _group(members: list[RawMember], protocol: str = "range") -> dict[str, object]:
    snap = Snapshot()
    got = _member_rows(RawGroup("g", 0, "Stable", "consumer", protocol, members), snap)
    assert got is not None
    snap.subscriptions.extend(got[0])
    snap.states["g"] = "Stable"
    return {r["member_id"]: r for r in snap.subscription_rows()}


def test_live_bytes_of_each_library() -> None:
    rows = _group(
        [
            RawMember("m1", None, "rdkafka", "/127.0.0.1", bytes.fromhex(RDKAFKA_META),
                      bytes.fromhex(RDKAFKA_ASSIGNMENT)),
            RawMember("m2", None, "kafka-python-3.0.12", "/127.0.0.1",
                      bytes.fromhex(KAFKA_PYTHON_META), bytes.fromhex(KAFKA_PYTHON_ASSIGNMENT)),
            RawMember("m3", None, "orders-app", "/127.0.0.1", bytes.fromhex(RDKAFKA_META),
                      bytes.fromhex(RDKAFKA_ASSIGNMENT)),
        ]
    )  # fmt: skip
    assert rows["m1"]["client_library"] == "librdkafka"
    assert rows["m2"]["client_library"] == "kafka-python"
    # librdkafka's bytes under a chosen client.id: its layout is no evidence (see exporter.md)
    assert rows["m3"]["client_library"] is None
    assert {r["assignment_user_data"] for r in rows.values()} == {False}
    assert rows["m1"]["group_state"] == "Stable"


def test_kafka_pythons_sticky_layout_names_the_library() -> None:
    user_data = encode_sticky_user_data(StickyUserData("kafka-python", [("t", [0, 2])], 4))
    meta = encode_subscription(Subscription(0, ["t"], user_data))
    java_layout = encode_sticky_user_data(StickyUserData("java", [("t", [1, 3])], 4))
    java_meta = encode_subscription(Subscription(1, ["t"], java_layout, [("t", [1, 3])]))
    assignment = encode_assignment(Assignment(0, [("t", [0, 2])], b""))
    rows = _group(
        [
            RawMember("kp", None, "orders-app", "/h", meta, assignment),
            RawMember("other", None, "orders-app", "/h", java_meta, assignment),
        ],
        "sticky",
    )
    assert rows["kp"]["client_library"] == "kafka-python"
    assert rows["other"]["client_library"] is None
    assert rows["kp"]["generation"] == 4


def test_assignment_user_data_is_true_only_for_non_empty_bytes() -> None:
    meta = bytes.fromhex(KAFKA_PYTHON_META)
    rows = _group(
        [
            RawMember("with", None, "c", "/h", meta,
                      encode_assignment(Assignment(0, [("t", [0])], b"\x00\x01"))),
            RawMember("empty", None, "c", "/h", meta,
                      encode_assignment(Assignment(0, [("t", [1])], b""))),
            RawMember("null", None, "c", "/h", meta,
                      encode_assignment(Assignment(0, [("t", [2])], None))),
            # no SyncGroup answer yet: no assignment bytes, unknown
            RawMember("none", None, "c", "/h", meta, b""),
        ]
    )  # fmt: skip
    assert {m: r["assignment_user_data"] for m, r in rows.items()} == {
        "with": True,
        "empty": False,
        "null": False,
        "none": None,
    }
