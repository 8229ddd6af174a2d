"""`describe`'s member columns, named as `kafka-consumer-groups.sh --describe --members
--verbose` names the same things, with each member's host and client id when the snapshot
has them (`subscriptions.client_host`, `client_id`) and `-` when it does not."""

from __future__ import annotations

import json
from typing import Any

from jobs.tables.group_view import (
    ASSIGNED_HEADERS,
    MEMBERS_HEADERS,
    build_view,
    render_json,
    render_table,
)


def member(mid: str, **extra: Any) -> dict[str, Any]:
    return {
        "group_id": "g",
        "member_id": mid,
        "group_instance_id": None,
        "client_rack": None,
        "topics": ["t"],
        "topic_pattern": None,
        "assignment_strategies": ["range"],
        "generation": None,
        **extra,
    }


def tables() -> dict[str, list[dict[str, Any]]]:
    rows = [
        {"group_id": "g", "strategy": "range", "member_id": m, "group_instance_id": None,
         "topic": "t", "partition": p, "previous_member_id": None, "rebalance_round": 1,
         "lag": None}
        for m, p in (("a", 0), ("a", 1), ("b", 2))
    ]  # fmt: skip
    return {"assignments": rows, "balance_metrics": [{"group_id": "g", "strategy": "range"}]}


def header(text: str, first: str) -> list[str]:
    line = next(x for x in text.splitlines() if x.strip().startswith(first))
    return line.split()


def row(text: str, section: str, mid: str) -> list[str]:
    part = text.split(section, 1)[1]
    return next(x for x in part.splitlines() if x.strip().startswith(mid + " ")).split()


def test_the_columns_are_kafka_consumer_groups_names() -> None:
    assert ASSIGNED_HEADERS[:4] == ("CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
    assert ASSIGNED_HEADERS[-1] == "ASSIGNMENT"
    assert MEMBERS_HEADERS[:4] == ("CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID")
    members = [member("a", client_id="app-1", client_host="/10.0.0.1"), member("b")]
    text = render_table(build_view("g", tables(), members), width=200)
    assert header(text.split("MEMBERS", 1)[1], "CONSUMER-ID") == list(MEMBERS_HEADERS)
    assert header(text.split("STRATEGY range", 1)[1], "CONSUMER-ID") == list(ASSIGNED_HEADERS)


def test_host_and_client_id_are_shown_when_present_else_a_dash() -> None:
    members = [member("a", client_id="app-1", client_host="/10.0.0.1"), member("b")]
    text = render_table(build_view("g", tables(), members), width=200)
    assert row(text, "MEMBERS", "a")[:4] == ["a", "-", "/10.0.0.1", "app-1"]
    assert row(text, "MEMBERS", "b")[:4] == ["b", "-", "-", "-"]
    assert row(text, "STRATEGY range", "a")[:4] == ["a", "/10.0.0.1", "app-1", "2"]
    assert row(text, "STRATEGY range", "b")[:4] == ["b", "-", "-", "1"]


def test_a_snapshot_without_the_columns_is_still_described() -> None:
    view = build_view("g", tables(), [member("a"), member("b")])  # no client_* keys at all
    doc = json.loads(render_json(view))
    assert [(m["client_id"], m["client_host"]) for m in doc["members"]] == [(None, None)] * 2
    s = doc["strategies"][0]["members"]
    assert [(m["client_id"], m["client_host"]) for m in s] == [(None, None)] * 2
    assert row(render_table(view, width=200), "STRATEGY range", "a")[:3] == ["a", "-", "-"]


def test_without_the_snapshot_the_assigned_members_show_dashes() -> None:
    text = render_table(build_view("g", tables(), None), width=200)
    assert row(text, "STRATEGY range", "b")[:4] == ["b", "-", "-", "1"]
