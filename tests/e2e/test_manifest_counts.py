"""The manifest's counts are the written tables' counts, whichever rows a run rejects: the
buckets tally their own rows, the driver its topic rows, the guard its failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.estate import counted_from_tables, member, write_estate

from jobs.plan_assignments import run
from jobs.settings.config import PlannerConfig

pytestmark = pytest.mark.e2e


def test_the_manifest_counts_every_kind_of_row_the_tables_hold(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    members = [
        *(member("ok", f"c{i}", ["t1", "t2"]) for i in range(3)),
        *(member("moved", f"c{i}", ["t1"]) for i in range(2)),
        member("dup", "x", ["t1"]),  # a group-level error, twice over: rejected once
        member("dup", "x", ["t1"], client_rack="r1"),
        member("dup", "y", ["t1"]),
        member("dup", "y", ["t1"], client_rack="r2"),
        member("gaps", "g0", ["gap", "t1"]),  # a topic with a hole: the driver's row
    ]
    owned = [
        ("moved", "c0", "t1", 0),
        ("moved", "gone", "t1", 1),  # a member that left
        ("moved", "c1", "nope", 0),  # an unknown topic: a warning
        ("orphan", "o0", "t1", 2),  # owned rows of a group with no members: an error
    ]
    estate = write_estate(
        tmp_path / "in", {"t1": 4, "t2": 3}, members, owned, [("gap", 0), ("gap", 2)]
    )
    out = tmp_path / "out"
    result = run(spark, str(estate), str(out), PlannerConfig())
    manifest = json.loads((out / "_manifest.json").read_text())
    counted = counted_from_tables(out)
    assert counted["groups"]["rejected"] >= 2, counted  # the estate rejects what it should
    assert {"error:DUPLICATE_MEMBER_ID", "warning:OWNED_UNKNOWN_TOPIC"} <= set(
        counted["rejected_by_reason"]
    )
    assert len(counted["rejected_by_reason"]) >= 4, counted
    assert {k: manifest[k] for k in counted} == counted
    assert result.to_json() == manifest
