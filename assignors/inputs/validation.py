"""Input validation: raw snapshot rows -> a `GroupSpec`, plus every problem found.

Errors keep a group (or a topic's subscribers) from being planned; warnings are planned around.
Every problem becomes one `rejected` row with a stable reason code, so nothing is dropped
silently: input groups = planned groups + groups with at least one group-level error (a
problem whose `strategy` is None). A problem with `strategy` set fails only that strategy for
the group (see `assignors.planner`); the group still counts as planned.

Kafka's own limits are enforced the way its clients and brokers enforce them: an empty
`group.id` cannot join a group (`InvalidGroupIdException`), topic names follow
`org.apache.kafka.common.internals.Topic.validate` (1 to 249 characters of `[a-zA-Z0-9._-]`,
not `.` or `..`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from assignors.inputs.patterns.resolver import (
    MAX_GROUP_BACKTRACKING_STEPS,
    PatternResolver,
    re2j_refusal,
)
from assignors.model import (
    CLASSIC,
    CONSUMER,
    GROUP_PROTOCOLS,
    GroupSpec,
    Member,
    TopicMetadata,
    TopicPartition,
    java_order_key,
    partitions_of,
)
from assignors.pickled import by_fields
from assignors.problems import (
    ERROR,
    INT32_MAX,
    INT32_MIN,
    KAFKA_MAX_TOPIC_LENGTH,
    WARNING,
    Problem,
    Reason,
    is_legal_topic_name,
)

if TYPE_CHECKING:
    pass


@dataclass(frozen=True, slots=True)
class TopicStatus:
    """A topic of `topic_partitions` after its own checks: usable (`error` None) or broken."""

    partition_count: int
    error: str | None = None
    detail: str = ""
    # Per partition, its replica racks (KIP-881; `assignors.racks.normalize_racks` rules):
    # empty when the topic has no rack information, so the broadcast catalog stays small.
    replica_racks: tuple[frozenset[str], ...] = field(default=(), repr=False)
    # Per partition, its load units (`assignors.analysis.load.partition_weights`); empty when every
    # weight of the topic is null (1.0 each).
    weights: tuple[int, ...] = field(default=(), repr=False)

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        return by_fields(self)  # it travels to the executors in the broadcast catalog

    def metadata(self, topic: str) -> TopicMetadata:
        """The topic as the assignors see it (partition count and replica racks)."""
        return TopicMetadata(topic, self.partition_count, self.replica_racks)


@dataclass(frozen=True, slots=True, init=False)
class MemberRow:
    """One `subscriptions` row, as read (any field may be null)."""

    member_id: str | None
    group_instance_id: str | None = None
    client_rack: str | None = None
    topics: Sequence[str | None] | None = None
    topic_pattern: str | None = None
    assignment_strategies: Sequence[str | None] | None = None
    generation: int | None = None
    group_protocol: str | None = None
    group_state: str | None = None
    client_library: str | None = None
    # the migration's ASSIGNMENT_USER_DATA blocker (`assignors.migration`)
    assignment_user_data: bool | None = None

    def __init__(
        self,
        member_id: str | None,
        group_instance_id: str | None = None,
        client_rack: str | None = None,
        topics: Sequence[str | None] | None = None,
        topic_pattern: str | None = None,
        assignment_strategies: Sequence[str | None] | None = None,
        generation: int | None = None,
        group_protocol: str | None = None,
        group_state: str | None = None,
        client_library: str | None = None,
        assignment_user_data: bool | None = None,
    ) -> None:
        object.__setattr__(self, "member_id", member_id)
        object.__setattr__(self, "group_instance_id", group_instance_id)
        object.__setattr__(self, "client_rack", client_rack)
        object.__setattr__(self, "topics", topics)
        object.__setattr__(self, "topic_pattern", topic_pattern)
        object.__setattr__(self, "assignment_strategies", assignment_strategies)
        object.__setattr__(self, "generation", generation)
        object.__setattr__(self, "group_protocol", group_protocol)
        object.__setattr__(self, "group_state", group_state)
        object.__setattr__(self, "client_library", client_library)
        object.__setattr__(self, "assignment_user_data", assignment_user_data)


@dataclass(frozen=True, slots=True, init=False)
class OwnedRow:
    """One `current_assignment` row of the group, as read."""

    member_id: str | None
    topic: str | None
    partition: int | None

    def __init__(self, member_id: str | None, topic: str | None, partition: int | None) -> None:
        object.__setattr__(self, "member_id", member_id)
        object.__setattr__(self, "topic", topic)
        object.__setattr__(self, "partition", partition)


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
        status = TopicStatus(0, str(reason), detail)
        return status, [Problem(None, None, topic, ERROR, reason, detail)]

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
            topic_warning(
                topic,
                Reason.DUPLICATE_PARTITION,
                f"topic {topic!r} lists {rows - distinct} partition row(s) more than once;"
                " duplicates ignored",
            )
        )
    return TopicStatus(count), problems


def topic_warning(topic: str, reason: str, detail: str) -> Problem:
    """A warning about a topic of `topic_partitions` itself (no group: group_id null)."""
    return Problem(None, None, topic, WARNING, reason, detail)


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


@dataclass(slots=True, init=False)
class _Found:
    """The problems of one group, in the order they are found."""

    group_id: str
    items: list[Problem] = field(default_factory=list)

    def __init__(self, group_id: str, items: list[Problem] | None = None) -> None:
        self.group_id = group_id
        self.items = [] if items is None else items

    def add(
        self,
        severity: str,
        reason: str,
        detail: str,
        member: str | None = None,
        topic: str | None = None,
    ) -> None:
        self.items.append(Problem(self.group_id, member, topic, severity, reason, detail))

    @property
    def has_error(self) -> bool:
        return any(p.severity == ERROR for p in self.items)


@dataclass(slots=True, init=False)
class _Draft:
    """A member's validated fields; the `Member` is built once its owned partitions are known."""

    member_id: str
    topics: frozenset[str]
    group_instance_id: str | None
    rack: str | None
    generation: int | None
    assignment_strategies: tuple[str, ...] | None

    def __init__(
        self,
        member_id: str,
        topics: frozenset[str],
        group_instance_id: str | None,
        rack: str | None,
        generation: int | None,
        assignment_strategies: tuple[str, ...] | None,
    ) -> None:
        self.member_id = member_id
        self.topics = topics
        self.group_instance_id = group_instance_id
        self.rack = rack
        self.generation = generation
        self.assignment_strategies = assignment_strategies


