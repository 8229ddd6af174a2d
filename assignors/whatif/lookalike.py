"""Look-alike groups: one strategy's what-if figures reused by every group shaped alike.

An estate repeats itself: the same service deployed as many groups, each with a few members
on a topic of the same size. The what-if rows of such groups differ only in their names,
because Kafka's built-in assignors (and the simulation that drives them) read names only
through their order: members in Kafka's member order (static members by
`group.instance.id`, then member ids), topics and racks in Java string order, partitions by
number. Renaming a group so that every order is kept gives the same assignments under the new
names, so the same movement, pauses and balance: the same figures.

`ScenarioMemo` keeps each (strategy, shape) it has simulated and hands the figures to the next
group of that shape. A shape says everything the figures depend on:

* the members in member order, each with its subscription (as topic ranks), its rack (rank),
  whether it is static, and the rank of its member id (the trigger of `member_leave` and the
  order of a rolling restart read member ids);
* per subscribed topic (in rank order): whether it exists, its partition count and its
  partitions' replica racks (as rack ranks);
* the strategy's plan (the steady state): each member's partitions as (topic rank,
  partition), in the order the plan lists them (a sticky assignor reads that order);
* the assignor (its class), the strategy name, the scenarios and the settings of the call.

Owned partitions and generations of the input are not part of it: the simulation starts from
the plan, every member owning its share at one generation (generations are only compared with
each other). Topics nobody subscribes to are not part of it either: no assignor reads them.

A group is only memoised when that reasoning holds:

* the strategy is one of this package's assignors, built by its own class (not a plugin,
  which may read names any way it likes, and not `balanced` balancing by weight or lag,
  whose loads are not in the shape);
* no offsets are given (`lag_moved` would need each partition's lag);
* no name of the group can sort differently in Java and in Python
  (`assignors.model.needs_java_order`), so every order is the same whichever of the two a
  piece of code uses;
* the simulation raised nothing (a `SCENARIO_FAILED` detail names the group's own values).

The shape is kept as a 128-bit BLAKE2b digest of its integers (the chance that two of
100,000 shapes share a digest is below 10^-28), and at most `max_entries` shapes are kept
per process: once full, new shapes are simulated in full and not kept, so memory stays
bounded and the rows do not depend on what was kept. The job plans each bucket in a child
process (`jobs.plan.guard`); the child hands what it kept back to its parent, so the next bucket
of the same Python worker starts with it.

The migration paths' rolling bounces are shared alike (`BounceMemo`, filled by
`assignors.migration.paths`): the same shape, over the assignment the bounce starts from, and a
label for what else a bounce reads (the path, its assignors, which members restart and in which
order). A process keeps its own `BounceMemo` beside its `ScenarioMemo`, bounded the same way,
and the guard's child hands both back.

Worked example: three members c-0, c-1, c-2 on a topic `orders` of 6 partitions, and three
members consumer-0, consumer-1, consumer-2 on a topic `pay` of 6 partitions, each under
range, have one shape; with consumer-2 on rack r1, the second group is another shape.

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> from assignors.strategies.range import RangeAssignor
>>> def group(prefix, topic, rack=None):
...     members = tuple(Member(f"{prefix}-{i}", frozenset({topic}), None,
...                            rack if i == 2 else None) for i in range(3))
...     return GroupSpec("g", members, {topic: TopicMetadata(topic, 6)})
>>> def digest(spec):
...     return GroupShape.of(spec).digest("range", RangeAssignor().assign(spec))
>>> digest(group("c", "orders")) == digest(group("consumer", "pay"))
True
>>> digest(group("c", "orders")) == digest(group("consumer", "pay", rack="r1"))
False
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from typing import Final

from assignors.catalog.registry import Assignor, is_builtin_factory
from assignors.model import (
    Assignment,
    GroupSpec,
    Member,
    TopicPartition,
    member_order,
    needs_java_order,
)
from assignors.problems import Problem, Reason

__all__ = [
    "DEFAULT_MAX_ENTRIES",
    "BounceMemo",
    "GroupShape",
    "ScenarioMemo",
    "process_bounce_memo",
    "process_memo",
]

DEFAULT_MAX_ENTRIES: Final = 100_000
"""Shapes one process keeps at most (each about a kilobyte: its key and its figures)."""

Figures = tuple[tuple[str | int | None, ...], ...]
"""A strategy's rows without their names, as the caller packs them (the memo never looks
inside)."""

Kept = tuple[Figures, tuple[Problem, ...]]
"""What the memo keeps of a (strategy, shape): its figures and its warnings."""


class GroupShape:
    """What a group's members and topics say about its what-if figures (the module docstring),
    computed once per group and shared by its strategies."""

    __slots__ = ("head", "ordered", "rank")

    def __init__(self, ordered: list[Member], rank: dict[str, int], head: list[int]) -> None:
        self.ordered = ordered
        self.rank = rank
        self.head = head

    @staticmethod
    def of(spec: GroupSpec) -> GroupShape | None:
        """The group's shape; None when a name could sort differently in Java and in Python."""
        names: set[str] = set()
        racks: set[str] = set()
        for m in spec.members:
            names.update(m.topics)
            if m.rack is not None:
                racks.add(m.rack)
        metas = {t: spec.topics.get(t) for t in names}
        for meta in metas.values():
            if meta is not None:
                for replicas in meta.replica_racks:
                    racks.update(replicas)
        ids = [m.member_id for m in spec.members]
        statics = [m.group_instance_id for m in spec.members if m.group_instance_id is not None]
        if any(needs_java_order(group) for group in (names, racks, ids, statics)):
            return None
        topics = sorted(names)
        rank = {t: k for k, t in enumerate(topics)}
        rack_rank = {r: k for k, r in enumerate(sorted(racks))}
        ordered = member_order(spec.members)
        head = [len(ordered), len(topics)]
        for t in topics:
            meta = metas[t]
            if meta is None:
                head.append(-1)
                continue
            head.append(meta.partition_count)
            head.append(len(meta.replica_racks))
            for replicas in meta.replica_racks:
                head.append(len(replicas))
                head.extend(sorted(rack_rank[r] for r in replicas))
        # Member ids order the members only among dynamic ones; with static members the
        # trigger's tie-break and the restart order still read ids, so their ranks count.
        id_rank = {i: k for k, i in enumerate(sorted(ids))} if statics else None
        for k, m in enumerate(ordered):
            head.append(-1 if m.rack is None else rack_rank[m.rack])
            head.append(1 if m.group_instance_id is not None else 0)
            head.append(k if id_rank is None else id_rank[m.member_id])
            head.append(len(m.topics))
            head.extend(sorted(rank[t] for t in m.topics))
        return GroupShape(ordered, rank, head)

    def digest(self, label: str, planned: Assignment) -> bytes | None:
        """The digest of this shape with `planned`, the plan of the strategy `label` (part of
        the key with the assignor and settings, `ScenarioMemo.key`); None when the plan holds
        a partition of a topic no member subscribes to (never from a built-in assignor)."""
        # A list, packed once: appending to an array is a generic call per item when compiled.
        ints = list(self.head)
        rank = self.rank
        none: list[TopicPartition] = []
        for m in self.ordered:
            tps = planned.get(m.member_id, none)
            ints.append(len(tps))
            for t, p in tps:
                k = rank.get(t)
                if k is None:
                    return None
                ints.append(k)
                ints.append(p)
        h = hashlib.blake2b(array("q", ints).tobytes(), digest_size=16)
        h.update(label.encode())
        return h.digest()


