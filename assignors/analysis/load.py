"""Load of a group: consumer lag from `offsets`, partition weights, and the load metrics.

Operators do not suffer from partition counts but from load: lag piling up on one member, one
consumer holding the hot partitions. This module turns the optional inputs into numbers in
the vocabulary of Burrow (`totallag`, `maxlag`) and `kafka-consumer-groups.sh` (`LAG`):

* `partition_lags`: one group's `offsets` rows -> lag per partition. Lag is
  `log_end_offset - committed_offset`, clamped at 0 (a stale snapshot can put the commit past
  the end, as `ConsumerGroupCommand` shows it); no committed offset means the lag is unknown
  (None): counted, never guessed.
* `partition_weights`: `topic_partitions.weight` -> integer load units. Weights are doubles
  (e.g. bytes-in/s); every computation on them is exact integer arithmetic on micro-units
  (`WEIGHT_SCALE`), so results never depend on float summation order.
* `load_metrics`: the load columns of one (group, strategy) row of `balance_metrics`.
* `weight_lower_bound`: a proven lower bound on the best achievable max member load.

Nothing here reads Spark; the Spark layer hands each group its rows.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from assignors.analysis.flow import FlowNetwork, subscription_classes
from assignors.inputs.validation import TopicStatus, topic_warning
from assignors.model import Assignment, GroupSpec, TopicPartition, java_key, java_sorted
from assignors.ownership import Owners
from assignors.problems import INT64_MAX, WARNING, Problem, Reason
from assignors.widths import saturated

WEIGHT_SCALE: Final = 1_000_000
"""Load units per weight 1.0: weights are rounded to micro-units (round half to even).

