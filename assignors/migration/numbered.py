"""The migration's rolling bounces replayed on partition numbers.

A bounce restarts every member in turn, two rebalances each (`assignors.migration.paths`):
replayed in full, every step builds a group spec, its members' owned partitions and the
assignor's own encoding of them, for a group of a few members and partitions. For a group
where no member has a rack, this module keeps the group in the numbers of
`assignors.whatif.numbered` (partitions numbered in (topic in Java order, partition) order,
members ranked in Java order of member id) through the whole bounce, each step's assignor
being either

* a built-in one with a numbered path (`assignors.whatif.numbered.rebalancer`: sticky and
  cooperative-sticky, uniform and balanced when the members subscribe alike), or
* a STATELESS one (range, roundrobin, server-range): its result depends only on which
  members are present, so the assignor itself runs once per set of members and its result
  is numbered. A rolling bounce meets the whole group after every rejoin: one run for all
  of them, and one per leave.

The costs are those of the full replay (`paths._Bounce`), by test: the same assignor code
decides every step, fed what each member owns, and the movement is counted by the same
definition (`assignors.whatif.numbered.numbered_step`). Between rebalances every member owns
its partitions at one generation, which is all the numbered paths assume.
"""

from __future__ import annotations

from collections.abc import Sequence

from assignors.catalog.registry import Assignor
from assignors.model import GroupSpec, Member, TopicPartition, numbered_partitions
from assignors.racks import member_rack
from assignors.whatif.numbered import (
    Rebalancer,
    can_leave,
    numbered_start,
    numbered_step,
    partition_owners,
    rebalancer,
)
from assignors.whatif.simulation import ScenarioCost

__all__ = ["NumberedBounce"]


class _Stateless:
    """A STATELESS assignor on partition numbers: its result for each set of members present,
    computed once, with the members in the group's input order (as the full replay hands
    them over)."""

    __slots__ = ("assignor", "group_id", "offsets", "position", "results", "topics")

    def __init__(self, spec: GroupSpec, assignor: Assignor, offsets: dict[str, int]) -> None:
        self.assignor = assignor
        self.group_id = spec.group_id
        self.topics = spec.topics
        self.offsets = offsets
        self.position = {m.member_id: k for k, m in enumerate(spec.members)}
        self.results: dict[tuple[str, ...], tuple[list[list[int]], int]] = {}

    def __call__(
        self, members: list[Member], owned: list[list[int]]
    ) -> tuple[list[list[int]], int]:
        key = tuple(m.member_id for m in members)  # rank order: one key per set
        found = self.results.get(key)
        if found is None:
            position = self.position
            in_order = sorted(members, key=lambda m: position[m.member_id])
            result = self.assignor.rebalance(GroupSpec(self.group_id, tuple(in_order), self.topics))
            offsets = self.offsets
            got = result.assignment
            lists = [[offsets[t] + p for t, p in got.get(m.member_id, ())] for m in members]
            found = self.results[key] = (lists, result.rounds)
        return [list(lst) for lst in found[0]], found[1]


class NumberedBounce:
    """One rolling bounce of a rack-free group on partition numbers, from `start`: what every
    rank owns now, and the assignors its steps run (by index, with whether they pause only
    what changes owner)."""

    __slots__ = ("everyone", "members", "owners", "rank", "start", "start_owners", "state", "steps")

    def __init__(
        self,
        members: list[Member],
        start: list[list[int]],
        start_owners: list[int],
        steps: list[tuple[Rebalancer, bool]],
    ) -> None:
        self.members = members
        self.rank = {m.member_id: r for r, m in enumerate(members)}
        self.everyone = list(range(len(members)))
        self.start = start
        self.start_owners = start_owners
        self.state = start
        self.owners = start_owners
        self.steps = steps

    @staticmethod
    def of(
        spec: GroupSpec,
        start: dict[str, list[TopicPartition]],
        steps: Sequence[tuple[Assignor, bool]],
        to_bounce: Sequence[str],
    ) -> NumberedBounce | None:
        """The bounce of `to_bounce` from `start` with the `steps`' (assignor, cooperative);
        None when the numbered replay does not apply: a member has a rack, no partition is
        subscribed, `start` does not give each subscribed partition at most once to a
        subscriber (`numbered_start`), an assignor is neither STATELESS nor has a numbered
        path, or a dynamic member restarted would leave a topic without a subscriber."""
        members = spec.members
        if not members or any(member_rack(m) is not None for m in members):
            return None
        first = members[0].topics
        alike = all(m.topics == first for m in members)
        topics = spec.subscribed_topics()
        sizes = [spec.partition_count(t) for t in topics]
        if not sum(sizes):
            return None
        numbered = numbered_start(spec, topics, sizes, start)
        if numbered is None:
            return None
        ranked, table, lists = numbered
        offsets = numbered_partitions(spec, topics)[0]
        rebalancers: list[tuple[Rebalancer, bool]] = []
        for assignor, cooperative in steps:
            found = rebalancer(assignor, topics, sizes, alike)
            if found is None and assignor.stateless:
                found = _Stateless(spec, assignor, offsets)
            if found is None:
                return None
            rebalancers.append((found, cooperative))
        bounce = NumberedBounce(ranked, lists, partition_owners(lists, len(table)), rebalancers)
        with_partitions = list(dict.fromkeys(tp[0] for tp in table))
        for mid in to_bounce:
            r = bounce.rank[mid]
            if not ranked[r].is_static and not can_leave(ranked, with_partitions, r):
                return None
        return bounce

    def again(self) -> NumberedBounce:
        """The same bounce from `start` again, sharing the assignors' results."""
        return NumberedBounce(self.members, self.start, self.start_owners, self.steps)

    def converted(self, by: int) -> int:
        """What moves when every member rebalances from `start` under step `by`."""
        rebalance, cooperative = self.steps[by]
        _, _, step = numbered_step(
            self.members, self.start, self.start_owners, self.everyone, -1, rebalance, cooperative
        )
        return step.moved

    def restart(self, member_id: str, leave: int, rejoin: int) -> ScenarioCost:
        """`member_id` restarts: a dynamic member leaves (a rebalance by step `leave`) and
        rejoins owning nothing (by step `rejoin`); a static one rejoins keeping what it
        owns."""
        cost = ScenarioCost("bounce")
        r = self.rank[member_id]
        members, everyone = self.members, self.everyone
        state, owners = self.state, self.owners
        if not members[r].is_static:
            rebalance, cooperative = self.steps[leave]
            rest = everyone[:r] + everyone[r + 1 :]
            state, owners, step = numbered_step(
                members, state, owners, rest, r, rebalance, cooperative
            )
            cost.record(step)
        rebalance, cooperative = self.steps[rejoin]
        state, owners, step = numbered_step(
            members, state, owners, everyone, -1, rebalance, cooperative
        )
        cost.record(step)
        self.state, self.owners = state, owners
        return cost