class ScenarioMemo:
    """Figures by (assignor, strategy, settings, shape digest), at most `max_entries`."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self.entries: dict[tuple[object, ...], Kept] = {}
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(
        shape: GroupShape | None,
        strategy: str,
        factory: Callable[[], Assignor],
        planned: Assignment,
        settings: tuple[object, ...],
    ) -> tuple[object, ...] | None:
        """The key of one strategy of a group, None when it must not be memoised."""
        if shape is None or not is_builtin_factory(factory):
            return None
        digest = shape.digest(strategy, planned)
        return None if digest is None else (factory, strategy, settings, digest)

    def get(
        self, key: tuple[object, ...], group_id: str
    ) -> tuple[list[tuple[str | int | None, ...]], list[Problem]] | None:
        """The figures (a row each) and warnings of a group of this shape, the warnings under
        `group_id`."""
        found = self.entries.get(key)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        figures, problems = found
        return list(figures), [_renamed(p, group_id) for p in problems]

    def put(self, key: tuple[object, ...], figures: Figures, problems: Sequence[Problem]) -> None:
        """Keep a group's figures unless the memo is full or a scenario failed."""
        if len(self.entries) >= self.max_entries:
            return
        if any(p.reason != Reason.SCENARIO_NOT_APPLICABLE or p.strategy for p in problems):
            return
        self.entries[key] = (figures, tuple(problems))

    def mark(self) -> int:
        """A point in what was kept (`since`): shapes are only ever added, in order."""
        return len(self.entries)

    def since(self, mark: int) -> list[tuple[tuple[object, ...], Kept]]:
        """What was kept after `mark`: a planning child process hands it to its parent
        (`merge`), so the next child, forked from the parent, starts with it."""
        return list(islice(self.entries.items(), mark, None))

    def merge(self, kept: Iterable[tuple[tuple[object, ...], Kept]]) -> None:
        """Keep what another process kept (`since`), up to `max_entries`."""
        entries = self.entries
        for key, value in kept:
            if len(entries) >= self.max_entries:
                return
            entries.setdefault(key, value)


