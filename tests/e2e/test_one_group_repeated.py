"""A group with many identical warnings: the terminal table counts them, JSON keeps every row.

No Spark: `jobs.plan_group` plans a hand-written snapshot with the pure core.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.estate import member, write_estate

from jobs.tables.group_view import EXAMPLES, REPEATED_REASON, render_table

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
OWNED = 100_000


def plan_group(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "jobs.plan_group", *args],
        capture_output=True, text=True, env=env, cwd=REPO, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Group g: member a owns 100,000 partitions of a topic that no longer exists (one
    OWNED_UNKNOWN_TOPIC warning each)."""
    root = tmp_path_factory.mktemp("repeated") / "in"
    owned = [("g", "a", "gone", p) for p in range(OWNED)]
    return write_estate(
        root, {"t": 3}, [member("g", "a", ["t"]), member("g", "b", ["t"])], owned=owned
    )


def test_a_hundred_thousand_identical_warnings_are_one_line_of_the_table(estate: Path) -> None:
    done = plan_group("--input", str(estate), "--group", "g", "--strategies", "range")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # the other sections are the group's, whatever it owns; the warnings' table is one row
    section = lines[lines.index("REJECTED") :]
    assert len(section) < 25, f"{len(section)} lines"
    rejected = "\n".join(section)
    assert f"OWNED_UNKNOWN_TOPIC ×{OWNED}" in rejected
    flat = " ".join(rejected.split())
    assert "(first 3: owned partition gone-0 is of a topic" in flat
    assert "owned partition gone-10 is of a topic" in flat, "the third example"
    assert "gone-100 " not in flat, "only the first three"
    assert "--format json lists every row" in flat


def test_json_keeps_every_row(estate: Path) -> None:
    done = plan_group("--input", str(estate), "--group", "g", "--strategies", "range",
                      "--format", "json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rejected"]
    assert len(rows) == OWNED
    assert {r["reason"] for r in rows} == {"OWNED_UNKNOWN_TOPIC"}


def _view(rejected: list[dict[str, Any]]) -> dict[str, Any]:
    return {"group_id": "g", "members": [], "strategies": [], "rebalance_costs": [],
            "rejected": rejected}  # fmt: skip


def _row(reason: str, member_id: str | None, detail: str) -> dict[str, Any]:
    return {"severity": "warning", "reason": reason, "member_id": member_id, "topic": None,
            "strategy": None, "detail": detail}  # fmt: skip


def test_a_few_repeats_keep_their_rows_and_more_are_counted_in_place() -> None:
    few = [_row("UNKNOWN_ASSIGNMENT_STRATEGY", f"m{i}", f"few {i}") for i in range(REPEATED_REASON)]
    many = [_row("OWNED_UNKNOWN_PARTITION", f"m{i % 2}", f"many {i}") for i in range(7)]
    text = render_table(_view([many[0], *few, *many[1:]]), width=200)
    table = text[text.index("REJECTED") :].splitlines()
    assert all(f"few {i}" in text for i in range(REPEATED_REASON)), "at most 5: every row"
    counted = [line for line in table if "OWNED_UNKNOWN_PARTITION" in line]
    assert len(counted) == 1
    assert "OWNED_UNKNOWN_PARTITION ×7" in counted[0]
    assert "2 members" in counted[0]
    assert f"(first {EXAMPLES}: many 0 | many 1 | many 2)" in counted[0]
    assert table.index(counted[0]) == 2, "where the reason's first row was"
    assert "(a reason with more than 5 rows is counted" in text
    # nothing repeated: no note
    assert "is counted" not in render_table(_view(few), width=200)
