"""Kafka's conditions for moving a group between the protocols (`GroupMetadataManager`,
`ConsumerGroupMigrationPolicy`), restated as the `migrations` table sees them; each test is
named after the Kafka test that pins the same behaviour."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from assignors.catalog.catalog import StrategyCatalog
from assignors.inputs.validation import MemberRow, OwnedRow, TopicStatus, build_group
from assignors.migration.conditions import (
    ASSIGNMENT_USER_DATA,
    BIDIRECTIONAL,
    DEFAULT_CONSUMER_MAX_SIZE,
    DEFAULT_LANDING,
    DEFAULT_POLICY,
    DISABLED,
    DOWNGRADE,
    GROUP_TOO_LARGE,
    MIGRATION_POLICY,
    UPGRADE,
    MigrationSettings,
    downgrade_possible,
    normalise_policy,
    upgrade_refusal,
)
from assignors.migration.paths import CLASSIC_TO_CONSUMER, MigrationRow, group_migrations
from assignors.planner import plan_group

STRATEGIES = ["range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "server-range"]
CATALOG = {"t": TopicStatus(6)}


def migrate(
    strategies: Sequence[str] | None,
    members: int = 3,
    settings: MigrationSettings | None = None,
    user_data: frozenset[str] = frozenset(),
) -> MigrationRow:
    catalog = StrategyCatalog.build(STRATEGIES)
    rows = [
        MemberRow(f"c{i}", topics=["t"], assignment_strategies=strategies) for i in range(members)
    ]
    owned = [OwnedRow(f"c{i % members}", "t", p) for i, p in enumerate(range(6))]
    spec, problems = build_group("g", rows, owned, CATALOG, catalog.is_known)
    assert spec is not None, problems
    plan = plan_group(spec, catalog, True)
    out = group_migrations(
        spec, plan, catalog, settings or MigrationSettings(), user_data=user_data
    )
    return next(r for r in out if r["path"] == CLASSIC_TO_CONSUMER)


def test_kafka_defaults() -> None:
    # GroupCoordinatorConfig: CONSUMER_GROUP_MIGRATION_POLICY_DEFAULT = BIDIRECTIONAL,
    # CONSUMER_GROUP_MAX_SIZE_DEFAULT = Integer.MAX_VALUE
    assert DEFAULT_POLICY == BIDIRECTIONAL
    assert DEFAULT_CONSUMER_MAX_SIZE == 2_147_483_647
    # the consumer rebalance protocol's mapping: range -> the broker's range, else uniform
    assert dict(DEFAULT_LANDING) == {"range": "server-range", "*": "uniform"}


@pytest.mark.parametrize(
    ("policy", "upgrade", "downgrade"),
    [
        (BIDIRECTIONAL, True, True),
        (UPGRADE, True, False),
        (DOWNGRADE, False, True),
        (DISABLED, False, False),
    ],
)
def test_consumer_group_migration_policy(policy: str, upgrade: bool, downgrade: bool) -> None:
    # ConsumerGroupMigrationPolicy's isUpgradeEnabled / isDowngradeEnabled
    assert (not upgrade_refusal(MigrationSettings(policy=policy), 3)) is upgrade
    assert downgrade_possible(policy, 2, DEFAULT_CONSUMER_MAX_SIZE) is downgrade


def test_policy_values_are_case_insensitive() -> None:
    # the broker's config validator: ConfigDef.CaseInsensitiveValidString
    assert normalise_policy(" Upgrade ") == UPGRADE
    assert normalise_policy("both") is None


def test_consumer_group_heartbeat_with_stable_classic_group() -> None:
    # the first consumer-protocol heartbeat upgrades a stable classic group (policy UPGRADE)
    row = migrate(["range"], settings=MigrationSettings(policy=UPGRADE))
    assert row["ready"] is True
    assert row["blockers"] == []
    assert row["landing_assignor"] == "server-range"


def test_consumer_group_heartbeat_with_non_empty_classic_group() -> None:
    # the test context's policy is DISABLED: a heartbeat to a non-empty classic group fails
    # (GroupIdNotFoundException) instead of converting it
    row = migrate(["range"], settings=MigrationSettings(policy=DISABLED))
    assert row["ready"] is False
    assert row["blockers"] == [MIGRATION_POLICY]
    # a downgrade-only policy refuses the upgrade as well
    assert migrate(None, settings=MigrationSettings(policy=DOWNGRADE))["blockers"] == [
        MIGRATION_POLICY
    ]


def test_joining_consumer_group_throws_exception_if_group_over_max_size() -> None:
    # validateOnlineUpgrade: numMembers() > group.consumer.max.size refuses the upgrade
    assert migrate(["sticky"], members=3, settings=MigrationSettings(consumer_max_size=2))[
        "blockers"
    ] == [GROUP_TOO_LARGE]
    # at the limit it converts
    assert migrate(["sticky"], members=3, settings=MigrationSettings(consumer_max_size=3))["ready"]


def test_no_conversion_when_size_exceeds_classic_max_group_size() -> None:
    # the downgrade (last consumer member leaves): the members that stay must fit
    # group.classic.max.size, and the group must not be left empty
    assert downgrade_possible(BIDIRECTIONAL, staying=3, classic_max_size=2) is False
    assert downgrade_possible(BIDIRECTIONAL, staying=2, classic_max_size=2) is True
    assert downgrade_possible(BIDIRECTIONAL, staying=0, classic_max_size=2) is False


def test_classic_group_with_assignment_user_data_is_blocked() -> None:
    # fromClassicGroup keeps only the partitions of each member's assignment: the user data
    # a custom assignor stored there does not survive the conversion
    row = migrate(["sticky"], user_data=frozenset({"c1"}))
    assert row["blockers"] == [ASSIGNMENT_USER_DATA]
    both = migrate(
        ["sticky"],
        settings=MigrationSettings(policy=DISABLED, consumer_max_size=1),
        user_data=frozenset({"c0"}),
    )
    assert both["blockers"] == [MIGRATION_POLICY, ASSIGNMENT_USER_DATA, GROUP_TOO_LARGE]


@pytest.mark.parametrize(
    ("strategy", "landing"),
    [
        ("range", "server-range"),
        ("roundrobin", "uniform"),
        ("sticky", "uniform"),
        ("cooperative-sticky", "uniform"),
    ],
)
def test_landing_assignor_of_each_client_strategy(strategy: str, landing: str) -> None:
    assert migrate([strategy])["landing_assignor"] == landing


def test_landing_is_configurable() -> None:
    settings = MigrationSettings(landing=(("range", "uniform"), ("*", "server-range")))
    assert migrate(["range"], settings=settings)["landing_assignor"] == "uniform"
    assert migrate(["sticky"], settings=settings)["landing_assignor"] == "server-range"
