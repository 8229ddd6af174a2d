"""The move to the consumer protocol through the job: a hand-written snapshot with a classic
group that can migrate, a mixed group half way, and a group a custom assignor's user data
blocks; the `migrations` table, the `elections` counts, the recommendations' next step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.plan.summary import format_summary
from jobs.plan_assignments import run
from jobs.settings.config import load_config
from jobs.tables.manifest import MANIFEST_FILE, Manifest
from tools.sample_estate import SCHEMAS

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

CONFIG = """
[planner]
strategies = ["range", "cooperative-sticky", "uniform", "server-range", "elected"]
scenarios = ["rolling_restart"]
"""
SUBSCRIPTIONS = (
    SCHEMAS["subscriptions"]
    .append(pa.field("group_protocol", pa.string()))
    .append(pa.field("assignment_user_data", pa.bool_()))
)


def member(gid: str, mid: str, names: list[str], **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(SUBSCRIPTIONS.names)
    row.update(group_id=gid, member_id=mid, topics=["t"], assignment_strategies=names, **kw)
    return row


MEMBERS = [
    member("classic", "c0", ["range"]),
    member("classic", "c1", ["range"]),
    member("mixed", "c0", ["uniform"], group_protocol="consumer"),
    member("mixed", "c1", ["range"], group_protocol="classic"),
    member("blocked", "c0", ["sticky"], assignment_user_data=True),
    member("blocked", "c1", ["sticky"], assignment_user_data=False),
]
# every group: c0 owns t0, t1 and c1 t2, t3
OWNED = [(g, f"c{p // 2}", "t", p) for g in ("classic", "mixed", "blocked") for p in range(4)]


@pytest.fixture(scope="module")
def out(spark, tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("migration")
    data = root / "in"
    data.mkdir()
    pq.write_table(
        pa.table(
            {"topic": ["t"] * 4, "partition": [0, 1, 2, 3], "replica_racks": [None] * 4,
             "weight": [None] * 4},
            schema=SCHEMAS["topic_partitions"],
        ),
        data / "topic_partitions.parquet",
    )  # fmt: skip
    pq.write_table(
        pa.table({n: [m[n] for m in MEMBERS] for n in SUBSCRIPTIONS.names}, schema=SUBSCRIPTIONS),
        data / "subscriptions.parquet",
    )
    cols = SCHEMAS["current_assignment"].names
    pq.write_table(
        pa.table(
            {c: [o[i] for o in OWNED] for i, c in enumerate(cols)},
            schema=SCHEMAS["current_assignment"],
        ),
        data / "current_assignment.parquet",
    )
    conf = root / "planner.toml"
    conf.write_text(CONFIG)
    result = root / "out"
    run(spark, str(data), str(result), load_config(conf))
    return result


def rows(out: Path, name: str) -> list[dict[str, Any]]:
    return pq.read_table(out / name).to_pylist()


def test_migrations_table(out: Path) -> None:
    got = {
        (r["group_id"], r["path"]): (
            r["ready"], r["blockers"], r["landing_assignor"], r["bounce_moved"], r["bounce_paused"]
        )
        for r in rows(out, "migrations")
    }  # fmt: skip
    assert got == {
        # the hand-checked bounce of tests/assignors/migration/test_migration_bounce.py
        ("classic", "classic_to_consumer"): (True, [], "server-range", 8, 10),
        ("classic", "eager_to_cooperative"): (True, [], "cooperative-sticky", 16, 22),
        ("classic", "eager_to_cooperative_direct"): (
            False, ["INCONSISTENT_GROUP_PROTOCOL"], "cooperative-sticky", None, None
        ),
        # only c1 still to restart: it leaves and rejoins under uniform
        ("mixed", "classic_to_consumer"): (True, [], "uniform", 4, 4),
        ("blocked", "classic_to_consumer"): (False, ["ASSIGNMENT_USER_DATA"], "uniform", 8, 10),
        ("blocked", "eager_to_cooperative"): (True, [], "cooperative-sticky", 16, 22),
        ("blocked", "eager_to_cooperative_direct"): (
            False, ["INCONSISTENT_GROUP_PROTOCOL"], "cooperative-sticky", None, None
        ),
    }  # fmt: skip


def test_elections_count_each_protocol(out: Path) -> None:
    got = {
        r["group_id"]: (r["group_protocol"], r["elected_strategy"], r["classic_members"],
                        r["consumer_members"])
        for r in rows(out, "elections")
    }  # fmt: skip
    assert got == {
        "classic": ("classic", "range", 2, 0),
        "mixed": ("consumer", "uniform", 1, 1),
        "blocked": ("classic", "sticky", 2, 0),
    }
    assert not [r for r in rows(out, "rejected") if r["severity"] == "error"]


def test_recommendations_say_the_next_step(out: Path) -> None:
    got = {r["group_id"]: r["migration_next_step"] for r in rows(out, "recommendations")}
    assert got["classic"] == (
        "ready: migrate to the consumer protocol (lands on server-range, moves 8 partitions,"
        " pauses 10 over the bounce)"
    )
    assert got["mixed"] == (
        "ready: finish the migration: restart the 1 classic member with"
        " group.protocol=consumer (on uniform, moves 4 partitions, pauses 4 over the bounce)"
    )
    assert got["blocked"].startswith(
        "blocked by ASSIGNMENT_USER_DATA: move off the custom assignor first; meanwhile the"
        " two-bounce upgrade to cooperative-sticky (moves 16 partitions, pauses 22"
    )


def test_the_manifest_and_the_summary_count_each_path(out: Path) -> None:
    manifest = Manifest.from_json(json.loads((out / MANIFEST_FILE).read_text()))
    assert manifest.migration_paths == {
        "classic_to_consumer": {
            "groups": 3, "ready": 2, "blockers": {"ASSIGNMENT_USER_DATA": 1}, "warnings": {}
        },
        "eager_to_cooperative": {"groups": 2, "ready": 2, "blockers": {}, "warnings": {}},
        "eager_to_cooperative_direct": {
            "groups": 2, "ready": 0, "blockers": {"INCONSISTENT_GROUP_PROTOCOL": 2},
            "warnings": {},
        },
    }  # fmt: skip
    lines = format_summary(manifest).splitlines()
    assert (
        "migration: classic_to_consumer 3 groups (2 ready, 1 blocked: ASSIGNMENT_USER_DATA 1);"
        " eager_to_cooperative 2 groups (2 ready); eager_to_cooperative_direct 2 groups"
        " (0 ready, 2 blocked: INCONSISTENT_GROUP_PROTOCOL 2)"
    ) in lines
    assert f"migrations: {out}/migrations" in lines
