"""Charts of the estate report: small aggregates in, inline SVG out (driver only).

matplotlib is imported lazily (the `report` dependency group is installed on the driver, never
needed by executors). Every chart is rendered with a fixed `svg.hashsalt` (one per chart, so
the ids of two charts on one page never collide), without date or creator metadata, and
stripped of its XML header, DOCTYPE and namespace declarations: inline SVG in HTML5 needs none
of them, and the page must not name any network resource. Same aggregates, same bytes.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

# Grafana's classic series palette: familiar to SREs, readable in print.
PALETTE = (
    "#1F78C1",
    "#EF843C",
    "#7EB26D",
    "#BA43A9",
    "#E24D42",
    "#6ED0E0",
    "#EAB839",
    "#705DA0",
    "#508642",
    "#CCA300",
)
# From good (green) to bad (red), for ordered severity bins such as the balance gap.
SEVERITY = ("#56A64B", "#C8D96F", "#F2CC0C", "#FF9830", "#E02F44", "#8F0E1E")
INK = "#1F2430"
MUTED = "#6E7382"
GRID = "#E3E5EA"
WIDTH_IN = 11.0  # drawn at 11 in x 72 pt; the page scales the SVG to its column (viewBox)

_STRIP = (
    re.compile(r"<\?xml[^>]*\?>\s*"),
    re.compile(r"<!DOCTYPE[^>]*>\s*"),
    re.compile(r"<!--.*?-->\s*", re.S),
    re.compile(r'\s+xmlns(:\w+)?="[^"]*"'),
    re.compile(r"<metadata>.*?</metadata>\s*", re.S),
    # matplotlib's fixed element ids (figure_1, axes_1, patch_3...) repeat in every chart;
    # nothing refers to them (references use the salted hash ids), so they go.
    re.compile(r'\s+id="[A-Za-z][A-Za-z0-9.]*_\d+"'),
)
_SIZE = re.compile(r'<svg([^>]*?)\s+width="[^"]*"\s+height="[^"]*"')


def strategy_colors(strategies: Sequence[str]) -> dict[str, str]:
    """One colour per strategy, stable across every chart of the page."""
    return {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(strategies)}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams.update(
        {
            "svg.fonttype": "none",  # text stays text: small, selectable, printable
            "font.family": "sans-serif",
            "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial"],
            "font.size": 10,
            "axes.edgecolor": GRID,
            "axes.labelcolor": INK,
            "axes.titlesize": 11,
            "axes.titleweight": "bold",
            "axes.titlelocation": "left",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "xtick.color": MUTED,
            "ytick.color": INK,
            "legend.frameon": False,
            "figure.dpi": 72,
        }
    )
    return plt


def to_svg(fig: Any, name: str) -> str:
    """Render `fig` to an inline, reproducible SVG string and close it."""
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = f"planner-report-{name}"
    buf = io.StringIO()
    fig.savefig(
        buf,
        format="svg",
        metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
    )
    plt.close(fig)
    svg = buf.getvalue()
    for pattern in _STRIP:
        svg = pattern.sub("", svg)
    # Sized by the page (CSS), shaped by the viewBox.
    svg = _SIZE.sub(rf'<svg class="chart" role="img" aria-label="{name}"\1', svg, count=1)
    return svg.strip() + "\n"


def _hbar_height(rows: int) -> float:
    return max(1.6, 0.42 * rows + 1.0)


def gap_chart(
    strategies: Sequence[str], shares: dict[str, list[int]], labels: Sequence[str]
) -> str:
    """100 % stacked bars: for each strategy, how the groups spread over gap bins."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH_IN, _hbar_height(len(strategies))))
    rows = list(reversed(strategies))
    left = [0.0] * len(rows)
    for b, label in enumerate(labels):
        widths = []
        for s in rows:
            counts = shares[s]
            total = sum(counts) or 1
            widths.append(100.0 * counts[b] / total)
        bars = ax.barh(rows, widths, left=left, color=SEVERITY[b % len(SEVERITY)], label=label)
        for bar, w in zip(bars, widths, strict=True):
            if w >= 6:
                ax.text(
                    bar.get_x() + w / 2,
                    bar.get_y() + bar.get_height() / 2,
                    f"{w:.0f}%",
                    ha="center",
                    va="center",
                    fontsize=9,
                    color=INK,
                )
        left = [a + w for a, w in zip(left, widths, strict=True)]
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of planned groups (%)")
    ax.legend(
        ncols=len(labels), loc="lower left", bbox_to_anchor=(0, 1.0), fontsize=9, handlelength=1
    )
    ax.tick_params(axis="y", length=0)
    fig.tight_layout()
    return to_svg(fig, "gap")


