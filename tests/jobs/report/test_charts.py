"""The report's charts: inline SVG that names no network resource and is reproducible."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("matplotlib", reason="the report needs the `report` dependency group")

from jobs.report import charts

STRATEGIES = ["range", "roundrobin", "cooperative-sticky"]


def _all_charts() -> dict[str, str]:
    counts = {
        "range": [5, 3, 0, 2],
        "roundrobin": [9, 1, 0, 0],
        "cooperative-sticky": [10, 0, 0, 0],
    }
    labels = ["0", "1", "2–3", "4+"]
    panel = ("paused", ["member_leave", "rolling_restart"], {"range": [10.0, None]})
    return {
        "gap": charts.gap_chart(STRATEGIES, counts, labels),
        "max": charts.heatmap_chart(STRATEGIES, counts, labels, "max partitions per member"),
        "bars": charts.grouped_bars("costs", [panel, panel], STRATEGIES),
        "counts": charts.count_bars("elected", [("range", 7), ("none", 1)], ["#000", "#111"]),
    }


def test_inline_svg_without_network_names_or_headers() -> None:
    for name, svg in _all_charts().items():
        assert svg.startswith("<svg "), name
        assert svg.rstrip().endswith("</svg>"), name
        for forbidden in ("http://", "https://", "xmlns", "<?xml", "<!DOCTYPE", "<metadata"):
            assert forbidden not in svg, (name, forbidden)
        assert "viewBox=" in svg
        # sized by the page's CSS, not by fixed points
        assert not re.search(r'<svg[^>]* width="', svg), name


def test_same_data_same_bytes() -> None:
    assert _all_charts() == _all_charts()


def test_ids_do_not_collide_between_charts() -> None:
    seen: dict[str, str] = {}
    for name, svg in _all_charts().items():
        for ident in set(re.findall(r'\bid="([^"]+)"', svg)):
            assert ident not in seen, (ident, name, seen.get(ident))
            seen[ident] = name
        # every in-chart reference points at an id of the same chart
        for ref in re.findall(r'(?:href="#|url\(#)([^")]+)', svg):
            assert f'id="{ref}"' in svg, (name, ref)


def test_text_stays_text() -> None:
    svg = _all_charts()["gap"]
    assert "<text" in svg  # svg.fonttype = none: labels are text, not glyph paths
    assert ">range</text>" in svg


def test_strategy_colours_are_stable() -> None:
    a = charts.strategy_colors(["range", "sticky"])
    b = charts.strategy_colors(["range", "sticky", "uniform"])
    assert a["range"] == b["range"]
    assert a["sticky"] == b["sticky"]
    assert len(set(b.values())) == 3


def test_plotting_stays_off_the_executors_path() -> None:
    """The executors import jobs.plan.udf (and the entry point's module); neither may pull in the
    driver-only plotting dependencies, nor may importing jobs.report itself."""
    import subprocess
    import sys

    code = (
        "import sys, assignors, jobs.plan.udf, jobs.plan_assignments, jobs.report;"
        "bad = sorted(m for m in ('matplotlib', 'jinja2', 'markupsafe') if m in sys.modules);"
        "print(','.join(bad))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == ""