def _sorted_rows(members: Sequence[MemberRow]) -> list[MemberRow]:
    """The group's rows in member-id order (Java's), whatever order they arrived in."""
    ids = [r.member_id or "" for r in members]
    key = java_order_key(ids)
    rows = sorted(members, key=lambda r: key(r.member_id or ""))
    if len(set(ids)) < len(ids):
        # Rows sharing an id (a DUPLICATE_MEMBER_ID group, or null ids): order them fully, so
        # that even the problems of a rejected group never depend on the arrival order.
        rows.sort(key=lambda r: (key(r.member_id or ""), repr(r)))
    return rows


def _row_key(r: MemberRow) -> tuple[object, ...]:
    def seq(v: Sequence[str | None] | None) -> tuple[str | None, ...] | None:
        return None if v is None else tuple(v)

    return (
        r.member_id,
        r.group_instance_id,
        r.client_rack,
        seq(r.topics),
        r.topic_pattern,
        seq(r.assignment_strategies),
        r.generation,
    )


def _drop_exact_duplicates(rows: Sequence[MemberRow], found: _Found) -> list[MemberRow]:
    """The rows with each identical repeat of a member's row dropped (a part file delivered
    twice by a retried export): counted once, with a DUPLICATE_SUBSCRIPTION warning, as the
    other tables treat exact repeats. Different rows sharing a member id are left for
    DUPLICATE_MEMBER_ID; rows without a member id for NULL_MEMBER_ID.

    >>> found = _Found("g")
    >>> a, b = MemberRow("m", topics=["t"]), MemberRow("n", topics=["t"])
    >>> [r.member_id for r in _drop_exact_duplicates([a, b, MemberRow("m", topics=["t"])], found)]
    ['m', 'n']
    >>> [(p.reason, p.member_id, p.severity) for p in found.items]
    [('DUPLICATE_SUBSCRIPTION', 'm', 'warning')]
    """
    seen: set[tuple[object, ...]] = set()
    repeats: Counter[str] = Counter()
    out = []
    for row in rows:
        if row.member_id is not None:
            key = _row_key(row)
            if key in seen:
                repeats[row.member_id] += 1
                continue
            seen.add(key)
        out.append(row)
    for member_id, n in sorted(repeats.items()):
        found.add(
            WARNING,
            Reason.DUPLICATE_SUBSCRIPTION,
            f"{n} identical subscriptions row(s) repeated; counted once",
            member_id,
        )
    return out


