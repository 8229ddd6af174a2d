"""Group ids of thousands of characters: the report's tables show them shortened, with the
full id in the cell's tooltip, so the page keeps its layout."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib", reason="the report needs the `report` dependency group")
pytest.importorskip("jinja2", reason="the report needs the `report` dependency group")

from test_report import _manifest, _schema, _section, _tables

from jobs.report import write_report
from jobs.report.ids import MAX_ID_CHARS

pytestmark = pytest.mark.spark
LONG = 3000


def _long(group_id: Any) -> Any:
    """Every group id made thousands of characters long (a distinct tail keeps them apart)."""
    return None if group_id is None else f"{'payments-' * (LONG // 9)}{group_id}"


def test_long_group_ids_are_shortened_with_a_tooltip(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    for name, (cols, rows) in _tables(True).items():
        records = [
            tuple(_long(r.get(c)) if c == "group_id" else r.get(c) for c, _ in cols) for r in rows
        ]
        spark.createDataFrame(records, _schema(cols)).write.parquet(str(out / name))
    (out / "_manifest.json").write_text(json.dumps(_manifest(out, True)))
    page = Path(write_report(spark, str(out))).read_text(encoding="utf-8")
    worst = _section(page, "worst")
    cells = re.findall(r'<td class="id"><span title="([^"]*)">([^<]*)</span></td>', worst)
    assert cells, "the worst groups' ids are shortened"
    for title, shown in cells:
        full = html.unescape(title)
        assert len(full) > LONG
        assert full.startswith("payments-")
        assert len(html.unescape(shown)) == MAX_ID_CHARS
        assert html.unescape(shown).endswith(full[-5:]), "the distinct tail stays visible"
    assert not re.search(r"<td[^>]*>[^<]{200,}</td>", page), "no table cell holds a long id"
    assert "payments-" * 20 not in re.sub(r'title="[^"]*"', "", page), "only tooltips hold it"
