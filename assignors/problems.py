"""The problem vocabulary: `rejected` rows, their severities and reason codes, Kafka's limits.

A leaf module (of the planner it imports only `assignors.pickled`, itself a leaf), so that
every layer that finds a problem, from input checks and pattern translation to the what-if
simulation, speaks the same words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from assignors.pickled import by_fields

ERROR: Final = "error"
WARNING: Final = "warning"
INT32_MIN: Final = -(2**31)
INT32_MAX: Final = 2**31 - 1
INT64_MAX: Final = 2**63 - 1
"""Kafka's largest offset (a Java long); sums of offsets saturate here (LAG_SATURATED)."""
NOT_PLANNED: Final = "NOT_PLANNED"
"""`elections.error` of a group that is not planned (its reasons are in `rejected`)."""

KAFKA_MAX_TOPIC_LENGTH: Final = 249
"""`Topic.MAX_NAME_LENGTH` in Kafka."""
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")


class Reason(StrEnum):
    """Stable reason codes of the `rejected` table (UPPER_SNAKE, never renamed).

    The bad-input table of docs/data-contract.md lists exactly these codes (a unit test checks
    both agree).
    """

    # group-level errors: the group is not planned
    NULL_GROUP_ID = "NULL_GROUP_ID"
    EMPTY_GROUP_ID = "EMPTY_GROUP_ID"
    NULL_MEMBER_ID = "NULL_MEMBER_ID"
    DUPLICATE_MEMBER_ID = "DUPLICATE_MEMBER_ID"
    DUPLICATE_GROUP_INSTANCE_ID = "DUPLICATE_GROUP_INSTANCE_ID"
    TOPICS_AND_PATTERN = "TOPICS_AND_PATTERN"
    INVALID_PATTERN = "INVALID_PATTERN"
    PATTERN_NOT_RE2J = "PATTERN_NOT_RE2J"
    UNKNOWN_GROUP_PROTOCOL = "UNKNOWN_GROUP_PROTOCOL"
    # topic-level errors: every group subscribed to the topic is not planned
    NEGATIVE_PARTITION = "NEGATIVE_PARTITION"
    NON_CONTIGUOUS_PARTITIONS = "NON_CONTIGUOUS_PARTITIONS"
    NULL_PARTITION = "NULL_PARTITION"
    # warnings: planned, something ignored
    NULL_TOPIC = "NULL_TOPIC"
    DUPLICATE_SUBSCRIPTION = "DUPLICATE_SUBSCRIPTION"
    DUPLICATE_PARTITION = "DUPLICATE_PARTITION"
    NO_SUBSCRIPTION = "NO_SUBSCRIPTION"
    NULL_TOPIC_NAME = "NULL_TOPIC_NAME"
    INVALID_TOPIC_NAME = "INVALID_TOPIC_NAME"
    UNKNOWN_TOPIC = "UNKNOWN_TOPIC"
    UNKNOWN_ASSIGNMENT_STRATEGY = "UNKNOWN_ASSIGNMENT_STRATEGY"
    OWNED_NULL_KEY = "OWNED_NULL_KEY"
    OWNED_UNKNOWN_TOPIC = "OWNED_UNKNOWN_TOPIC"
    OWNED_UNKNOWN_PARTITION = "OWNED_UNKNOWN_PARTITION"
    DUPLICATE_OWNED_PARTITION = "DUPLICATE_OWNED_PARTITION"
    NO_MEMBERS = "NO_MEMBERS"
    EMPTY_GROUP_INSTANCE_ID = "EMPTY_GROUP_INSTANCE_ID"
    INVALID_GENERATION = "INVALID_GENERATION"
    # the snapshot caught the group in a rebalance: figures against its ownership are unsettled
    GROUP_REBALANCING = "GROUP_REBALANCING"
    # members name different client libraries: `elected` is planned with Java's assignor
    MIXED_CLIENT_LIBRARY = "MIXED_CLIENT_LIBRARY"
    NEGATIVE_MEMBER_EPOCH = "NEGATIVE_MEMBER_EPOCH"
    # the classic election found no strategy to plan as `elected` (warnings)
    INCONSISTENT_GROUP_PROTOCOL = "INCONSISTENT_GROUP_PROTOCOL"
    UNKNOWN_COMMON_STRATEGY = "UNKNOWN_COMMON_STRATEGY"
    # the broker-side election of a KIP-848 (`consumer`) group: warnings, the group is planned
    UNKNOWN_SERVER_ASSIGNOR = "UNKNOWN_SERVER_ASSIGNOR"
    CONFLICTING_SERVER_ASSIGNORS = "CONFLICTING_SERVER_ASSIGNORS"
    # planning errors of one (group, strategy): `Problem.strategy` names the strategy
    ASSIGNOR_FAILED = "ASSIGNOR_FAILED"
    INVALID_ASSIGNMENT = "INVALID_ASSIGNMENT"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    # a client library's leader fails on the group (`range@kafka-python`): a warning
    CLIENT_ASSIGNOR_FAILED = "CLIENT_ASSIGNOR_FAILED"
    # what-if rebalances (assignors.whatif.simulation): warnings, the group is planned
    SCENARIO_SKIPPED = "SCENARIO_SKIPPED"
    SCENARIO_NOT_APPLICABLE = "SCENARIO_NOT_APPLICABLE"
    SCENARIO_FAILED = "SCENARIO_FAILED"
    # load (offsets, weights): warnings, planned around (assignors.analysis.load)
    OFFSETS_NULL_KEY = "OFFSETS_NULL_KEY"
    OFFSETS_UNKNOWN_GROUP = "OFFSETS_UNKNOWN_GROUP"
    OFFSETS_UNKNOWN_TOPIC = "OFFSETS_UNKNOWN_TOPIC"
    OFFSETS_UNKNOWN_PARTITION = "OFFSETS_UNKNOWN_PARTITION"
    DUPLICATE_OFFSETS = "DUPLICATE_OFFSETS"
    CONFLICTING_OFFSETS = "CONFLICTING_OFFSETS"
    COMMITTED_PAST_LOG_END = "COMMITTED_PAST_LOG_END"
    NEGATIVE_OFFSET = "NEGATIVE_OFFSET"
    OFFSET_OUT_OF_RANGE = "OFFSET_OUT_OF_RANGE"
    LAG_SATURATED = "LAG_SATURATED"
    NULL_LOG_END_OFFSET = "NULL_LOG_END_OFFSET"
    INVALID_WEIGHT = "INVALID_WEIGHT"


