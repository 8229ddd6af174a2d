"""What-if rebalances replayed on partition numbers.

A rolling restart is the costliest scenario: two rebalances per dynamic member, each building
a group spec, its members' owned partitions, the assignor's own encoding of them and its
decoded result, to move a handful of partitions. Several built-in assignors work on
partition numbers anyway: partitions numbered 0..P-1 in (topic in Java order, partition)
order, members ranked in Java order of member id. For a group where no member has a rack,
this module keeps the group in that form from its plan to the scenario's last rebalance
(`member_leave`, `member_join`, `partition_growth`, `rolling_restart`) and calls those paths
directly; only the assignment a scenario ends in is named again:

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
>>> plan = UniformAssignor().assign(spec)
>>> group = NumberedGroup.of(spec, UniformAssignor(), plan, cooperative=True)
>>> steps, final = group.rolling_restart()
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
    numbered_partitions,
)
from assignors.racks import member_rack
from assignors.strategies import balanced, uniform
from assignors.strategies.sticky import assignor as sticky

__all__ = [
    "NumberedGroup",
    "StepCost",
    "can_leave",
    "numbered_start",
    "numbered_step",
    "partition_owners",
    "rebalancer",
]

Rebalancer = Callable[[list[Member], list[list[int]]], tuple[list[list[int]], int]]
"""(members present, in rank order; what each owns) -> (what each gets, rounds)."""


class _StickyRebalancer:
    """Sticky's numbered path: both of its paths, any subscriptions."""

    __slots__ = ("cooperative", "sizes", "topics")

    def __init__(self, topics: list[str], sizes: list[int], cooperative: bool) -> None:
        self.topics = topics
        self.sizes = sizes
        self.cooperative = cooperative

    def __call__(
        self, members: list[Member], owned: list[list[int]]
    ) -> tuple[list[list[int]], int]:
        return sticky.rebalance_numbered(members, self.topics, self.sizes, owned, self.cooperative)


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


def rebalancer(
    assignor: Assignor, topics: list[str], sizes: list[int], alike: bool
) -> Rebalancer | None:
    """The numbered path of `assignor`, None unless it is a built-in one that has it for this
    group (exactly the class: a subclass or a plugin may decide otherwise). Sticky's has both
    of its paths; uniform's and balanced's only the one for members that subscribe `alike`."""
    kind = type(assignor)
    if kind is sticky.StickyAssignor:
        return _StickyRebalancer(topics, sizes, False)
    if kind is sticky.CooperativeStickyAssignor:
        return _StickyRebalancer(topics, sizes, True)
    if not alike:
        return None
    if kind is uniform.UniformAssignor:
        return _uniform(sum(sizes))
    if kind is balanced.BalancedAssignor and getattr(assignor, "loads", None) is None:
        return _balanced(sum(sizes))
    return None


def numbered_start(
    spec: GroupSpec, topics: list[str], sizes: list[int], planned: Assignment
) -> tuple[list[Member], list[TopicPartition], list[list[int]]] | None:
    """The members ranked in Java order of member id, the partition table and what each rank
    owns in `planned`; None when member ids repeat, or `planned` does not give each
    subscribed partition at most once, to a member subscribing to its topic."""
    members = spec.members
    by_id = {m.member_id: m for m in members}
    if len(by_id) != len(members):
        return None
    ranked = [by_id[i] for i in java_sorted(by_id)]
    offsets, table = numbered_partitions(spec, topics)
    size = dict(zip(topics, sizes, strict=True))
    seen = bytearray(len(table))
    start: list[list[int]] = []
    for m in ranked:
        mine: list[int] = []
        for t, p in planned.get(m.member_id, ()):
            base = offsets.get(t)
            if base is None or not 0 <= p < size[t] or t not in m.topics:
                return None
            g = base + p
            if seen[g]:
                return None
            seen[g] = 1
            mine.append(g)
        start.append(mine)
    if planned.keys() - by_id.keys():
        return None
    return ranked, table, start


class StepCost(NamedTuple):
    """One rebalance's cost (`assignors.whatif.simulation` sums them into a scenario's row):
    JoinGroup rounds, partitions moved, paused and revoked from live members, lag moved."""

    rounds: int
    moved: int
    paused: int
    revoked: int
    lag_moved: int


