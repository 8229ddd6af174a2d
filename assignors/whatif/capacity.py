"""Capacity: how many members a group can use under a strategy, and how many it needs
(docs/capacity.md).

One `capacity` row per planned (group, strategy):

* `active_members`: members holding at least one partition in the strategy's plan;
* `max_useful_members`: the most members that hold a partition at once when the group grows
  by members like its own (what an autoscaler's `maxReplicaCount` should be: a replica beyond
  it is idle);
* `members_for_target`: the fewest members whose plan under the strategy meets the configured
  `CapacityTarget` (null without one, or when no member count meets it: `detail` says why).

It lives with the what-if rebalances because it is one: the group is replanned at other sizes
with the strategy's own assignor, grown by the rule of the `member_join` scenario
(`assignors.whatif.simulation.joining_subscription`) and within its size limits.

The growth rule: the k-th added member subscribes to the group's most common subscription
(ties: that of the first member in Java order of member id), takes the most common rack, has a
member id sorting after every existing one (the greatest id + `-joined`, then `-joined-<digits
of k><k>` so that added ids sort in the order they were added), and is static only when most
members are static (its `group.instance.id` built the same way from the greatest instance id).
Shrinking removes the members whose ids sort last in Java order. Members keep what they report
owning; added members own nothing. A size at which a topic of the group has no subscriber left
never meets a target (its partitions would not be consumed).

The 4/1/1 example: topics of 4, 1 and 1 partitions, every member subscribed to all three.
Under range a fifth member is idle; under roundrobin six members all hold a partition:

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> from assignors.strategies.range import RangeAssignor
>>> from assignors.strategies.roundrobin import RoundRobinAssignor
>>> topics = {t: TopicMetadata(t, n) for t, n in (("a", 4), ("b", 1), ("c", 1))}
>>> spec = GroupSpec("g", tuple(Member(f"c{i}", frozenset(topics)) for i in range(2)), topics)
>>> settings = CapacitySettings(parse_target("max_partitions_per_member:3"))
>>> for name, cls in (("range", RangeAssignor), ("roundrobin", RoundRobinAssignor)):
...     row, _ = capacity_row(spec, name, cls, cls().assign(spec), settings=settings)
...     print(name, row["active_members"], row["max_useful_members"], row["members_for_target"])
range 2 4 4
roundrobin 2 6 2

Under range the first member holds a partition of each topic (and ceil(4 / m) of `a`): it
takes 4 members to get everyone down to 3 partitions, where roundrobin needs 2.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from assignors import progress
from assignors.analysis.bounds import best_balance
from assignors.analysis.flow import FlowNetwork
from assignors.analysis.load import UNIT, WEIGHT_SCALE, weight_units
from assignors.analysis.metrics import ELECTED_STRATEGY
from assignors.catalog.catalog import ELECTED, StrategyCatalog
from assignors.catalog.registry import Assignor, is_builtin, is_builtin_factory
from assignors.model import Assignment, GroupSpec, Member, TopicPartition, java_key
from assignors.pickled import by_fields
from assignors.planner import NO_LOAD, GroupLoad, GroupPlan, internal_error
from assignors.problems import INT64_MAX, Problem
from assignors.racks import member_rack
from assignors.strategies.balanced import BalancedAssignor
from assignors.strategies.range import RangeAssignor
from assignors.strategies.roundrobin import RoundRobinAssignor
from assignors.strategies.server_range import ServerRangeAssignor
from assignors.strategies.sticky.assignor import CooperativeStickyAssignor, StickyAssignor
from assignors.strategies.uniform import UniformAssignor
from assignors.whatif.group import DEFAULT_MAX_PARTITIONS, strategy_plans
from assignors.whatif.simulation import DEFAULT_MAX_MEMBERS, JOINED, joining_subscription

__all__ = [
    "CAPACITY_COLUMNS",
    "MAX_MEMBER_LAG",
    "MAX_MEMBER_WEIGHT",
    "MAX_PARTITIONS_PER_MEMBER",
    "TARGET_KINDS",
    "CapacityRow",
    "CapacitySettings",
    "CapacityTarget",
    "capacity_row",
    "group_capacity",
    "joined_id",
    "parse_target",
]

CAPACITY_COLUMNS: Final[tuple[tuple[str, type, bool], ...]] = (
    ("group_id", str, False),
    ("strategy", str, False),
    ("members", int, False),
    ("active_members", int, False),
    ("max_useful_members", int, True),
    ("members_for_target", int, True),
    ("target", str, True),
    ("detail", str, True),
)
"""(name, python type, nullable) of `capacity`, in output order (docs/capacity.md)."""

CapacityRow = dict[str, str | int | None]
"""One `capacity` row, keyed by the names of CAPACITY_COLUMNS."""

MAX_MEMBER_LAG: Final = "max_member_lag"
MAX_PARTITIONS_PER_MEMBER: Final = "max_partitions_per_member"
MAX_MEMBER_WEIGHT: Final = "max_member_weight"
TARGET_KINDS: Final = (MAX_MEMBER_LAG, MAX_PARTITIONS_PER_MEMBER, MAX_MEMBER_WEIGHT)
"""What a target bounds: the same figures as the `balance_metrics` columns of those names."""

_SYNTAX: Final = (
    'expected "max_member_lag:N", "max_partitions_per_member:N" or "max_member_weight:X"'
)
_INTEGER: Final = re.compile(r"[0-9]+")
_DECIMAL: Final = re.compile(r"[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?|\.[0-9]+([eE][+-]?[0-9]+)?")


@dataclass(frozen=True, slots=True)
class CapacityTarget:
    """A parsed `[capacity] target`: the plan's `kind` figure must be at most `limit`.

    `limit` is in messages (`max_member_lag`), partitions (`max_partitions_per_member`) or
    load units (`max_member_weight`: `WEIGHT_SCALE` per weight 1.0, rounded as the weights
    are, `assignors.analysis.load.weight_units`). `str()` gives the canonical text, the row's
    `target` column.

    >>> CapacityTarget.parse(" max_member_lag : 10000 ")
    CapacityTarget(kind='max_member_lag', limit=10000)
    >>> str(CapacityTarget.parse("max_member_weight:2.5"))
    'max_member_weight:2.5'
    >>> CapacityTarget.parse("max_partitions_per_member:0")
    Traceback (most recent call last):
    ...
    ValueError: capacity target 'max_partitions_per_member:0': max_partitions_per_member must \
