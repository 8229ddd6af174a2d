"""The catalog's per-topic aggregates (`jobs.plan.one_group._topic_stats`) against plain Python."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from jobs.plan.one_group import _topic_stats
from jobs.plan.one_group import topic_catalog as rows_catalog


def _expected(rows: list[tuple[str | None, int | None]]) -> set[tuple[object, ...]]:
    by_topic: dict[str | None, list[int | None]] = {}
    for topic, p in rows:
        by_topic.setdefault(topic, []).append(p)
    out = set()
    for topic, parts in by_topic.items():
        given = [p for p in parts if p is not None]
        out.add(
            (
                topic,
                len(parts),
                len(set(given)),
                min(given) if given else None,
                max(given) if given else None,
                len(parts) - len(given),
            )
        )
    return out


def test_every_check_input_of_a_small_table() -> None:
    rows = [("a", 0), ("a", 1), ("a", 1), ("b", None), ("b", 2), (None, 0), (None, None),
            ("c", -1), ("c", 0), ("d", None)]  # fmt: skip
    table = pa.table(
        {"topic": [t for t, _ in rows], "partition": pa.array([p for _, p in rows], pa.int32())}
    )
    assert (
        set(_topic_stats(table))
        == _expected(rows)
        == {
            ("a", 3, 2, 0, 1, 0),
            ("b", 2, 1, 2, 2, 1),
            (None, 2, 1, 0, 0, 1),
            ("c", 2, 2, -1, 0, 0),
            ("d", 1, 0, None, None, 1),
        }
    )


@pytest.mark.parametrize("seed", range(20))
def test_random_tables_match_plain_python(seed: int) -> None:
    rng = random.Random(seed)
    topics = [None, "t0", "t1", "t2", "t3"]

    def partition() -> int | None:
        if rng.random() < 0.05:
            return None
        return rng.randrange(-2, 2**40 if rng.random() < 0.01 else 30)

    rows = [(rng.choice(topics), partition()) for _ in range(rng.randrange(0, 400))]
    table = pa.table(
        {
            "topic": pa.array([t for t, _ in rows], pa.string()),
            "partition": pa.array([p for _, p in rows], pa.int64()),
        }
    )
    assert set(_topic_stats(table)) == _expected(rows)
    # and the terminal's catalog (row by row) agrees with the one built from these aggregates
    assert {t for t, *_ in _topic_stats(table) if t is not None} == set(
        rows_catalog([{"topic": t, "partition": p} for t, p in rows])[0]
    )
