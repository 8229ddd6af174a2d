"""The job's pipeline: read and check the inputs, plan every group in the bucketed pandas UDF,
write the output tables and the manifest atomically."""

from __future__ import annotations

import functools
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, GroupedData, SparkSession
from pyspark.sql import functions as F

from assignors.analysis.live import VERDICTS
from assignors.catalog.registry import (
    ELECTED,
    UnknownStrategyError,
    resolve,
)
from assignors.inputs.validation import TopicStatus
from assignors.migration.conditions import BLOCKERS, WARNINGS
from assignors.migration.paths import PATHS
from assignors.problems import Problem
from jobs import fs, output
from jobs.output import assignment_files, payload_files
from jobs.plan.one_group import catalog_of
from jobs.plan.since import Since, read_since, write_changes
from jobs.plan.summary import strategy_summary, whatif_summary
from jobs.plan.udf import (
    COMPILED,
    CORE,
    MEMBER_INPUT_COLUMNS,
    PARTITION_INPUT_COLUMNS,
    PEAK_RSS_MIB,
    PHASES,
    PURE,
    TALLY,
    PlanContext,
    bucket_function,
    cogrouped_bucket_function,
    reason_key,
)
from jobs.settings.config import ConfigError, PlannerConfig
from jobs.settings.run import RunSettings
from jobs.tables import contract
from jobs.tables.capacity_feed import CAPACITY_FEED_FILE, capacity_feed
from jobs.tables.inputs import read_inputs
from jobs.tables.manifest import MANIFEST_FILE, GroupCounts, Manifest
from jobs.tables.rows import (
    KIND_ASSIGNMENT,
    KIND_MEMBER,
    KIND_OFFSETS,
    KIND_OWNED,
    KIND_REJECTED,
    KIND_TARGET,
    KIND_TIMING,
    PAYLOAD,
    TABLE_OF,
    WIDE_COLUMNS,
    problem_payload,
    spark_projections,
)
from jobs.tables.schemas import (
    CURRENT_ASSIGNMENT,
    OFFSETS,
    OUTPUT_SCHEMAS,
    SORT_KEYS,
    SUBSCRIPTIONS,
    TARGET_ASSIGNMENT,
    TOPIC_PARTITIONS,
    spark_schema,
    spark_type,
)
from jobs.together import together

log = logging.getLogger("planner")
# What the buckets' timing rows sum to: worker seconds per phase, the peak memory (MiB) of a
# process that planned a bucket, and the planned buckets per core (`jobs.plan.udf.CORE`).
Timing = tuple[dict[str, float], float, dict[str, float]]
# The UDF's frame as Spark reads it.
WIDE_SCHEMA = spark_schema(WIDE_COLUMNS)
SUMMARY_TABLES = ("balance_metrics", "rebalance_costs", "recommendations")
# Default buckets per core (config `buckets = 0`). Groups' costs vary a lot (a rolling
# restart of a large group costs thousands of small ones), so a few big buckets leave a core
# idle behind the slowest one: 16 per core beat 4, and more gain nothing (docs/performance.md).
BUCKETS_PER_CORE = 16
# A bucket's worker memory grows with the groups in it (its input frame and every output row
# of its groups are held at once; docs/performance.md, "Memory"). Larger estates get more
# buckets rather than larger ones, so a worker's memory does not grow with the estate.
MEMBERS_PER_BUCKET = 20_000
# A bucket has a fixed cost (its Arrow batch, the guard's fork, its timing row) that a
# small estate's planning does not repay: below 16 buckets a core, a bucket gets at least
# MIN_MEMBERS_PER_BUCKET members, and every core at least one bucket (docs/performance.md).
MIN_MEMBERS_PER_BUCKET = 1_000


