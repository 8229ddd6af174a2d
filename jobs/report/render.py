"""The page itself: the Jinja2 template with inline SVG charts, and number formats."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    import jinja2


class ReportContext(TypedDict, total=False):
    """What the page shows, section by section (the template's variables). A section whose
    table or column the output lacks holds None or is empty, and `notes` says why."""

    output_dir: str
    notes: dict[str, list[str]]  # section -> sentences shown in it
    charts: dict[str, str]  # section -> inline SVG
    svg: dict[str, Any]  # the charts, marked safe for the template (render)
    colors: dict[str, str]  # strategy -> its color (render)
    strategies: list[str]  # the row order of every per-strategy view
    header: dict[str, Any]  # the run: snapshot, version, durations, row counts
    overview: dict[str, dict[str, Any]] | None  # per strategy, from balance_metrics
    has_gap: bool
    has_racks: bool
    gap_column: str
    load: dict[str, dict[str, dict[str, Any]]]  # lag / weight -> strategy -> percentiles
    costs: dict[str, Any] | None  # rebalance costs per (strategy, scenario)
    recommendations: list[dict[str, Any]] | None
    worst: list[dict[str, Any]] | None
    worst_basis: str
    worst_limit: int
    rejected: list[dict[str, Any]] | None
    rejected_has_strategy: bool
    elected: list[dict[str, Any]] | None
    since: dict[str, Any] | None  # `--previous`: the changes (None: no section)
    capacity: dict[str, Any] | None  # totals and listed groups, from the capacity table
    live: dict[str, Any] | None  # groups per verdict and the listed groups, from live_check
    migration: dict[str, Any] | None  # the migrations table's figures (docs/migration.md)


def environment() -> jinja2.Environment:
    """The page's Jinja2 environment: its template loader and filters."""
    import jinja2

    from jobs.report.ids import short_id

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("jobs.report", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["num"] = _num
    env.filters["pct"] = _pct
    env.filters["short_id"] = short_id
    return env


def render(ctx: ReportContext) -> str:
    """The HTML page for a context built by `started_context`."""
    from markupsafe import Markup

    from jobs.report import charts

    env = environment()
    # charts are our own SVG (text escaped by matplotlib): trusted markup
    ctx = ReportContext(**ctx)  # a copy: the caller's context is left as it was
    elected = ctx.get("elected")
    if elected:
        colors = charts.strategy_colors(ctx["strategies"])
        ctx["charts"]["elected"] = charts.count_bars(
            "elected",
            [(r["label"], r["count"]) for r in elected],
            [colors.get(r["elected"] or "", charts.MUTED) for r in elected],
        )
    ctx["svg"] = {k: Markup(v) for k, v in ctx["charts"].items()}
    ctx["colors"] = charts.strategy_colors(ctx["strategies"])
    return env.get_template("report.html.j2").render(**ctx)


def _num(value: Any, digits: int = 0) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and digits:
        return f"{value:,.{digits}f}"
    if isinstance(value, float):
        return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"
    return f"{value:,}"


def _pct(value: Any) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"
