"""The member bytes of recorded groups decode to the same rows they always did.

Two sets of fixtures: the bytes real clients left with a real coordinator (recorded by
`python -m tests.jobs.export.record_wire`: librdkafka's range, roundrobin and cooperative-sticky
members, kafka-python's sticky ones), and bytes written out here from Kafka's schemas for the
corners live clients do not reach (every subscription version, a newer version, a writer that
stops early, each sticky user-data layout, ConsumerGroupDescribe v0 and v1, garbage). The
expected rows in wire/expected_rows.json were frozen from the hand-written decoders the
exporter had before it used kafka-python's generated messages (`record_wire --freeze`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jobs.export.client import RawGroup, RawMember
from jobs.export.protocol import decode_consumer_group_describe_response
from jobs.export.snapshot import Snapshot, _consumer_rows, _member_rows
from tests.jobs.export.test_consumer_group_describe import response_bytes, uvarint
from tests.jobs.export.test_consumer_groups_export import cluster
from tests.jobs.export.test_consumer_protocol import V3

HERE = Path(__file__).parent / "wire"
RECORDED = HERE / "classic_members.json"
EXPECTED = HERE / "expected_rows.json"

# Java's StickyAssignor v1 user data: [topic, [partition]], generation 5 (no version header).
JAVA_STICKY_V1 = "0000000100017400000002000000000000000100000005"
# kafka-python's: the same fields behind an int16 version (1), generation 6.
KP_STICKY = "0001" + "00000001" + "000174" + "00000001" + "00000002" + "00000006"


def _sub(version: int, user_data: str | None, tail: str = "") -> str:
    """Subscription `version` to topic "t" with user data (hex), then `tail` (hex)."""
    ud = "ffffffff" if user_data is None else f"{len(user_data) // 2:08x}" + user_data
    return f"{version:04x}" + "00000001" + "000174" + ud + tail


OWNS_T0 = "00000001" + "000174" + "00000001" + "00000000"  # owned/assigned: t-0
ASSIGN_T01 = "0000" + "00000001" + "000174" + "00000002" + "00000000" + "00000001" + "ffffffff"

# (group protocol, metadata hex, assignment hex): each one member of its own group.
WRITTEN: dict[str, tuple[str, str, str]] = {
    "v3-published": ("range", V3.hex(), ASSIGN_T01),
    "v0-no-user-data": ("range", _sub(0, None), ASSIGN_T01),
    "v1-owned": ("range", _sub(1, None, OWNS_T0), ASSIGN_T01),
    "v1-stops-early": ("range", _sub(1, None), ASSIGN_T01),
    "v2-generation": ("cooperative-sticky", _sub(2, None, OWNS_T0 + "00000009"), ASSIGN_T01),
    "v2-stops-early": ("cooperative-sticky", _sub(2, None, OWNS_T0), ASSIGN_T01),
    "v3-null-rack": ("range", _sub(3, "", OWNS_T0 + "ffffffff" + "ffff"), ""),
    "v3-empty-rack": ("range", _sub(3, None, OWNS_T0 + "00000002" + "0000"), ASSIGN_T01),
    "v5-newer": ("range", "0005" + V3.hex()[4:] + "00000007", "0005" + ASSIGN_T01[4:] + "00"),
    "sticky-java-v1": ("sticky", _sub(0, JAVA_STICKY_V1), ASSIGN_T01),
    "sticky-java-v0": ("sticky", _sub(0, JAVA_STICKY_V1[:-8]), ASSIGN_T01),
    "sticky-coop": ("cooperative-sticky", _sub(1, "00000007", OWNS_T0), ASSIGN_T01),
    "sticky-kafka-python": ("sticky", _sub(0, KP_STICKY), ASSIGN_T01),
    "sticky-garbage": ("sticky", _sub(0, "010203"), ASSIGN_T01),
    "assignment-without-user-data": ("range", _sub(0, None), ASSIGN_T01[:-8]),
    "assignment-v1": ("range", _sub(1, None, OWNS_T0), "0001" + ASSIGN_T01[4:]),
    "garbage-trailing-byte": ("range", V3.hex() + "00", ASSIGN_T01),
    "garbage-negative-version": ("range", "ffff" + V3.hex()[4:], ASSIGN_T01),
    "garbage-truncated": ("range", V3.hex()[:-2], ASSIGN_T01),
    "v3-stops-early": ("range", V3.hex()[:-6], ASSIGN_T01),
    "garbage-assignment": ("range", _sub(0, None), ASSIGN_T01 + "00"),
}

# ConsumerGroupDescribe answers: (version, response bytes).
TAGGED = uvarint(1) + uvarint(3) + uvarint(2) + b"\xab\xcd"
CONSUMER: dict[str, tuple[int, bytes]] = {
    "cgd-v0": (0, response_bytes(0)),
    "cgd-v1": (1, response_bytes(1)),
    "cgd-v1-unknown-tags": (1, response_bytes(1, member_tags=TAGGED)),
}


def _classic_groups() -> list[RawGroup]:
    doc = json.loads(RECORDED.read_text())
    groups = [
        RawGroup(
            g["group_id"],
            0,
            g["state"],
            g["protocol_type"],
            g["protocol"],
            [
                RawMember(
                    m["member_id"],
                    m["group_instance_id"],
                    m["client_id"],
                    m["client_host"],
                    bytes.fromhex(m["metadata"]),
                    bytes.fromhex(m["assignment"]),
                )
                for m in g["members"]
            ],
        )
        for g in doc["groups"]
    ]
    for name, (protocol, meta, assignment) in WRITTEN.items():
        member = RawMember(
            f"{name}-m", None, "c", "/127.0.0.1", bytes.fromhex(meta), bytes.fromhex(assignment)
        )
        groups.append(RawGroup(name, 0, "Stable", "consumer", protocol, [member]))
    return groups


# Where a decode error's own words start: the reason names the member, not the exact message.
_REASON = "metadata does not decode as the consumer protocol:"


def rows() -> dict[str, Any]:
    """Every fixture's rows (subscriptions, current_assignment) or skip reason, by group."""
    out: dict[str, Any] = {}
    for g in _classic_groups():
        snap = Snapshot()
        got = _member_rows(g, snap)
        if got is None:
            reason = snap.skipped[g.group_id]
            out[g.group_id] = {"skipped": reason[: reason.index(_REASON) + len(_REASON)]}
        else:
            out[g.group_id] = {"subscriptions": got[0], "current_assignment": got[1]}
    for name, (version, data) in CONSUMER.items():
        answer = decode_consumer_group_describe_response(data, version)
        for g in answer.groups:
            subs, owned, _ = _consumer_rows(cluster(), g, Snapshot())
            out[f"{name}/{g.group_id}"] = {
                "group": [g.error_code, g.group_state, g.group_epoch, g.assignor_name],
                "subscriptions": subs,
                "current_assignment": owned,
            }
    return out


def freeze() -> None:
    EXPECTED.write_text(json.dumps(rows(), indent=1, sort_keys=True) + "\n")
    print(f"{EXPECTED}: {len(rows())} groups")


def test_the_fixtures_cover_every_layout() -> None:
    expected = json.loads(EXPECTED.read_text())
    recorded = json.loads(RECORDED.read_text())["groups"]
    assert {g["protocol"] for g in recorded} >= {
        "range",
        "roundrobin",
        "cooperative-sticky",
        "sticky",
    }
    assert set(expected) == {g["group_id"] for g in recorded} | set(WRITTEN) | {
        f"{n}/{g}" for n in CONSUMER for g in ("payments", "gone")
    }
    skipped = {g for g, r in expected.items() if "skipped" in r}
    assert skipped == {g for g in WRITTEN if g.startswith("garbage-")}


def test_decoded_rows_are_the_frozen_ones() -> None:
    expected = json.loads(EXPECTED.read_text())
    got = json.loads(json.dumps(rows(), sort_keys=True))  # tuples as lists, as frozen
    for group in sorted(expected):
        assert got[group] == expected[group], group
    assert got == expected
