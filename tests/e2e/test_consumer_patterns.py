"""KIP-848 (`group_protocol = consumer`) groups through the job: a pattern the broker's RE2/J
refuses rejects its group alone (PATTERN_NOT_RE2J), the same pattern in a classic group is
planned with Java's semantics, and a negative member epoch is a warning on a planned group."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.estate import member

from jobs.plan_assignments import run
from jobs.settings.config import load_config
from tools.sample_estate import SCHEMAS

pytestmark = pytest.mark.e2e

TOPICS = {"orders.eu": 4, "orders.test": 2, "payments": 3}
LOOK_AHEAD = r"orders\.(?!test).*"
CONFIG = """
[planner]
strategies = ["range", "uniform", "server-range", "elected"]
scenarios = ["member_join"]
"""
MEMBERS = [
    *(member("kip848-look-ahead", f"m{i}", None, topic_pattern=LOOK_AHEAD) for i in range(2)),
    *(member("kip848-re2j", f"m{i}", None, topic_pattern=r"orders\..*") for i in range(2)),
    member("kip848-epoch", "m0", ["payments"], generation=-1),
    member("kip848-epoch", "m1", ["payments"], generation=4),
]
PROTOCOL = {
    "kip848-look-ahead": "consumer",
    "kip848-re2j": "consumer",
    "kip848-epoch": "consumer",
    "classic-look-ahead": None,
}
MEMBERS += [member("classic-look-ahead", f"c{i}", None, topic_pattern=LOOK_AHEAD) for i in (0, 1)]


def write_estate(root: Path) -> Path:
    root.mkdir(parents=True)
    tp = [(t, p) for t, n in TOPICS.items() for p in range(n)]
    pq.write_table(
        pa.table(
            {
                "topic": [t for t, _ in tp],
                "partition": [p for _, p in tp],
                "replica_racks": [None] * len(tp),
                "weight": [None] * len(tp),
            },
            schema=SCHEMAS["topic_partitions"],
        ),
        root / "topic_partitions.parquet",
    )
    rows = [{**m, "group_protocol": PROTOCOL[m["group_id"]]} for m in MEMBERS]
    schema = SCHEMAS["subscriptions"].append(pa.field("group_protocol", pa.string()))
    pq.write_table(
        pa.table({n: [r[n] for r in rows] for n in schema.names}, schema=schema),
        root / "subscriptions.parquet",
    )
    return root


@pytest.fixture(scope="module")
def planned(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("consumer-patterns")
    conf = root / "planner.toml"
    conf.write_text(CONFIG)
    out = root / "out"
    run(spark, str(write_estate(root / "in")), str(out), load_config(conf))
    return out


def table(spark: Any, out: Path, name: str) -> list[dict[str, Any]]:
    return [r.asDict() for r in spark.read.parquet(str(out / name)).collect()]


def test_rejected_rows(spark: Any, planned: Path) -> None:
    rows = sorted(
        (r["group_id"], r["member_id"], r["severity"], r["reason"], r["strategy"])
        for r in table(spark, planned, "rejected")
    )
    assert rows == [
        ("kip848-epoch", "m0", "warning", "NEGATIVE_MEMBER_EPOCH", None),
        ("kip848-look-ahead", "m0", "error", "PATTERN_NOT_RE2J", None),
        ("kip848-look-ahead", "m1", "error", "PATTERN_NOT_RE2J", None),
    ]
    details = {r["reason"]: r["detail"] for r in table(spark, planned, "rejected")}
    assert "negative look-ahead '(?!test)'" in details["PATTERN_NOT_RE2J"]
    assert "member epoch -1 is negative" in details["NEGATIVE_MEMBER_EPOCH"]


def test_only_the_refused_group_is_not_planned(spark: Any, planned: Path) -> None:
    errors = {r["group_id"]: r["error"] for r in table(spark, planned, "elections")}
    assert errors == {
        "kip848-look-ahead": "NOT_PLANNED",
        "kip848-re2j": None,
        "kip848-epoch": None,
        "classic-look-ahead": None,
    }
    manifest = json.loads((planned / "_manifest.json").read_text())
    assert manifest["groups"] == {"input": 4, "planned": 3, "rejected": 1}


def test_classic_group_keeps_java_semantics(spark: Any, planned: Path) -> None:
    topics = {
        (r["group_id"], r["topic"])
        for r in table(spark, planned, "assignments")
        if r["strategy"] == "elected"
    }
    assert {t for g, t in topics if g == "classic-look-ahead"} == {"orders.eu"}
    assert {t for g, t in topics if g == "kip848-re2j"} == {"orders.eu", "orders.test"}
    assert {t for g, t in topics if g == "kip848-epoch"} == {"payments"}