be a whole number of at least 1, not '0'
    """

    kind: str
    limit: int

    def __post_init__(self) -> None:
        if self.kind not in TARGET_KINDS:
            raise ValueError(f"unknown capacity target kind {self.kind!r} (known: {_known()})")
        lowest = 1 if self.kind == MAX_PARTITIONS_PER_MEMBER else 0
        if not lowest <= self.limit <= INT64_MAX:
            raise ValueError(f"capacity target {self.kind}: limit {self.limit} out of range")

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        return by_fields(self)  # it travels to the executors in the plan context

    def __str__(self) -> str:
        if self.kind == MAX_MEMBER_WEIGHT:
            return f"{self.kind}:{_weight(self.limit)}"
        return f"{self.kind}:{self.limit}"

    @classmethod
    def parse(cls, text: object) -> CapacityTarget:
        """`kind:value` as the config writes it (any TOML value may arrive); ValueError naming
        the text otherwise."""
        if not isinstance(text, str):
            raise ValueError(f"capacity target must be a string ({_SYNTAX}), got {text!r}")
        kind, colon, value = (part.strip() for part in text.partition(":"))
        if not colon or kind not in TARGET_KINDS:
            why = f"unknown kind {kind!r}" if colon else "no ':' before the value"
            raise ValueError(f"capacity target {text!r}: {why} ({_SYNTAX})")
        if kind == MAX_MEMBER_WEIGHT:
            units = weight_units(float(value)) if _DECIMAL.fullmatch(value) else None
            if units is None or units > INT64_MAX:
                raise ValueError(
                    f"capacity target {text!r}: {kind} must be a finite number of at least 0,"
                    f" not {value!r}"
                )
            return cls(kind, units)
        lowest = 1 if kind == MAX_PARTITIONS_PER_MEMBER else 0
        if not _INTEGER.fullmatch(value) or not lowest <= int(value) <= INT64_MAX:
            raise ValueError(
                f"capacity target {text!r}: {kind} must be a whole number of at least {lowest},"
                f" not {value!r}"
            )
        return cls(kind, int(value))


def parse_target(text: object) -> CapacityTarget | None:
    """The configured target, None when none is (the `capacity` columns stay null).

    >>> parse_target(None) is None, parse_target("max_partitions_per_member:4")
    (True, CapacityTarget(kind='max_partitions_per_member', limit=4))
    >>> parse_target("max_lag:5")
    Traceback (most recent call last):
    ...
    ValueError: capacity target 'max_lag:5': unknown kind 'max_lag' (expected \
"max_member_lag:N", "max_partitions_per_member:N" or "max_member_weight:X")
    """
    return None if text is None else CapacityTarget.parse(text)


@dataclass(frozen=True, slots=True)
class CapacitySettings:
    """The `[capacity]` settings: the target, and the limits of the searches, the what-if's
    (`scenario_max_members`, `scenario_max_partitions`): no group of more members is planned,
    and a group of more partitions is not searched (the closed forms still answer)."""

    target: CapacityTarget | None = None
    max_members: int = DEFAULT_MAX_MEMBERS
    max_partitions: int = DEFAULT_MAX_PARTITIONS

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        return by_fields(self)  # it travels to the executors in the plan context


DEFAULT_SETTINGS: Final = CapacitySettings()

# How a built-in strategy's plan of a group whose members all subscribe alike spreads it:
# `_BLOCKS`, each topic on its own in blocks over the members in order (range without racks,
# server-range); `_EVEN`, every member gets floor or ceil of the partitions (roundrobin deals
# them out, the sticky family, uniform and `balanced` on counts balance them exactly).
# `_MOST`: `balanced` on counts, whatever the subscriptions, has as many members holding a
# partition as any assignment can (see `_max_useful`).
_BLOCKS: Final = "blocks"
_EVEN: Final = "even"
_MOST: Final = "most"


def _known() -> str:
    return ", ".join(TARGET_KINDS)


def _weight(units: int) -> str:
    return repr(units / WEIGHT_SCALE)


def joined_id(last: str, k: int) -> str:
    """The id of the k-th added member (k >= 1) after the greatest id `last`: `last-joined`
    (the what-if's `member_join` id), then `-joined-<digits of k><k>`, so that every added id
    sorts after `last` and after the ones added before it (up to 9-digit k).

    >>> [joined_id("c9", k) for k in (1, 2, 9, 10)]
    ['c9-joined', 'c9-joined-12', 'c9-joined-19', 'c9-joined-210']
    """
    return last + JOINED if k == 1 else f"{last}{JOINED}-{len(str(k))}{k}"


class _PlanFailed(Exception):
    """The strategy's assignor raised planning the group at `size` members."""

    def __init__(self, size: int, cause: Exception) -> None:
        super().__init__(size, cause)
        self.size = size
        self.cause = cause


class _Group:
    """One group resized by the capacity rule (the module docstring); shared by its
    strategies: the members at each size, and what any assignment of them can reach."""

    def __init__(self, spec: GroupSpec) -> None:
        self.spec = spec
        members = spec.members
        self.n = len(members)
        self.topics = spec.subscribed_topics()
        self.sizes = {t: spec.partition_count(t) for t in self.topics}
        self.partitions = sum(self.sizes.values())
        scope = frozenset(self.topics)
        ranked = sorted(members, key=lambda m: java_key(m.member_id))
        self.rank = {m.member_id: i for i, m in enumerate(ranked)}
        self.equal = len({m.topics for m in members}) == 1
        self.alike = len({m.topics & scope for m in members}) == 1
        self.racks = any(member_rack(m) is not None for m in members)
        self.joined: list[Member] = []
        self.subscription: frozenset[str] = frozenset()
        self.rack: str | None = None
        self.last_id = ranked[-1].member_id if ranked else ""
        self.last_instance: str | None = None
        if members:
            self.subscription, self.rack = joining_subscription(members)
            statics = [m.group_instance_id for m in members if m.group_instance_id is not None]
            if 2 * len(statics) > self.n:  # most members are static: so are the added ones
                self.last_instance = max(statics, key=java_key)
        self.reach = [t for t in self.topics if t in self.subscription]
        self.reach_partitions = sum(self.sizes[t] for t in self.reach)
        # existing subscribers of each topic; the smallest size whose members (the first by
        # member id) still subscribe to every topic of the group
        self.subscribers = dict.fromkeys(self.topics, 0)
        self.cover = 0
        missing = set(self.topics)
        for i, m in enumerate(ranked):
            mine = m.topics & scope
            for t in mine:
                self.subscribers[t] += 1
            if missing and mine & missing:
                missing -= mine
                if not missing:
                    self.cover = i + 1
        self._caps: dict[int, int] = {}

    def members_at(self, size: int) -> tuple[Member, ...]:
        """The members at `size`: the first by member id, or all and `size - n` added ones
        (in the spec's order, the added ones last)."""
        spec = self.spec
        if size == self.n:
            return spec.members
        if size < self.n:
            return tuple(m for m in spec.members if self.rank[m.member_id] < size)
        while len(self.joined) < size - self.n:
            k = len(self.joined) + 1
            instance = None if self.last_instance is None else joined_id(self.last_instance, k)
            self.joined.append(
                Member(joined_id(self.last_id, k), self.subscription, instance, self.rack)
            )
        return (*spec.members, *self.joined[: size - self.n])

    def spec_at(self, size: int) -> GroupSpec:
        spec = self.spec
        members = self.members_at(size)
        ids = {m.member_id for m in members}
        return GroupSpec(
            spec.group_id,
            members,
            spec.topics,
            group_protocol=spec.group_protocol,
            classic_members=tuple(m for m in spec.classic_members if m in ids),
        )

    def cap(self, added: int) -> int:
        """The most members of the group grown by `added` members that any valid assignment
        has holding a partition at once: a maximum matching of members to partitions (a
        max-flow on subscription classes; every other partition then goes to any subscriber)."""
        known = self._caps.get(added)
        if known is not None:
            return known
        scope = frozenset(self.topics)
        classes: dict[frozenset[str], int] = {}
        for m in self.spec.members:
            mine = m.topics & scope
            if mine:
                classes[mine] = classes.get(mine, 0) + 1
        if added and self.reach:
            key = frozenset(self.reach)
            classes[key] = classes.get(key, 0) + added
        index = {t: i for i, t in enumerate(self.topics)}
        c = len(classes)
        source, sink = 0, 1 + c + len(self.topics)
        net = FlowNetwork(sink + 1)
        for j, (topics, count) in enumerate(classes.items(), start=1):
            net.add_edge(source, j, count)
            for t in topics:
                net.add_edge(j, 1 + c + index[t], self.sizes[t])
        for t, i in index.items():
            net.add_edge(1 + c + i, sink, self.sizes[t])
        found = self._caps[added] = net.max_flow(source, sink)
        return found


def _shape(group: _Group, factory: Callable[[], Assignor]) -> str | None:
    """`_BLOCKS`, `_EVEN` or `_MOST` where a closed form gives the strategy's figures (a
    built-in class as the catalog builds it; members subscribed alike; range without racks);
    None where the group is searched.

    Alike means the same existing topics for the strategies that read nothing else (range,
    server-range and roundrobin split or deal the partitions of existing topics over their
    subscribers; `balanced` optimises over them), the same topic names for those whose path
    depends on the names (the sticky family's constrained path, uniform's homogeneous one).
    """
    if not is_builtin_factory(factory):
        return None
    if factory is BalancedAssignor:
        return _EVEN if group.alike else _MOST
    if factory is ServerRangeAssignor or (factory is RangeAssignor and not group.racks):
        return _BLOCKS if group.alike else None
    if factory is RoundRobinAssignor:
        return _EVEN if group.alike else None
    even = (StickyAssignor, CooperativeStickyAssignor, UniformAssignor)
    return _EVEN if group.equal and factory in even else None


def _added_bound(group: _Group, factory: Callable[[], Assignor]) -> int:
    """How many members the search adds at most (docs/capacity.md#heterogeneous-groups).

    Range (without racks) and server-range: the added members' largest topic; once every one
    of its partitions has a subscriber ahead of the next added member, that member and every
    later one is idle and nothing else moves. The others: the partitions the added members
    can take at all (for roundrobin, added members past that many are never reached by the
    deal).
    """
    if factory is ServerRangeAssignor or (factory is RangeAssignor and not group.racks):
        return max((group.sizes[t] for t in group.reach), default=0)
    return group.reach_partitions


_Value = Callable[[Sequence[TopicPartition]], int]


class _Search:
    """One strategy's plans of the group at other sizes, each reduced to its figures: the
    members holding a partition, and the target's figure (the heaviest member)."""

    def __init__(
        self,
        group: _Group,
        strategy: str,
        factory: Callable[[], Assignor],
        planned: Assignment,
        value: _Value | None,
    ) -> None:
        self.group = group
        self.strategy = strategy
        self.factory = factory
        self.value = value
        self.figures: dict[int, tuple[int, int]] = {}
        self.figures[group.n] = self._reduce(planned, group.spec.members)
        self.bounded = False

    def _reduce(self, assignment: Assignment, members: Sequence[Member]) -> tuple[int, int]:
        value = self.value
        active = worst = 0
        for m in members:
            tps = assignment.get(m.member_id, ())
            if tps:
                active += 1
                if value is not None:
                    worst = max(worst, value(tps))
        return active, worst

    def at(self, size: int) -> tuple[int, int]:
        """(active members, the target's figure) of the strategy's plan at `size` members."""
        found = self.figures.get(size)
        if found is None:
            spec = self.group.spec_at(size)
            try:
                assignment = self.factory().rebalance(spec).assignment
            except Exception as exc:  # a plugin may raise anything; contained by the caller
                raise _PlanFailed(size, exc) from exc
            found = self.figures[size] = self._reduce(assignment, spec.members)
        return found

    def target_at(self, size: int) -> int:
        """The target's figure at `size` members: from the plan, or where `bounded` (the
        strategy always reaches the group's best balance) from the bound alone."""
        if self.bounded:
            return best_balance(self.group.spec_at(size)).best_max
        return self.at(size)[1]


def _max_useful(
    search: _Search, shape: str | None, settings: CapacitySettings
) -> tuple[int | None, str | None]:
    group = search.group
    if group.partitions == 0:
        return 0, None
    if shape == _BLOCKS:
        return max(group.sizes.values()), None
    if shape == _EVEN:
        return group.partitions, None
    n = group.n
    if shape == _MOST:
        # `balanced` minimises the sorted load vector lexicographically. The load vectors a
        # group's assignments reach are the bases of a polymatroid, whose lexicographically
        # optimal base is also its least majorised one (Fujishige): it maximises the sum of
        # min(load, 1), the members holding a partition, so every plan reaches the cap, which
        # grows with the members added and stops growing past the partitions they can take.
        return group.cap(group.reach_partitions), None
    best = search.at(n)[0]
    added = _added_bound(group, search.factory)
    cap = group.cap(added)
    if best >= cap or added == 0:
        return best, None
    if group.partitions > settings.max_partitions:
        return None, (
            f"max_useful_members not searched: {group.partitions} partitions is more than"
            f" scenario_max_partitions ({settings.max_partitions}); at least {best}"
        )
    top = min(n + added, settings.max_members)
    # The largest size first: where it reaches the cap (what balancing strategies usually
    # do) one plan answers. Past the limit nothing else is planned.
    sizes = [top] if n + added > settings.max_members else [top, *range(n + 1, top)]
    for size in sizes:
        if size <= n:
            continue
        best = max(best, search.at(size)[0])
        if best >= cap:
            return best, None
    if n + added > settings.max_members:
        return None, (
            f"max_useful_members not searched: it needs groups of up to {n + added} members,"
            f" more than scenario_max_members ({settings.max_members}); at least {best}"
        )
    return best, None


def _amount(kind: str, value: int) -> str:
    if kind == MAX_PARTITIONS_PER_MEMBER:
        return f"{value} partition(s)"
    if kind == MAX_MEMBER_LAG:
        return f"lag {value}"
    return f"weight {_weight(value)}"


def _loads(
    group: _Group, target: CapacityTarget, load: GroupLoad
) -> tuple[dict[TopicPartition, int] | None, str | None]:
    """Each partition's figure under the target (its lag, weight units, or 1), or why the
    target cannot be evaluated."""
    parts = [(t, p) for t in group.topics for p in range(group.sizes[t])]
    if target.kind == MAX_PARTITIONS_PER_MEMBER:
        return dict.fromkeys(parts, 1), None
    if target.kind == MAX_MEMBER_LAG:
        lags = load.lags
        if lags is None:
            return None, f"{target} needs lags: the run has no offsets table"
        known = {tp: lags.get(tp) for tp in parts}
        if parts and all(v is None for v in known.values()):
            return None, f"{target}: no partition of the group has a known lag"
        return {tp: v or 0 for tp, v in known.items()}, None
    weights = load.weights
    if weights is None:
        return None, f"{target} needs partition weights: the input has none"
    return {tp: weights.get(tp, UNIT) for tp in parts}, None


def _value_of(target: CapacityTarget, loads: Mapping[TopicPartition, int]) -> _Value:
    if target.kind == MAX_PARTITIONS_PER_MEMBER:
        return len
    get = loads.get

    def heaviest(tps: Sequence[TopicPartition]) -> int:
        return sum([get(tp, 0) for tp in tps])

    return heaviest


def _impossible(
    group: _Group, target: CapacityTarget, loads: Mapping[TopicPartition, int]
) -> str | None:
    """Why no member count can meet the target, from the partitions alone: one partition over
    it, or a topic the added members do not subscribe to whose few subscribers must carry it."""
    limit = target.limit
    heaviest = max(loads.values(), default=0)
    if heaviest > limit:
        # `loads` lists the partitions by topic (Java order), then partition: the first one
        tp = next(tp for tp, v in loads.items() if v == heaviest)
        return (
            f"no member count meets {target}: partition {tp[0]}-{tp[1]} alone has"
            f" {_amount(target.kind, heaviest)}"
        )
    for t in group.topics:
        if t in group.subscription or not group.subscribers[t]:
            continue
        subs = group.subscribers[t]
        total = sum(loads[(t, p)] for p in range(group.sizes[t]))
        least = -(-total // subs)
        if least > limit:
            return (
                f"no member count meets {target}: topic {t!r} has {subs} subscriber(s) and"
                f" added members do not subscribe to it, so one holds at least"
                f" {_amount(target.kind, least)}"
            )
    return None


def _blocks_for_partitions(group: _Group, limit: int, lowest: int) -> tuple[int | None, str | None]:
    """Range-like spreading on equal subscriptions: the first member holds ceil(p / m) of every
    topic, a sum that never grows with m; the fewest m where it is at most `limit`."""
    topics = len(group.topics)
    if topics > limit:
        return None, (
            f"no member count meets max_partitions_per_member:{limit}: the first member holds a"
            f" partition of each of the {topics} topics at any size"
        )
    sizes = list(group.sizes.values())

    def first(m: int) -> int:
        return sum(-(-p // m) for p in sizes)

    lo, hi = lowest, max(lowest, max(sizes))
    while lo < hi:
        mid = (lo + hi) // 2
        if first(mid) <= limit:
            hi = mid
        else:
            lo = mid + 1
    return lo, None


def _highest(group: _Group, shape: str | None, factory: Callable[[], Assignor]) -> int:
    """The size past which the strategy's plans keep their figures: on equal subscriptions
    every member then holds at most one partition (of each topic, for range); otherwise the
    search's bound (`_added_bound`)."""
    if shape == _BLOCKS:
        return max(group.sizes.values())
    if shape == _EVEN:
        return group.partitions
    return group.n + _added_bound(group, factory)


def _for_target(
    search: _Search,
    shape: str | None,
    target: CapacityTarget,
    loads: Mapping[TopicPartition, int],
    settings: CapacitySettings,
) -> tuple[int | None, str | None]:
    group = search.group
    if group.partitions == 0:
        return 0, None  # nothing to consume
    impossible = _impossible(group, target, loads)
    if impossible is not None:
        return None, impossible
    limit = target.limit
    total = sum(loads.values())
    # No valid plan of fewer members meets it: m members carry the whole load, so the
    # heaviest carries at least total / m; and fewer than `cover` leave a topic unconsumed.
    lowest = max(1, group.cover, -(-total // limit) if limit else 1)
    if target.kind == MAX_PARTITIONS_PER_MEMBER and shape == _EVEN:
        return lowest, None  # ceil(P / m) <= limit from m = ceil(P / limit) on
    if target.kind == MAX_PARTITIONS_PER_MEMBER and shape == _BLOCKS:
        return _blocks_for_partitions(group, limit, lowest)
    highest = _highest(group, shape, search.factory)
    if lowest > highest:
        past = "the plans do not change" if shape in (_BLOCKS, _EVEN) else "the search ends"
        return None, (
            f"no member count meets {target}: it takes at least {lowest} members, and {past}"
            f" past {highest}"
        )
    if group.partitions > settings.max_partitions:
        return None, (
            f"members_for_target not searched: {group.partitions} partitions is more than"
            f" scenario_max_partitions ({settings.max_partitions})"
        )
    last = min(highest, settings.max_members)
    best: tuple[int, int] | None = None
    # `balanced` on counts reaches the best balance of the group at every size (its max is
    # `best_max_partitions_per_member`): the bound answers without planning
    search.bounded = shape == _MOST and target.kind == MAX_PARTITIONS_PER_MEMBER
    for size in range(lowest, last + 1):
        figure = search.target_at(size)
        if figure <= limit:
            return size, None
        if best is None or figure < best[0]:
            best = (figure, size)
    if highest > settings.max_members:
        if lowest > settings.max_members:
            return None, (
                f"members_for_target not searched: {target} takes at least {lowest} members,"
                f" more than scenario_max_members ({settings.max_members})"
            )
        return None, (
            f"members_for_target not found up to scenario_max_members"
            f" ({settings.max_members}): no member count from {lowest} meets {target}"
        )
    shown = "" if best is None else f" (at best {_amount(target.kind, best[0])} with {best[1]})"
    return None, f"no member count from {lowest} to {highest} meets {target}{shown}"


def _unknown_lags(group: _Group, target: CapacityTarget, load: GroupLoad) -> str | None:
    """A note when unknown lags were counted as 0 (the answer may then be too low)."""
    if target.kind != MAX_MEMBER_LAG or load.lags is None:
        return None
    lags = load.lags
    unknown = sum(
        1 for t in group.topics for p in range(group.sizes[t]) if lags.get((t, p)) is None
    )
    return f"{unknown} partition(s) of unknown lag counted as 0" if unknown else None


def _row(
    group: _Group,
    strategy: str,
    factory: Callable[[], Assignor],
    planned: Assignment,
    load: GroupLoad,
    settings: CapacitySettings,
    builtin: bool,
) -> tuple[CapacityRow, list[Problem]]:
    spec = group.spec
    target = settings.target
    loads: dict[TopicPartition, int] | None = None
    details: list[str] = []
    if target is not None:
        loads, why = _loads(group, target, load)
        if why is not None:
            details.append(why)
    value = _value_of(target, loads) if target is not None and loads is not None else None
    search = _Search(group, strategy, factory, planned, value)
    shape = _shape(group, factory)
    problems: list[Problem] = []
    useful: int | None = None
    needed: int | None = None
    try:
        useful, why = _max_useful(search, shape, settings)
        if why is not None:
            details.append(why)
        if target is not None and loads is not None:
            needed, why = _for_target(search, shape, target, loads, settings)
            details.append(why or "")
            note = _unknown_lags(group, target, load)
            if note is not None:
                details.append(note)
    except _PlanFailed as failed:
        useful = needed = None
        exc = failed.cause
        if builtin:
            problems.append(internal_error(spec.group_id, strategy, exc))
        details.append(
            f"capacity not computed: strategy {strategy!r} failed planning {failed.size}"
            f" members: {type(exc).__name__}: {exc}"
        )
    row: CapacityRow = {
        "group_id": spec.group_id,
        "strategy": strategy,
        "members": group.n,
        "active_members": search.figures[group.n][0],
        "max_useful_members": useful,
        "members_for_target": needed,
        "target": None if target is None else str(target),
        "detail": "; ".join(d for d in details if d) or None,
    }
    return row, problems


def capacity_row(
    spec: GroupSpec,
    strategy: str,
    assignor_factory: Callable[[], Assignor],
    planned: Assignment,
    load: GroupLoad = NO_LOAD,
    settings: CapacitySettings = DEFAULT_SETTINGS,
) -> tuple[CapacityRow, list[Problem]]:
    """The `capacity` row of one (group, strategy), and the problems found.

    `planned` is the strategy's plan of `spec` (`StrategyPlan.assignment`); `assignor_factory`
    builds the strategy's assignor (fresh per plan, as the planner does: a `StrategyPlan`'s
    `factory` when it has one, `balanced` balancing by weight or lag); `load` holds the
    group's lags and weights as the planner has them. A plugin that raises (or returns an
    invalid assignment) while the group is replanned leaves the searched columns null, its
    error in `detail`; a built-in assignor that raises is a planner bug: the same row, and an
    INTERNAL_ERROR problem.
    """
    builtin = is_builtin(assignor_factory())
    return _row(_Group(spec), strategy, assignor_factory, planned, load, settings, builtin)


def group_capacity(
    spec: GroupSpec,
    plan: GroupPlan,
    catalog: StrategyCatalog,
    *,
    load: GroupLoad = NO_LOAD,
    settings: CapacitySettings = DEFAULT_SETTINGS,
) -> tuple[list[CapacityRow], list[Problem]]:
    """The `capacity` rows of one planned group: one per plan of `plan_group(spec, catalog,
    ..., load=load)`, in its order; the `elected` row repeats the elected strategy's figures
    (computed once). A strategy without a plan (it failed) has no row."""
    plans, _ = strategy_plans(plan, catalog)
    group = _Group(spec)
    by_strategy: dict[str, CapacityRow] = {}
    problems: list[Problem] = []
    for strategy, factory, planned in plans:
        progress.starting(spec.group_id, strategy, progress.CAPACITY)
        row, found = _row(group, strategy, factory, planned, load, settings, is_builtin(factory()))
        by_strategy[strategy] = row
        problems.extend(found)
    rows: list[CapacityRow] = []
    for sp in plan.plans:
        name = sp.strategy
        if name == ELECTED:
            chosen = sp.metrics.get(ELECTED_STRATEGY)
            if isinstance(chosen, str) and chosen in by_strategy:
                rows.append({**by_strategy[chosen], "strategy": ELECTED})
        elif name in by_strategy:
            rows.append(by_strategy[name])
    return rows, problems
