"""The broker's conditions for moving a group between the group protocols, as Kafka's group
coordinator checks them (`GroupMetadataManager`, `ConsumerGroupMigrationPolicy`), and the
settings that hold its configs (docs/migration.md).

* Online upgrade: the first consumer-protocol heartbeat to a non-empty classic group converts
  it to a consumer group only when `group.consumer.migration.policy` enables upgrades, the
  group uses the consumer embedded protocol (every group of a consumer snapshot does), and it
  has at most `group.consumer.max.size` members. Otherwise the heartbeat fails (the group id
  is taken by a classic group) and the member gets nothing.
* The conversion keeps the classic assignment as the first target and bumps the group epoch:
  the next target is the server assignor's, computed from what the members own.
* Online downgrade: when the last consumer-protocol member of a group leaves (or is fenced),
  the group goes back to classic when the policy enables downgrades, the group is not left
  empty and the members that stay are at most `group.classic.max.size`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from assignors.pickled import by_fields

BIDIRECTIONAL: Final = "bidirectional"
UPGRADE: Final = "upgrade"
DOWNGRADE: Final = "downgrade"
DISABLED: Final = "disabled"
POLICIES: Final = (BIDIRECTIONAL, UPGRADE, DOWNGRADE, DISABLED)
"""`group.consumer.migration.policy` values (Kafka's `ConsumerGroupMigrationPolicy`)."""

DEFAULT_POLICY: Final = BIDIRECTIONAL
"""Kafka's default `group.consumer.migration.policy`."""

DEFAULT_CONSUMER_MAX_SIZE: Final = 2**31 - 1
"""Kafka's default `group.consumer.max.size` (Integer.MAX_VALUE)."""

DEFAULT_CLASSIC_MAX_SIZE: Final = 2**31 - 1
"""Kafka's default `group.classic.max.size` (Integer.MAX_VALUE)."""

OTHER_STRATEGIES: Final = "*"
"""The `landing` key for every strategy the mapping does not name."""

DEFAULT_LANDING: Final[tuple[tuple[str, str], ...]] = (
    ("range", "server-range"),
    (OTHER_STRATEGIES, "uniform"),
)
"""Kafka's documented mapping for the move to the consumer protocol: a group on `range`
lands on the broker's range assignor, every other strategy on `uniform`."""


def upgrade_enabled(policy: str) -> bool:
    """`ConsumerGroupMigrationPolicy.isUpgradeEnabled`.

    >>> [upgrade_enabled(p) for p in POLICIES]
    [True, True, False, False]
    """
    return policy in (BIDIRECTIONAL, UPGRADE)


def downgrade_enabled(policy: str) -> bool:
    """`ConsumerGroupMigrationPolicy.isDowngradeEnabled`.

    >>> [downgrade_enabled(p) for p in POLICIES]
    [True, False, True, False]
    """
    return policy in (BIDIRECTIONAL, DOWNGRADE)


def normalise_policy(value: str) -> str | None:
    """A policy value as the broker reads it (case-insensitive), None when it is not one."""
    value = value.strip().lower()
    return value if value in POLICIES else None


@dataclass(frozen=True, slots=True)
class MigrationSettings:
    """`[migration]`: the broker configs the migration's conditions read, and the landing
    assignor of each client-side strategy (canonical names)."""

    policy: str = DEFAULT_POLICY
    consumer_max_size: int = DEFAULT_CONSUMER_MAX_SIZE
    landing: tuple[tuple[str, str], ...] = DEFAULT_LANDING

    def landing_for(self, strategy: str | None) -> str:
        """The server assignor a group on `strategy` lands on.

        >>> MigrationSettings().landing_for("range"), MigrationSettings().landing_for("sticky")
        ('server-range', 'uniform')
        """
        mapping: Mapping[str, str] = dict(self.landing)
        if strategy is not None and strategy in mapping:
            return mapping[strategy]
        return mapping.get(OTHER_STRATEGIES, "uniform")

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        return by_fields(self)  # it travels to the executors in the plan context


def upgrade_refusal(settings: MigrationSettings, members: int) -> list[str]:
    """The blockers `GroupMetadataManager.validateOnlineUpgrade` finds for a classic group of
    `members` members (empty: the first consumer-protocol heartbeat converts it)."""
    out: list[str] = []
    if not upgrade_enabled(settings.policy):
        out.append(MIGRATION_POLICY)
    if members > settings.consumer_max_size:
        out.append(GROUP_TOO_LARGE)
    return out


def downgrade_possible(policy: str, staying: int, classic_max_size: int) -> bool:
    """Whether a consumer group whose last consumer-protocol member leaves goes back to the
    classic protocol with `staying` classic members (`validateOnlineDowngradeWithFencedMember`):
    the policy enables it, somebody stays, and they fit `group.classic.max.size`."""
    return downgrade_enabled(policy) and staying >= 1 and staying <= classic_max_size


# ---- codes -----------------------------------------------------------------------------------

MIGRATION_POLICY: Final = "MIGRATION_POLICY"
ASSIGNMENT_USER_DATA: Final = "ASSIGNMENT_USER_DATA"
GROUP_TOO_LARGE: Final = "GROUP_TOO_LARGE"
INCONSISTENT_GROUP_PROTOCOL: Final = "INCONSISTENT_GROUP_PROTOCOL"
BLOCKERS: Final = (
    MIGRATION_POLICY,
    ASSIGNMENT_USER_DATA,
    GROUP_TOO_LARGE,
    INCONSISTENT_GROUP_PROTOCOL,
)

CUSTOM_ASSIGNOR: Final = "CUSTOM_ASSIGNOR"
PATTERN_NOT_RE2J: Final = "PATTERN_NOT_RE2J"
RACK_AWARENESS_LOST: Final = "RACK_AWARENESS_LOST"
WARNINGS: Final = (CUSTOM_ASSIGNOR, PATTERN_NOT_RE2J, RACK_AWARENESS_LOST)
