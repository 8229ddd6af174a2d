"""What the report reads: the manifest and the small output tables, and their vocabulary."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession

from assignors.catalog.registry import ELECTED, builtin_names
from jobs import fs
from jobs.tables.manifest import MANIFEST_FILE, Manifest
from jobs.tables.schemas import OUTPUT_SCHEMAS

REPORT_FILE = "report.html"
TABLES: tuple[str, ...] = (
    "balance_metrics",
    "elections",
    "rejected",
    "rebalance_costs",
    "recommendations",
)
# the capacity section's table (an output of an earlier version may lack it)
TABLES += ("capacity",)
# the "Live vs plan" section's table (an output of an earlier version may lack it)
TABLES += ("live_check",)
# the migration section's table (docs/migration.md; an earlier version's output lacks it)
TABLES += ("migrations",)
# present only in a run with `--previous`
CHANGES = "changes"
WORST_GROUPS = 20
# Kafka's default preference order, then ours: the built-ins' order (the registry's), the
# row order of every per-strategy view when the manifest does not give the configured order.
KNOWN_ORDER = tuple(builtin_names())
# (low, high, label); high None = open-ended. Gap 0 is the verdict an operator wants.
GAP_BINS: tuple[tuple[int, int | None, str], ...] = (
    (0, 0, "0 (best possible)"),
    (1, 1, "1"),
    (2, 3, "2–3"),
    (4, 7, "4–7"),
    (8, 15, "8–15"),
    (16, None, "16+"),
)
MAX_BINS: tuple[tuple[int, int | None, str], ...] = (
    (0, 0, "0"),
    (1, 1, "1"),
    (2, 2, "2"),
    (3, 4, "3–4"),
    (5, 8, "5–8"),
    (9, 16, "9–16"),
    (17, 32, "17–32"),
    (33, 64, "33–64"),
    (65, 128, "65–128"),
    (129, 512, "129–512"),
    (513, None, "513+"),
)
LOAD_COLUMNS = (("lag_imbalance", "lag"), ("weight_imbalance", "weight"))


def read_manifest(spark: SparkSession, output_dir: str) -> Manifest | None:
    """The run's `_manifest.json`, or None when absent."""
    text = fs.read_text(spark, f"{output_dir.rstrip('/')}/{MANIFEST_FILE}")
    return None if text is None else Manifest.from_json(json.loads(text))


def read_tables(
    spark: SparkSession, output_dir: str, own: bool = False
) -> dict[str, DataFrame | None]:
    """The small output tables the report reads; None for a table this output does not have.

    `own`: the tables were written by this version (the pipeline's run), so they are read
    with the contract's schemas; an output of an earlier version may lack columns, so its
    schemas are read from the files."""
    out: dict[str, DataFrame | None] = {}
    for name in (*TABLES, CHANGES):
        path = f"{output_dir.rstrip('/')}/{name}"
        reader = spark.read.schema(OUTPUT_SCHEMAS[name]) if own else spark.read
        out[name] = reader.parquet(path) if fs.exists(spark, path) else None
    return out


def has(df: DataFrame | None, *columns: str) -> bool:
    return df is not None and all(c in df.columns for c in columns)


def absent_table(name: str) -> str:
    return f"No {name} table in this output: this section needs it."


def absent_column(table: str, column: str) -> str:
    return f"No {column} column in {table} in this output."


def strategy_order(manifest: Manifest | None, present: Sequence[str]) -> list[str]:
    """Configured order (manifest), then Kafka's default order, then by name; `elected` last."""
    configured = list(manifest.strategies) if manifest is not None else []
    known = [s for s in KNOWN_ORDER if s not in configured]

    def rank(s: str) -> tuple[int, int, str]:
        if s == ELECTED:
            return (3, 0, s)
        if s in configured:
            return (0, configured.index(s), s)
        if s in known:
            return (1, known.index(s), s)
        return (2, 0, s)

    return sorted(set(present), key=rank)