def _renamed(problem: Problem, group_id: str) -> Problem:
    return Problem(
        group_id,
        problem.member_id,
        problem.topic,
        problem.severity,
        problem.reason,
        problem.detail,
        problem.strategy,
    )


class BounceMemo:
    """The costs of a migration path's rolling bounces (numbers only: rows and their texts are
    the caller's) by (path, assignors, shape digest with its label), at most `max_entries`:
    `ScenarioMemo`'s sibling, bounded, marked and merged the same way."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self.entries: dict[tuple[object, ...], tuple[int, ...]] = {}
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[object, ...]) -> tuple[int, ...] | None:
        found = self.entries.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, key: tuple[object, ...], costs: tuple[int, ...]) -> None:
        """Keep a group's costs unless the memo is full."""
        if len(self.entries) < self.max_entries:
            self.entries[key] = costs

    def mark(self) -> int:
        """A point in what was kept (`since`): costs are only ever added, in order."""
        return len(self.entries)

    def since(self, mark: int) -> list[tuple[tuple[object, ...], tuple[int, ...]]]:
        """What was kept after `mark` (`ScenarioMemo.since`)."""
        return list(islice(self.entries.items(), mark, None))

    def merge(self, kept: Iterable[tuple[tuple[object, ...], tuple[int, ...]]]) -> None:
        """Keep what another process kept (`since`), up to `max_entries`."""
        entries = self.entries
        for key, value in kept:
            if len(entries) >= self.max_entries:
                return
            entries.setdefault(key, value)


_process_memo: ScenarioMemo | None = None
_process_bounce_memo: BounceMemo | None = None


def process_memo() -> ScenarioMemo:
    """The memo of this process (a Spark Python worker plans bucket after bucket with it)."""
    global _process_memo
    if _process_memo is None:
        _process_memo = ScenarioMemo()
    return _process_memo


def process_bounce_memo() -> BounceMemo:
    """The migration bounces' memo of this process (`process_memo`'s sibling)."""
    global _process_bounce_memo
    if _process_bounce_memo is None:
        _process_bounce_memo = BounceMemo()
    return _process_bounce_memo