def _check_identities(rows: Sequence[MemberRow], found: _Found) -> None:
    ids = Counter(m.member_id for m in rows if m.member_id)
    instances = Counter(m.group_instance_id for m in rows if m.group_instance_id)
    for member_id, n in sorted(ids.items()):
        if n > 1:
            found.add(ERROR, Reason.DUPLICATE_MEMBER_ID, f"member_id appears {n} times", member_id)
    for instance, n in sorted(instances.items()):
        if n > 1:
            found.add(
                ERROR,
                Reason.DUPLICATE_GROUP_INSTANCE_ID,
                f"group_instance_id {instance!r} is used by {n} members",
            )


class _Subscriptions:
    """Resolves each member's subscription against the catalog, remembering unknown and
    broken topics, and holds the group's patterns to one backtracking budget. In a
    consumer-protocol group, the broker resolves patterns with RE2/J: a pattern it would not
    resolve as Java does is refused (`re2j_refusal`)."""

    def __init__(
        self,
        catalog: Mapping[str, TopicStatus],
        resolve_pattern: Callable[[str], list[str]] | None,
        found: _Found,
        protocol: str = CLASSIC,
    ) -> None:
        self.catalog = catalog
        self.resolve = resolve_pattern
        self.found = found
        self.protocol = protocol
        self.unknown: dict[str, set[str]] = {}  # member -> unknown topics
        self.broken: set[str] = set()
        self.patterns: set[str] = set()
        self.spent = 0
        # a listed subscription -> (its topics, problems, unknown and broken topics)
        self.listed: dict[
            tuple[str | None, ...], tuple[frozenset[str], list[Problem], set[str], set[str]]
        ] = {}

    def topics(self, row: MemberRow, mid: str) -> frozenset[str] | None:
        """The member's existing-or-unknown topics; None when the subscription is an error."""
        if row.topics is not None and row.topic_pattern is not None:
            self.found.add(
                ERROR,
                Reason.TOPICS_AND_PATTERN,
                "member sets both topics and topic_pattern; Kafka allows one subscription type",
                mid,
            )
            return None
        if row.topic_pattern is not None:
            topics = self._pattern(row.topic_pattern, mid)
        elif not row.topics:
            what = "neither topics nor topic_pattern" if row.topics is None else "empty topics"
            self.found.add(
                WARNING,
                Reason.NO_SUBSCRIPTION,
                f"member has {what}; planned as subscribing to nothing",
                mid,
            )
            topics = set()
        else:
            return self._listed_topics(row.topics, mid)
        if topics is None:
            return None
        return self._resolved(topics, mid)

    def _listed_topics(self, names: Sequence[str | None], mid: str) -> frozenset[str]:
        """`topics` of a listed subscription. Members of a group usually list the same
        topics: each distinct list is checked once (a large group's 2,000 members x 500
        names), and its findings are replayed for every member that lists it."""
        key = tuple(names)
        known = self.listed.get(key)
        if known is None:
            found = _Found(self.found.group_id)
            listed = _Subscriptions(self.catalog, None, found)
            topics = listed._resolved(listed._listed(names, mid), mid)
            known = (topics, found.items, listed.unknown.get(mid, set()), listed.broken)
            self.listed[key] = known
        topics, problems, unknown, broken = known
        for p in problems:
            self.found.add(p.severity, p.reason, p.detail, mid, p.topic)
        if unknown:
            self.unknown.setdefault(mid, set()).update(unknown)
        self.broken.update(broken)
        return topics

    def _resolved(self, topics: set[str], mid: str) -> frozenset[str]:
        """The topics, noting the unknown and the broken ones."""
        for t in topics:
            status = self.catalog.get(t)
            if status is None:
                self.unknown.setdefault(mid, set()).add(t)
            elif status.error is not None:
                self.broken.add(t)
        return frozenset(topics)

    def _listed(self, names: Sequence[str | None], mid: str) -> set[str]:
        topics: set[str] = set()
        for t in names:
            if t is None:
                self.found.add(WARNING, Reason.NULL_TOPIC_NAME, "null topic name ignored", mid)
            elif not is_legal_topic_name(t):
                self.found.add(
                    WARNING,
                    Reason.INVALID_TOPIC_NAME,
                    f"topic name {t[:300]!r} is not a legal Kafka topic name (1 to"
                    f" {KAFKA_MAX_TOPIC_LENGTH} characters of [a-zA-Z0-9._-], not '.' or"
                    " '..'); skipped",
                    mid,
                )
            else:
                topics.add(t)
        return topics

    def _pattern(self, pattern: str, mid: str) -> set[str] | None:
        if self.protocol == CONSUMER:
            try:
                refusal = re2j_refusal(pattern)
            except ValueError:  # not Java either: INVALID_PATTERN, below
                refusal = None
            if refusal is not None:
                self.found.add(
                    ERROR,
                    Reason.PATTERN_NOT_RE2J,
                    f"topic pattern {pattern[:300]!r}: {refusal}",
                    mid,
                )
                return None
        if self.resolve is None:
            self.resolve = PatternResolver(sorted(self.catalog))
        if pattern not in self.patterns and isinstance(self.resolve, PatternResolver):
            spent = self.spent + self.resolve.cost(pattern)
            if spent > MAX_GROUP_BACKTRACKING_STEPS:
                self.found.add(
                    ERROR,
                    Reason.INVALID_PATTERN,
                    f"invalid topic pattern {pattern[:300]!r}: the group's patterns could"
                    f" backtrack through about {spent:.1e} steps over"
                    f" {len(self.resolve.topics)} topic names (at most"
                    f" {MAX_GROUP_BACKTRACKING_STEPS:.0e} per group); make quantifiers"
                    " possessive (e.g. 'x*+') or use atomic groups '(?>...)'",
                    mid,
                )
                return None
            self.spent = spent
        self.patterns.add(pattern)
        try:
            return set(self.resolve(pattern))
        except ValueError as exc:
            self.found.add(ERROR, Reason.INVALID_PATTERN, str(exc), mid)
            return None

    def report(self) -> None:
        """Broken topics once per group (their own row is topic-level); unknown topics once per
        subscribing member, so that an operator sees who asked for them."""
        for t in sorted(self.broken):
            status = self.catalog[t]
            self.found.add(
                ERROR, status.error or "", f"subscribed topic is unusable: {status.detail}", None, t
            )
        for mid, topics in self.unknown.items():
            for t in sorted(topics):
                self.found.add(
                    WARNING,
                    Reason.UNKNOWN_TOPIC,
                    f"subscribed topic {t!r} is not in topic_partitions; skipped, as Kafka does",
                    mid,
                    t,
                )