class NumberedGroup:
    """A rack-free group and one stateful built-in assignor with a numbered path, from its
    plan (`start`, by rank); `lag` per partition number (None without offsets)."""

    __slots__ = (
        "_left",
        "_owners",
        "cooperative",
        "lag",
        "members",
        "rebalance",
        "start",
        "table",
        "topics",
    )

    def __init__(
        self,
        members: list[Member],
        table: list[TopicPartition],
        start: list[list[int]],
        rebalance: Rebalancer,
        lag: list[int] | None,
        cooperative: bool,
    ) -> None:
        self.members = members
        self.table = table
        self.topics = list(dict.fromkeys(tp[0] for tp in table))  # those with partitions
        self.start = start
        self.rebalance = rebalance
        self.lag = lag
        self.cooperative = cooperative
        self._left: dict[int, tuple[list[list[int]], list[int], StepCost]] = {}
        self._owners: list[int] | None = None

    @staticmethod
    def of(
        spec: GroupSpec,
        assignor: Assignor,
        planned: Assignment,
        lags: Mapping[TopicPartition, int] | None = None,
        cooperative: bool = False,
    ) -> NumberedGroup | None:
        """The group in numbers, starting from `planned`; None when the numbered path does
        not apply: a member has a rack, no partition is subscribed, member ids repeat, the
        assignor has no numbered path for the group, or the plan does not give each
        subscribed partition at most once, to a member subscribing to its topic (a built-in
        assignor's plan always does). `lags` fill `lag_moved`; `cooperative` says how the
        assignor's rebalances pause partitions."""
        members = spec.members
        if not members or any(member_rack(m) is not None for m in members):
            return None
        first = members[0].topics
        alike = all(m.topics == first for m in members)
        topics = spec.subscribed_topics()
        sizes = [spec.partition_count(t) for t in topics]
        rebalance = rebalancer(assignor, topics, sizes, alike) if sum(sizes) else None
        if rebalance is None:
            return None
        numbered = numbered_start(spec, topics, sizes, planned)
        if numbered is None:
            return None
        ranked, table, start = numbered
        lag = None if lags is None else [lags.get(tp, 0) for tp in table]
        return NumberedGroup(ranked, table, start, rebalance, lag, cooperative)

    def rank(self, member_id: str) -> int:
        return next(r for r, m in enumerate(self.members) if m.member_id == member_id)

    def can_leave(self, r: int) -> bool:
        """`can_leave` for member r of this group."""
        return can_leave(self.members, self.topics, r)

    def restartable(self) -> bool:
        """Whether every dynamic member `can_leave` (a rolling restart's leaves)."""
        return all(self.can_leave(r) for r, m in enumerate(self.members) if not m.is_static)

    def leave(self, r: int) -> tuple[list[list[int]], StepCost]:
        """Member r leaves the planned group (`can_leave(r)`): what every rank then owns, and
        the cost (kept for a rolling restart that starts with the same leave)."""
        after, _, step = self._leave(r)
        return after, step

    def _leave(self, r: int) -> tuple[list[list[int]], list[int], StepCost]:
        found = self._left.get(r)
        if found is None:
            rest = [k for k in range(len(self.members)) if k != r]
            found = self._left[r] = self._step(self.start, self._start_owners(), rest, r)
        return found

    def _start_owners(self) -> list[int]:
        if self._owners is None:
            self._owners = partition_owners(self.start, len(self.table))
        return self._owners

    def joined(self, joiner: Member) -> NumberedGroup | None:
        """The planned group with `joiner` (owning nothing) ranked last; None unless its id
        sorts after every member id, it has no rack and the assignor's path still applies
        (uniform's and balanced's need equal subscriptions)."""
        members = self.members
        last = members[-1].member_id
        if member_rack(joiner) is not None or java_sorted((last, joiner.member_id))[0] != last:
            return None
        if joiner.member_id == last:
            return None
        alike = all(m.topics == joiner.topics for m in members)
        if not alike and not isinstance(self.rebalance, _StickyRebalancer):
            return None
        return NumberedGroup(
            [*members, joiner],
            self.table,
            [*self.start, []],
            self.rebalance,
            self.lag,
            self.cooperative,
        )

    def everyone_rebalances(self) -> tuple[list[list[int]], StepCost]:
        """Every member rebalances from the plan (a member joined: `joined`)."""
        everyone = list(range(len(self.members)))
        after, _, step = self._step(self.start, self._start_owners(), everyone, -1)
        return after, step

    def rolling_restart(self) -> tuple[list[StepCost], list[list[int]]]:
        """Each dynamic member in Java order of member id leaves, then rejoins owning
        nothing (static members come back without a rebalance): every step's cost and the
        assignment the restart ends in, by rank (`restartable()` first)."""
        state = self.start
        owners = self._start_owners()
        steps: list[StepCost] = []
        everyone = list(range(len(self.members)))
        for r, member in enumerate(self.members):
            if member.is_static:
                continue
            if state is self.start:
                state, owners, step = self._leave(r)
            else:
                rest = everyone[:r] + everyone[r + 1 :]
                state, owners, step = self._step(state, owners, rest, r)
            steps.append(step)
            state, owners, step = self._step(state, owners, everyone, -1)
            steps.append(step)
        return steps, state

    def _step(
        self, state: list[list[int]], owners: list[int], present: list[int], leaving: int
    ) -> tuple[list[list[int]], list[int], StepCost]:
        """One rebalance of the `present` ranks from `state` (`numbered_step`)."""
        rebalance, cooperative = self.rebalance, self.cooperative
        return numbered_step(
            self.members, state, owners, present, leaving, rebalance, cooperative, self.lag
        )

    def named(self, lists: list[list[int]], absent: int = -1) -> Assignment:
        """An assignment by rank, under the members' ids and partition names (but the
        `absent` rank's: a member that left)."""
        table = self.table
        return {
            m.member_id: [table[g] for g in lst]
            for r, (m, lst) in enumerate(zip(self.members, lists, strict=True))
            if r != absent
        }


