"""Planning one group without Spark: what `python -m jobs.plan_group` runs.

`plan_one` plans a group with the pure core: `build_group` -> `group_load` -> `plan_group` ->
`group_whatif`, `group_capacity`. The estate job's UDF (`jobs.plan.udf`) calls it for each
group of a bucket; the terminal calls it with the same settings built from the same config
(`RunSettings`), and `table_rows` turns the result into the rows the job writes for that
group, through the job's own row format (`jobs.tables.rows`: encoded as the UDF encodes
them, decoded as the job's writers decode them), so that the two agree row for row (an
end-to-end test compares them on the sample estate).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from assignors.analysis.live import LiveRow, group_library, live_check
from assignors.analysis.load import OffsetRow
from assignors.catalog.catalog import StrategyCatalog
from assignors.catalog.registry import ELECTED
from assignors.inputs.patterns import PatternResolver
from assignors.inputs.topics import partition_data
from assignors.inputs.validation import (
    MemberRow,
    OwnedRow,
    TopicStatus,
    build_group,
    check_topic,
    no_members_problem,
    null_topic_problem,
)
from assignors.migration.advice import next_step
from assignors.migration.paths import MigrationRow, group_migrations
from assignors.model import CLASSIC, CONSUMER, GroupSpec
from assignors.planner import ASSIGNMENT_ROW_FIELDS, GroupPlan, group_load, plan_group
from assignors.problems import ERROR, Problem
from assignors.whatif.capacity import CapacityRow, group_capacity
from assignors.whatif.group import GroupWhatIf, group_whatif
from assignors.whatif.lookalike import process_bounce_memo
from jobs.settings.run import RunSettings
from jobs.tables import contract
from jobs.tables.rows import SmallRows, decode_assignments, decode_rows

Row = dict[str, Any]


# `topic_partitions` as the catalog reads it (`jobs.tables.group_read` reads it so too).
TOPIC_PARTITIONS_ARROW = contract.TOPIC_PARTITIONS.read_schema()


def topic_catalog(rows: Iterable[Row]) -> tuple[dict[str, TopicStatus], list[Problem]]:
    """The topic catalog of `topic_partitions` rows, for the topics given (`catalog_of`)."""
    return catalog_of(pa.Table.from_pylist(list(rows), schema=TOPIC_PARTITIONS_ARROW))


def catalog_of(data: pa.Table) -> tuple[dict[str, TopicStatus], list[Problem]]:
    """The topic catalog of `topic_partitions` rows as an Arrow table (the job's driver and
    the terminal alike): each topic's partitions checked (`check_topic`), with their replica
    racks and weights where the input gives them (`assignors.inputs.topics.partition_data`;
    INVALID_WEIGHT warnings once per topic)."""
    catalog: dict[str, TopicStatus] = {}
    problems: list[Problem] = []
    for topic, rows, distinct, lowest, highest, nulls in _topic_stats(data):
        if topic is None:
            problems.append(null_topic_problem(rows))
            continue
        status, found = check_topic(topic, rows, distinct, lowest, highest, nulls)
        catalog[topic] = status
        problems.extend(found)
    # Per-partition data only where given (a null value means "no racks" / weight 1.0).
    given = data.filter(pc.or_(pc.is_valid(data["replica_racks"]), pc.is_valid(data["weight"])))
    topics, parts = given.column("topic").to_pylist(), given.column("partition").to_pylist()
    racks = given.column("replica_racks").to_pylist()
    weights = given.column("weight").to_pylist()
    catalog, weight_problems = partition_data(
        catalog,
        ((t, p, r) for t, p, r in zip(topics, parts, racks, strict=True) if r is not None),
        ((t, p, w) for t, p, w in zip(topics, parts, weights, strict=True) if w is not None),
    )
    return catalog, problems + weight_problems


def _topic_stats(
    data: pa.Table,
) -> list[tuple[str | None, int, int, int | None, int | None, int]]:
    """(topic, rows, distinct partitions, lowest, highest, null partitions) per topic, the
    arguments of `check_topic`; a null topic is one more group of rows."""
    stats = data.group_by("topic", use_threads=False).aggregate(
        [
            ([], "count_all"),
            ("partition", "count_distinct"),
            ("partition", "min"),
            ("partition", "max"),
            ("partition", "count", pc.CountOptions(mode="only_null")),
        ]
    )
    columns = [
        stats.column(name).to_pylist()
        for name in (
            "topic",
            "count_all",
            "partition_count_distinct",
            "partition_min",
            "partition_max",
            "partition_count",
        )
    ]
    return list(zip(*columns, strict=True))


def member_rows(rows: Iterable[Row]) -> list[MemberRow]:
    return [
        MemberRow(
            r["member_id"],
            r.get("group_instance_id"),
            r.get("client_rack"),
            r.get("topics"),
            r.get("topic_pattern"),
            r.get("assignment_strategies"),
            r.get("generation"),
            r.get("group_protocol"),
            r.get("group_state"),
            r.get("client_library"),
            r.get("assignment_user_data"),
        )
        for r in rows
    ]


@dataclass
class GroupResult:
    group_id: str
    problems: list[Problem] = field(default_factory=list)
    spec: GroupSpec | None = None
    plan: GroupPlan | None = None
    whatif: GroupWhatIf | None = None
    has_members: bool = True  # False: rows of current_assignment only (NO_MEMBERS)
    lags: Mapping[tuple[str, int], int | None] | None = None  # the group's, with offsets
    # the `capacity` rows (none when the run leaves capacity out) and their search's problems
    capacity: list[CapacityRow] = field(default_factory=list)
    capacity_problems: list[Problem] = field(default_factory=list)
    # the `live_check` row (None: no current or target assignment, or not planned)
    live: LiveRow | None = None
    # the `migrations` rows (none for a consumer group, or when the run leaves them out)
    migrations: list[MigrationRow] = field(default_factory=list)

    @property
    def member_counts(self) -> tuple[int, int] | None:
        """(classic, consumer) members of a planned group: the `elections` row's counts."""
        spec = self.spec
        if spec is None:
            return None
        n, classic = len(spec.members), len(spec.classic_members)
        if spec.group_protocol == CLASSIC:
            return n, 0
        return (classic, n - classic) if spec.group_protocol == CONSUMER else None