def _draft(
    row: MemberRow,
    known_strategy: Callable[[str], bool] | None,
    subscriptions: _Subscriptions,
    found: _Found,
    protocol: str = CLASSIC,
) -> _Draft | None:
    """One member's checks; None when the row cannot be a member (an error was recorded)."""
    mid = row.member_id
    if not mid:
        found.add(ERROR, Reason.NULL_MEMBER_ID, "subscriptions row with a null or empty member_id")
        return None
    generation = row.generation
    if generation is not None and not INT32_MIN <= generation <= INT32_MAX:
        # Kafka's generation is an int32; anything else cannot be a real claim.
        found.add(
            WARNING,
            Reason.INVALID_GENERATION,
            f"generation {generation} is outside Kafka's int32 range; treated as absent",
            mid,
        )
        generation = None
    if generation is not None and generation < 0 and protocol == CONSUMER:
        # `generation` is the member epoch here. The coordinator never holds a member at a
        # negative epoch: -1 and -2 are what a member sends to leave (-2: a static member,
        # for now), any other is refused. The broker's assignors never read epochs, so the
        # plan does not depend on it: a warning, as for INVALID_GENERATION.
        found.add(
            WARNING,
            Reason.NEGATIVE_MEMBER_EPOCH,
            f"member epoch {generation} is negative: a member of a consumer-protocol group"
            " has an epoch of 0 or more (-1 and -2 are what a leaving member sends); planned"
            " as a member, epoch treated as absent",
            mid,
        )
        generation = None
    if row.group_instance_id == "":
        # Kafka refuses an empty group.instance.id; the member can only be dynamic.
        found.add(
            WARNING,
            Reason.EMPTY_GROUP_INSTANCE_ID,
            "empty group_instance_id; planned as a dynamic member",
            mid,
        )
    # None: a KIP-848 group, whose names the broker-side election checks (`assignors.planner`)
    names = row.assignment_strategies if known_strategy is not None else None
    for name in names or ():
        if name is None or known_strategy is None or not known_strategy(name):
            found.add(
                WARNING,
                Reason.UNKNOWN_ASSIGNMENT_STRATEGY,
                f"assignment strategy {name!r} is not a client-side strategy the planner"
                " knows; it cannot be voted for",
                mid,
            )
    topics = subscriptions.topics(row, mid)
    if topics is None:
        return None
    strategies = row.assignment_strategies
    return _Draft(
        mid,
        topics,
        row.group_instance_id or None,
        row.client_rack or None,
        generation,
        None if strategies is None else tuple(n for n in strategies if n is not None),
    )