def default_buckets(members: int, cores: int) -> int:
    """`buckets = 0`: 16 per core, at least one per MEMBERS_PER_BUCKET members, and for a
    small estate no more than one per MIN_MEMBERS_PER_BUCKET members (one per core at least)."""
    small = max(cores, min(BUCKETS_PER_CORE * cores, -(-members // MIN_MEMBERS_PER_BUCKET)))
    return max(small, -(-members // MEMBERS_PER_BUCKET))


# Row groups of the output tables. Files are sorted by group_id, so small row groups let a
# reader of one group (`jobs.describe`) skip all others by their statistics, at the same
# size on disk as Spark's default of one 128 MiB row group (docs/performance.md).
OUTPUT_ROW_GROUP_BYTES = 2 * 1024 * 1024


def version() -> str:
    try:
        from importlib.metadata import version as _v

        return _v("kafka-assignment-planner")
    except Exception:
        return "0.1.0"


def check_plugins_on_executors(spark: SparkSession, names: list[str]) -> None:
    """Load every configured plugin on an executor before planning: a plugin that the driver
    can import but the executors cannot (not shipped with --py-files) is a configuration
    error, not a failure halfway through the job."""
    if not names:
        return

    def load(_: object) -> list[str]:
        failures = []
        for name in names:
            try:
                resolve(name)
            except UnknownStrategyError as exc:
                failures.append(str(exc))
        return failures

    failures = spark.sparkContext.parallelize([0], 1).flatMap(load).collect()
    if failures:
        raise ConfigError("on the executors: " + "; ".join(sorted(set(failures))))


def topic_catalog(
    topic_partitions: DataFrame,
) -> tuple[dict[str, TopicStatus], list[Problem]]:
    """The topic catalog (`jobs.plan.one_group.catalog_of`) of the whole `topic_partitions` table.

    The table is collected to the driver once, through Arrow, and checked there per topic:
    the catalog holds every partition's racks anyway, and Spark's exact distinct count per
    topic is a shuffle of every row, slower than the Arrow collect and pyarrow's aggregation
    (docs/performance.md).
    """
    return catalog_of(
        topic_partitions.select("topic", "partition", "replica_racks", "weight").toArrow()
    )


def planner_input(
    subscriptions: DataFrame,
    current: DataFrame | None,
    buckets: int,
    offsets: DataFrame | None = None,
    target: DataFrame | None = None,
) -> tuple[DataFrame, DataFrame | None]:
    """The members (`MEMBER_INPUT_COLUMNS`), and the owned partitions and offsets in one frame
    (`PARTITION_INPUT_COLUMNS`; None without either table), each row with its group's bucket
    (`kind` tells the rows apart). A group's rows of both frames meet in one bucket, so the
    lags are joined to the group's partitions in the UDF, with no second shuffle of the
    assignment rows; apart, the one-per-partition rows carry 7 columns, not the members' too.
    """
    # Partitions and generations travel as bigint: inputs may hold int64 values beyond int
    # range, which the planner reports instead of failing on a cast. The array columns travel
    # as JSON text: PySpark's Arrow-to-pandas conversion of array<string> costs more than the
    # whole rest of the input side (docs/performance.md).
    # Only the columns the planner reads (not client_id, client_host).
    as_json = ("topics", "assignment_strategies")
    typed = {**dict(SUBSCRIPTIONS.columns), "generation": spark_type(contract.LONG)}
    for c in as_json:
        typed[c] = spark_type(contract.STRING)
    members = subscriptions.select(
        F.lit(KIND_MEMBER).alias("kind"),
        *[
            (F.to_json(c) if c in as_json else F.col(c).cast(typed[c])).alias(c)
            for c in MEMBER_INPUT_COLUMNS[1:]
        ],
    )
    assert tuple(members.columns) == MEMBER_INPUT_COLUMNS, members.columns
    frames = []
    if current is not None:
        owned = current.select(
            F.lit(KIND_OWNED).alias("kind"),
            "group_id",
            "member_id",
            "topic",
            F.col("partition").cast("bigint").alias("partition"),
            *_no_offsets(),
        )
        frames.append(owned)
    if offsets is not None:
        frames.append(_offsets_rows(offsets))
    if target is not None:  # KIP-848 targets travel as the owned rows do (`live_check` only)
        frames.append(
            target.select(
                F.lit(KIND_TARGET).alias("kind"),
                "group_id",
                "member_id",
                "topic",
                F.col("partition").cast("bigint").alias("partition"),
                *_no_offsets(),
            )
        )
    partitions = None
    if frames:
        partitions = frames[0]
        for f in frames[1:]:
            partitions = partitions.unionByName(f)
        assert tuple(partitions.columns) == PARTITION_INPUT_COLUMNS, partitions.columns
        partitions = _with_bucket(partitions, buckets)
    return _with_bucket(members, buckets), partitions


def _with_bucket(frame: DataFrame, buckets: int) -> DataFrame:
    return frame.withColumn("bucket", F.pmod(F.xxhash64("group_id"), F.lit(buckets)))


def _no_offsets() -> list[Column]:
    return [F.lit(None).cast("string").alias(c) for c in ("committed_offset", "log_end_offset")]


def _offsets_rows(offsets: DataFrame) -> DataFrame:
    """`offsets` rows as planner input rows (kind KIND_OFFSETS).

    Offsets travel as decimal text: PySpark hands a nullable bigint column to pandas as
    float64, which rounds values above 2^53 (and 2^63-1 overflows on the way back to int);
    text is exact, and also carries an unsigned column's values above 2^63-1 to the planner,
    which reports them (OFFSET_OUT_OF_RANGE) instead of wrapping them."""
    return offsets.select(
        F.lit(KIND_OFFSETS).alias("kind"),
        "group_id",
        F.lit(None).cast("string").alias("member_id"),
        "topic",
        F.col("partition").cast("bigint").alias("partition"),
        F.col("committed_offset").cast("string").alias("committed_offset"),
        F.col("log_end_offset").cast("string").alias("log_end_offset"),
    )


def _problems_frame(spark: SparkSession, problems: list[Problem]) -> DataFrame:
    """Driver-side `rejected` rows (topic checks) in the UDF's output form."""
    rows = [(KIND_REJECTED, p.group_id, problem_payload(p)) for p in problems]
    return spark.createDataFrame(rows, "kind string, group_id string, payload string")


def split_output(wide: DataFrame, small: DataFrame) -> dict[str, DataFrame]:
    """The output tables of the UDF's frame, with the contract's column types
    (`jobs.tables.rows.spark_projections`).

    `small` holds the wide frame's non-assignment rows: the small tables are read from it,
    so writing and counting them never scans the millions of assignment rows again.
    """
    out = {}
    for kind, table in TABLE_OF.items():
        rows = (wide if kind == KIND_ASSIGNMENT else small).where(F.col("kind") == kind)
        first, typed = spark_projections(kind)
        out[table.name] = rows.selectExpr(*first).selectExpr(*typed)
    return out


# Hash keys of each table's files (`jobs.tables.contract.Table.file_keys`). `assignments` also
# hashes the partition: by group alone, a 1M-partition group kept one core busy writing while
# the others idled.
PARTITION_KEYS = {t.name: t.file_keys for t in contract.OUTPUTS}


def sorted_for_write(df: DataFrame, table: str, files: int) -> DataFrame:
    keys = SORT_KEYS[table]
    # Fixed hash partitioning + a total sort within files: the same data whatever the
    # shuffle settings or the order the UDF produced rows in.
    by = PARTITION_KEYS[table]
    return df.repartition(files, *by).sortWithinPartitions(*keys)


def _as_recorded(path: str) -> str:
    """The input as the manifest records it: a relative local path made absolute, so that
    `describe` finds the snapshot (and compares it) from any working directory."""
    return path if ":" in path or os.path.isabs(path) else os.path.abspath(path)


def run(
    spark: SparkSession,
    input_dir: str,
    output_dir: str,
    config: PlannerConfig,
    ds: str | None = None,
    *,
    force: bool = False,
    report: bool = True,
    settings: RunSettings | None = None,
    previous: str | None = None,
) -> Manifest:
    """Plan the snapshot in `input_dir` and replace `output_dir` with the tables.

    `settings`: the run's, when the caller built them from `config` already. `previous`: a
    previous output to compare with (the `changes` table; one warning when it cannot be).
    Raises ConfigError, SchemaError or output.OutputError (all exit 2) before planning.
    """
    started = time.monotonic()
    clock = _Laps(started)
    settings = RunSettings.from_config(config) if settings is None else settings
    protocols = settings.catalog.protocols
    check_plugins_on_executors(
        spark, [s.name for s in settings.catalog.strategies if not s.builtin]
    )
    output_dir = output.normalize(output_dir)
    with output.claim(spark, output_dir, input_dir, force, config.output.lock_lease_s) as target:
        # read before planning: `previous` may be the output this run replaces
        since = None if previous is None else read_since(spark, previous)
        log.info("reading inputs from %s", input_dir)
        tables = read_inputs(spark, input_dir)
        topic_partitions = tables[TOPIC_PARTITIONS.name]
        assert topic_partitions is not None  # invariant: read_inputs raises for required tables
        present = [(n, df) for n, df in tables.items() if df is not None]
        (catalog, topic_problems), *counts_read = together(
            lambda: topic_catalog(topic_partitions), *[df.count for _, df in present]
        )
        input_rows = dict.fromkeys(tables) | {
            n: rows for (n, _), rows in zip(present, counts_read, strict=True)
        }
        clock.lap("read")
        buckets = config.execution.buckets or default_buckets(
            input_rows[SUBSCRIPTIONS.name] or 0, spark.sparkContext.defaultParallelism
        )
        log.info(
            "inputs read in %.1f s; planning %d strategies (%s) in %d buckets; %d topics",
            time.monotonic() - started,
            len(protocols),
            ", ".join(protocols),
            buckets,
            len(catalog),
        )
        catalog_bc = spark.sparkContext.broadcast(catalog)
        try:
            with target.replace() as tmp:
                rows_dir = workers_rows_dir(target)
                wide = _planned(
                    spark,
                    tables,
                    settings,
                    config.execution.output_files,
                    buckets,
                    lambda: catalog_bc.value,
                    topic_problems,
                    rows_dir,
                )
                counts, (planning, peak_mib, cores) = _plan_and_write(
                    spark,
                    wide,
                    tmp,
                    rows_dir,
                    config.execution.output_files,
                    clock,
                    started,
                    topic_problems,
                )
                target.discard(STAGED)
                target.discard(STAGED_ROWS)
                clock.lap("write")
                changed = _changes(spark, since, tmp, target.local_tmp, config)
                feed = write_capacity_feed(spark, tmp, settings, ds)
                # The report's aggregations start before the summary's, and overlap them.
                with _report_page(spark, tmp, report) as write_page:
                    summary, whatif = _summaries(spark, tmp)
                    clock.lap("summary")
                    log.info("tables written after %.1f s", time.monotonic() - started)
                    manifest = Manifest(
                        version=version(),
                        ds=ds,
                        input=_as_recorded(input_dir),
                        output=output_dir,
                        strategies=protocols,
                        config=config.as_dict(),
                        input_rows=input_rows,
                        output_rows={t: counts[t] for t in contract.OUTPUT_NAMES}
                        | ({} if changed is None else {contract.CHANGES.name: changed}),
                        topics=len(catalog),
                        # the UDF writes one elections row per input group (group_id not null)
                        groups=GroupCounts(
                            counts["elections"], counts["planned_groups"], counts["rejected_groups"]
                        ),
                        planned_by_strategy=planned_by_strategy(protocols, summary),
                        rejected_by_reason=counts["by_reason"],
                        spark_version=spark.version,
                        duration_seconds=round(time.monotonic() - started, 3),
                        summary=summary,
                        whatif=whatif,
                        previous=None if since is None else since.as_manifest(),
                        live_verdicts=counts["verdicts"],
                        migration_paths=counts["migration_paths"],
                    )
                    manifest.capacity_feed = feed
                    manifest.report = write_page(manifest)
                    clock.lap("report")
                manifest.phases = {
                    "wall": clock.laps,
                    "planning": planning,
                    "memory": {"peak_bucket_rss_mib": peak_mib},
                    "core": cores,
                }
                manifest.duration_seconds = round(time.monotonic() - started, 3)
                fs.write_json(spark, f"{tmp}/{MANIFEST_FILE}", manifest.to_json())
        finally:
            catalog_bc.unpersist()
    return manifest


def _changes(
    spark: SparkSession,
    since: Since | None,
    tmp: str,
    local_tmp: str | None,
    config: PlannerConfig,
) -> int | None:
    """The `changes` table's rows, written in `tmp`; None without a previous run to compare
    with (the table is then absent)."""
    if since is None:
        return None
    return write_changes(
        spark,
        since,
        tmp,
        local_tmp,
        config.execution.output_files,
        config.changes.min_lag_change,
    )


def write_capacity_feed(
    spark: SparkSession, tmp: str, settings: RunSettings, ds: str | None
) -> str | None:
    """capacity.json beside the tables just written in `tmp` (`jobs.tables.capacity_feed`),
    from the `capacity` rows of each group's elected strategy and the `elections` table: one
    row per planned group reaches the driver, never more. Returns the file's name, None when
    the run leaves capacity out."""
    if settings.capacity is None:
        return None
    capacity = spark.read.schema(OUTPUT_SCHEMAS["capacity"]).parquet(f"{tmp}/capacity")
    elections = spark.read.schema(OUTPUT_SCHEMAS["elections"]).parquet(f"{tmp}/elections")
    elected = elections.where(F.col("elected_strategy").isNotNull()).select(
        "group_id", F.col("elected_strategy").alias("elected")
    )
    # the `elected` row where the run plans it, else the row of the elected strategy's name
    rows = (
        capacity.join(elected, "group_id")
        .where((F.col("strategy") == ELECTED) | (F.col("strategy") == F.col("elected")))
        .collect()
    )
    names = {r["group_id"]: r["elected"] for r in rows}
    target = settings.capacity.target
    content = capacity_feed(
        [r.asDict() for r in rows], names, ds=ds, target=None if target is None else str(target)
    )
    fs.write_json(spark, f"{tmp}/{CAPACITY_FEED_FILE}", content)
    log.info("%s written: %d groups", CAPACITY_FEED_FILE, len(content["groups"]))
    return CAPACITY_FEED_FILE


class _Laps:
    """Wall seconds of the run's phases on the driver, in the order they end."""

    def __init__(self, started: float) -> None:
        self.last = started
        self.laps: dict[str, float] = {}

    def lap(self, phase: str) -> None:
        now = time.monotonic()
        self.laps[phase] = round(now - self.last, 3)
        self.last = now


# The UDF's rows, staged in the run's temporary directory (removed before it becomes the
# output; "_" hides it from Spark's readers meanwhile). Parquet, not Spark's cache: written
# once and read back column by column, it is faster than the in-memory columnar cache for
# the same rows (docs/performance.md), and it holds no memory.
STAGED = "_planned"
# The assignment rows, when the workers write them themselves (`workers_rows_dir`).
STAGED_ROWS = "_planned_rows"


def workers_rows_dir(target: output.Target) -> str | None:
    """Where the buckets write their assignment rows as Parquet (`jobs.plan.udf.write_rows`):
    STAGED_ROWS in the run's temporary directory when the output is local, else None (the
    rows then reach STAGED through Spark). A local output is one the workers already share
    with the driver: Spark's own writes of it need that as well.

    Why: turning a bucket's rows from Arrow into JVM rows and encoding them in the JVM cost
    several times what pyarrow's encoder does in the worker (see docs/performance.md)."""
    if target.local_tmp is None:
        return None
    path = f"{target.local_tmp}/{STAGED_ROWS}"
    os.makedirs(path, exist_ok=True)  # read back even when no bucket wrote a row
    return path


def _plan_and_write(
    spark: SparkSession,
    wide: DataFrame,
    tmp: str,
    rows_dir: str | None,
    files: int,
    clock: _Laps,
    started: float,
    topic_problems: list[Problem],
) -> tuple[dict[str, Any], Timing]:
    """Run the planning into `tmp`/STAGED (and the workers' `rows_dir`), then write every
    table into `tmp` from there; the output counts and the buckets' timing (see
    `_output_counts`; `topic_problems`: the driver's rows in `wide`)."""
    staged = f"{tmp}/{STAGED}"
    wide.write.mode("error").parquet(staged)
    planned = spark.read.schema(WIDE_SCHEMA).parquet(staged)
    by_workers_kinds: list[str] = []  # the staged tables the executors' pyarrow writes
    small: DataFrame | None = None
    try:
        if rows_dir is None:
            small = _small_rows(spark, planned, by_workers_kinds)
            counts, timing = _output_counts(small, topic_problems)
        else:
            # The staged rows are the small rows (the assignment rows are in `rows_dir`):
            # the counts read the timing rows from there, and the tables pyarrow writes from
            # the staged payloads are left out of what Spark keeps for its own writes.
            counts, timing = _output_counts(planned, topic_problems)
            by_workers_kinds = [
                k for k, t in payload_files.TABLES.items() if payload_files.fits(counts[t])
            ]
            small = _small_rows(spark, planned, by_workers_kinds)
        clock.lap("plan")
        log.info(
            "planned %d groups, rejected %d, after %.1f s",
            counts["planned_groups"],
            counts["rejected_groups"],
            time.monotonic() - started,
        )
        # The workers' rows: written into the table by pyarrow when each file's rows fit a
        # worker's memory, else read back by Spark with the staged rows.
        by_pyarrow = rows_dir is not None and assignment_files.fits(counts["assignments"], files)
        if rows_dir is not None and not by_pyarrow:
            planned = spark.read.schema(WIDE_SCHEMA).parquet(staged, f"{tmp}/{STAGED_ROWS}")
        outputs = split_output(planned, small)
        # the tables the executors' pyarrow writes, each job by the name of its result
        by_workers: dict[str, Callable[[], Any]] = {}
        if rows_dir is not None:
            local_tmp = os.path.dirname(rows_dir)  # the run's temporary directory (OS path)
            # Started first: the longest job (both jobs run one task per output file).
            if by_pyarrow:
                del outputs["assignments"]
                table_dir = os.path.join(local_tmp, "assignments")
                by_workers["assignments"] = functools.partial(
                    assignment_files.write_assignments, spark, rows_dir, table_dir, files
                )
            # the tables whose rows are staged as payloads (`jobs.output.payload_files`)
            for kind in by_workers_kinds:
                del outputs[payload_files.TABLES[kind]]
            if by_workers_kinds:
                by_workers["payload tables"] = functools.partial(
                    payload_files.write_tables,
                    spark,
                    os.path.join(local_tmp, STAGED),
                    local_tmp,
                    files,
                    by_workers_kinds,
                )
        results = dict(
            zip(by_workers, _write_tables(outputs, tmp, files, *by_workers.values()), strict=True)
        )
        # the same staged rows the counts were taken from: a difference is a bug
        for name, n in results.get("payload tables", {}).items():
            if n != counts[name]:
                raise RuntimeError(f"{name}: {n} rows written, {counts[name]} planned")
        if by_pyarrow:
            counts["assignments"] = results["assignments"]
        else:
            # Counted as written: the files' footers hold their row counts (a small job),
            # where counting the staged rows, each standing for one or more strategies,
            # read them all.
            table = spark.read.schema(OUTPUT_SCHEMAS["assignments"]).parquet(f"{tmp}/assignments")
            counts["assignments"] = table.count()
    finally:
        if small is not None:
            small.unpersist()
    log.info("%d assignment rows", counts["assignments"])
    return counts, timing


def _small_rows(spark: SparkSession, planned: DataFrame, left_out: list[str]) -> DataFrame:
    """The staged rows of the small tables (but the kinds `left_out`), kept for the counts
    and the small tables' writes. In as many partitions as there are cores, not one per
    bucket: the dozen small jobs over them then schedule a few tasks each, not `buckets`
    tasks of a few milliseconds."""
    return (
        planned.where(~F.col("kind").isin(KIND_ASSIGNMENT, *left_out))
        .select("kind", "group_id", PAYLOAD)
        .coalesce(spark.sparkContext.defaultParallelism)
        .persist(StorageLevel.MEMORY_AND_DISK)
    )


def _summaries(spark: SparkSession, tmp: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The manifest's per-strategy and what-if summaries, from the files just written in
    `tmp`: typed Parquet columns, not a second parse of the JSON payloads (seconds on a large
    estate), read with the contract's schemas (no job to infer them from the files)."""
    written = {
        t: spark.read.schema(OUTPUT_SCHEMAS[t]).parquet(f"{tmp}/{t}") for t in SUMMARY_TABLES
    }
    summary, whatif = together(
        lambda: strategy_summary(written["balance_metrics"]),
        lambda: whatif_summary(written["rebalance_costs"], written["recommendations"]),
    )
    return summary, whatif


@contextmanager
def _report_page(
    spark: SparkSession, tmp: str, report: bool
) -> Iterator[Callable[[Manifest], str | None]]:
    """report.html beside the tables: its aggregations start on entry, and the function it
    yields writes the page and returns its name, or None when there is no page to write.

    The report is for people, the tables are the product: a driver without the plotting
    packages (`pip install '.[report]'`) still writes every table, and says why no page.
    """
    if not report:
        yield lambda _: None
        return
    try:
        import jinja2  # noqa: F401  (probe: the extra is installed)
        import matplotlib  # noqa: F401

        from jobs.report import REPORT_FILE, started_report
    except ImportError as exc:  # matplotlib / jinja2 are driver-only extras
        log.warning("report.html not written: %s (install the 'report' extra)", exc)
        yield lambda _: None
        return
    with started_report(spark, tmp, own=True) as write:

        def page(manifest: Manifest) -> str:
            write(manifest)
            log.info("report written")
            return REPORT_FILE

        yield page


def _planned(
    spark: SparkSession,
    tables: dict[str, DataFrame | None],
    settings: RunSettings,
    output_files: int,
    buckets: int,
    catalog_value: Callable[[], dict[str, TopicStatus]],
    topic_problems: list[Problem],
    rows_dir: str | None = None,
) -> DataFrame:
    """The UDF's wide frame (lazy): every group planned in its bucket, plus the topic rows;
    with `rows_dir`, the buckets write their assignment rows there instead."""
    subscriptions = tables[SUBSCRIPTIONS.name]
    assert subscriptions is not None  # invariant: read_inputs raises for required tables
    current = tables[CURRENT_ASSIGNMENT.name]
    offsets = tables[OFFSETS.name]
    target = tables.get(TARGET_ASSIGNMENT.name)
    ctx = PlanContext(
        settings.for_inputs(
            has_current_assignment=current is not None,
            has_offsets=offsets is not None,
            has_weights=has_weights(catalog_value()),
            has_target_assignment=target is not None,
        ),
        rows_dir=rows_dir,
        output_files=None if rows_dir is None else output_files,
    )
    members, partitions = planner_input(subscriptions, current, buckets, offsets, target)

    # One task per bucket, spread over every core: AQE would coalesce the shuffle into
    # fewer, uneven tasks (an explicit repartition is left alone).
    def by_bucket(frame: DataFrame) -> GroupedData:
        return frame.repartition(buckets, "bucket").groupBy("bucket")

    if partitions is None:
        wide = by_bucket(members).applyInPandas(bucket_function(catalog_value, ctx), WIDE_SCHEMA)
    else:
        wide = (
            by_bucket(members)
            .cogroup(by_bucket(partitions))
            .applyInPandas(cogrouped_bucket_function(catalog_value, ctx), WIDE_SCHEMA)
        )
    if topic_problems:
        wide = wide.unionByName(_problems_frame(spark, topic_problems), allowMissingColumns=True)
    return wide


def has_weights(catalog: dict[str, TopicStatus]) -> bool:
    """Whether the input gives weights: some usable topic has a non-null weight (else every
    weight column is null, never 1.0 per partition)."""
    return any(status.weights for status in catalog.values())


def _write_tables(
    outputs: dict[str, DataFrame], tmp: str, files: int, *also: Callable[[], Any]
) -> list[Any]:
    """Every table into `tmp`, as jobs started together (with `also`, whose results are
    returned): the small tables' writes then run beside the assignments' instead of after
    them."""

    def write(table: str, frame: DataFrame) -> None:
        log.info("writing %s", table)
        writer = (
            sorted_for_write(frame, table, files)
            .write.mode("error")
            .option("parquet.block.size", OUTPUT_ROW_GROUP_BYTES)
        )
        folder = contract.TABLES[table].partition_by
        if folder is not None:
            writer = writer.partitionBy(folder)
        writer.parquet(f"{tmp}/{table}")

    return together(*also, *[lambda t=t, f=f: write(t, f) for t, f in outputs.items()])[: len(also)]


def planned_by_strategy(protocols: list[str], summary: list[dict[str, Any]]) -> dict[str, int]:
    """Planned (group, strategy) units per strategy: its balance_metrics rows (0 if none)."""
    planned = dict.fromkeys(protocols, 0)
    planned.update({s["strategy"]: int(s["groups"]) for s in summary})
    return planned


def _migration_paths(buckets: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """The buckets' `migrations` figures summed per path (Kafka's path, blocker and warning
    order; codes with no rows left out)."""
    out: dict[str, dict[str, Any]] = {}
    for path in PATHS:
        figures = [b[path] for b in buckets if path in b]
        if not figures:
            continue
        codes = {key: Counter[str]() for key in ("blockers", "warnings")}
        for f in figures:
            for key, counter in codes.items():
                counter.update(f[key])
        out[path] = {
            "groups": sum(f["groups"] for f in figures),
            "ready": sum(f["ready"] for f in figures),
            "blockers": {c: codes["blockers"][c] for c in BLOCKERS if codes["blockers"][c]},
            "warnings": {c: codes["warnings"][c] for c in WARNINGS if codes["warnings"][c]},
        }
    return out


def _output_counts(
    small: DataFrame, topic_problems: list[Problem]
) -> tuple[dict[str, Any], Timing]:
    """Rows per small table (`assignments` is counted once written: `_plan_and_write`),
    groups planned and rejected, rejected rows by reason; the buckets' phase seconds summed
    over every worker, the largest peak memory (MiB) of a process that planned a bucket, and
    the planned buckets per core that planned them (compiled, pure).

    From the buckets' timing rows (one collect: each carries the `Tally` of the rows its
    bucket wrote), and the driver's own topic rows."""
    rows = Counter({KIND_REJECTED: len(topic_problems)})
    by_reason = Counter(reason_key(p) for p in topic_problems)
    planned = rejected = assignment_rows = 0  # the topic rows name no group
    verdicts: Counter[str] = Counter()
    migrations: list[dict[str, dict[str, Any]]] = []  # per bucket
    seconds = dict.fromkeys(PHASES, 0.0)
    peak = 0.0
    cores: dict[str, float] = dict.fromkeys((COMPILED, PURE), 0)  # counts (ints)
    for row in small.where(F.col("kind") == KIND_TIMING).select(PAYLOAD).collect():
        timing = json.loads(row[PAYLOAD])
        bucket = timing.pop(TALLY)
        if CORE in bucket:  # a planned bucket (not the rows of a guard's failures)
            cores[bucket[CORE]] = cores.get(bucket[CORE], 0) + 1
        peak = max(peak, float(timing.pop(PEAK_RSS_MIB, 0.0)))
        for phase, value in timing.items():
            seconds[phase] = seconds.get(phase, 0.0) + float(value)
        rows.update(bucket["rows"])
        by_reason.update(bucket["by_reason"])
        planned += bucket["planned_groups"]
        rejected += bucket["rejected_groups"]  # a group's rows are all in its bucket
        assignment_rows += bucket["assignment_rows"]
        verdicts.update(bucket.get("verdicts") or {})
        migrations.append(bucket.get("migrations") or {})
    out: dict[str, Any] = {
        table.name: rows.get(k, 0) for k, table in TABLE_OF.items() if k != KIND_ASSIGNMENT
    }
    # as the buckets made them; the written rows are counted once written (`_plan_and_write`)
    out["assignments"] = assignment_rows
    out["planned_groups"], out["rejected_groups"] = planned, rejected
    out["verdicts"] = {v: verdicts[v] for v in VERDICTS if verdicts[v]}
    out["migration_paths"] = _migration_paths(migrations)
    out["by_reason"] = {
        key: by_reason[key] for key in sorted(by_reason, key=lambda k: tuple(k.split(":", 1)))
    }
    timing_out = {phase: round(s, 3) for phase, s in seconds.items()}
    return out, (timing_out, peak, cores)