def can_leave(members: list[Member], topics: list[str], r: int) -> bool:
    """Whether every topic (of `topics`, those with partitions) member r subscribes to keeps
    a subscriber while it is away, so the partitions stay numbered as they are (or r is the
    only member: the group is then empty). A topic nobody else subscribes to would drop out
    of the assignment."""
    if len(members) == 1:
        return True
    mine = members[r].topics
    if all(m.topics == mine for m in members):
        return True
    for t in topics:
        if t in mine and not any(t in m.topics for k, m in enumerate(members) if k != r):
            return False
    return True


def numbered_step(
    members: list[Member],
    state: list[list[int]],
    owners: list[int],
    present: list[int],
    leaving: int,
    rebalance: Rebalancer,
    cooperative: bool,
    lag: list[int] | None = None,
) -> tuple[list[list[int]], list[int], StepCost]:
    """One rebalance by `rebalance` of the `present` ranks (in rank order) from `state`
    (what every rank owns, `owners` its owner by partition, -1 for none): the same of the
    state after it, and the cost (`leaving`: the rank that left, -1 for none; `cooperative`:
    only what changes owner pauses; `lag` per partition number)."""
    count = sum(map(len, state))
    if present:
        got, rounds = rebalance([members[r] for r in present], [state[r] for r in present])
    else:  # the last member left: nothing to assign, no round
        got, rounds = [], 0
    after = [_NONE] * len(state)  # an absent rank owns nothing (the list is never changed)
    new_owners = owners.copy()
    kept = moved = lag_moved = assigned = 0
    for r, mine in zip(present, got, strict=True):
        after[r] = mine
        assigned += len(mine)
        for g in mine:
            was = owners[g]
            if was == r:
                kept += 1
                continue
            new_owners[g] = r
            if was != _NOBODY:
                moved += 1
            if lag is not None:
                lag_moved += lag[g]
    if assigned != len(new_owners):  # some partition is left without an owner
        new_owners = partition_owners(after, len(new_owners))
    lost = len(state[leaving]) if leaving >= 0 else 0
    paused = count - kept if cooperative else count
    step = StepCost(rounds, moved, paused, paused - lost, lag_moved if moved else 0)
    return after, new_owners, step


_NOBODY: Final = -1
_NONE: Final[list[int]] = []


def partition_owners(lists: list[list[int]], total: int) -> list[int]:
    """Each partition's owner (a rank), -1 for none."""
    owners = [_NOBODY] * total
    for r, mine in enumerate(lists):
        for g in mine:
            owners[g] = r
    return owners