def normalise_group_protocol(value: str | None) -> str | None:
    """`classic` or `consumer` for a `subscriptions.group_protocol` value (null is classic;
    case and surrounding blanks are ignored, as the consumer's `group.protocol` config
    ignores case); None for any other value.

    >>> [normalise_group_protocol(v) for v in (None, "classic", " CONSUMER ", "", "kip848")]
    ['classic', 'classic', 'consumer', None, None]
    """
    if value is None:
        return CLASSIC
    value = value.strip().lower()
    return value if value in GROUP_PROTOCOLS else None


def _group_protocol(
    group_id: str, rows: Sequence[MemberRow], found: _Found
) -> tuple[str, tuple[str, ...]] | None:
    """The group's protocol, and the ids of its classic members when it is mixed (else
    empty); None (and error rows) when a value is unknown.

    A group with any `consumer` member is a consumer group to the broker: the first
    consumer-protocol heartbeat converts a classic group online (`GroupMetadataManager`),
    and its classic members then join it through JoinGroup/SyncGroup and receive the server
    assignor's target. A group that mixes the two values is that group mid-migration, and is
    planned as a `consumer` group.
    """
    seen: Counter[str] = Counter()
    classic: list[str] = []
    for row in rows:
        protocol = normalise_group_protocol(row.group_protocol)
        if protocol is None:
            found.add(
                ERROR,
                Reason.UNKNOWN_GROUP_PROTOCOL,
                f"group {group_id!r}: group_protocol {str(row.group_protocol)[:100]!r} is"
                f" neither {CLASSIC!r} nor {CONSUMER!r} (null means {CLASSIC!r})",
                row.member_id,
            )
        else:
            seen[protocol] += 1
            if protocol == CLASSIC and row.member_id:
                classic.append(row.member_id)
    if found.has_error or not seen:
        return None
    if len(seen) > 1:
        return CONSUMER, tuple(dict.fromkeys(classic))
    return next(iter(seen)), ()


REBALANCING_STATES: Final = frozenset(
    {"preparingrebalance", "completingrebalance", "assigning", "reconciling"}
)
"""`subscriptions.group_state` values (lower case) of a group caught in a rebalance: classic
(`PreparingRebalance`, `CompletingRebalance`) and KIP-848 (`Assigning`, `Reconciling`)."""


