"""The rolling restart of a group, replayed on partition numbers.

A rolling restart is the costliest scenario: two rebalances per dynamic member, each building
a group spec, its members' owned partitions, the assignor's own encoding of them and its
decoded result, to move a handful of partitions. Several built-in assignors work on
partition numbers anyway: partitions numbered 0..P-1 in (topic in Java order, partition)
order, members ranked in Java order of member id. For a group where no member has a rack,
this module keeps the group in that form for the whole restart and calls those paths
directly; only the final assignment is named again:

* `sticky` and `cooperative-sticky`, both of their paths
  (`assignors.strategies.sticky.assignor.rebalance_numbered`);
* when every member subscribes to the same topics, `uniform`'s homogeneous builder
  (`uniform.homogeneous_numbered`) and `balanced`'s closed form
  (`balanced.rebalance_numbered`).

The figures are those of the full replay (`assignors.whatif.simulation`, `shortcuts=False`),
by construction and by test: the same assignor code decides every step, fed what each member
owns, and the movement is counted by the same definition (a partition kept by its owner,
moved to another, or new to the group).

Worked example: c0, c1, c2 on one topic of 6 partitions under `uniform` (c0: 0, 1; c1: 2, 3;
c2: 4, 5). c0 leaves: c1 takes 0, c2 takes 1 (2 moved). c0 rejoins owning nothing: c1 and c2
keep their lowest two (0, 2 and 1, 4), c0 takes 3 and 5 (2 moved, both revoked from live
members). Then c1 and c2 in turn.

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> from assignors.strategies.uniform import UniformAssignor
>>> spec = GroupSpec("g", tuple(Member(c, frozenset({"t"})) for c in ("c0", "c1", "c2")),
...                  {"t": TopicMetadata("t", 6)})
>>> group = NumberedGroup.of(spec, UniformAssignor(), UniformAssignor().assign(spec))
>>> steps, final = group.rolling_restart(None, cooperative=True)
>>> [(s.moved, s.revoked) for s in steps]
[(2, 0), (2, 2), (2, 0), (2, 2), (2, 0), (2, 2)]
>>> {m: [p for _, p in tps] for m, tps in group.named(final).items()}
{'c0': [0, 1], 'c1': [2, 4], 'c2': [3, 5]}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final, NamedTuple

from assignors.catalog.registry import Assignor
from assignors.model import (
    Assignment,
    GroupSpec,
    Member,
    TopicPartition,
    java_sorted,
    partitions_of,
)
from assignors.racks import member_rack
from assignors.strategies import balanced, uniform
from assignors.strategies.sticky import assignor as sticky

__all__ = ["NumberedGroup", "StepCost"]

Rebalancer = Callable[[list[Member], list[list[int]]], tuple[list[list[int]], int]]
"""(members present, in rank order; what each owns) -> (what each gets, rounds)."""


def _sticky(topics: list[str], sizes: list[int], cooperative: bool) -> Rebalancer:
    def run(members: list[Member], owned: list[list[int]]) -> tuple[list[list[int]], int]:
        return sticky.rebalance_numbered(members, topics, sizes, owned, cooperative)

    return run


def _uniform(total: int) -> Rebalancer:
    def run(members: list[Member], owned: list[list[int]]) -> tuple[list[list[int]], int]:
        # The builder reads current targets ascending, and `assign` sorts what it returns.
        lists = uniform.homogeneous_numbered(total, [sorted(o) for o in owned])
        for lst in lists:
            lst.sort()
        return lists, 1

    return run


def _balanced(total: int) -> Rebalancer:
    def run(members: list[Member], owned: list[list[int]]) -> tuple[list[list[int]], int]:
        return balanced.rebalance_numbered(total, owned)

    return run


def _rebalancer(
    assignor: Assignor, topics: list[str], sizes: list[int], alike: bool
) -> Rebalancer | None:
    """The numbered path of `assignor`, None unless it is a built-in one that has it for this
    group (exactly the class: a subclass or a plugin may decide otherwise). Sticky's has both
    of its paths; uniform's and balanced's only the one for members that subscribe `alike`."""
    kind = type(assignor)
    if kind is sticky.StickyAssignor:
        return _sticky(topics, sizes, False)
    if kind is sticky.CooperativeStickyAssignor:
        return _sticky(topics, sizes, True)
    if not alike:
        return None
    if kind is uniform.UniformAssignor:
        return _uniform(sum(sizes))
    if kind is balanced.BalancedAssignor and getattr(assignor, "loads", None) is None:
        return _balanced(sum(sizes))
    return None


def _kept_subscribed(members: tuple[Member, ...], topics: list[str]) -> bool:
    """Whether every topic keeps a subscriber whichever dynamic member is away (one at a time
    in a rolling restart): its partitions stay numbered as they are. A topic nobody else
    subscribes to drops out of the assignment while its only subscriber restarts."""
    for t in topics:
        subscribers = [m for m in members if t in m.topics]
        if len(subscribers) < 2 and not any(m.is_static for m in subscribers):
            return False
    return True


class StepCost(NamedTuple):
    """One rebalance's cost (`assignors.whatif.simulation` sums them into a scenario's row):
    JoinGroup rounds, partitions moved, paused and revoked from live members, lag moved."""

    rounds: int
    moved: int
    paused: int
    revoked: int
    lag_moved: int


class NumberedGroup:
    """A rack-free group and one stateful built-in assignor with a numbered path."""

    __slots__ = ("members", "rebalance", "start", "table")

    def __init__(
        self,
        members: list[Member],
        table: list[TopicPartition],
        start: list[list[int]],
        rebalance: Rebalancer,
    ) -> None:
        self.members = members
        self.table = table
        self.start = start
        self.rebalance = rebalance

    @staticmethod
    def of(spec: GroupSpec, assignor: Assignor, planned: Assignment) -> NumberedGroup | None:
        """The group in numbers, starting from `planned`; None when the numbered path does
        not apply: a member has a rack, no partition is subscribed, member ids repeat, the
        assignor has no numbered path for the group, a topic would lose its last subscriber
        while a member restarts, or the plan does not give each
        subscribed partition at most once, to a member subscribing to its topic (a built-in
        assignor's plan always does)."""
        members = spec.members
        if not members or any(member_rack(m) is not None for m in members):
            return None
        first = members[0].topics
        alike = all(m.topics == first for m in members)
        topics = spec.subscribed_topics()
        sizes = [spec.partition_count(t) for t in topics]
        total = sum(sizes)
        rebalance = _rebalancer(assignor, topics, sizes, alike) if total else None
        if rebalance is None:
            return None
        by_id = {m.member_id: m for m in members}
        if len(by_id) != len(members) or not (alike or _kept_subscribed(members, topics)):
            return None
        ranked = [by_id[i] for i in java_sorted(by_id)]
        number: dict[TopicPartition, int] = {}
        table: list[TopicPartition] = []
        for t, size in zip(topics, sizes, strict=True):
            for tp in partitions_of(t, size):
                number[tp] = len(table)
                table.append(tp)
        seen = bytearray(total)
        start: list[list[int]] = []
        for m in ranked:
            mine: list[int] = []
            for tp in planned.get(m.member_id, ()):
                g = number.get(tp)
                if g is None or seen[g] or tp[0] not in m.topics:
                    return None
                seen[g] = 1
                mine.append(g)
            start.append(mine)
        if len(planned.keys() - by_id.keys()):
            return None
        return NumberedGroup(ranked, table, start, rebalance)

    def rolling_restart(
        self, lags: Mapping[TopicPartition, int] | None, cooperative: bool
    ) -> tuple[list[StepCost], list[list[int]]]:
        """Each dynamic member in Java order of member id leaves, then rejoins owning
        nothing (static members come back without a rebalance): every step's cost and the
        assignment the restart ends in, by rank."""
        lag = None if lags is None else [lags.get(tp, 0) for tp in self.table]
        state = self.start
        steps: list[StepCost] = []
        everyone = list(range(len(self.members)))
        for r, member in enumerate(self.members):
            if member.is_static:
                continue
            rest = everyone[:r] + everyone[r + 1 :]
            state, step = self._step(state, rest, lag, cooperative, leaving=r)
            steps.append(step)
            state, step = self._step(state, everyone, lag, cooperative, leaving=-1)
            steps.append(step)
        return steps, state

    def _step(
        self,
        state: list[list[int]],
        present: list[int],
        lag: list[int] | None,
        cooperative: bool,
        leaving: int,
    ) -> tuple[list[list[int]], StepCost]:
        """One rebalance of the `present` ranks from `state` (what every rank owns)."""
        count = sum(map(len, state))
        if present:
            got, rounds = self.rebalance(
                [self.members[r] for r in present], [state[r] for r in present]
            )
        else:  # the last member left: nothing to assign, no round
            got, rounds = [], 0
        owner = [_NOBODY] * len(self.table)
        for r, mine in enumerate(state):
            for g in mine:
                owner[g] = r
        after: list[list[int]] = [[] for _ in state]
        kept = moved = lag_moved = 0
        for r, mine in zip(present, got, strict=True):
            after[r] = mine
            for g in mine:
                was = owner[g]
                if was == r:
                    kept += 1
                    continue
                if was != _NOBODY:
                    moved += 1
                if lag is not None:
                    lag_moved += lag[g]
        lost = len(state[leaving]) if leaving >= 0 else 0
        paused = count - kept if cooperative else count
        step = StepCost(rounds, moved, paused, paused - lost, lag_moved if moved else 0)
        return after, step

    def named(self, lists: list[list[int]]) -> Assignment:
        """An assignment by rank, under the members' ids and partition names."""
        table = self.table
        return {
            m.member_id: [table[g] for g in lst] for m, lst in zip(self.members, lists, strict=True)
        }


_NOBODY: Final = -1
