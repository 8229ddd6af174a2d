"""The reason codes have one home, `Reason`, and the bad-input table of docs/data-contract.md
agrees."""

from __future__ import annotations

import re
from pathlib import Path

from assignors.problems import Reason

README = Path(__file__).resolve().parents[2] / "docs" / "data-contract.md"


def readme_reasons() -> dict[str, str]:
    """reason -> severity, from the rows of the bad-input table in docs/data-contract.md."""
    text = README.read_text(encoding="utf-8")
    section = text.split("### Bad input", 1)[1].split("\n## ", 1)[0]
    out: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0] in {"error", "warning"}:
            for code in re.findall(r"`([A-Z][A-Z0-9_]+)`", cells[1]):
                out[code] = cells[0]
    return out


def test_readme_table_lists_exactly_the_reason_codes() -> None:
    documented = readme_reasons()
    assert sorted(documented) == sorted(r.value for r in Reason)


def test_reason_codes_are_stable_upper_snake() -> None:
    assert all(r.name == r.value and re.fullmatch(r"[A-Z][A-Z0-9_]+", r.value) for r in Reason)