def plan_one(
    group_id: str,
    members: Sequence[MemberRow],
    owned: Iterable[OwnedRow],
    offsets: Sequence[OffsetRow],
    catalog: Mapping[str, TopicStatus],
    settings: RunSettings,
    resolve_pattern: PatternResolver | None = None,
    *,
    planned: StrategyCatalog | None = None,
    isolate_interrupts: bool = False,
    targets: Iterable[OwnedRow] | None = None,
) -> GroupResult:
    """One group, planned as the job's UDF plans each group of a bucket (`jobs.plan.udf`).

    `planned`: the strategies to plan, when fewer than the run's (a group whose members left
    some out); names are still checked against all of the run's. `isolate_interrupts`: a
    plugin's KeyboardInterrupt fails its strategy only (on an executor, where it cannot be a
    Ctrl-C). `targets`: the group's `target_assignment` rows (KIP-848), for `live_check`."""
    out = GroupResult(group_id)
    if not members:
        out.problems.append(no_members_problem(group_id))
        out.has_members = False
        return out
    strategies = settings.catalog
    spec, problems = build_group(
        group_id, members, owned, catalog, strategies.is_known, resolve_pattern
    )
    out.problems, out.spec = problems, spec
    if spec is None:
        return out
    load, found = group_load(
        spec,
        offsets if settings.has_offsets else None,
        catalog if settings.has_weights else None,
        settings.balance_by,
    )
    out.problems += found
    out.lags = load.lags
    guarded = planned is not None  # fewer strategies: the guard left some out
    planned = strategies if planned is None else planned
    library, found = group_library(
        group_id, (m.client_library for m in members), settings.library_by_group
    )
    out.problems += found
    out.plan = plan_group(
        spec,
        planned,
        settings.has_current_assignment,
        isolate_interrupts=isolate_interrupts,
        load=load,
        client_library=library,
    )
    if _planned(out.plan):
        out.live = _live_row(spec, out.plan, None if guarded else planned, members, targets)
    if settings.whatif is not None:
        out.whatif = group_whatif(spec, out.plan, planned, settings.whatif, lags=load.lags)
    if settings.capacity is not None and _planned(out.plan):
        out.capacity, out.capacity_problems = group_capacity(
            spec, out.plan, planned, load=load, settings=settings.capacity
        )
    if settings.migration is not None and _planned(out.plan):
        _migrations(out, members, planned, settings)
    return out


