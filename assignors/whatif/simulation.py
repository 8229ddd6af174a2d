"""What-if rebalances: what the next membership or metadata change costs a group
(docs/whatif.md).

A group that runs a strategy settles in that strategy's own plan: every member owns what it
was planned, at the next generation (the steady state). Each scenario applies one trigger
from Kafka's list of rebalance causes to that steady state and rebalances with the same
assignor, exactly as the planner does (`Assignor.rebalance`: cooperative rounds are
replayed, static members keep their `group.instance.id`):

| scenario | trigger |
|---|---|
| `member_leave` | the member holding the most partitions leaves (ties: Java order of member id) |
| `member_join` | a new dynamic member joins with the most common subscription; its member id \
sorts after every other |
| `partition_growth` | every subscribed topic gains one partition |
| `subscription_change` | the member with the fewest subscribed topics also subscribes to every \
topic of the group |
| `rolling_restart` | each member in turn restarts: a dynamic member leaves and rejoins with \
the same member id, owning nothing (two rebalances); a static member returns within \
`session.timeout.ms` (no rebalance, KIP-345) |

What a rebalance costs (summed over the scenario's rebalances):

* `moved_partition_count`: partitions whose owner changes (a leaving member counts as the
  owner it was; partitions nobody owned before, like new ones, have not moved);
* `paused_partition_count`: partitions that stop being consumed. The eager protocol
  (`ConsumerPartitionAssignor.RebalanceProtocol.EAGER`: range, roundrobin, sticky, and
  plugins unless they declare COOPERATIVE)
  revokes every owned partition at each rebalance, so every partition owned when it starts
  pauses. The cooperative protocol (KIP-429: cooperative-sticky; KIP-848: uniform and
  server-range; our `balanced`; a plugin that declares it) pauses only what a member revokes
  and what a leaving member held; a partition withheld in round 1 and assigned in round 2
  pauses once. KIP-848 has no stop-the-world pause at all: the broker computes a new target
  and each member first revokes what it must give up, and only then is it assigned to its
  new owner, so `paused` counts exactly the partitions revoked from live members plus those
  of a leaving member, and `rounds` one target computation per rebalance;
* `rounds`: JoinGroup rounds (cooperative-sticky needs a second round when something moves
  between live members; a group left with no member runs none);
* `lag_moved`: the lag of the moved partitions (null without offsets).

`*_after` columns describe the assignment after the last rebalance, in the group as the
trigger left it (one more member, one more partition per topic, ...); `balance_gap_after` is
its max partitions per member minus the best any assignment of that group can reach (null
unless the caller gives the exact bound, `best_max`).

Deterministic choices where Kafka has none: the joining member gets the most common
subscription (ties: that of the first member in Java order of member id) and the most common
`client.rack` (ties: Java order of rack; none when no member has one), so a rack-aware
strategy stays rack-aware; a new partition's replicas are on every rack the topic's other
partitions use (the snapshot cannot know where Kafka would place them, so none of the
strategies gains or loses a rack match on it); members restart in Java order of member id.

Cost: a scenario repeats the assignment work (a rolling restart is two rebalances per dynamic
member), so the simulation shares the steady state and the rebalance of a member leaving it,
reuses the plan when a STATELESS strategy's member rejoins, computes a STATELESS strategy's
"member leaves the plan" once per shape of the members that remain (see `_Simulator`),
builds members' ownership only for assignors that read it, and lets a group's strategies share
what they compute alike (`assignors.strategies.shared`: sticky targets). Where a stateful
assignor's own path works on partition numbers (no member on a rack: sticky and
cooperative-sticky, and uniform and balanced with equal subscriptions), `member_leave`,
`member_join`, `partition_growth` and the rolling restart run on numbers from the plan to
the last rebalance (`assignors.whatif.numbered`). Groups shaped alike share their figures
(`group_scenario_costs`'s memo, `assignors.whatif.lookalike`).
`shortcuts=False` replays every rebalance in full instead, sharing nothing (the reference the
shortcuts are tested against: identical rows).

Worked example: one topic of 6 partitions, dynamic members c0, c1, c2, under range
(c0: p0,p1; c1: p2,p3; c2: p4,p5). A member c3 joins: range moves p5 to c3, but every member
stops consuming: 6 paused. c0 leaves instead: c1 takes p0,p1,p2 and c2 p3,p4,p5, so p0, p1
and p3 move.

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> from assignors.strategies.range import RangeAssignor
>>> spec = GroupSpec("g", tuple(Member(c, frozenset({"t"})) for c in ("c0", "c1", "c2")),
...                  {"t": TopicMetadata("t", 6)})
>>> plan = RangeAssignor().assign(spec)
>>> rows, problems = scenario_costs(spec, "range", RangeAssignor, plan,
...                                 scenarios=("member_join", "member_leave"))
>>> [(r["scenario"], r["moved_partition_count"], r["paused_partition_count"]) for r in rows]
[('member_leave', 3, 6), ('member_join', 1, 6)]
>>> problems
[]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from assignors import progress
from assignors.analysis.load import lag_saturated
from assignors.catalog.registry import Assignor
from assignors.model import (
    Assignment,
    GroupSpec,
    LastSeen,
    Member,
    Rebalance,
    TopicMetadata,
    TopicPartition,
    java_key,
    java_sorted,
    member_order,
)
from assignors.ownership import max_generation
from assignors.problems import INT64_MAX, WARNING, Problem, Reason
from assignors.protocol import is_cooperative
from assignors.strategies import shared
from assignors.whatif.lookalike import GroupShape, ScenarioMemo
from assignors.whatif.numbered import NumberedGroup, StepCost
from assignors.widths import saturated

__all__ = [
    "DEFAULT_MAX_MEMBERS",
    "JOINED",
    "REBALANCE_COST_COLUMNS",
    "SCENARIOS",
    "CostRow",
    "ScenarioCost",
    "check_scenarios",
    "group_scenario_costs",
    "joining_subscription",
    "run_scenarios",
    "scenario_costs",
]

SCENARIOS: Final = (
    "member_leave",
    "member_join",
    "partition_growth",
    "subscription_change",
    "rolling_restart",
)
"""Every scenario, in output order (the config's default `scenarios`)."""

DEFAULT_MAX_MEMBERS: Final = 200
"""Default `scenario_max_members`: larger groups get a SCENARIO_SKIPPED warning, no rows."""

REBALANCE_COST_COLUMNS: Final[tuple[tuple[str, type, bool], ...]] = (
    ("group_id", str, False),
    ("strategy", str, False),
    ("scenario", str, False),
    ("rebalances", int, False),
    ("rounds", int, False),
    ("moved_partition_count", int, False),
    ("paused_partition_count", int, False),
    ("lag_moved", int, True),  # a bigint: assignors.widths
    ("max_partitions_per_member_after", int, False),
    ("partition_spread_after", int, False),
    ("balance_gap_after", int, True),
)
"""(name, python type, nullable) of `rebalance_costs`, in output order (docs/data-contract.md).
`lag_moved` is a sum of offsets: a Spark `bigint`, like the lag columns."""

CostRow = dict[str, str | int | None]
"""One `rebalance_costs` row, keyed by the names of REBALANCE_COST_COLUMNS."""

_COLUMNS: Final = tuple(name for name, _, _ in REBALANCE_COST_COLUMNS)
_NAMES: Final = 2  # group_id and strategy lead a row; the rest are the figures


def _nameless(rows: Sequence[CostRow]) -> tuple[tuple[str | int | None, ...], ...]:
    """A strategy's rows without `group_id` and `strategy` (what a look-alike group reuses)."""
    return tuple(tuple(row[c] for c in _COLUMNS[_NAMES:]) for row in rows)


def _named(
    group_id: str, strategy: str, figures: Iterable[tuple[str | int | None, ...]]
) -> list[CostRow]:
    """`_nameless` rows back under a group's names."""
    return [dict(zip(_COLUMNS, (group_id, strategy, *fig), strict=True)) for fig in figures]


BestMax = Callable[[GroupSpec], int]
"""The exact smallest max partitions per member any valid assignment of a group can reach."""


def check_scenarios(names: Iterable[str]) -> tuple[str, ...]:
    """The configured scenario names, deduplicated, in SCENARIOS order.

    Raises ValueError naming the unknown one and the known ones (a configuration error: the
    job exits 2 before planning).

    >>> check_scenarios(["rolling_restart", "member_join", "member_join"])
    ('member_join', 'rolling_restart')
    >>> check_scenarios(["member_crash"])
    Traceback (most recent call last):
    ...
    ValueError: unknown scenario 'member_crash' (known: member_leave, member_join, \
partition_growth, subscription_change, rolling_restart)
    """
    wanted = set()
    for name in names:
        if name not in SCENARIOS:
            known = ", ".join(SCENARIOS)
            raise ValueError(f"unknown scenario {name!r} (known: {known})")
        wanted.add(name)
    return tuple(s for s in SCENARIOS if s in wanted)


@dataclass(slots=True, init=False)
class _State:
    """The group between rebalances: every member owns `assignment[member]` at `generation`.

    `members` say who is in the group with which subscription; their `owned` may be stale
    (a STATELESS assignor never reads it), `owning` are the members as a stateful assignor
    must see them, built on first use. `count` is how many partitions are owned, `owned()`
    which (built when a rebalance from this state first asks, or shared with `_like`, an
    earlier state owning the same partitions).

    An assignment holds each partition once (Kafka's assignors do; a plugin's result is
    checked, `assignors.catalog.plugins.validate_assignment`), so a partition's owner is the
    one member listing it: no partition -> owner map is needed.
    """

    members: tuple[Member, ...]
    topics: Mapping[str, TopicMetadata]
    assignment: Assignment
    generation: int
    count: int = field(init=False)
    _owning: tuple[Member, ...] | None = None
    _owned: set[TopicPartition] | None = field(default=None, init=False)
    _like: _State | None = field(default=None, init=False)

    def __init__(
        self,
        members: tuple[Member, ...],
        topics: Mapping[str, TopicMetadata],
        assignment: Assignment,
        generation: int,
        _owning: tuple[Member, ...] | None = None,
    ) -> None:
        self.members = members
        self.topics = topics
        self.assignment = assignment
        self.generation = generation
        self.count = sum([len(tps) for tps in assignment.values()])
        self._owning = _owning
        self._owned = None
        self._like = None

    def owned(self) -> set[TopicPartition]:
        """Every partition some member owns."""
        if self._owned is None:
            if self._like is not None:
                self._owned = self._like.owned()
                self._like = None
            else:
                owned: set[TopicPartition] = set()
                for tps in self.assignment.values():
                    owned.update(tps)
                self._owned = owned
        return self._owned

    def same_partitions_as(self, other: _State) -> None:
        """This state owns the partitions `other` owns: its `owned()` serves both (one link
        to the state that builds it, not a chain of every state since)."""
        if other._owned is not None:
            self._owned = other._owned
        else:
            self._like = other._like if other._like is not None else other

    def owning(self) -> tuple[Member, ...]:
        if self._owning is None:
            mine, gen = self.assignment, self.generation
            self._owning = tuple(
                m.owning(tuple(mine.get(m.member_id, ())), gen) for m in self.members
            )
        return self._owning


@dataclass(slots=True, init=False)
class ScenarioCost:
    """One scenario's summed cost and the group it leaves behind (before it becomes a row).

    `revoked` counts partitions live members give up (the leaving member's are not revoked,
    they are lost with it); it is not a column, tests and callers may read it.
    """

    scenario: str
    rebalances: int = 0
    rounds: int = 0
    moved: int = 0
    paused: int = 0
    revoked: int = 0
    lag_moved: int = 0
    members: tuple[Member, ...] = ()
    topics: Mapping[str, TopicMetadata] = field(default_factory=dict)
    assignment: Assignment = field(default_factory=dict)

    def __init__(
        self,
        scenario: str,
        rebalances: int = 0,
        rounds: int = 0,
        moved: int = 0,
        paused: int = 0,
        revoked: int = 0,
        lag_moved: int = 0,
        members: tuple[Member, ...] = (),
        topics: Mapping[str, TopicMetadata] | None = None,
        assignment: Assignment | None = None,
    ) -> None:
        self.scenario = scenario
        self.rebalances = rebalances
        self.rounds = rounds
        self.moved = moved
        self.paused = paused
        self.revoked = revoked
        self.lag_moved = lag_moved
        self.members = members
        self.topics = {} if topics is None else topics
        self.assignment = {} if assignment is None else assignment

    def record(self, step: StepCost) -> None:
        self.rebalances += 1
        self.rounds += step.rounds
        self.moved += step.moved
        self.paused += step.paused
        self.revoked += step.revoked
        self.lag_moved += step.lag_moved

    def end(self, state: _State) -> ScenarioCost:
        self.members, self.topics, self.assignment = state.members, state.topics, state.assignment
        return self

    def spec(self, group_id: str) -> GroupSpec:
        """The group as the trigger left it (what `balance_gap_after` is measured against)."""
        return GroupSpec(group_id, self.members, self.topics)


def _owner_map(assignment: Assignment) -> dict[TopicPartition, str]:
    return {tp: member for member, tps in assignment.items() for tp in tps}


def _movement(
    owners: Mapping[TopicPartition, str],
    before: Mapping[TopicPartition, str],
    lags: Mapping[TopicPartition, int] | None,
) -> tuple[int, int, int]:
    """(kept, moved, lag_moved) from the owners before and after a rebalance: kept = same
    owner, moved = another owner; `lag_moved` sums the lag of every partition whose owner is
    not the one before (new partitions included; none when nothing moved). The definition,
    on owner maps; the simulation counts the same from the assignments, `_member_movement`."""
    kept = moved = lag = 0
    for tp, member in owners.items():
        was = before.get(tp)
        if was == member:
            kept += 1
            continue
        if was is not None:
            moved += 1
        if lags is not None:
            lag += lags.get(tp, 0)
    return kept, moved, (lag if moved else 0)


_SEARCHED: Final = 8
"""Up to this many partitions, what a member had is searched as a list, not hashed."""


def _member_movement(
    after: Assignment, before: _State, lags: dict[TopicPartition, int] | None
) -> tuple[int, int, int]:
    """`_movement` of a rebalance from `before` to `after`, without an owner map per state
    (building one hashed every partition of every step).

    Member by member (each partition has one owner, see `_State`): a member whose list is
    unchanged kept all of it, most members in most rebalances; only the partitions a member
    gains are looked up, in what it had and in what anybody owned before."""
    had_by_member = before.assignment
    kept = moved = lag = 0
    owned: set[TopicPartition] | None = None
    for member, tps in after.items():
        prev = had_by_member.get(member)
        if prev is not None and prev == tps:
            kept += len(tps)
            continue
        # A short list is searched as it is (its tuples compare by identity first, being
        # `partitions_of`'s): cheaper than hashing it into a set.
        had: Container[TopicPartition] = (
            () if prev is None else prev if len(prev) <= _SEARCHED else set(prev)
        )
        for tp in tps:
            if tp in had:
                kept += 1
                continue
            if owned is None:
                owned = before.owned()
            if tp in owned:
                moved += 1
            if lags is not None:
                lag += lags.get(tp, 0)
    return kept, moved, (lag if moved else 0)


_Shape = tuple[tuple[frozenset[str], str | None, bool], ...]
"""What a STATELESS assignor sees of each member, in Kafka's member order: its subscription,
rack and whether it is static (a static member's `group.instance.id` only orders it)."""


def _shape(members: Sequence[Member]) -> tuple[list[Member], _Shape]:
    ordered = member_order(members)
    return ordered, tuple((m.topics, m.rack, m.is_static) for m in ordered)


class _SteadyOrder:
    """The steady members in Kafka's member order and their `_shape`, sorted once: member
    order is a total order (member ids and `group.instance.id`s are unique in a group), so
    the members left after one leaves are that order without it."""

    def __init__(self, members: Sequence[Member]) -> None:
        self.ordered, self.shape = _shape(members)
        self.at = {m.member_id: k for k, m in enumerate(self.ordered)}
        statics = [m.group_instance_id for m in members if m.is_static]
        # (Input that repeats an id is rejected before planning; tests may still pass it.)
        self.total = len(self.at) == len(members) and len(set(statics)) == len(statics)

    def without(self, members: tuple[Member, ...], member_id: str) -> tuple[list[Member], _Shape]:
        """`_shape(members)`, `members` being the steady members but `member_id`."""
        if not self.total:
            return _shape(members)
        k = self.at[member_id]
        return self.ordered[:k] + self.ordered[k + 1 :], self.shape[:k] + self.shape[k + 1 :]


class _Simulator:
    """Rebalances one group under one assignor, starting from the strategy's plan.

    Shares what every scenario needs: the steady state, and the result of a member leaving it
    (`member_leave` and the first step of `rolling_restart` are often the same rebalance; for
    STATELESS strategies every restart step starts from the steady state, and the rejoin
    that ends it is the plan again, so it is not recomputed). A STATELESS assignor reads
    member ids only through their order (static members by `group.instance.id`, then dynamic
    ones by member id, `assignors.model.member_order`), so when the members left after one
    member leaves have the same `_shape` as after another left, its result is the other's
    with the k-th member in that order taking the k-th member's partitions: a group of
    twenty look-alike members runs one rebalance for all twenty leaves, not twenty.

    `shortcuts=False` turns all of it off: every rebalance is replayed from the state the
    previous one left, members always report what they own, generations count every round
    (the reference the shortcuts are tested against).
    """

    def __init__(
        self,
        spec: GroupSpec,
        assignor: Assignor,
        planned: Assignment,
        *,
        cooperative: bool,
        stateless: bool,
        lags: Mapping[TopicPartition, int] | None,
        shortcuts: bool = True,
    ) -> None:
        self.spec = spec
        self.group_id = spec.group_id
        self.assignor = assignor
        self.cooperative = cooperative
        self.stateless = stateless and shortcuts
        self.shortcuts = shortcuts
        # A dict: compiled, its lookups skip a generic method call.
        self.lags = lags if lags is None or isinstance(lags, dict) else dict(lags)
        generation = max(max_generation(spec.members), 0) + 1
        assignment = {m.member_id: list(planned.get(m.member_id, ())) for m in spec.members}
        self.steady = _State(spec.members, spec.topics, assignment, generation)
        self._left_steady: dict[str, tuple[_State, StepCost]] = {}
        self._left_shapes: dict[_Shape, list[list[TopicPartition]]] = {}
        self._steady_order: _SteadyOrder | None = None
        self._numbered: NumberedGroup | None = None
        self._numbered_built = False

    def numbered(self, topics: Mapping[str, TopicMetadata] | None = None) -> NumberedGroup | None:
        """The group on partition numbers from the plan (`assignors.whatif.numbered`), built
        on first use; None when that path does not apply, or without shortcuts. No member
        on a rack, and sticky or cooperative-sticky, or uniform or balanced with equal
        subscriptions: the same rebalances without naming the group at every step. With
        `topics`, the plan's members on those topics instead (built anew: partitions added)."""
        if topics is not None:
            spec = GroupSpec(self.group_id, self.spec.members, topics)
            return NumberedGroup.of(
                spec, self.assignor, self.steady.assignment, self.lags, self.cooperative
            )
        if not self._numbered_built:
            self._numbered_built = True
            if self.shortcuts:
                self._numbered = NumberedGroup.of(
                    self.spec, self.assignor, self.steady.assignment, self.lags, self.cooperative
                )
        return self._numbered

    def current(self, state: _State) -> tuple[Member, ...]:
        """The members of `state` as the assignor must see them."""
        return state.members if self.stateless else state.owning()

    def step(
        self,
        state: _State,
        members: tuple[Member, ...],
        topics: Mapping[str, TopicMetadata] | None = None,
        leaving: str | None = None,
        known: Assignment | None = None,
    ) -> tuple[_State, StepCost]:
        """One rebalance of `members` from `state`; `known` is a result proven unchanged."""
        topics = state.topics if topics is None else topics
        if known is not None:
            result = Rebalance(known)
        elif members:
            result = self.assignor.rebalance(GroupSpec(self.group_id, members, topics))
        else:  # the last member left: the group is empty, nothing to assign, no round
            result = Rebalance({}, rounds=0)
        after = result.assignment
        kept, moved, lag_moved = _member_movement(after, state, self.lags)
        lost = len(state.assignment.get(leaving, ())) if leaving is not None else 0
        paused = state.count - kept if self.cooperative else state.count
        generation = state.generation + max(result.rounds, 1)
        nxt = _State(members, topics, after, generation)
        if kept + moved == nxt.count == state.count:
            # Every partition it owns was owned before (kept, or moved: found in `owned()`),
            # and as many: the same partitions (each listed once). The usual case.
            nxt.same_partitions_as(state)
        return nxt, StepCost(result.rounds, moved, paused, paused - lost, lag_moved)

    def leave(self, state: _State, member_id: str) -> tuple[_State, StepCost]:
        """`member_id` leaves (LeaveGroup, or its session times out)."""
        from_steady = state is self.steady and self.shortcuts
        if from_steady and member_id in self._left_steady:
            return self._left_steady[member_id]
        members = tuple(m for m in self.current(state) if m.member_id != member_id)
        if self.stateless and from_steady and members:
            out = self._stateless_leave(state, members, member_id)
        else:
            out = self.step(state, members, leaving=member_id)
        if from_steady:
            self._left_steady[member_id] = out
        return out

    def _stateless_leave(
        self, state: _State, members: tuple[Member, ...], member_id: str
    ) -> tuple[_State, StepCost]:
        """A STATELESS leave, reusing the result of an earlier leave of the same `_shape`."""
        if self._steady_order is None:
            self._steady_order = _SteadyOrder(state.members)
        # `members` are the steady ones but `member_id` (a STATELESS leave from the steady
        # state): their order needs no sort.
        ordered, shape = self._steady_order.without(members, member_id)
        template = self._left_shapes.get(shape)
        if template is None:
            out = self.step(state, members, leaving=member_id)
            after = out[0].assignment
            self._left_shapes[shape] = [after[m.member_id] for m in ordered]
            return out
        at = {m.member_id: k for k, m in enumerate(ordered)}
        # In the members' own order, as the assignor keys its result (`empty_assignment`).
        known = {m.member_id: list(template[at[m.member_id]]) for m in members}
        return self.step(state, members, leaving=member_id, known=known)

    def rejoin(self, state: _State, member: Member, left_steady: bool) -> tuple[_State, StepCost]:
        """`member` (as in the steady state) joins again, owning nothing, with its member id."""
        steady = self.steady
        fresh = member.owning((), None)
        # Back in its place: state.members are the steady members minus this one, in order.
        at = next(i for i, m in enumerate(steady.members) if m.member_id == member.member_id)
        current = self.current(state)
        members = (*current[:at], fresh, *current[at:])
        if self.stateless and left_steady:
            # Same members and subscriptions as the plan: a stateless assignor returns the plan.
            _, step = self.step(state, members, known=steady.assignment)
            return steady, step
        nxt, step = self.step(state, members)
        # Back to the plan, each member's partitions in the same order (an assignor may read
        # the order of what a member owns): later steps can share the plan's results.
        if self.shortcuts and nxt.assignment == steady.assignment:
            return steady, step
        return nxt, step


def _biggest(members: Sequence[Member], assignment: Assignment) -> str:
    """The member holding the most partitions; ties: the first in Java order of member id."""
    sizes = {m.member_id: len(assignment.get(m.member_id, ())) for m in members}
    top = max(sizes.values())
    return java_sorted(m for m, n in sizes.items() if n == top)[0]


def _member_leave(sim: _Simulator) -> ScenarioCost:
    cost = ScenarioCost("member_leave")
    steady = sim.steady
    leaver = _biggest(steady.members, steady.assignment)
    numbered = sim.numbered()
    if numbered is not None and numbered.can_leave(r := numbered.rank(leaver)):
        lists, step = numbered.leave(r)
        cost.record(step)
        members = tuple(m for m in steady.members if m.member_id != leaver)
        assignment = numbered.named(lists, absent=r)
        return cost.end(_State(members, steady.topics, assignment, steady.generation))
    state, step = sim.leave(steady, leaver)
    cost.record(step)
    return cost.end(state)


def _most_common(values: Iterable[str | None]) -> str | None:
    counts = Counter(v for v in values if v is not None)
    if not counts:
        return None
    top = max(counts.values())
    return java_sorted(v for v, n in counts.items() if n == top)[0]


_last_joiner: LastSeen[Member] = LastSeen()


def _joiner(members: tuple[Member, ...]) -> Member:
    """A new dynamic member, sorting after every member id, with the most common subscription
    (ties: that of the first member in Java order of member id) and the most common rack.
    It reads ids, subscriptions and racks only: the group's members give the same joiner
    under every strategy (computed once per group, not once per strategy)."""
    hit = _last_joiner.get(members)
    return hit if hit is not None else _last_joiner.put(members, None, _new_joiner(members))


JOINED: Final = "-joined"
"""The suffix of a joining member's id: any suffix sorts a string after itself, so after the
greatest member id it sorts after every member."""


def joining_subscription(members: Sequence[Member]) -> tuple[frozenset[str], str | None]:
    """What a member joining `members` subscribes to and its rack: the most common
    subscription (ties: that of the first member in Java order of member id) and the most
    common rack (ties: Java order of rack; None when no member has one). `members` must not be
    empty. The capacity search grows groups by the same rule (`assignors.whatif.capacity`)."""
    by_id = sorted(members, key=lambda m: java_key(m.member_id))
    counts = Counter(m.topics for m in by_id)
    top = max(counts.values())
    topics = next(m.topics for m in by_id if counts[m.topics] == top)
    return topics, _most_common(m.rack for m in members)


def _new_joiner(members: Sequence[Member]) -> Member:
    topics, rack = joining_subscription(members)
    last = max((m.member_id for m in members), key=java_key)
    return Member(last + JOINED, topics, None, rack)


def _member_join(sim: _Simulator) -> ScenarioCost:
    cost = ScenarioCost("member_join")
    steady = sim.steady
    joiner = _joiner(steady.members)
    numbered = sim.numbered()
    joined = numbered.joined(joiner) if numbered is not None else None
    if joined is not None:
        lists, step = joined.everyone_rebalances()
        cost.record(step)
        members = (*steady.members, joiner)
        return cost.end(_State(members, steady.topics, joined.named(lists), steady.generation))
    state, step = sim.step(steady, (*sim.current(steady), joiner))
    cost.record(step)
    return cost.end(state)


def _grown(meta: TopicMetadata) -> TopicMetadata:
    racks = meta.replica_racks
    if racks:
        racks = (*racks, frozenset().union(*racks))
    return TopicMetadata(meta.name, meta.partition_count + 1, racks)


def _grown_topics(
    topics: Mapping[str, TopicMetadata], subscribed: Iterable[str]
) -> dict[str, TopicMetadata]:
    out = dict(topics)
    for t in subscribed:
        out[t] = _grown(out[t])
    return out


def _partition_growth(sim: _Simulator, subscribed: Sequence[str]) -> ScenarioCost:
    cost = ScenarioCost("partition_growth")
    steady = sim.steady
    grown = _grown_topics(steady.topics, subscribed)
    numbered = sim.numbered(grown) if sim.numbered() is not None else None
    if numbered is not None:
        # The plan on the grown topics' numbers: every member rebalances once.
        lists, step = numbered.everyone_rebalances()
        cost.record(step)
        return cost.end(_State(steady.members, grown, numbered.named(lists), steady.generation))
    state, step = sim.step(steady, sim.current(steady), grown)
    cost.record(step)
    return cost.end(state)


def _narrowest(members: Sequence[Member], subscribed: frozenset[str]) -> Member | None:
    """The member with the fewest subscribed (existing) topics, ties: Java order of member id;
    None when every member subscribes to the same existing topics."""
    effective = [(m, m.topics & subscribed) for m in members]
    if len({topics for _, topics in effective}) <= 1:
        return None
    fewest = min(len(topics) for _, topics in effective)
    return min((m for m, t in effective if len(t) == fewest), key=lambda m: java_key(m.member_id))


def _widened(members: tuple[Member, ...], subscribed: frozenset[str]) -> tuple[Member, ...]:
    """The members after the narrowest one also subscribes to every topic of the group."""
    who = _narrowest(members, subscribed)
    assert who is not None  # checked by _not_applicable
    changed = Member(
        who.member_id,
        who.topics | subscribed,
        who.group_instance_id,
        who.rack,
        who.owned,
        who.generation,
        who.assignment_strategies,
    )
    return tuple(changed if m is who else m for m in members)


def _subscription_change(sim: _Simulator, subscribed: frozenset[str]) -> ScenarioCost:
    cost = ScenarioCost("subscription_change")
    steady = sim.steady
    current = sim.current(steady)
    members = _widened(current, subscribed)
    state, step = sim.step(steady, members)
    cost.record(step)
    return cost.end(state)


def _rolling_restart(sim: _Simulator) -> ScenarioCost:
    cost = ScenarioCost("rolling_restart")
    state = sim.steady
    numbered = sim.numbered()
    if numbered is not None and numbered.restartable():
        steps, final = numbered.rolling_restart()
        for step in steps:
            cost.record(step)
        if steps:
            state = _State(state.members, state.topics, numbered.named(final), state.generation)
        return cost.end(state)
    by_id = {m.member_id: m for m in sim.steady.members}
    # Static members come back within the session timeout: the coordinator hands them their
    # assignment again without a rebalance (KIP-345), so they cost nothing here.
    for member_id in java_sorted(m for m, member in by_id.items() if not member.is_static):
        left_steady = state is sim.steady
        state, step = sim.leave(state, member_id)
        cost.record(step)
        state, step = sim.rejoin(state, by_id[member_id], left_steady)
        cost.record(step)
    return cost.end(state)


def _not_applicable(spec: GroupSpec, scenario: str, subscribed: frozenset[str]) -> str | None:
    """Why `scenario` cannot run on this group, or None when it can."""
    if not spec.members:
        return "the group has no members"
    if scenario == "member_leave" and len(spec.members) < 2:
        return "a member leaving a group of one leaves nobody to rebalance"
    if scenario == "partition_growth" and not subscribed:
        return "no subscribed topic exists"
    if scenario == "subscription_change" and _narrowest(spec.members, subscribed) is None:
        return "every member subscribes to the same topics"
    return None


def _warning(group_id: str, reason: str, detail: str) -> Problem:
    # Not tied to a strategy: every strategy of the group reports it alike (callers dedupe).
    return Problem(group_id, None, None, WARNING, reason, detail)


def run_scenarios(
    spec: GroupSpec,
    strategy: str,
    assignor_factory: Callable[[], Assignor],
    planned: Assignment,
    *,
    scenarios: Sequence[str] = SCENARIOS,
    lags: Mapping[TopicPartition, int] | None = None,
    cooperative: bool | None = None,
    stateless: bool | None = None,
    shortcuts: bool = True,
) -> tuple[list[ScenarioCost], list[Problem]]:
    """Each applicable scenario's cost (no size limit; see `scenario_costs` for the rows).

    Scenarios the group cannot run get one SCENARIO_NOT_APPLICABLE warning naming them all;
    an assignor that raises during a scenario gives a SCENARIO_FAILED warning and no cost.
    `shortcuts=False` replays every rebalance in full (same costs, slower; see `_Simulator`).
    """
    scenarios = check_scenarios(scenarios)  # SCENARIOS order; an unknown name raises
    subscribed = frozenset(spec.subscribed_topics())
    skipped = [(s, why) for s in scenarios if (why := _not_applicable(spec, s, subscribed))]
    problems: list[Problem] = []
    if skipped:
        listed = "; ".join(f"{s}: {why}" for s, why in skipped)
        problems.append(
            _warning(spec.group_id, Reason.SCENARIO_NOT_APPLICABLE, f"no what-if row for {listed}")
        )
    runnable = [s for s in scenarios if s not in dict(skipped)]
    if not runnable:
        return [], problems
    # What the assignor declares (`assignors.protocol`): a cooperative one's members keep
    # consuming what they keep through a rebalance (KIP-429 / KIP-848), an eager one's pause
    # everything. A stateless one's result ignores what members own: a member that leaves
    # and rejoins brings back the plan, reused instead of recomputed; it reads member ids
    # only through Kafka's member order and as the result's keys, so one member's leave
    # stands for another's when the members that remain look alike (`_Simulator.leave`).
    assignor = assignor_factory()
    sim = _Simulator(
        spec,
        assignor,
        planned,
        cooperative=is_cooperative(assignor) if cooperative is None else cooperative,
        stateless=assignor.stateless if stateless is None else stateless,
        lags=lags,
        shortcuts=shortcuts,
    )
    runners: dict[str, Callable[[], ScenarioCost]] = {
        "member_leave": lambda: _member_leave(sim),
        "member_join": lambda: _member_join(sim),
        "partition_growth": lambda: _partition_growth(sim, sorted(subscribed)),
        "subscription_change": lambda: _subscription_change(sim, subscribed),
        "rolling_restart": lambda: _rolling_restart(sim),
    }
    costs: list[ScenarioCost] = []
    for scenario in runnable:
        try:
            costs.append(runners[scenario]())
        except Exception as exc:  # a plugin may raise anything; it must not take the job down
            detail = f"strategy {strategy!r}, scenario {scenario}: {type(exc).__name__}: {exc}"
            problems.append(
                Problem(
                    spec.group_id, None, None, WARNING, Reason.SCENARIO_FAILED, detail, strategy
                )
            )
    return costs, problems


class _BoundMemo:
    """The bound `best_max`, memoised by what it depends on: the members' subscriptions and
    the partition counts (a group is built only when the bound is not known yet)."""

    def __init__(self, best_max: BestMax) -> None:
        self.best_max = best_max
        self.memo: dict[tuple[object, ...], int] = {}

    def __call__(self, spec: GroupSpec) -> int:
        return self.of(spec.group_id, spec.members, spec.topics)

    def of(
        self, group_id: str, members: Sequence[Member], topics: Mapping[str, TopicMetadata]
    ) -> int:
        key = (
            tuple(m.topics for m in members),
            tuple((t, meta.partition_count) for t, meta in topics.items()),
        )
        bound = self.memo.get(key)
        if bound is None:
            bound = self.memo[key] = self.best_max(GroupSpec(group_id, tuple(members), topics))
        return bound


def _bound_memo(best_max: BestMax) -> _BoundMemo:
    return best_max if isinstance(best_max, _BoundMemo) else _BoundMemo(best_max)


class _Figures(NamedTuple):
    """A scenario's figures: its row without the names."""

    scenario: str
    rebalances: int
    rounds: int
    moved: int
    paused: int
    lag_moved: int
    max_after: int
    spread_after: int


def _figures(cost: ScenarioCost) -> _Figures:
    sizes = [len(cost.assignment.get(m.member_id, ())) for m in cost.members]
    hi = max(sizes, default=0)
    return _Figures(
        cost.scenario,
        cost.rebalances,
        cost.rounds,
        cost.moved,
        cost.paused,
        cost.lag_moved,
        hi,
        hi - min(sizes, default=0),
    )


def _row(
    group_id: str,
    strategy: str,
    fig: _Figures,
    has_lags: bool,
    gap: int | None,
) -> CostRow:
    return {
        "group_id": group_id,
        "strategy": strategy,
        "scenario": fig.scenario,
        "rebalances": fig.rebalances,
        "rounds": fig.rounds,
        "moved_partition_count": fig.moved,
        "paused_partition_count": fig.paused,
        "lag_moved": fig.lag_moved if has_lags else None,
        "max_partitions_per_member_after": fig.max_after,
        "partition_spread_after": fig.spread_after,
        "balance_gap_after": gap,
    }


def scenario_costs(
    spec: GroupSpec,
    strategy: str,
    assignor_factory: Callable[[], Assignor],
    planned: Assignment,
    *,
    scenarios: Sequence[str] = SCENARIOS,
    lags: Mapping[TopicPartition, int] | None = None,
    max_members: int = DEFAULT_MAX_MEMBERS,
    cooperative: bool | None = None,
    best_max: BestMax | None = None,
    shortcuts: bool = True,
) -> tuple[list[CostRow], list[Problem]]:
    """`rebalance_costs` rows of one (group, strategy), and the warnings (docs/whatif.md).

    `planned` is the strategy's plan of `spec` (the steady state); `assignor_factory` builds
    the strategy's assignor (fresh per call, as the planner does). `scenarios` are checked
    (`check_scenarios`: an unknown name raises ValueError). `lags` (partition -> lag,
    unknown ones absent) fills `lag_moved`. `cooperative` defaults to membership of
    COOPERATIVE. `best_max(spec)` is the exact bound behind `balance_gap_after` (null
    without it); it is called on the group as each trigger leaves it. A group with more
    than `max_members` members gets a SCENARIO_SKIPPED warning and no rows. `shortcuts=False`
    replays every rebalance in full (the same rows, slower: the reference for tests).
    """
    if len(spec.members) > max_members:
        detail = (
            f"what-if rebalances skipped: {len(spec.members)} members is more than"
            f" scenario_max_members ({max_members})"
        )
        return [], [_warning(spec.group_id, Reason.SCENARIO_SKIPPED, detail)]
    costs, problems = run_scenarios(
        spec,
        strategy,
        assignor_factory,
        planned,
        scenarios=scenarios,
        lags=lags,
        cooperative=cooperative,
        shortcuts=shortcuts,
    )
    bound = _bound_memo(best_max) if best_max is not None else None
    gid = spec.group_id
    rows = []
    for cost in costs:
        fig = _figures(cost)
        if lags is not None and fig.lag_moved > INT64_MAX:
            # Repeated rebalances can move more lag than a bigint holds: capped, and said so.
            problems.append(lag_saturated(gid, fig.lag_moved, strategy))
            fig = fig._replace(lag_moved=saturated(fig.lag_moved))
        # The group as the trigger left it: what the bound is measured against.
        gap = None if bound is None else fig.max_after - bound.of(gid, cost.members, cost.topics)
        rows.append(_row(spec.group_id, strategy, fig, lags is not None, gap))
    return rows, problems


def group_scenario_costs(
    spec: GroupSpec,
    plans: Sequence[tuple[str, Callable[[], Assignor], Assignment]],
    *,
    scenarios: Sequence[str] = SCENARIOS,
    lags: Mapping[TopicPartition, int] | None = None,
    max_members: int = DEFAULT_MAX_MEMBERS,
    best_max: BestMax | None = None,
    shortcuts: bool = True,
    memo: ScenarioMemo | None = None,
) -> tuple[list[CostRow], list[Problem]]:
    """`scenario_costs` for every (strategy, assignor factory, plan) of one group.

    Group-level warnings (SCENARIO_SKIPPED, SCENARIO_NOT_APPLICABLE) are reported once per
    group, not once per strategy; the bound `best_max` is computed once per distinct group.
    Pass real strategies only (the `elected` pseudo-strategy would repeat one of them).
    With a `memo` (`assignors.whatif.lookalike`), a strategy whose plan and group are shaped
    like those of a group simulated before takes that group's figures (the same rows):

    >>> from assignors.strategies.range import RangeAssignor
    >>> from assignors.whatif.lookalike import ScenarioMemo
    >>> def group(gid, prefix, topic):
    ...     members = tuple(Member(f"{prefix}-{i}", frozenset({topic})) for i in range(3))
    ...     return GroupSpec(gid, members, {topic: TopicMetadata(topic, 6)})
    >>> memo, rows = ScenarioMemo(), []
    >>> for spec in (group("orders", "c", "orders"), group("payments", "consumer", "pay")):
    ...     plan = RangeAssignor().assign(spec)
    ...     rows += group_scenario_costs(spec, [("range", RangeAssignor, plan)],
    ...                                  scenarios=("member_leave",), memo=memo)[0]
    >>> [(r["group_id"], r["moved_partition_count"], r["paused_partition_count"]) for r in rows]
    [('orders', 3, 6), ('payments', 3, 6)]
    >>> memo.hits, memo.misses
    (1, 1)
    """
    bound = _bound_memo(best_max) if best_max is not None else None
    rows: list[CostRow] = []
    problems: list[Problem] = []
    # (A group over `max_members` gets a warning and no rows: nothing worth a shape.)
    alike = memo is not None and lags is None and len(spec.members) <= max_members
    shape = GroupShape.of(spec) if alike else None
    settings = (tuple(scenarios), max_members, best_max, shortcuts)
    # One group's strategies share what they compute alike (`assignors.strategies.shared`:
    # `sticky` and `cooperative-sticky` replay the same sticky targets); not without shortcuts.
    with shared.sharing(shared.DEFAULT_BUDGET if shortcuts else 0):
        for strategy, factory, planned in plans:
            progress.starting(spec.group_id, strategy, progress.WHATIF)
            key = ScenarioMemo.key(shape, strategy, factory, planned, settings)
            if key is not None and memo is not None:
                known = memo.get(key, spec.group_id)
                if known is not None:
                    rows.extend(_named(spec.group_id, strategy, known[0]))
                    problems.extend(known[1])
                    continue
            more, found = scenario_costs(
                spec,
                strategy,
                factory,
                planned,
                scenarios=scenarios,
                lags=lags,
                max_members=max_members,
                best_max=bound,
                shortcuts=shortcuts,
            )
            if key is not None and memo is not None:
                memo.put(key, _nameless(more), found)
            rows.extend(more)
            problems.extend(found)
    return rows, list(dict.fromkeys(problems))
