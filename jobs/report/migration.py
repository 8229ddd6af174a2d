"""The report's "Migration to the consumer protocol" section: small aggregates of the
`migrations` table (docs/migration.md)."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from assignors.migration.paths import CLASSIC_TO_CONSUMER
from jobs.report.tables import WORST_GROUPS
from jobs.together import together

MIGRATIONS = "migrations"


def migration_figures(migrations: DataFrame) -> dict[str, Any]:
    """On the `classic_to_consumer` rows: groups ready and blocked, the groups per blocker and
    per warning, partitions moved and paused estate-wide per landing assignor, and the
    WORST_GROUPS groups whose bounce pauses most."""
    rows = migrations.where(F.col("path") == CLASSIC_TO_CONSUMER)
    ready = F.col("ready")

    def counts(column: str) -> list[dict[str, Any]]:
        exploded = rows.select(F.explode(column).alias("code"))
        grouped = exploded.groupBy("code").count().orderBy(F.desc("count"), "code")
        return [r.asDict() for r in grouped.collect()]

    def per_landing() -> list[dict[str, Any]]:
        grouped = rows.groupBy("landing_assignor").agg(
            F.count(F.lit(1)).alias("groups"),
            F.sum(F.when(ready, 1).otherwise(0)).alias("ready"),
            F.sum("moved_at_conversion").alias("moved_at_conversion"),
            F.sum("bounce_moved").alias("bounce_moved"),
            F.sum("bounce_paused").alias("bounce_paused"),
        )
        return [r.asDict() for r in grouped.orderBy("landing_assignor").collect()]

    def worst() -> list[dict[str, Any]]:
        columns = ["group_id", "ready", "blockers", "warnings", "landing_assignor"]
        columns += ["bounce_moved", "bounce_paused", "steps"]
        ordered = rows.where(F.col("bounce_paused").isNotNull()).orderBy(
            F.desc("bounce_paused"), F.desc("bounce_moved"), "group_id"
        )
        return [r.asDict() for r in ordered.select(*columns).limit(WORST_GROUPS).collect()]

    def totals() -> dict[str, Any]:
        row = rows.agg(
            F.count(F.lit(1)).alias("groups"),
            F.sum(F.when(ready, 1).otherwise(0)).alias("ready"),
            F.sum(F.when(ready & (F.size("warnings") > 0), 1).otherwise(0)).alias(
                "ready_with_warnings"
            ),
        ).collect()[0]
        return row.asDict()

    figures = together(
        totals, lambda: counts("blockers"), lambda: counts("warnings"), per_landing, worst
    )
    return {
        "totals": figures[0],
        "blockers": figures[1],
        "warnings": figures[2],
        "landing": figures[3],
        "worst": figures[4],
    }
