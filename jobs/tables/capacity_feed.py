"""capacity.json: the autoscaler's feed, built from the `capacity` table's rows.

Per planned group, the replica counts of the strategy the group runs (its elected one) as a
KEDA `ScaledObject` takes them (docs/capacity.md): `minReplicaCount` is `members_for_target`
(the fewest members that keep the configured target), `maxReplicaCount` is
`max_useful_members` (a replica beyond it holds no partition). Plain Python over rows, no
pyspark: the job's driver feeds it the small table it collected, and `describe` the rows of
one group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from assignors.catalog.catalog import ELECTED

CAPACITY_FEED_FILE = "capacity.json"
# The file's layout version: a consumer of the file checks it before reading `groups`.
FEED_VERSION = 1


def feed_entry(row: Mapping[str, Any], strategy: str | None) -> dict[str, Any]:
    """One group's entry: the replica counts of its `capacity` row under `strategy` (the
    elected strategy's name; the row may be the `elected` one, which repeats its figures)."""
    return {
        "strategy": strategy,
        "members": row["members"],
        "activeMembers": row["active_members"],
        "minReplicaCount": row["members_for_target"],
        "maxReplicaCount": row["max_useful_members"],
        "detail": row["detail"],
    }


def elected_rows(
    capacity: Iterable[Mapping[str, Any]], elected: Mapping[str, str | None]
) -> dict[str, tuple[Mapping[str, Any], str | None]]:
    """Per group, the `capacity` row of the strategy it runs and that strategy's name: the
    `elected` row where the run plans `elected`, else the row of the elected strategy's name
    (`elected`: group -> `elections.elected_strategy`). A group with neither (no elected
    strategy, or one the run did not plan) has no entry."""
    by_name: dict[str, dict[str, Mapping[str, Any]]] = {}
    for row in capacity:
        by_name.setdefault(row["group_id"], {})[row["strategy"]] = row
    out: dict[str, tuple[Mapping[str, Any], str | None]] = {}
    for group_id, rows in by_name.items():
        name = elected.get(group_id)
        found = rows.get(ELECTED) or (rows.get(name) if name is not None else None)
        if found is not None:
            out[group_id] = (found, name)
    return out


def capacity_feed(
    capacity: Iterable[Mapping[str, Any]],
    elected: Mapping[str, str | None],
    *,
    ds: str | None,
    target: str | None,
) -> dict[str, Any]:
    """The file's content: the run's `ds` and target, and an entry per group (by group id)
    that has a row of the strategy it runs (`elected_rows`)."""
    chosen = elected_rows(capacity, elected)
    return {
        "version": FEED_VERSION,
        "ds": ds,
        "target": target,
        "groups": {gid: feed_entry(row, name) for gid, (row, name) in sorted(chosen.items())},
    }
