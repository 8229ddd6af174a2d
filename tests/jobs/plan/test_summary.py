"""The what-if block of the console summary."""

from __future__ import annotations

from jobs.plan.summary import format_whatif


def test_block_per_strategy() -> None:
    lines = format_whatif(
        [
            {"strategy": "cooperative-sticky", "restart_paused": 12, "restart_groups": 1,
             "recommended_groups": 3},
            {"strategy": "range", "restart_paused": 36, "restart_groups": 1,
             "recommended_groups": 0},
            {"strategy": "balanced", "restart_paused": None, "restart_groups": 0,
             "recommended_groups": 1},
        ]
    )  # fmt: skip
    assert "rolling restart: paused partitions" in lines[1]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    assert rows == {
        "cooperative-sticky": ["12", "3", "groups"],
        "range": ["36", "0", "groups"],
        "balanced": ["-", "1", "groups"],
    }


def test_no_block_without_rows() -> None:
    assert format_whatif([]) == []