@dataclass(frozen=True, slots=True, init=False)
class Problem:
    """One row of the `rejected` table; `strategy` is set when only that strategy failed."""

    group_id: str | None
    member_id: str | None
    topic: str | None
    severity: str
    reason: str
    detail: str
    strategy: str | None = None

    def __init__(
        self,
        group_id: str | None,
        member_id: str | None,
        topic: str | None,
        severity: str,
        reason: str,
        detail: str,
        strategy: str | None = None,
    ) -> None:
        object.__setattr__(self, "group_id", group_id)
        object.__setattr__(self, "member_id", member_id)
        object.__setattr__(self, "topic", topic)
        object.__setattr__(self, "severity", severity)
        # A plain str, whatever the caller passed (a `Reason` member pickles as an enum).
        object.__setattr__(self, "reason", str(reason))
        object.__setattr__(self, "detail", detail)
        object.__setattr__(self, "strategy", strategy)

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        # the look-alike memo's warnings go back from a bucket's child to its worker
        return by_fields(self)


def is_legal_topic_name(name: str) -> bool:
    """Kafka's `Topic.validate`: 1..249 characters of `[a-zA-Z0-9._-]`, neither `.` nor `..`.

    >>> [is_legal_topic_name(n) for n in ("orders.v1", "", ".", "a b", "x" * 250)]
    [True, False, False, False, False]
    """
    return name not in (".", "..") and _LEGAL_TOPIC.fullmatch(name) is not None