def _check_group_state(group_id: str, rows: Sequence[MemberRow], found: _Found) -> None:
    """One GROUP_REBALANCING warning when the snapshot caught the group in a rebalance: what
    its members report owning is then not an assignment any rebalance settled on."""
    state = next(
        (s for r in rows if (s := r.group_state) and s.strip().lower() in REBALANCING_STATES),
        None,
    )
    if state is not None:
        found.add(
            WARNING,
            Reason.GROUP_REBALANCING,
            f"group {group_id!r} was {state.strip()[:40]} when the snapshot was taken: its"
            " current_assignment is mid-rebalance (members may own nothing yet), so every"
            " figure measured against it (moved_partition_count, revoked_partition_count,"
            " rebalance_rounds, lag_moved, and the sticky assignors' plans, which start from"
            " it) describes an unsettled group; plan it again from a snapshot of the stable"
            " group",
        )


def _owned_partitions(
    owned: Iterable[OwnedRow], catalog: Mapping[str, TopicStatus], found: _Found
) -> tuple[dict[str, list[TopicPartition]], set[str]]:
    """member_id -> its usable owned partitions (as listed), and their topics; unusable rows
    become warnings.

    The partitions are the shared tuples of `partitions_of`: a large group's owned rows
    come topic by topic, and everything downstream (ownership, metrics, rows) looks them up
    in dicts and sets, where identical tuples compare at once."""
    owned_by: dict[str, list[TopicPartition]] = {}
    problems: list[tuple[str | None, str | None, str, str]] = []
    topics: set[str] = set()
    # the last topic's usable partitions (None: unknown or unusable): rows come in runs
    last_topic: str | None = None
    last_parts: tuple[TopicPartition, ...] | None = None
    for orow in owned:
        member_id, topic, p = orow.member_id, orow.topic, orow.partition
        if not member_id or topic is None or p is None:
            problems.append(
                (
                    member_id,
                    topic,
                    Reason.OWNED_NULL_KEY,
                    "current_assignment row with a null or empty member_id, or a null topic or"
                    " partition; ignored",
                )
            )
            continue
        if topic != last_topic or last_topic is None:
            status = catalog.get(topic)
            last_topic = topic
            last_parts = None
            if status is not None and status.error is None:
                last_parts = partitions_of(topic, status.partition_count)
                topics.add(topic)
        if last_parts is None:
            problems.append(
                (
                    member_id,
                    topic,
                    Reason.OWNED_UNKNOWN_TOPIC,
                    f"owned partition {topic}-{p} is of a topic that does not"
                    " exist (or is unusable); ignored",
                )
            )
            continue
        if not 0 <= p < len(last_parts):
            problems.append(
                (
                    member_id,
                    topic,
                    Reason.OWNED_UNKNOWN_PARTITION,
                    f"owned partition {topic}-{p} does not exist (the topic has"
                    f" {len(last_parts)}); ignored",
                )
            )
            continue
        tps = owned_by.get(member_id)
        if tps is None:
            owned_by[member_id] = tps = []
        tps.append(last_parts[p])
    # in a fixed order, whatever order the rows arrived in
    for member, topic, reason, detail in sorted(problems, key=lambda p: tuple(map(str, p))):
        found.add(WARNING, reason, detail, member, topic)
    return owned_by, topics


def _sorted_once(tps: list[TopicPartition]) -> tuple[TopicPartition, ...]:
    """`tps` sorted, each partition once. Sorted in place (linear when the rows came in
    order, as they usually do); repeats are then neighbours, found in one pass: no set of a
    large group's million partitions."""
    tps.sort()
    for i in range(1, len(tps)):
        if tps[i] == tps[i - 1]:
            break
    else:
        return tuple(tps)
    once = [tps[0]]
    for tp in tps:
        if tp != once[-1]:
            once.append(tp)
    return tuple(once)