A positive weight below half a micro-unit therefore counts as load 0. Sums, maxima, the
lower bound and the `balanced` heuristic all work on these integers; the metrics divide by
the scale only when they are written.
"""

UNIT: Final = WEIGHT_SCALE
"""The load of a partition whose weight is null (1.0), or invalid (counted as 1.0)."""

LOAD_METRIC_COLUMNS: Final[tuple[tuple[str, type], ...]] = (
    ("total_lag", int),
    ("max_partition_lag", int),
    ("max_member_lag", int),
    ("lag_imbalance", float),
    ("unknown_lag_partition_count", int),
    ("lag_moved", int),
    ("total_weight", float),
    ("max_member_weight", float),
    ("min_member_weight", float),
    ("weight_imbalance", float),
    ("weight_lower_bound", float),
)
"""(name, python type) of the load columns, in output order: appended to METRIC_COLUMNS."""

LoadMetrics = dict[str, int | float | None]

Lags = Mapping[TopicPartition, int | None]
"""partition -> lag in messages; None (or absent) when unknown."""

_MAX_LISTED: Final = 10  # partitions named in one warning's detail


@dataclass(frozen=True, slots=True, init=False)
class OffsetRow:
    """One `offsets` row of a group, as read (any field may be null)."""

    topic: str | None
    partition: int | None
    committed_offset: int | None
    log_end_offset: int | None

    def __init__(
        self,
        topic: str | None,
        partition: int | None,
        committed_offset: int | None,
        log_end_offset: int | None,
    ) -> None:
        object.__setattr__(self, "topic", topic)
        object.__setattr__(self, "partition", partition)
        object.__setattr__(self, "committed_offset", committed_offset)
        object.__setattr__(self, "log_end_offset", log_end_offset)


def group_partitions(spec: GroupSpec) -> dict[str, int]:
    """topic -> partition count of the topics the group consumes (subscribed and existing)."""
    return {t: spec.partition_count(t) for t in spec.subscribed_topics()}


# --------------------------------------------------------------------------------- offsets


class _Findings:
    """Problems of one group's offsets, aggregated per (reason, topic) so a stale snapshot
    of a big group gives a handful of warning rows, not one per partition."""

    def __init__(self, group_id: str | None) -> None:
        self.group_id = group_id
        self.parts: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.null_keys = 0

    def add(self, reason: str, topic: str, partition: int) -> None:
        self.parts[(reason, topic)].append(partition)

    def problems(self) -> list[Problem]:
        out: list[Problem] = []
        if self.null_keys:
            out.append(
                Problem(
                    self.group_id,
                    None,
                    None,
                    WARNING,
                    Reason.OFFSETS_NULL_KEY,
                    f"{self.null_keys} offsets row(s) with a null topic or partition; ignored",
                )
            )
        for reason, topic in sorted(self.parts, key=lambda k: (java_key(k[1]), k[0])):
            parts = sorted(set(self.parts[(reason, topic)]))
            out.append(
                Problem(self.group_id, None, topic, WARNING, reason, _detail(reason, topic, parts))
            )
        return out


_DETAIL: Final[dict[str, str]] = {
    Reason.OFFSETS_UNKNOWN_TOPIC: "offsets of a topic this group does not consume; ignored",
    Reason.OFFSETS_UNKNOWN_PARTITION: "offsets of partitions the topic does not have; ignored",
    Reason.DUPLICATE_OFFSETS: "offsets rows repeated with identical values; counted once",
    Reason.CONFLICTING_OFFSETS: "offsets rows repeated with different values; lag unknown",
    Reason.COMMITTED_PAST_LOG_END: "committed offset past the log end offset; lag clamped at 0",
    Reason.NEGATIVE_OFFSET: "negative committed or log end offset; lag unknown",
    Reason.OFFSET_OUT_OF_RANGE: (
        "committed or log end offset above 2^63-1, Kafka's largest offset; lag unknown"
    ),
    Reason.NULL_LOG_END_OFFSET: "committed offset without a log end offset; lag unknown",
}


def _detail(reason: str, topic: str, parts: list[int]) -> str:
    return f"{_partitions_of(topic, parts)}: {_DETAIL[reason]}"


def _partitions_of(topic: str, parts: list[int]) -> str:
    """How a warning names a topic's partitions (the first `_MAX_LISTED` of them).

    >>> _partitions_of("t", list(range(12)))
    "topic 't', 12 partition(s) [0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 2 more]"
    """
    listed = ", ".join(str(p) for p in parts[:_MAX_LISTED])
    more = f" and {len(parts) - _MAX_LISTED} more" if len(parts) > _MAX_LISTED else ""
    return f"topic {topic!r}, {len(parts)} partition(s) [{listed}{more}]"


def _lag_of(committed: int | None, log_end: int | None) -> tuple[int | None, str | None]:
    """The lag of one partition's offsets and the reason to warn about them (if any).

    >>> _lag_of(90, 100), _lag_of(None, 100), _lag_of(120, 100)
    ((10, None), (None, None), (0, 'COMMITTED_PAST_LOG_END'))
    >>> _lag_of(-1, 100), _lag_of(0, 2**64 - 1)
    ((None, 'NEGATIVE_OFFSET'), (None, 'OFFSET_OUT_OF_RANGE'))
    """
    if (committed is not None and committed < 0) or (log_end is not None and log_end < 0):
        return None, str(Reason.NEGATIVE_OFFSET)
    # An unsigned input column can hold more than a Java long (-1 written unsigned: 2^64-1).
    if (committed is not None and committed > INT64_MAX) or (
        log_end is not None and log_end > INT64_MAX
    ):
        return None, str(Reason.OFFSET_OUT_OF_RANGE)
    if committed is None:
        return None, None  # nothing committed: unknown, and legal
    if log_end is None:
        return None, str(Reason.NULL_LOG_END_OFFSET)
    if committed > log_end:
        return 0, str(Reason.COMMITTED_PAST_LOG_END)
    return log_end - committed, None


def partition_lags(
    rows: Iterable[OffsetRow],
    partitions_of_group: Mapping[str, int],
    group_id: str | None = None,
) -> tuple[dict[TopicPartition, int | None], list[Problem]]:
    """Lag of every partition of a group from its `offsets` rows, and the problems found.

    `partitions_of_group` is topic -> partition count of the topics the group consumes (see
    `group_partitions`). The result has a key for every one of those partitions: the lag, or
    None when unknown (no row, nothing committed, or bad offsets). Bad rows become `warning`
    problems with stable reasons, one per (reason, topic), naming the partitions:

    * committed > log end: lag 0 (`COMMITTED_PAST_LOG_END`);
    * a negative offset: unknown (`NEGATIVE_OFFSET`; Kafka's OffsetFetch answers -1 for "no
      committed offset", which a snapshot should have turned into null); one above 2^63-1
      (an unsigned column): unknown (`OFFSET_OUT_OF_RANGE`);
    * known lags that sum past 2^63-1: the sums saturate there, one group-level
      `LAG_SATURATED` warning;
    * committed offset without log end: unknown (`NULL_LOG_END_OFFSET`);
    * rows of topics the group does not consume, or of partitions the topic does not have:
      ignored (`OFFSETS_UNKNOWN_TOPIC`, `OFFSETS_UNKNOWN_PARTITION`); a null topic or
      partition: ignored (`OFFSETS_NULL_KEY`);
    * the same partition more than once: identical rows count once (`DUPLICATE_OFFSETS`),
      different ones make the lag unknown (`CONFLICTING_OFFSETS`).

    The result does not depend on the order of `rows`.

    >>> lags, problems = partition_lags(
    ...     [OffsetRow("t", 0, 90, 100), OffsetRow("t", 1, None, 50), OffsetRow("t", 2, 7, 5)],
    ...     {"t": 4})
    >>> lags
    {('t', 0): 10, ('t', 1): None, ('t', 2): 0, ('t', 3): None}
    >>> [(p.reason, p.topic) for p in problems]
    [('COMMITTED_PAST_LOG_END', 't')]
    """
    found = _Findings(group_id)
    offsets, repeated = _collect(rows, partitions_of_group, found)
    lags: dict[TopicPartition, int | None] = {
        (t, p): None
        for t in java_sorted(partitions_of_group)
        for p in range(partitions_of_group[t])
    }
    for tp, value in offsets.items():
        again = repeated.get(tp)
        if again is not None:
            if len(again) > 1:
                found.add(Reason.CONFLICTING_OFFSETS, *tp)
                continue
            found.add(Reason.DUPLICATE_OFFSETS, *tp)
        lag, reason = _lag_of(*value)
        lags[tp] = lag
        if reason is not None:
            found.add(reason, *tp)
    problems = found.problems()
    total = sum(lag for lag in lags.values() if lag is not None)
    if total > INT64_MAX:
        problems.append(lag_saturated(group_id, total))
    return lags, problems


def lag_saturated(group_id: str | None, total: int, strategy: str | None = None) -> Problem:
    """The warning for lags that sum past 2^63-1 (the sums in the output saturate there)."""
    return Problem(
        group_id,
        None,
        None,
        WARNING,
        Reason.LAG_SATURATED,
        f"lags sum to {total}, more than a bigint holds: total_lag, max_member_lag and"
        f" lag_moved are capped at {INT64_MAX}",
        strategy,
    )


_Offsets = tuple[int | None, int | None]


def _collect(
    rows: Iterable[OffsetRow], partitions_of_group: Mapping[str, int], found: _Findings
) -> tuple[dict[TopicPartition, _Offsets], dict[TopicPartition, set[_Offsets]]]:
    """The offsets of each known partition, and the distinct values of repeated ones."""
    offsets: dict[TopicPartition, _Offsets] = {}
    repeated: dict[TopicPartition, set[_Offsets]] = {}
    for row in rows:
        topic, p = row.topic, row.partition
        if topic is None or p is None:
            found.null_keys += 1
        elif topic not in partitions_of_group:
            found.add(Reason.OFFSETS_UNKNOWN_TOPIC, topic, p)
        elif not 0 <= p < partitions_of_group[topic]:
            found.add(Reason.OFFSETS_UNKNOWN_PARTITION, topic, p)
        elif (topic, p) in offsets:
            repeated.setdefault((topic, p), {offsets[(topic, p)]}).add(
                (row.committed_offset, row.log_end_offset)
            )
        else:
            offsets[(topic, p)] = (row.committed_offset, row.log_end_offset)
    return offsets, repeated


def offsets_unknown_group_problem(group_id: str | None, rows: int) -> Problem:
    """The warning for `offsets` rows of a group that has no member in `subscriptions`.

    The Spark layer finds these (an anti-join); `group_id` None means the rows have a null
    group_id.
    """
    if group_id is None:
        return Problem(
            None,
            None,
            None,
            WARNING,
            Reason.OFFSETS_NULL_KEY,
            f"{rows} offsets row(s) with a null group_id; ignored",
        )
    return Problem(
        group_id,
        None,
        None,
        WARNING,
        Reason.OFFSETS_UNKNOWN_GROUP,
        f"{rows} offsets row(s) of a group with no member in subscriptions; ignored",
    )


def lag_loads(lags: Lags) -> dict[TopicPartition, int]:
    """Lags as loads for `balance_by = "lag"`: an unknown lag is load 0 (never guessed)."""
    return {tp: lag or 0 for tp, lag in lags.items()}


# --------------------------------------------------------------------------------- weights


def weight_units(weight: float | None) -> int | None:
    """A `weight` in load units; null is 1.0; None when invalid (negative, NaN, infinite).

    >>> weight_units(None), weight_units(2.5), weight_units(0.0), weight_units(1e-7)
    (1000000, 2500000, 0, 0)
    >>> weight_units(-1.0), weight_units(float("nan")), weight_units(float("inf"))
    (None, None, None)
    """
    if weight is None:
        return UNIT
    if not math.isfinite(weight) or weight < 0:
        return None
    return round(weight * WEIGHT_SCALE)


def partition_weights(
    rows: Iterable[tuple[str, int, float | None]],
) -> tuple[dict[TopicPartition, int], list[Problem]]:
    """`topic_partitions` (topic, partition, weight) rows -> load units per partition.

    Null weights are 1.0. A negative, NaN or infinite weight counts as 1.0 and gives one
    topic-level `INVALID_WEIGHT` warning per topic (group_id null, as the other
    topic_partitions problems), naming the partitions. A partition listed twice (already a
    `DUPLICATE_PARTITION` warning) takes the larger of its loads, whatever the row order.
    Partitions absent from the result count as 1.0 wherever weights are used.

    >>> units, problems = partition_weights([("t", 0, 2.0), ("t", 1, None), ("t", 2, -3.0)])
    >>> units
    {('t', 0): 2000000, ('t', 1): 1000000, ('t', 2): 1000000}
    >>> [(p.reason, p.topic, p.group_id) for p in problems]
    [('INVALID_WEIGHT', 't', None)]
    """
    units: dict[TopicPartition, int] = {}
    bad: dict[str, list[int]] = defaultdict(list)
    for topic, p, weight in rows:
        u = weight_units(weight)
        if u is None:
            bad[topic].append(p)
            u = UNIT
        units[(topic, p)] = max(u, units.get((topic, p), 0))
    problems = []
    for topic in java_sorted(bad):
        named = _partitions_of(topic, sorted(set(bad[topic])))
        problems.append(
            topic_warning(
                topic,
                Reason.INVALID_WEIGHT,
                f"{named}: negative, NaN or infinite weight; counted as 1.0",
            )
        )
    return units, problems


def weight_loads(
    spec: GroupSpec, weights: Mapping[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """Load units of every partition of the group (absent from `weights`: 1.0)."""
    return {
        (t, p): weights.get((t, p), UNIT)
        for t in spec.subscribed_topics()
        for p in range(spec.partition_count(t))
    }


def group_weights(spec: GroupSpec, catalog: Mapping[str, TopicStatus]) -> dict[TopicPartition, int]:
    """Load units of the group's partitions from the topic catalog (`TopicStatus.weights`,
    see `assignors.inputs.topics.partition_data`); topics without weights are left out (1.0 each).

    >>> from assignors.model import Member, TopicMetadata
    >>> spec = GroupSpec("g", (Member("a", frozenset({"t", "u"})),),
    ...                  {"t": TopicMetadata("t", 2), "u": TopicMetadata("u", 1)})
    >>> group_weights(spec, {"t": TopicStatus(2, weights=(5, 0)), "u": TopicStatus(1)})
    {('t', 0): 5, ('t', 1): 0}
    """
    out: dict[TopicPartition, int] = {}
    for t in spec.subscribed_topics():
        status = catalog.get(t)
        if status is not None and status.weights:
            out.update(((t, p), w) for p, w in enumerate(status.weights))
    return out


def balance_loads(
    spec: GroupSpec,
    balance_by: str,
    lags: Lags | None,
    weights: Mapping[TopicPartition, int] | None,
) -> dict[TopicPartition, int]:
    """The integer loads `balanced` minimises for `balance_by = "weight"` or `"lag"`.

    Every partition of the group gets a load: its weight units (1.0 without weights), or its
    lag (0 when unknown or without offsets, so the partition count decides among them).

    >>> from assignors.model import Member, TopicMetadata
    >>> spec = GroupSpec("g", (Member("a", frozenset({"t"})),), {"t": TopicMetadata("t", 2)})
    >>> balance_loads(spec, "lag", {("t", 0): 7}, None)
    {('t', 0): 7, ('t', 1): 0}
    >>> balance_loads(spec, "weight", None, {("t", 1): 0})
    {('t', 0): 1000000, ('t', 1): 0}
    """
    if balance_by == "weight":
        return weight_loads(spec, weights or {})
    if balance_by == "lag":
        known = lags or {}
        return {tp: known.get(tp) or 0 for tp in weight_loads(spec, {})}
    raise ValueError(f"balance_by must be 'weight' or 'lag' here, not {balance_by!r}")


# --------------------------------------------------------------------------------- metrics


def load_metrics(
    spec: GroupSpec,
    assignment: Assignment,
    lags: Lags | None,
    weights: Mapping[TopicPartition, int] | None,
    previous: Owners | None,
    *,
    weight_bound: int | None = None,
) -> LoadMetrics:
    """The load columns (`LOAD_METRIC_COLUMNS`) of one (group, strategy) row.

    `lags` comes from `partition_lags` (None: no `offsets` input, every lag column null).
    `weights` are load units from `partition_weights` (None: no weights in the input, every
    weight column null; absent partitions weigh 1.0). `previous` is partition -> previous
    owner (`assignors.ownership.previous_owners`; None without `current_assignment`).
    `weight_bound` may pass `weight_lower_bound(spec, weight_loads(spec, weights))` when the
    caller computes it once per group (it is the same on every strategy row).

    Statistics are over every member, idle ones included, and over the partitions of the
    group (subscribed, existing topics). Lag columns other than the unknown count are null
    when no partition of the group has a known lag; `lag_moved` is also null without
    `previous`. The imbalances are max / mean member load, null when the mean is 0 (nothing
    to balance). Burrow's `totallag` is `total_lag`, its `maxlag` partition is
    `max_partition_lag`.

    >>> from assignors.model import Member, TopicMetadata
    >>> spec = GroupSpec("g", (Member("a", frozenset({"t"})), Member("b", frozenset({"t"}))),
    ...                  {"t": TopicMetadata("t", 3)})
    >>> m = load_metrics(spec, {"a": [("t", 0), ("t", 1)], "b": [("t", 2)]},
    ...                  {("t", 0): 10, ("t", 1): None, ("t", 2): 30}, None, {("t", 2): "a"})
    >>> m["total_lag"], m["max_member_lag"], m["lag_imbalance"], m["lag_moved"]
    (40, 30, 1.5, 30)
    >>> m["unknown_lag_partition_count"], m["total_weight"]
    (1, None)
    """
    out: LoadMetrics = dict.fromkeys(name for name, _ in LOAD_METRIC_COLUMNS)
    if lags is not None:
        out.update(_lag_metrics(spec, assignment, lags, previous))
    if weights is not None:
        out.update(_weight_metrics(spec, assignment, weights, weight_bound))
    return out


def _imbalance(loads: Sequence[int]) -> float | None:
    total = sum(loads)
    return max(loads) * len(loads) / total if total else None


def _lag_metrics(
    spec: GroupSpec,
    assignment: Assignment,
    lags: Lags,
    previous: Owners | None,
) -> LoadMetrics:
    values = [
        lags.get((t, p)) for t in spec.subscribed_topics() for p in range(spec.partition_count(t))
    ]
    known = [v for v in values if v is not None]
    unknown = len(values) - len(known)
    out: LoadMetrics = {"unknown_lag_partition_count": unknown}
    if not known:
        return out
    member_lags = [
        sum(lags.get(tp) or 0 for tp in assignment.get(m.member_id, ())) for m in spec.members
    ]
    # Sums of lags saturate at 2^63-1 (`partition_lags` warned with LAG_SATURATED).
    out["total_lag"] = saturated(sum(known))
    out["max_partition_lag"] = max(known)
    if member_lags:
        out["max_member_lag"] = saturated(max(member_lags))
        out["lag_imbalance"] = _imbalance(member_lags)
    if previous is not None:
        out["lag_moved"] = saturated(
            sum(
                lags.get(tp) or 0
                for member_id, tps in assignment.items()
                for tp in tps
                if (owner := previous.get(tp)) is not None and owner != member_id
            )
        )
    return out


def _weight_metrics(
    spec: GroupSpec,
    assignment: Assignment,
    weights: Mapping[TopicPartition, int],
    bound: int | None,
) -> LoadMetrics:
    get = weights.get
    total = sum(
        get((t, p), UNIT) for t in spec.subscribed_topics() for p in range(spec.partition_count(t))
    )
    member_loads = [
        sum(get(tp, UNIT) for tp in assignment.get(m.member_id, ())) for m in spec.members
    ]
    if bound is None:
        bound = weight_lower_bound(spec, weight_loads(spec, weights))
    return {
        "total_weight": total / WEIGHT_SCALE,
        "max_member_weight": max(member_loads, default=0) / WEIGHT_SCALE,
        "min_member_weight": min(member_loads, default=0) / WEIGHT_SCALE,
        "weight_imbalance": _imbalance(member_loads) if member_loads else None,
        "weight_lower_bound": bound / WEIGHT_SCALE,
    }


# ----------------------------------------------------------------------------- lower bound

_ENUMERATE_UP_TO: Final = 8
"""Topic classes up to which the fractional bound enumerates subsets (2^8 = 256 sets): up to
there enumerating is cheaper than the flow (docs/performance.md)."""


@dataclass(frozen=True, slots=True, init=False)
class ClassGraph:
    """The group reduced to classes: topics with the same subscribers form a topic class,
    members with the same subscription form a member class (what the bound needs).

    `topic_loads[c]` is the total load of topic class c, `subscribers[c]` the bitmask of the
    members subscribed to it (bit i: `spec.members[i]`), `member_classes` the (size, set of
    topic classes) of each member class. Classes are numbered deterministically.
    """

    topic_loads: tuple[int, ...]
    subscribers: tuple[int, ...]
    member_classes: tuple[tuple[int, frozenset[int]], ...]

    def __init__(
        self,
        topic_loads: tuple[int, ...],
        subscribers: tuple[int, ...],
        member_classes: tuple[tuple[int, frozenset[int]], ...],
    ) -> None:
        object.__setattr__(self, "topic_loads", topic_loads)
        object.__setattr__(self, "subscribers", subscribers)
        object.__setattr__(self, "member_classes", member_classes)


def class_graph(spec: GroupSpec, loads: Mapping[TopicPartition, int]) -> ClassGraph:
    """Build the class graph of a group; loads absent from `loads` count as 0."""
    sc = subscription_classes(spec)
    # Member classes are disjoint, so a topic class's subscriber mask is the sum of theirs.
    member_masks = [sum(1 << i for i in ms) for ms in sc.members]
    masks = [sum(member_masks[j] for j in js) for js in sc.subscribers]
    order = sorted(range(len(masks)), key=masks.__getitem__)  # deterministic class numbering
    of_member: list[list[int]] = [[] for _ in sc.members]
    for c, old in enumerate(order):
        for j in sc.subscribers[old]:
            of_member[j].append(c)  # ascending: each list is its sorted key
    member_classes = sorted(
        (tuple(cs), len(ms)) for cs, ms in zip(of_member, sc.members, strict=True)
    )
    return ClassGraph(
        tuple(
            sum(
                loads.get((t, p), 0) for t in sc.topics[old] for p in range(spec.partition_count(t))
            )
            for old in order
        ),
        tuple(masks[old] for old in order),
        tuple((size, frozenset(cs)) for cs, size in member_classes),
    )


def weight_lower_bound(spec: GroupSpec, loads: Mapping[TopicPartition, int]) -> int:
    """A proven lower bound on the smallest max member load any valid assignment reaches.

    The larger of (a) the heaviest partition of the group (some member must take it) and
    (b) the fractional bound: for every set S of topic classes, the members able to take
    any of S (N(S)) carry all of S's load, so one of them carries at least
    ceil(load(S) / |N(S)|) (loads are integers). Maximised over S exactly: by enumerating
    the sets when there are few topic classes, otherwise by Dinkelbach's parametric search
    on a max-flow (source -> topic class, capacity b*load; topic class -> member class,
    unbounded; member class -> sink, capacity a*size: a cut below b*total load exhibits a
    set with load(S)/|N(S)| > a/b). Loads are the integer units of `weight_units` (or lags).

    Example (two members, a takes t and u, b only u): t weighs 9, u three partitions of 1:
    (a) gives 9, (b) gives max(9/1, 12/2) = 9; with t on two partitions of 4 and 5:
    (a) 5, (b) 9.

    >>> from assignors.model import Member, TopicMetadata
    >>> spec = GroupSpec("g", (Member("a", frozenset({"t", "u"})), Member("b", frozenset({"u"}))),
    ...                  {"t": TopicMetadata("t", 2), "u": TopicMetadata("u", 3)})
    >>> weight_lower_bound(spec, {("t", 0): 4, ("t", 1): 5, ("u", 0): 1, ("u", 1): 1,
    ...                           ("u", 2): 1})
    9
    """
    heaviest = max(
        (
            loads.get((t, p), 0)
            for t in spec.subscribed_topics()
            for p in range(spec.partition_count(t))
        ),
        default=0,
    )
    graph = class_graph(spec, loads)
    if len(graph.topic_loads) <= _ENUMERATE_UP_TO:
        fractional = fractional_bound_enumerated(graph)
    else:
        fractional = fractional_bound_flow(graph)
    return max(heaviest, fractional)


def fractional_bound_enumerated(graph: ClassGraph) -> int:
    """max over non-empty sets S of topic classes of ceil(load(S) / |N(S)|), by enumeration."""
    k = len(graph.topic_loads)
    load = [0] * (1 << k)
    members = [0] * (1 << k)
    best = 0
    for mask in range(1, 1 << k):
        low = mask & -mask
        c = low.bit_length() - 1
        load[mask] = load[mask ^ low] + graph.topic_loads[c]
        members[mask] = members[mask ^ low] | graph.subscribers[c]
        best = max(best, -(-load[mask] // members[mask].bit_count()))
    return best


def fractional_bound_flow(graph: ClassGraph) -> int:
    """The same bound as `fractional_bound_enumerated`, by Dinkelbach's method on max-flows.

    Start from the ratio of all classes, a/b; a min cut at ratio a/b either saturates every
    source edge (no set beats a/b: done) or its source side is a set S with
    load(S)/|N(S)| > a/b, the next ratio. Ratios strictly increase over finitely many sets.
    """
    k = len(graph.topic_loads)
    if k == 0:
        return 0
    sizes = [size for size, _ in graph.member_classes]
    a, b = sum(graph.topic_loads), sum(sizes)
    while True:
        reach = _min_cut_side(graph, a, b)
        if not reach:
            return -(-a // b)
        a = sum(graph.topic_loads[c] for c in reach)
        b = sum(size for size, topics in graph.member_classes if topics & reach)


def _min_cut_side(graph: ClassGraph, a: int, b: int) -> frozenset[int]:
    """Topic classes on the source side of a minimum cut of the flow network at ratio a/b."""
    k = len(graph.topic_loads)
    mc = len(graph.member_classes)
    source, sink = k + mc, k + mc + 1
    net = FlowNetwork(k + mc + 2)
    unbounded = b * sum(graph.topic_loads) + 1
    for c, load in enumerate(graph.topic_loads):
        net.add_edge(source, c, b * load)
    for j, (size, topics) in enumerate(graph.member_classes):
        for c in sorted(topics):
            net.add_edge(c, k + j, unbounded)
        net.add_edge(k + j, sink, a * size)
    net.max_flow(source, sink)
    return frozenset(c for c in net.reachable(source) if c < k)


def max_member_load(
    spec: GroupSpec, assignment: Assignment, loads: Mapping[TopicPartition, int]
) -> int:
    """The heaviest member's load (loads absent from `loads` count as 0)."""
    return max(
        (sum(loads.get(tp, 0) for tp in assignment.get(m.member_id, ())) for m in spec.members),
        default=0,
    )


def load_gap(spec: GroupSpec, assignment: Assignment, loads: Mapping[TopicPartition, int]) -> int:
    """How far the assignment's max member load is above `weight_lower_bound` (>= 0 when valid).

    A gap of 0 proves the assignment optimal for its max member load.
    """
    return max_member_load(spec, assignment, loads) - weight_lower_bound(spec, loads)
