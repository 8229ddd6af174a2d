"""The one-line next step of a group's move to the consumer protocol: the `recommendations`
table's `migration_next_step` (docs/migration.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from assignors.migration.conditions import (
    ASSIGNMENT_USER_DATA,
    GROUP_TOO_LARGE,
    INCONSISTENT_GROUP_PROTOCOL,
    MIGRATION_POLICY,
)
from assignors.migration.paths import CLASSIC_TO_CONSUMER, EAGER_TO_COOPERATIVE

FIRST: Final[Mapping[str, str]] = {
    MIGRATION_POLICY: "set group.consumer.migration.policy to bidirectional or upgrade on the"
    " brokers first",
    ASSIGNMENT_USER_DATA: "move off the custom assignor first",
    GROUP_TOO_LARGE: "raise group.consumer.max.size on the brokers, or shrink the group, first",
    INCONSISTENT_GROUP_PROTOCOL: "take the two-bounce path",
}
"""What clears each blocker."""


def _cost(row: Mapping[str, object]) -> str:
    moved, paused = row.get("bounce_moved"), row.get("bounce_paused")
    if moved is None or paused is None:
        return ""
    return f", moves {moved} partitions, pauses {paused} over the bounce"


def next_step(rows: Sequence[Mapping[str, object]]) -> str | None:
    """The group's next step from its `migrations` rows (None: no rows).

    >>> next_step([{"path": "classic_to_consumer", "ready": True, "blockers": [],
    ...   "warnings": [], "landing_assignor": "uniform", "bounce_moved": 12,
    ...   "bounce_paused": 30, "steps": 3, "detail": ""}])
    ... # doctest: +NORMALIZE_WHITESPACE
    'ready: migrate to the consumer protocol (lands on uniform, moves 12 partitions,
    pauses 30 over the bounce)'
    >>> next_step([{"path": "classic_to_consumer", "ready": False,
    ...   "blockers": ["ASSIGNMENT_USER_DATA"], "warnings": []}])
    'blocked by ASSIGNMENT_USER_DATA: move off the custom assignor first'
    """
    by_path = {str(r["path"]): r for r in rows}
    row = by_path.get(CLASSIC_TO_CONSUMER)
    if row is None:
        return None
    blockers = [str(b) for b in row.get("blockers") or ()]  # type: ignore[attr-defined]
    warnings = [str(w) for w in row.get("warnings") or ()]  # type: ignore[attr-defined]
    if blockers:
        text = f"blocked by {', '.join(blockers)}: {FIRST[blockers[0]]}"
        eager = by_path.get(EAGER_TO_COOPERATIVE)
        if eager is not None:
            text += (
                "; meanwhile the two-bounce upgrade to cooperative-sticky"
                f" ({_cost(eager).removeprefix(', ') or 'not costed'})"
            )
        return text
    head = "ready" if not warnings else f"ready, with {', '.join(warnings)}"
    landing = row.get("landing_assignor")
    if str(row.get("detail", "")).startswith("mixed group"):
        n = row.get("steps")
        members = "member" if n == 1 else "members"
        return (
            f"{head}: finish the migration: restart the {n} classic {members}"
            f" with group.protocol=consumer (on {landing}{_cost(row)})"
        )
    return f"{head}: migrate to the consumer protocol (lands on {landing}{_cost(row)})"