def build_group(
    group_id: str,
    members: Sequence[MemberRow],
    owned: Iterable[OwnedRow],
    catalog: Mapping[str, TopicStatus],
    known_strategy: Callable[[str], bool],
    resolve_pattern: Callable[[str], list[str]] | None = None,
) -> tuple[GroupSpec | None, list[Problem]]:
    """Validate one group's rows; the spec is None when an error keeps it from being planned.

    `catalog` holds every topic of `topic_partitions`; pattern subscriptions are matched
    against it (pass a shared `PatternResolver` to memoise across groups). Members are
    ordered by member id in Java string order, so that the spec, and everything planned from
    it, does not depend on the order in which the rows arrived.
    """
    found = _Found(group_id)
    if group_id == "":
        # Kafka's consumer refuses an empty group.id for group management.
        found.add(ERROR, Reason.EMPTY_GROUP_ID, "empty group_id: Kafka cannot form this group")
        return None, found.items
    rows = _drop_exact_duplicates(_sorted_rows(members), found)
    protocol, classic_members = _group_protocol(group_id, rows, found) or (CLASSIC, ())
    _check_group_state(group_id, rows, found)
    _check_identities(rows, found)
    subscriptions = _Subscriptions(catalog, resolve_pattern, found, protocol)
    # A KIP-848 group's names are the broker's to check (the election does).
    known = known_strategy if protocol == CLASSIC else None
    if classic_members:
        drafts = _mixed_drafts(rows, frozenset(classic_members), subscriptions, found)
    else:
        drafts = [d for row in rows if (d := _draft(row, known, subscriptions, found, protocol))]
    subscriptions.report()
    if found.has_error:
        return None, found.items

    topics_meta = {
        t: status.metadata(t)
        for t in {t for d in drafts for t in d.topics}
        if (status := catalog.get(t)) is not None
    }
    live = {d.member_id for d in drafts}
    departed: dict[str, tuple[TopicPartition, ...]] = {}
    by_member: dict[str, tuple[TopicPartition, ...]] = {}
    owned_by, owned_topics = _owned_partitions(owned, catalog, found)
    # (usually none: a member owns partitions of the topics it subscribes to)
    unseen = not owned_topics.issubset(topics_meta)
    for member_id in sorted(owned_by, key=java_order_key(owned_by)):
        tps = owned_by[member_id]
        unique = _sorted_once(tps)
        if len(unique) < len(tps):
            found.add(
                WARNING,
                Reason.DUPLICATE_OWNED_PARTITION,
                f"{len(tps) - len(unique)} owned partition row(s) listed twice; duplicates ignored",
                member_id,
            )
        if member_id in live:
            by_member[member_id] = unique
        else:
            departed[member_id] = unique
        if unseen:
            for topic, _ in unique:
                if topic not in topics_meta:
                    topics_meta[topic] = catalog[topic].metadata(topic)

    members_out = tuple(
        Member(
            d.member_id,
            d.topics,
            d.group_instance_id,
            d.rack,
            by_member.get(d.member_id, ()),
            d.generation,
            d.assignment_strategies,
        )
        for d in drafts
    )
    live_classic = tuple(m for m in classic_members if m in live)
    spec = GroupSpec(group_id, members_out, topics_meta, departed, protocol, live_classic)
    return spec, found.items


def _mixed_drafts(
    rows: Sequence[MemberRow],
    classic: frozenset[str],
    subscriptions: _Subscriptions,
    found: _Found,
) -> list[_Draft]:
    """The members of a mixed group, each checked as its own protocol checks it: a classic
    member matches its pattern itself (Java's regex) and its `assignment_strategies` are its
    client-side `partition.assignment.strategy` (kept for the migration's landing assignor,
    never checked against the run's strategies: the broker assigns it); a `consumer` member
    as in any consumer group."""
    drafts: list[_Draft] = []
    for row in rows:
        protocol = CLASSIC if row.member_id in classic else CONSUMER
        subscriptions.protocol = protocol
        draft = _draft(row, None, subscriptions, found, protocol)
        if draft is not None:
            drafts.append(draft)
    subscriptions.protocol = CONSUMER
    return drafts
