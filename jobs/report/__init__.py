"""The estate report: one self-contained HTML page per run (docs/data-contract.md).

    python -m jobs.report OUTPUT_DIR      # (re)build OUTPUT_DIR/report.html

Everything on the page is computed from the output tables with Spark aggregations: only small
aggregates (one row per strategy, bin, scenario or reason, and the 20 worst groups) reach the
driver, never assignment rows. Every section reads the contract's tables and columns when they
are there and says so on the page when they are not, so the report works on outputs written
before a table or column existed. The page has no script and fetches nothing: charts are inline
SVG (`charts`), the template is `templates/report.html.j2` (Jinja2, autoescape).
Identical tables give identical bytes: no timestamps, deterministic ordering and ids.

This wing imports `output`, `tables` and `settings` (and the shared `jobs.fs` and
`jobs.together`), never `cli`, `plan` or `export`; `python -m jobs.report` runs
`jobs.cli.report` by its module name (`__main__`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pyspark.sql import SparkSession

from jobs import fs
from jobs.report.context import started_context
from jobs.report.render import render
from jobs.report.tables import REPORT_FILE, read_manifest
from jobs.tables.manifest import Manifest

__all__ = ["REPORT_FILE", "started_report", "write_report"]


def write_report(
    spark: SparkSession,
    output_dir: str,
    manifest: Manifest | dict[str, Any] | None = None,
) -> str:
    """Write OUTPUT_DIR/report.html from the output tables; return its path.

    `manifest` is the run's manifest when the caller has it (the pipeline, before the output
    is moved into place; typed, or as `_manifest.json` holds it); otherwise `_manifest.json`
    is read from `output_dir`.
    """
    if manifest is None:
        manifest = read_manifest(spark, output_dir)
    elif isinstance(manifest, dict):
        manifest = Manifest.from_json(manifest)
    with started_report(spark, output_dir) as write:
        return write(manifest)


@contextmanager
def started_report(
    spark: SparkSession, output_dir: str, own: bool = False
) -> Iterator[Callable[[Manifest | None], str]]:
    """The page's aggregations, started now over the tables in `output_dir`; the function it
    yields writes the page once the run's manifest is known, and returns its path. `own`: the
    tables were written by this version (see `read_tables`)."""
    with started_context(spark, output_dir, own) as finish:

        def write(manifest: Manifest | None) -> str:
            html = render(finish(manifest))
            path = f"{output_dir.rstrip('/')}/{REPORT_FILE}"
            fs.write_text(spark, path, html)
            return path

        yield write
