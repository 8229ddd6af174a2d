"""The data contract (docs/data-contract.md), declared once in Arrow terms: every table's
columns with their types and nullability, which inputs are required, and how each output
table's files are laid out (sort keys, the columns its rows are spread over files by, the
folder column).

No pyspark here: the Spark schemas (`jobs.tables.schemas`), the pyarrow readers
(`jobs.tables.group_read`, `jobs.plan.one_group`), the pyarrow writers (`jobs.output`, the
exporter's `jobs.export.writer`) and the buckets' row format (`jobs.tables.rows`) derive
from it, and a test checks the page against it (tests/jobs/tables/test_contract.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from assignors.analysis.live import LIVE_CHECK_COLUMNS
from assignors.analysis.metrics import METRIC_COLUMNS
from assignors.migration.paths import MIGRATION_COLUMNS
from assignors.whatif.capacity import CAPACITY_COLUMNS
from assignors.whatif.recommend import RECOMMENDATION_COLUMNS
from assignors.whatif.simulation import REBALANCE_COST_COLUMNS
from assignors.widths import BIGINT_COLUMNS

# The contract's types: Spark's string, int, bigint, double, boolean, array<string>.
STRING = pa.string()
INT = pa.int32()
LONG = pa.int64()
DOUBLE = pa.float64()
BOOL = pa.bool_()
STRINGS = pa.list_(pa.string())


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    nullable: bool


@dataclass(frozen=True)
class Table:
    """One table of the contract. Inputs: `required`. Outputs: each file sorted by
    `sort_keys`; rows spread over a table's files by `pmod(hash(file_keys), files)`; one
    folder per value of `partition_by`."""

    name: str
    columns: tuple[Column, ...]
    required: bool = False
    sort_keys: tuple[str, ...] = ()
    file_keys: tuple[str, ...] = ("group_id",)
    partition_by: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def nullable(self) -> frozenset[str]:
        return frozenset(c.name for c in self.columns if c.nullable)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def schema(self) -> pa.Schema:
        """The table's Arrow schema, nullability included."""
        return pa.schema([pa.field(c.name, c.type, c.nullable) for c in self.columns])

    def read_schema(self) -> pa.Schema:
        """The schema pyarrow reads an input table under: every integer column as int64
        (the contract accepts any integer type; files of one table may differ), every column
        nullable (a nullable one may be absent from a file)."""
        return pa.schema(
            [(c.name, LONG if pa.types.is_integer(c.type) else c.type) for c in self.columns]
        )


def _columns(spec: Iterable[tuple[str, pa.DataType, bool]]) -> tuple[Column, ...]:
    return tuple(Column(n, t, nullable) for n, t, nullable in spec)


# ---- inputs ---------------------------------------------------------------------------------

TOPIC_PARTITIONS = Table(
    "topic_partitions",
    _columns(
        [
            ("topic", STRING, False),
            ("partition", INT, False),
            ("replica_racks", STRINGS, True),
            ("weight", DOUBLE, True),
        ]
    ),
    required=True,
)
SUBSCRIPTIONS = Table(
    "subscriptions",
    _columns(
        [
            ("group_id", STRING, False),
            ("member_id", STRING, False),
            ("group_instance_id", STRING, True),
            ("client_rack", STRING, True),
            ("topics", STRINGS, True),
            ("topic_pattern", STRING, True),
            ("assignment_strategies", STRINGS, True),
            ("generation", INT, True),
            # `classic` (null or absent) or `consumer` (KIP-848); both in a group: mid-migration
            ("group_protocol", STRING, True),
            # Kafka's name of the group's state at the snapshot (`Stable`, `PreparingRebalance`)
            ("group_state", STRING, True),
            # the member's client.id and host, as kafka-consumer-groups.sh --members shows them
            ("client_id", STRING, True),
            ("client_host", STRING, True),
            # the client library of the member's consumer (`java`, `librdkafka`,
            # `kafka-python`, or another name kept as given; null: not known)
            ("client_library", STRING, True),
            # whether the member's last assignment carried user data (a client-side assignor's
            # own state, which the consumer protocol's server-side assignment cannot carry)
            ("assignment_user_data", BOOL, True),
        ]
    ),
    required=True,
)
CURRENT_ASSIGNMENT = Table(
    "current_assignment",
    _columns(
        [
            ("group_id", STRING, False),
            ("member_id", STRING, False),
            ("topic", STRING, False),
            ("partition", INT, False),
        ]
    ),
)
OFFSETS = Table(
    "offsets",
    _columns(
        [
            ("group_id", STRING, False),
            ("topic", STRING, False),
            ("partition", INT, False),
            ("committed_offset", LONG, True),
            ("log_end_offset", LONG, False),
        ]
    ),
)
# For `consumer` (KIP-848) groups: the broker's target assignment, beside what the members
# hold in `current_assignment`.
TARGET_ASSIGNMENT = Table("target_assignment", CURRENT_ASSIGNMENT.columns)
INPUTS = (TOPIC_PARTITIONS, SUBSCRIPTIONS, CURRENT_ASSIGNMENT, TARGET_ASSIGNMENT, OFFSETS)

# ---- outputs --------------------------------------------------------------------------------

_PY_TYPES: dict[type, pa.DataType] = {
    int: INT,
    float: DOUBLE,
    bool: BOOL,
    str: STRING,
    list: STRINGS,
}


def core_type(name: str, typ: type) -> pa.DataType:
    """The type of a column the pure core names with a Python type: offsets and sums of
    offsets are bigint (their domain is a Kafka long), other integers count things of one
    group (int)."""
    if typ is int and name in BIGINT_COLUMNS:
        return LONG
    return _PY_TYPES[typ]