def _live_row(
    spec: GroupSpec,
    plan: GroupPlan,
    catalog: StrategyCatalog | None,
    members: Sequence[MemberRow],
    targets: Iterable[OwnedRow] | None,
) -> LiveRow | None:
    """The group's `live_check` row (`assignors.analysis.live.live_check`) against its
    `elected` plan, planned now with `catalog` when the run does not plan `elected` (None:
    the guard left strategies out for the group, and they are not run again)."""
    elected = next((p for p in plan.plans if p.strategy == ELECTED), None)
    chosen = plan.elected_with
    assignment = None if elected is None else elected.assignment
    failed = next((p for p in plan.problems if p.strategy in (ELECTED, chosen)), None)
    reason = None if failed is None else f"{failed.reason}: {failed.detail}"
    if elected is None and chosen is not None and failed is None:
        assignment = next((p.assignment for p in plan.plans if p.strategy == chosen), None)
        if assignment is None and catalog is None:  # the guard left it out: not run again
            reason = f"{chosen} was left out for this group by the per-group guard"
        elif assignment is None and catalog is not None:  # a run without `elected`
            try:
                assignment = catalog.elected_strategy(chosen).factory().rebalance(spec).assignment
            except Exception as exc:  # its failure is the verdict's evidence
                reason = f"{chosen} failed: {type(exc).__name__}: {exc}"
    target, ignored = _targets(spec, targets)
    row = live_check(
        spec,
        assignment,
        chosen,
        plan.client_library,
        (m.group_state for m in members),
        target,
        reason,
    )
    if row is not None and ignored:
        row["detail"] = (
            f"{row['detail']}; {ignored} target_assignment row(s) ignored (a null key, or a"
            " partition the topic does not have)"
        )
    return row


def _targets(
    spec: GroupSpec, rows: Iterable[OwnedRow] | None
) -> tuple[dict[str, list[tuple[str, int]]] | None, int]:
    """A KIP-848 group's target assignment (member -> partitions, sorted) from its
    `target_assignment` rows, and how many rows name no partition of the group's topics;
    None for a classic group or one without rows."""
    if rows is None or spec.group_protocol != CONSUMER:
        return None, 0
    out: dict[str, list[tuple[str, int]]] = {}
    ignored = 0
    for r in rows:
        member, topic, p = r.member_id, r.topic, r.partition
        if member and topic is not None and p is not None and 0 <= p < spec.partition_count(topic):
            out.setdefault(member, []).append((topic, p))
        else:
            ignored += 1
    if not out and not ignored:
        return None, 0
    return {m: sorted(set(tps)) for m, tps in out.items()}, ignored


def _migrations(
    out: GroupResult, members: Sequence[MemberRow], planned: StrategyCatalog, settings: RunSettings
) -> None:
    """The group's `migrations` rows, and their next step on its `recommendations` row."""
    assert out.spec is not None
    assert out.plan is not None
    assert settings.migration is not None
    out.migrations = group_migrations(
        out.spec,
        out.plan,
        planned,
        settings.migration,
        user_data=frozenset(m.member_id for m in members if m.assignment_user_data and m.member_id),
        patterns={m.member_id: m.topic_pattern for m in members if m.member_id and m.topic_pattern},
        max_members=None if settings.whatif is None else settings.whatif.max_members,
        max_partitions=None if settings.whatif is None else settings.whatif.max_partitions,
        memo=process_bounce_memo(),  # look-alike groups share their bounce costs
    )
    if out.whatif is not None and out.whatif.recommendation:
        out.whatif.recommendation["migration_next_step"] = next_step(out.migrations)


def _planned(plan: GroupPlan) -> bool:
    """Whether the group is planned (has an election and no group-level error): only a
    planned group has `capacity` rows, as only it has what-if rows."""
    rejected = any(p.severity == ERROR and p.strategy is None for p in plan.problems)
    return plan.election is not None and not rejected


def table_rows(result: GroupResult) -> dict[str, list[Row]]:
    """The group's rows of each output table, as the job writes them: encoded as the UDF
    encodes them (`jobs.tables.rows.SmallRows`), decoded as the job's writers decode them."""
    gid = result.group_id
    encoded = SmallRows()
    encoded.problems(result.problems)
    plan = result.plan
    if result.spec is None or plan is None:
        if result.has_members:  # every input group has an elections row
            encoded.not_planned(gid)
    else:
        encoded.plan(
            plan,
            result.whatif,
            result.spec.group_protocol,
            result.spec.members,
            result.member_counts,
        )
        encoded.capacity(gid, result.capacity, result.capacity_problems)
        encoded.live_check(result.live)
        encoded.migrations(gid, result.migrations)
    assignments = [
        {
            "group_id": gid,
            "strategy": sp.strategy,
            **dict(zip(ASSIGNMENT_ROW_FIELDS, values, strict=True)),
        }
        for sp in (plan.plans if result.spec is not None and plan is not None else [])
        for values in sp.rows
    ]
    return {"assignments": decode_assignments(assignments), **decode_rows(encoded.rows)}
