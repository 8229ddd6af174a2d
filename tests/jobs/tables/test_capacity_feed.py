"""capacity.json: each group's entry is the capacity row of the strategy it runs."""

from __future__ import annotations

import json
from typing import Any

from jobs.tables.capacity_feed import FEED_VERSION, capacity_feed, elected_rows


def row(group: str, strategy: str, useful: int | None, needed: int | None) -> dict[str, Any]:
    return {
        "group_id": group,
        "strategy": strategy,
        "members": 12,
        "active_members": 8,
        "max_useful_members": useful,
        "members_for_target": needed,
        "target": "max_member_lag:1000",
        "detail": None,
    }


def test_the_elected_row_wins_and_names_the_elected_strategy() -> None:
    rows = [row("g", "range", 8, 3), row("g", "elected", 8, 3), row("g", "roundrobin", 12, 2)]
    feed = capacity_feed(rows, {"g": "range"}, ds="2026-12-02", target="max_member_lag:1000")
    assert feed == {
        "version": FEED_VERSION,
        "ds": "2026-12-02",
        "target": "max_member_lag:1000",
        "groups": {
            "g": {
                "strategy": "range",
                "members": 12,
                "activeMembers": 8,
                "minReplicaCount": 3,
                "maxReplicaCount": 8,
                "detail": None,
            }
        },
    }
    json.dumps(feed, allow_nan=False)  # plain JSON


def test_without_elected_planned_the_elected_strategys_own_row() -> None:
    rows = [row("g", "range", 8, None), row("g", "roundrobin", 12, None)]
    ((chosen, name),) = elected_rows(rows, {"g": "roundrobin"}).values()
    assert (name, chosen["max_useful_members"]) == ("roundrobin", 12)


def test_a_group_with_no_row_of_its_strategy_has_no_entry() -> None:
    rows = [row("g", "range", 8, None), row("h", "range", 4, None)]
    feed = capacity_feed(rows, {"g": "sticky", "h": None}, ds=None, target=None)
    assert feed["groups"] == {}
