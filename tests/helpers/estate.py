"""Small hand-written estates for the end-to-end tests (imported by the test modules)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from assignors.problems import ERROR, NOT_PLANNED
from jobs.tables.contract import OUTPUT_NAMES
from tools.sample_estate import SCHEMAS, write


def member(gid: str, mid: str, topics: list[str] | None, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(SCHEMAS["subscriptions"].names)
    row.update(group_id=gid, member_id=mid, topics=topics, **kw)
    return row


def write_estate(
    root: Path,
    topics: dict[str, int],
    members: list[dict[str, Any]],
    owned: list[tuple[str, str, str, int]] | None = None,
    extra_partitions: list[tuple[str, int]] = (),  # type: ignore[assignment]
) -> Path:
    tp_rows = [(t, p) for t, n in topics.items() for p in range(n)] + list(extra_partitions)
    tables = {
        "topic_partitions": {
            "topic": [t for t, _ in tp_rows],
            "partition": [p for _, p in tp_rows],
            "replica_racks": [None] * len(tp_rows),
            "weight": [None] * len(tp_rows),
        },
        "subscriptions": {k: [m[k] for m in members] for k in SCHEMAS["subscriptions"].names},
    }
    if owned is not None:
        tables["current_assignment"] = {
            k: [o[i] for o in owned] for i, k in enumerate(SCHEMAS["current_assignment"].names)
        }
    write(tables, root, files=1)
    return root


def counted_from_tables(out: Path) -> dict[str, Any]:
    """The manifest's counts (`output_rows`, `groups`, `rejected_by_reason`), counted again
    from the tables written in `out`: what the manifest must say."""
    tables = {t: pq.read_table(out / t).to_pylist() for t in OUTPUT_NAMES}
    elections, rejected = tables["elections"], tables["rejected"]
    by_reason: dict[str, int] = {}
    for r in sorted(rejected, key=lambda r: (r["severity"], r["reason"])):
        key = f"{r['severity']}:{r['reason']}"
        by_reason[key] = by_reason.get(key, 0) + 1
    return {
        "output_rows": {t: len(rows) for t, rows in tables.items()},
        "groups": {
            "input": len(elections),
            "planned": sum(1 for r in elections if r["error"] != NOT_PLANNED),
            "rejected": len(
                {
                    r["group_id"]
                    for r in rejected
                    if r["severity"] == ERROR
                    and r["group_id"] is not None
                    and r["strategy"] is None
                }
            ),
        },
        "rejected_by_reason": by_reason,
    }
