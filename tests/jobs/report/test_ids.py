"""Long group and member ids are shortened in the report's tables, whole in the tooltip."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("jinja2", reason="the report needs the `report` dependency group")

from jobs.report.ids import MAX_ID_CHARS, short_id, shorten

TEMPLATE = Path(__file__).resolve().parents[3] / "jobs/report/templates/report.html.j2"


def test_short_ids_are_unchanged() -> None:
    assert shorten("orders-consumer") == "orders-consumer"
    assert str(short_id("a<b")) == "a&lt;b"
    assert str(short_id("x" * MAX_ID_CHARS)) == "x" * MAX_ID_CHARS


@pytest.mark.parametrize("length", [MAX_ID_CHARS + 1, 500, 10_000])
def test_a_long_id_keeps_head_and_tail_within_the_limit(length: int) -> None:
    text = "payments-eu-west-1-" + "x" * (length - 19 - 4) + "-end"
    short = shorten(text)
    assert len(short) == MAX_ID_CHARS
    assert short.startswith("payments-eu-west-1-")
    assert short.endswith("-end")
    assert "…" in short


def test_the_cell_holds_the_full_id_in_its_title_escaped() -> None:
    text = '<group "' + "g" * 5000 + '">'
    cell = str(short_id(text))
    assert cell.startswith('<span title="&lt;group &#34;' + "g" * 100)
    assert 'gggg&#34;&gt;">' in cell, "the whole id, escaped, in title="
    shown = cell[cell.index('">') + 2 : -len("</span>")]
    assert len(shown) < 80
    assert "…" in shown
    assert "<group" not in cell


def test_the_tables_shorten_group_ids_and_examples() -> None:
    from jobs.report.render import environment

    template = TEMPLATE.read_text(encoding="utf-8")
    assert "{{ r.group_id | short_id }}" in template
    assert "{{ r.example | short_id(120) }}" in template
    assert "{{ r.group_id }}" not in template
    page = environment().from_string('<td class="id">{{ g | short_id }}</td>').render(g="g" * 3000)
    assert page.startswith('<td class="id"><span title="' + "g" * 3000 + '">')
    assert len(page) < 3000 + 120