def heatmap_chart(
    strategies: Sequence[str], counts: dict[str, list[int]], labels: Sequence[str], xlabel: str
) -> str:
    """Rows = strategies, columns = value bins; colour = share of the strategy's groups."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH_IN, _hbar_height(len(strategies))))
    grid = []
    for s in strategies:
        total = sum(counts[s]) or 1
        grid.append([c / total for c in counts[s]])
    # vector cells (pcolormesh), not a raster image: crisp in print and at any zoom
    # the darkest cell is the largest share on the chart, whatever its size
    top = max((v for row in grid for v in row), default=1.0) or 1.0
    ax.pcolormesh(grid, cmap="Blues", vmin=0.0, vmax=top, edgecolors="#FFFFFF", linewidth=2)
    ax.invert_yaxis()
    for i, s in enumerate(strategies):
        for j, c in enumerate(counts[s]):
            if c:
                ax.text(
                    j + 0.5,
                    i + 0.5,
                    f"{c:,}",
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="#FFFFFF" if grid[i][j] > 0.6 * top else INK,
                )
    ax.set_xticks([j + 0.5 for j in range(len(labels))], labels)
    ax.set_yticks([i + 0.5 for i in range(len(strategies))], strategies)
    ax.set_xlabel(xlabel)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    fig.tight_layout()
    return to_svg(fig, "max-per-member")


def grouped_bars(
    name: str,
    panels: Sequence[tuple[str, Sequence[str], dict[str, list[float | None]]]],
    strategies: Sequence[str],
) -> str:
    """Side-by-side panels of vertical grouped bars: categories on x, one bar per strategy.

    panels: (title, categories, {strategy: value per category}); a None value is not drawn.
    """
    plt = _pyplot()
    colors = strategy_colors(strategies)
    fig, axes = plt.subplots(1, len(panels), figsize=(WIDTH_IN, 3.6), squeeze=False)
    step = 0.8 / max(1, len(strategies))
    for ax, (title, categories, values) in zip(axes[0], panels, strict=True):
        for k, s in enumerate(strategies):
            xs, ys = [], []
            for i, _ in enumerate(categories):
                v = values.get(s, [None] * len(categories))[i]
                if v is not None:
                    xs.append(i - 0.4 + step * (k + 0.5))
                    ys.append(v)
            ax.bar(xs, ys, width=step * 0.9, color=colors[s], label=s)
        # "subscription_change" -> two lines: the labels never overlap at this width
        ax.set_xticks(range(len(categories)), [c.replace("_", "\n") for c in categories])
        ax.set_title(title)
        ax.grid(axis="y", color=GRID, linewidth=0.8)
        ax.set_axisbelow(True)
        ax.tick_params(axis="x", length=0, colors=INK)
        ax.yaxis.set_major_formatter(_thousands())
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(
        handles, names, loc="lower center", ncols=min(len(names), 8), fontsize=9, handlelength=1
    )
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return to_svg(fig, name)


def _thousands() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _pos: f"{v:,.0f}" if abs(v) >= 10 else f"{v:g}")


def count_bars(name: str, items: Sequence[tuple[str, int]], colors: Sequence[str]) -> str:
    """One horizontal bar per labelled count, largest first as given, value at the bar's end."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH_IN, _hbar_height(len(items))))
    labels = [label for label, _ in items]
    values = [v for _, v in items]
    bars = ax.barh(labels, values, color=list(colors), height=0.6)
    total = sum(values) or 1
    for bar, v in zip(bars, values, strict=True):
        ax.text(
            bar.get_width(),
            bar.get_y() + bar.get_height() / 2,
            f"  {v:,} ({100 * v / total:.1f}%)",
            va="center",
            fontsize=9,
            color=INK,
        )
    ax.invert_yaxis()
    ax.set_xlim(0, max(values or [1]) * 1.2)
    ax.xaxis.set_major_formatter(_thousands())
    ax.grid(axis="x", color=GRID, linewidth=0.8)
    ax.set_axisbelow(True)
    ax.tick_params(axis="y", length=0)
    ax.set_xlabel("groups")
    fig.tight_layout()
    return to_svg(fig, name)
