"""`describe` and `plan-group`'s MIGRATION section: the group's paths, their steps and costs,
and the recommendation's next step."""

from __future__ import annotations

from typing import Any

from jobs.tables.group_view import build_view, render_table


def path(name: str, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "group_id": "g", "path": name, "ready": True, "blockers": [], "warnings": [],
        "from_strategy": "range", "landing_assignor": "server-range", "moved_at_conversion": 0,
        "bounce_moved": 8, "bounce_paused": 10, "first_bounce_moved": None,
        "first_bounce_paused": None, "steps": 2, "detail": "2 restarts, 4 rebalances",
    }  # fmt: skip
    row.update(kw)
    return row


TABLES = {
    "migrations": [
        path(
            "eager_to_cooperative",
            landing_assignor="cooperative-sticky",
            steps=4,
            bounce_moved=16,
            bounce_paused=22,
            first_bounce_moved=8,
            first_bounce_paused=14,
            moved_at_conversion=None,
            detail="bounce 1: [cooperative-sticky, range]",
        ),
        path("classic_to_consumer"),
    ],
    "recommendations": [
        {
            "group_id": "g",
            "current_strategy": "range",
            "recommended_strategy": "range",
            "reason": "already the best",
            "migration_next_step": "ready: migrate to the consumer protocol (lands on"
            " server-range, moves 8 partitions, pauses 10 over the bounce)",
        }
    ],
}


def test_the_view_lists_the_paths_in_order() -> None:
    view = build_view("g", TABLES, None)
    assert [r["path"] for r in view["migrations"]] == [
        "classic_to_consumer",
        "eager_to_cooperative",
    ]


def test_the_table_shows_steps_costs_and_the_next_step() -> None:
    text = render_table(build_view("g", TABLES, None), width=200)
    section = text.split("MIGRATION TO THE CONSUMER PROTOCOL (migrations)\n", 1)[1]
    assert section.splitlines()[0].strip().startswith("ready: migrate to the consumer protocol")
    assert "22 (14 in bounce 1)" in section
    assert "classic_to_consumer: 2 restarts, 4 rebalances" in section


def test_no_section_without_rows() -> None:
    older = {k: v for k, v in TABLES.items() if k != "migrations"}
    view = build_view("g", older, None)
    assert view["migrations"] == []
    assert "MIGRATION" not in render_table(view, width=200)