ASSIGNMENTS = Table(
    "assignments",
    _columns(
        [
            ("group_id", STRING, False),
            ("strategy", STRING, False),
            ("member_id", STRING, False),
            ("group_instance_id", STRING, True),
            ("topic", STRING, False),
            ("partition", INT, False),
            ("previous_member_id", STRING, True),
            ("rebalance_round", INT, False),
            # the partition's lag from `offsets` (null: unknown, or no offsets table)
            ("lag", LONG, True),
        ]
    ),
    sort_keys=("strategy", "group_id", "topic", "partition"),
    # a group's rows spread over every file: a large group's millions of rows are then
    # sorted and encoded by `files` tasks in parallel instead of one
    file_keys=("group_id", "partition"),
    partition_by="strategy",
)
BALANCE_METRICS = Table(
    "balance_metrics",
    _columns(
        [
            ("group_id", STRING, False),
            ("strategy", STRING, False),
            *((name, core_type(name, typ), True) for name, typ in METRIC_COLUMNS),
        ]
    ),
    sort_keys=("group_id", "strategy"),
)
ELECTIONS = Table(
    "elections",
    _columns(
        [
            ("group_id", STRING, False),
            ("elected_strategy", STRING, True),
            ("candidate_strategies", STRINGS, False),
            ("error", STRING, True),
            # `classic` or `consumer` (null for a group that is not planned), and for a
            # `consumer` group why the broker runs the elected assignor (null for classic)
            ("group_protocol", STRING, True),
            ("election_basis", STRING, True),
            # the client library whose leader assigns a classic group (`java` when the input
            # names none; null for a `consumer` group, which its broker assigns, and for a
            # group that is not planned): `elected` is planned with its variant
            ("client_library", STRING, True),
            # the highest `generation` a member reports (null: none reports one), and a
            # digest of the members' identities (`group_instance_id` for a static member,
            # `member_id` for a dynamic one): what a later run compares to tell a rebalance
            # (docs/changes.md); null for a group that is not planned
            ("max_generation", INT, True),
            ("members_digest", STRING, True),
            # ---- migration (docs/migration.md): how many members use each protocol (null
            # for a group that is not planned); both nonzero: a mixed group, mid-migration
            ("classic_members", INT, True),
            ("consumer_members", INT, True),
        ]
    ),
    sort_keys=("group_id",),
)
REJECTED = Table(
    "rejected",
    _columns(
        [
            ("group_id", STRING, True),
            ("member_id", STRING, True),
            ("topic", STRING, True),
            # set when only that strategy failed for the group; null for group-level problems
            ("strategy", STRING, True),
            ("severity", STRING, False),
            ("reason", STRING, False),
            ("detail", STRING, False),
        ]
    ),
    sort_keys=("group_id", "member_id", "topic", "strategy", "reason", "detail"),
)
# What-if rebalances and recommendations (docs/whatif.md): the pure core names the columns.
REBALANCE_COSTS = Table(
    "rebalance_costs",
    _columns((n, core_type(n, typ), nullable) for n, typ, nullable in REBALANCE_COST_COLUMNS),
    sort_keys=("group_id", "strategy", "scenario"),
)
RECOMMENDATIONS = Table(
    "recommendations",
    _columns(
        [
            *((n, core_type(n, typ), nullable) for n, typ, nullable in RECOMMENDATION_COLUMNS),
            # ---- migration (docs/migration.md): the next step of the move to the consumer
            # protocol (null: a consumer group, or no `migrations` rows)
            ("migration_next_step", STRING, True),
        ]
    ),
    sort_keys=("group_id",),
)
# How many members each group can use and needs (docs/capacity.md): the core names the columns.
CAPACITY = Table(
    "capacity",
    _columns((n, core_type(n, typ), nullable) for n, typ, nullable in CAPACITY_COLUMNS),
    sort_keys=("group_id", "strategy"),
)
# The current (or a KIP-848 group's target) assignment against the `elected` plan
# (docs/live.md): the core names the columns.
LIVE_CHECK = Table(
    "live_check",
    _columns((n, core_type(n, typ), nullable) for n, typ, nullable in LIVE_CHECK_COLUMNS),
    sort_keys=("group_id",),
)
# ---- migration: each group's ways to the consumer protocol (docs/migration.md)
MIGRATIONS = Table(
    "migrations",
    _columns((n, core_type(n, typ), nullable) for n, typ, nullable in MIGRATION_COLUMNS),
    sort_keys=("group_id", "path"),
)
OUTPUTS = (
    ASSIGNMENTS,
    BALANCE_METRICS,
    ELECTIONS,
    REJECTED,
    REBALANCE_COSTS,
    RECOMMENDATIONS,
    CAPACITY,
    LIVE_CHECK,
    MIGRATIONS,
)
OUTPUT_NAMES = tuple(t.name for t in OUTPUTS)

# ---- tables the driver writes (not the buckets), present only in some runs ------------------

# What changed since the previous output (`--previous`; docs/changes.md): the driver compares
# the two outputs' small tables (`jobs.tables.changes`).
CHANGES = Table(
    "changes",
    _columns(
        [
            ("group_id", STRING, False),
            ("change", STRING, False),
            ("before", STRING, True),
            ("after", STRING, True),
            ("detail", STRING, False),
        ]
    ),
    sort_keys=("group_id", "change"),
)
RUN_OUTPUTS = (CHANGES,)

TABLES = {t.name: t for t in (*INPUTS, *OUTPUTS, *RUN_OUTPUTS)}
