"""describe's view of a group's `capacity` rows and the recommendation's member count."""

from __future__ import annotations

from typing import Any

from jobs.tables.group_view import build_view, render_json, render_table


def cap(strategy: str, active: int, useful: int) -> dict[str, Any]:
    return {
        "group_id": "g",
        "strategy": strategy,
        "members": 12,
        "active_members": active,
        "max_useful_members": useful,
        "members_for_target": None,
        "target": None,
        "detail": None,
    }


TABLES = {
    "elections": [
        {"group_id": "g", "elected_strategy": "range", "candidate_strategies": [], "error": None}
    ],
    "recommendations": [
        {
            "group_id": "g",
            "current_strategy": "range",
            "recommended_strategy": "cooperative-sticky",
            "reason": "cooperative-sticky: max 3 → 1 partitions per member",
        }
    ],
    "capacity": [cap("cooperative-sticky", 12, 36), cap("range", 8, 8)],
}


def test_the_view_holds_the_rows_in_the_runs_order_and_the_member_count() -> None:
    view = build_view("g", TABLES, None, order=("range", "cooperative-sticky"))
    assert [r["strategy"] for r in view["capacity"]] == ["range", "cooperative-sticky"]
    assert "group_id" not in view["capacity"][0]
    assert view["capacity_note"] == (
        "runs 12 members, 4 of them idle under range: 8 are useful; cooperative-sticky uses all 12"
    )
    assert '"capacity_note"' in render_json(view)


def test_the_table_shows_a_capacity_section_and_the_sentence() -> None:
    text = render_table(build_view("g", TABLES, None), width=200)
    assert "CAPACITY (capacity)" in text
    assert "MAX USEFUL" in text
    assert "4 of them idle under range" in text.split("RECOMMENDATION", 1)[1]


def test_one_strategy_only_and_an_output_without_the_table() -> None:
    view = build_view("g", TABLES, None, strategy="range")
    assert [r["strategy"] for r in view["capacity"]] == ["range"]
    older = build_view("g", {k: v for k, v in TABLES.items() if k != "capacity"}, None)
    assert older["capacity"] == []
    assert older["capacity_note"] is None
    assert "CAPACITY" not in render_table(older, width=200)
