"""Input validation: raw snapshot rows -> a `GroupSpec`, plus every problem found (DESIGN §5).

Errors keep a group (or a topic's subscribers) from being planned; warnings are planned around.
Every problem becomes one `rejected` row with a stable reason code, so nothing is dropped
silently: input groups = planned groups + groups with at least one error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from assignors.model import GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.patterns import compile_java_pattern, match_topics

ERROR: Final = "error"
WARNING: Final = "warning"
INT32_MIN: Final = -(2**31)
INT32_MAX: Final = 2**31 - 1
NOT_PLANNED: Final = "NOT_PLANNED"
"""`elections.error` of a group that is not planned (its reasons are in `rejected`)."""


class Reason:
    """Stable reason codes of the `rejected` table (UPPER_SNAKE, never renamed)."""

    # group-level errors: the group is not planned
    NULL_GROUP_ID = "NULL_GROUP_ID"
    NULL_MEMBER_ID = "NULL_MEMBER_ID"
    DUPLICATE_MEMBER_ID = "DUPLICATE_MEMBER_ID"
    DUPLICATE_GROUP_INSTANCE_ID = "DUPLICATE_GROUP_INSTANCE_ID"
    TOPICS_AND_PATTERN = "TOPICS_AND_PATTERN"
    INVALID_PATTERN = "INVALID_PATTERN"
    # topic-level errors: every group subscribed to the topic is not planned
    NEGATIVE_PARTITION = "NEGATIVE_PARTITION"
    NON_CONTIGUOUS_PARTITIONS = "NON_CONTIGUOUS_PARTITIONS"
    NULL_PARTITION = "NULL_PARTITION"
    # warnings: planned, something ignored
    NULL_TOPIC = "NULL_TOPIC"
    DUPLICATE_PARTITION = "DUPLICATE_PARTITION"
    NO_SUBSCRIPTION = "NO_SUBSCRIPTION"
    NULL_TOPIC_NAME = "NULL_TOPIC_NAME"
    UNKNOWN_TOPIC = "UNKNOWN_TOPIC"
    UNKNOWN_ASSIGNMENT_STRATEGY = "UNKNOWN_ASSIGNMENT_STRATEGY"
    OWNED_NULL_KEY = "OWNED_NULL_KEY"
    OWNED_UNKNOWN_TOPIC = "OWNED_UNKNOWN_TOPIC"
    OWNED_UNKNOWN_PARTITION = "OWNED_UNKNOWN_PARTITION"
    DUPLICATE_OWNED_PARTITION = "DUPLICATE_OWNED_PARTITION"
    NO_MEMBERS = "NO_MEMBERS"
    EMPTY_GROUP_INSTANCE_ID = "EMPTY_GROUP_INSTANCE_ID"
    INVALID_GENERATION = "INVALID_GENERATION"
    # planning errors (a strategy failed for this group)
    ASSIGNOR_FAILED = "ASSIGNOR_FAILED"
    INVALID_ASSIGNMENT = "INVALID_ASSIGNMENT"
    # load (offsets, weights): warnings, planned around (assignors.load)
    OFFSETS_NULL_KEY = "OFFSETS_NULL_KEY"
    OFFSETS_UNKNOWN_GROUP = "OFFSETS_UNKNOWN_GROUP"
    OFFSETS_UNKNOWN_TOPIC = "OFFSETS_UNKNOWN_TOPIC"
    OFFSETS_UNKNOWN_PARTITION = "OFFSETS_UNKNOWN_PARTITION"
    DUPLICATE_OFFSETS = "DUPLICATE_OFFSETS"
    CONFLICTING_OFFSETS = "CONFLICTING_OFFSETS"
    COMMITTED_PAST_LOG_END = "COMMITTED_PAST_LOG_END"
    NEGATIVE_OFFSET = "NEGATIVE_OFFSET"
    NULL_LOG_END_OFFSET = "NULL_LOG_END_OFFSET"
    INVALID_WEIGHT = "INVALID_WEIGHT"


@dataclass(frozen=True, slots=True)
class Problem:
    """One row of the `rejected` table."""

    group_id: str | None
    member_id: str | None
    topic: str | None
    severity: str
    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class TopicStatus:
    """A topic of `topic_partitions` after its own checks: usable (`error` None) or broken."""

    partition_count: int
    error: str | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class MemberRow:
    """One `subscriptions` row, as read (any field may be null)."""

    member_id: str | None
    group_instance_id: str | None = None
    client_rack: str | None = None
    topics: Sequence[str | None] | None = None
    topic_pattern: str | None = None
    assignment_strategies: Sequence[str | None] | None = None
    generation: int | None = None


@dataclass(frozen=True, slots=True)
class OwnedRow:
    """One `current_assignment` row of the group, as read."""

    member_id: str | None
    topic: str | None
    partition: int | None


def check_topic(
    topic: str, rows: int, distinct: int, lowest: int | None, highest: int | None, nulls: int
) -> tuple[TopicStatus, list[Problem]]:
    """Classify a topic from the aggregates of its `topic_partitions` rows.

    A topic's partitions must be 0..n-1 with none missing. Duplicated partition rows are
    planned around (warning); a negative, missing or null partition number makes the topic
    unusable (an error row for the topic), and its subscribers are rejected (see
    `build_group`).

    >>> check_topic("t", 3, 3, 0, 2, 0)[0]
    TopicStatus(partition_count=3, error=None, detail='')
    >>> check_topic("t", 2, 2, 0, 2, 0)[0].error
    'NON_CONTIGUOUS_PARTITIONS'
    """
    problems: list[Problem] = []

    def broken(reason: str, detail: str) -> tuple[TopicStatus, list[Problem]]:
        # Reported once for the topic here; once more per subscribed group by build_group.
        return TopicStatus(0, reason, detail), [Problem(None, None, topic, ERROR, reason, detail)]

    if nulls:
        return broken(
            Reason.NULL_PARTITION,
            f"topic {topic!r} has {nulls} partition row(s) with a null partition number",
        )
    if lowest is not None and lowest < 0:
        return broken(
            Reason.NEGATIVE_PARTITION, f"topic {topic!r} has a negative partition number ({lowest})"
        )
    count = (highest + 1) if highest is not None else 0
    if distinct != count:
        return broken(
            Reason.NON_CONTIGUOUS_PARTITIONS,
            f"topic {topic!r} lists {distinct} distinct partitions but its highest is {highest}:"
            f" {count - distinct} missing between 0 and {highest}",
        )
    if rows > distinct:
        problems.append(
            Problem(
                None,
                None,
                topic,
                WARNING,
                Reason.DUPLICATE_PARTITION,
                f"topic {topic!r} lists {rows - distinct} partition row(s) more than once;"
                " duplicates ignored",
            )
        )
    return TopicStatus(count), problems


def null_topic_problem(rows: int) -> Problem:
    return Problem(
        None,
        None,
        None,
        WARNING,
        Reason.NULL_TOPIC,
        f"{rows} topic_partitions row(s) with a null topic; ignored",
    )


def null_group_problem(member_id: str | None) -> Problem:
    return Problem(
        None,
        member_id,
        None,
        ERROR,
        Reason.NULL_GROUP_ID,
        "subscriptions row with a null group_id cannot belong to any group; not planned",
    )


def owned_without_group(row: OwnedRow) -> Problem:
    return Problem(
        None,
        row.member_id,
        row.topic,
        WARNING,
        Reason.OWNED_NULL_KEY,
        "current_assignment row with a null group_id; ignored",
    )


def no_members_problem(group_id: str) -> Problem:
    return Problem(
        group_id,
        None,
        None,
        WARNING,
        Reason.NO_MEMBERS,
        "current_assignment lists this group but subscriptions has no member; nothing to plan",
    )


PatternResolver = Callable[[str], list[str]]
"""Resolves a `topic_pattern` to the matching topic names; raises ValueError when invalid."""


def pattern_resolver(topics: list[str]) -> PatternResolver:
    """`subscribe(Pattern)` against the snapshot's topics, memoised per pattern (many members
    of many groups share a pattern)."""
    cache: dict[str, list[str] | ValueError] = {}

    def resolve(pattern: str) -> list[str]:
        hit = cache.get(pattern)
        if hit is None:
            try:
                hit = match_topics(compile_java_pattern(pattern), topics)
            except ValueError as exc:  # InvalidPatternError: the reason is in the message
                hit = exc
            cache[pattern] = hit
        if isinstance(hit, ValueError):
            raise hit
        return hit

    return resolve


def build_group(
    group_id: str,
    members: Sequence[MemberRow],
    owned: Iterable[OwnedRow],
    catalog: Mapping[str, TopicStatus],
    known_strategy: Callable[[str], bool],
    resolve_pattern: PatternResolver | None = None,
) -> tuple[GroupSpec | None, list[Problem]]:
    """Validate one group's rows; the spec is None when an error keeps it from being planned.

    `catalog` holds every topic of `topic_partitions`; pattern subscriptions are matched
    against it (pass a shared `pattern_resolver` to memoise across groups).
    """
    problems: list[Problem] = []

    def problem(
        severity: str, reason: str, detail: str, member: str | None = None, topic: str | None = None
    ) -> None:
        problems.append(Problem(group_id, member, topic, severity, reason, detail))

    ids = Counter(m.member_id for m in members if m.member_id)
    instances = Counter(m.group_instance_id for m in members if m.group_instance_id)
    for member_id, n in sorted(ids.items()):
        if n > 1:
            problem(ERROR, Reason.DUPLICATE_MEMBER_ID, f"member_id appears {n} times", member_id)
    for instance, n in sorted(instances.items()):
        if n > 1:
            problem(
                ERROR,
                Reason.DUPLICATE_GROUP_INSTANCE_ID,
                f"group_instance_id {instance!r} is used by {n} members",
            )

    built: list[Member] = []
    broken_topics: set[str] = set()
    unknown_topics: set[str] = set()
    for row in members:
        mid = row.member_id
        if not mid:
            problem(
                ERROR, Reason.NULL_MEMBER_ID, "subscriptions row with a null or empty member_id"
            )
            continue
        generation = row.generation
        if generation is not None and not INT32_MIN <= generation <= INT32_MAX:
            # Kafka's generation is an int32; anything else cannot be a real claim.
            problem(
                WARNING,
                Reason.INVALID_GENERATION,
                f"generation {generation} is outside Kafka's int32 range; treated as absent",
                mid,
            )
            generation = None
        if row.group_instance_id == "":
            # Kafka refuses an empty group.instance.id; the member can only be dynamic.
            problem(
                WARNING,
                Reason.EMPTY_GROUP_INSTANCE_ID,
                "empty group_instance_id; planned as a dynamic member",
                mid,
            )
        for name in row.assignment_strategies or ():
            if name is None or not known_strategy(name):
                problem(
                    WARNING,
                    Reason.UNKNOWN_ASSIGNMENT_STRATEGY,
                    f"assignment strategy {name!r} is not a client-side strategy the planner"
                    " knows; it cannot be voted for",
                    mid,
                )
        topics: set[str] = set()
        if row.topics is not None and row.topic_pattern is not None:
            problem(
                ERROR,
                Reason.TOPICS_AND_PATTERN,
                "member sets both topics and topic_pattern; Kafka allows one subscription type",
                mid,
            )
            continue
        if row.topic_pattern is not None:
            if resolve_pattern is None:
                resolve_pattern = pattern_resolver(sorted(catalog))
            try:
                topics.update(resolve_pattern(row.topic_pattern))
            except ValueError as exc:
                problem(ERROR, Reason.INVALID_PATTERN, str(exc), mid)
                continue
        elif row.topics is None:
            problem(
                WARNING,
                Reason.NO_SUBSCRIPTION,
                "member has neither topics nor topic_pattern; planned as subscribing to nothing",
                mid,
            )
        else:
            for t in row.topics:
                if t is None:
                    problem(WARNING, Reason.NULL_TOPIC_NAME, "null topic name ignored", mid)
                else:
                    topics.add(t)
        for t in topics:
            status = catalog.get(t)
            if status is None:
                unknown_topics.add(t)
            elif status.error is not None:
                broken_topics.add(t)
        built.append(
            Member(
                member_id=mid,
                topics=frozenset(topics),
                group_instance_id=row.group_instance_id or None,
                rack=row.client_rack or None,
                generation=generation,
                assignment_strategies=None
                if row.assignment_strategies is None
                else tuple(n for n in row.assignment_strategies if n is not None),
            )
        )

    for t in sorted(broken_topics):
        status = catalog[t]
        problem(
            ERROR, status.error or "", f"subscribed topic is unusable: {status.detail}", None, t
        )
    for t in sorted(unknown_topics):
        problem(
            WARNING,
            Reason.UNKNOWN_TOPIC,
            f"subscribed topic {t!r} is not in topic_partitions; skipped, as Kafka does",
            None,
            t,
        )

    if any(p.severity == ERROR for p in problems):
        return None, problems

    topics_meta = {
        t: TopicMetadata(t, status.partition_count)
        for t in {t for m in built for t in m.topics}
        if (status := catalog.get(t)) is not None
    }
    live = {m.member_id for m in built}
    owned_by: dict[str, list[TopicPartition]] = {}
    for orow in owned:
        if not orow.member_id or orow.topic is None or orow.partition is None:
            problem(
                WARNING,
                Reason.OWNED_NULL_KEY,
                "current_assignment row with a null or empty member_id, or a null topic or"
                " partition; ignored",
                orow.member_id,
                orow.topic,
            )
            continue
        status = catalog.get(orow.topic)
        if status is None or status.error is not None:
            problem(
                WARNING,
                Reason.OWNED_UNKNOWN_TOPIC,
                f"owned partition {orow.topic}-{orow.partition} is of a topic that does not exist"
                " (or is unusable); ignored",
                orow.member_id,
                orow.topic,
            )
            continue
        if not 0 <= orow.partition < status.partition_count:
            problem(
                WARNING,
                Reason.OWNED_UNKNOWN_PARTITION,
                f"owned partition {orow.topic}-{orow.partition} does not exist (the topic has"
                f" {status.partition_count}); ignored",
                orow.member_id,
                orow.topic,
            )
            continue
        owned_by.setdefault(orow.member_id, []).append((orow.topic, orow.partition))

    departed: dict[str, tuple[TopicPartition, ...]] = {}
    by_member: dict[str, tuple[TopicPartition, ...]] = {}
    for member_id, tps in owned_by.items():
        unique = tuple(dict.fromkeys(tps))
        if len(unique) < len(tps):
            problem(
                WARNING,
                Reason.DUPLICATE_OWNED_PARTITION,
                f"{len(tps) - len(unique)} owned partition row(s) listed twice; duplicates ignored",
                member_id,
            )
        if member_id in live:
            by_member[member_id] = unique
        else:
            departed[member_id] = unique
        for topic, _ in unique:
            if topic not in topics_meta:
                topics_meta[topic] = TopicMetadata(topic, catalog[topic].partition_count)

    members_out = tuple(
        Member(
            m.member_id,
            m.topics,
            m.group_instance_id,
            m.rack,
            tuple(sorted(by_member.get(m.member_id, ()))),
            m.generation,
            m.assignment_strategies,
        )
        for m in built
    )
    return GroupSpec(group_id, members_out, topics_meta, departed), problems
