"""The `migrations` rows of one group: each way it can move, whether it can move now, where it
lands and what the rolling bounce that moves it costs (docs/migration.md).

Two paths:

* `classic_to_consumer`: every classic member restarts in turn with `group.protocol=consumer`.
  The first one converts the group online (`conditions.upgrade_refusal` says when the broker
  refuses), from then on the broker's landing assignor computes the target, and the classic
  members still to restart receive it through JoinGroup/SyncGroup. A mixed group (already a
  consumer group) has a row too: its classic members are still to restart.
* `eager_to_cooperative` (a classic group on an eager strategy): Kafka's two-bounce upgrade
  to `cooperative-sticky`. The first bounce lists `cooperative-sticky` before the old
  strategy, so the election keeps the old one until every member lists both (the last
  member's rejoin switches the group); the second bounce removes the old one.
  `eager_to_cooperative_direct` is the one bounce to `cooperative-sticky` alone: safe only
  when every member already lists `cooperative-sticky` (Kafka clients' default list
  `[range, cooperative-sticky]`) or the group has one member; otherwise the first restarted
  member shares no strategy with the others and its JoinGroup fails with
  INCONSISTENT_GROUP_PROTOCOL.

Costs are the what-if's (`assignors.whatif.simulation`: the same rebalance steps, moved and
paused counted alike). A rolling bounce restarts the members in Java order of member id: a
dynamic member leaves (one rebalance under the protocol the group is on) and rejoins with its
new configuration, owning nothing (a second one); a static member is back within its session
timeout and replaces itself, keeping what it owned (one rebalance, with its new
configuration). `paused` counts what stops being consumed at each step: every owned
partition under an eager strategy, what is revoked from live members and what a leaving
member held under a cooperative one (and under the broker's assignors). The bounce starts
from `current_assignment` when members own partitions there, else from the plan of the
strategy the group runs.

Look-alike groups share their bounce costs (`memo`, `assignors.whatif.lookalike.BounceMemo`):
the built-in assignors read names only through their order, so a group whose members and
topics are shaped like another's (`GroupShape`, over the assignment the bounce starts from)
and whose bounce restarts the same members (by rank in member order) in the same order, under
the same assignors, from the same strategy and with the members listed in the same order, has
the same costs. Only the numbers are kept; every row and its texts are the group's own. Not
shared: a group whose names could sort differently in Java and in Python, a plugin's bounce,
and a bounce that raised.

A rack-free group's bounce runs on partition numbers (`assignors.migration.numbered`), with
the costs of the full replay (`shortcuts=False`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from assignors import progress
from assignors.catalog.catalog import StrategyCatalog
from assignors.catalog.registry import (
    ELECTED,
    Assignor,
    UnknownStrategyError,
    is_builtin_factory,
    resolve,
)
from assignors.inputs.patterns.resolver import re2j_refusal
from assignors.migration.conditions import (
    ASSIGNMENT_USER_DATA,
    BLOCKERS,
    CUSTOM_ASSIGNOR,
    GROUP_TOO_LARGE,
    INCONSISTENT_GROUP_PROTOCOL,
    PATTERN_NOT_RE2J,
    RACK_AWARENESS_LOST,
    MigrationSettings,
    upgrade_refusal,
)
from assignors.migration.numbered import NumberedBounce
from assignors.model import CONSUMER, Assignment, GroupSpec, Member, java_sorted
from assignors.planner import GroupPlan
from assignors.protocol import is_cooperative
from assignors.racks import sticky_rack_aware
from assignors.whatif.lookalike import BounceMemo, GroupShape
from assignors.whatif.simulation import ScenarioCost, _Simulator

CLASSIC_TO_CONSUMER: Final = "classic_to_consumer"
EAGER_TO_COOPERATIVE: Final = "eager_to_cooperative"
EAGER_TO_COOPERATIVE_DIRECT: Final = "eager_to_cooperative_direct"
PATHS: Final = (CLASSIC_TO_CONSUMER, EAGER_TO_COOPERATIVE, EAGER_TO_COOPERATIVE_DIRECT)

COOPERATIVE_STICKY: Final = "cooperative-sticky"
KAFKA_CLIENT_STRATEGIES: Final = frozenset({"range", "roundrobin", "sticky", COOPERATIVE_STICKY})
"""The client-side assignors Kafka's Java consumer ships: what the consumer protocol
replaces with a server assignor. Any other strategy is a custom one (CUSTOM_ASSIGNOR)."""
RACK_AWARE_STRATEGIES: Final = frozenset({"range", "sticky", COOPERATIVE_STICKY})
"""Kafka's client-side assignors that match consumer racks to replica racks (KIP-881)."""

MIGRATION_COLUMNS: Final[tuple[tuple[str, type, bool], ...]] = (
    ("group_id", str, False),
    ("path", str, False),
    ("ready", bool, False),
    ("blockers", list, False),
    ("warnings", list, False),
    ("from_strategy", str, True),
    ("landing_assignor", str, True),
    ("moved_at_conversion", int, True),
    ("bounce_moved", int, True),
    ("bounce_paused", int, True),
    ("first_bounce_moved", int, True),
    ("first_bounce_paused", int, True),
    ("steps", int, True),
    ("detail", str, False),
)
"""(name, python type, nullable) of `migrations`, in output order (docs/data-contract.md)."""

MigrationRow = dict[str, object]


class BounceCost:
    """What one rolling bounce costs: rebalances, partitions moved and paused (summed)."""

    __slots__ = ("moved", "paused", "rebalances", "restarts")

    def __init__(self) -> None:
        self.moved = 0
        self.paused = 0
        self.rebalances = 0
        self.restarts = 0

    def add(self, cost: ScenarioCost) -> None:
        self.moved += cost.moved
        self.paused += cost.paused
        self.rebalances += cost.rebalances


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _simulator(
    spec: GroupSpec, assignor: Assignor, start: Assignment, cooperative: bool
) -> _Simulator:
    # Every step replayed in full from the state the previous one left (no shortcut: the
    # members' configurations change between steps).
    return _Simulator(
        spec, assignor, start, cooperative=cooperative, stateless=False, lags=None, shortcuts=False
    )


class _Bounce:
    """The group through one rolling bounce, every step replayed in full: its state, and the
    simulators of the assignors its steps run (by index)."""

    def __init__(self, spec: GroupSpec, start: Assignment, sims: list[_Simulator]) -> None:
        self.spec = spec
        self.by_id = {m.member_id: m for m in spec.members}
        self.order = [m.member_id for m in spec.members]
        self.start = start
        self.sims = sims
        self.state = sims[0].steady

    def again(self) -> _Bounce:
        """The same bounce from `start` again."""
        return _Bounce(self.spec, self.start, self.sims)

    def converted(self, by: int) -> int:
        """What moves when every member rebalances from `start` under step `by`."""
        sim = self.sims[by]
        state = sim.steady
        return sim.step(state, state.owning())[1].moved

    def restart(self, member_id: str, leave: int, rejoin: int) -> ScenarioCost:
        """`member_id` restarts: a dynamic member leaves (a rebalance by step `leave`) and
        rejoins owning nothing (by step `rejoin`); a static one rejoins keeping what it
        owns."""
        state = self.state
        cost = ScenarioCost("bounce")
        member = self.by_id[member_id]
        if not member.is_static:
            staying = tuple(m for m in state.owning() if m.member_id != member_id)
            state, step = self.sims[leave].step(state, staying, leaving=member_id)
            cost.record(step)
            back = member.owning((), None)
        else:
            back = member.owning(tuple(state.assignment.get(member_id, ())), state.generation)
        present = {m.member_id: m for m in state.owning()}
        present[member_id] = back
        members = tuple(present[m] for m in self.order if m in present)
        state, step = self.sims[rejoin].step(state, members)
        cost.record(step)
        self.state = state
        return cost


Bounce = _Bounce | NumberedBounce


def _bounce(
    spec: GroupSpec,
    start: Assignment,
    steps: list[tuple[Assignor, bool]],
    to_bounce: Sequence[str],
    shortcuts: bool,
) -> Bounce:
    """A rolling bounce of `to_bounce` from `start` whose steps run the `steps`' (assignor,
    cooperative): on partition numbers where that applies (`assignors.migration.numbered`),
    unless `shortcuts` is off, else replayed in full."""
    if shortcuts:
        numbered = NumberedBounce.of(spec, start, steps, to_bounce)
        if numbered is not None:
            return numbered
    return _Bounce(spec, start, [_simulator(spec, a, start, c) for a, c in steps])


def _strategy_list(member: Member, catalog: StrategyCatalog) -> list[str]:
    """The protocols a classic member supports, in its order (null: the client default)."""
    names = member.assignment_strategies
    if names is None:
        return list(catalog.default_strategies)
    return [p for n in names if (p := catalog.vote(n)) is not None]


def start_assignment(spec: GroupSpec, plan: GroupPlan, strategy: str | None) -> Assignment:
    """What the bounce starts from: the members' current assignment when any member owns a
    partition, else the plan of `strategy` (the group as it would settle on it)."""
    if any(m.owned for m in spec.members):
        return {m.member_id: list(m.owned) for m in spec.members}
    for sp in plan.plans:
        if sp.strategy == strategy:
            return {k: list(v) for k, v in sp.assignment.items()}
    return {m.member_id: [] for m in spec.members}


Factory = Callable[[], Assignor]


def _built(catalog: StrategyCatalog, name: str) -> tuple[Assignor | None, Factory | None]:
    """A fresh assignor for `name` and the factory that built it; (None, None) when unknown."""
    try:
        factory = catalog.elected_strategy(name).factory
        return factory(), factory
    except KeyError:
        pass
    try:
        factory = resolve(name)[1]
        return factory(), factory
    except UnknownStrategyError:
        return None, None


def _assignor(catalog: StrategyCatalog, name: str) -> Assignor | None:
    return _built(catalog, name)[0]


class _Alike:
    """What keys a group's bounce costs in `memo` besides each path's own label (the module
    docstring): its shape, each member's rank in member order, and the members' input order
    as ranks (the order the simulation hands them to the assignor in)."""

    __slots__ = ("memo", "order", "rank", "shape")

    def __init__(
        self, memo: BounceMemo, shape: GroupShape, rank: dict[str, int], order: list[int]
    ) -> None:
        self.memo = memo
        self.shape = shape
        self.rank = rank
        self.order = order

    @staticmethod
    def of(spec: GroupSpec, memo: BounceMemo) -> _Alike | None:
        """None when the group must not be memoised: a name could sort differently in Java
        and in Python, or two members share an id (not an input the planner builds)."""
        shape = GroupShape.of(spec)
        if shape is None:
            return None
        rank = {m.member_id: k for k, m in enumerate(shape.ordered)}
        if len(rank) != len(spec.members):
            return None
        return _Alike(memo, shape, rank, [rank[m.member_id] for m in spec.members])

    def key(
        self,
        path: str,
        factories: tuple[Factory | None, ...],
        label: tuple[object, ...],
        to_bounce: Sequence[str],
        start: Assignment,
    ) -> tuple[object, ...] | None:
        """The key of one path's costs: its built-in assignors' factories (a plugin's bounce
        is never memoised, None), and the digest of the shape over `start` with `label`, the
        order the members are listed in and the members restarted, in order, as ranks."""
        for factory in factories:
            if factory is not None and not is_builtin_factory(factory):
                return None
        restarts = []
        for mid in to_bounce:
            k = self.rank.get(mid)
            if k is None:
                return None
            restarts.append(k)
        digest = self.shape.digest(repr((path, label, self.order, restarts)), start)
        return None if digest is None else (path, factories, digest)


def _re2j_members(patterns: Mapping[str, str], members: Iterable[str]) -> list[str]:
    out = []
    for mid in members:
        pattern = patterns.get(mid)
        if pattern is None:
            continue
        try:
            refusal = re2j_refusal(pattern)
        except ValueError:
            continue  # not Java either: its INVALID_PATTERN row says so
        if refusal is not None:
            out.append(mid)
    return out


def group_migrations(
    spec: GroupSpec,
    plan: GroupPlan,
    catalog: StrategyCatalog,
    settings: MigrationSettings,
    *,
    user_data: frozenset[str] = frozenset(),
    patterns: Mapping[str, str] | None = None,
    max_members: int | None = None,
    max_partitions: int | None = None,
    memo: BounceMemo | None = None,
    shortcuts: bool = True,
) -> list[MigrationRow]:
    """The `migrations` rows of a planned group: none for a `consumer` group whose members all
    use the consumer protocol.

    `user_data`: the members whose assignment carries user data
    (`subscriptions.assignment_user_data`); `patterns`: member -> its `topic_pattern`;
    `max_members`, `max_partitions`: above either the bounce costs are null (the what-if's
    `scenario_max_members` and `scenario_max_partitions`). With a `memo`, a bounce shaped like
    one costed before takes its costs (the same rows, the module docstring). `shortcuts=False`
    replays every bounce in full, never on partition numbers (`assignors.migration.numbered`:
    the reference that path is tested against)."""
    patterns = {} if patterns is None else patterns
    mixed = bool(spec.classic_members)
    if spec.group_protocol == CONSUMER and not mixed:
        return []
    election = plan.election
    if mixed:
        strategy: str | None = None  # the broker assigns the classic members already
        to_bounce = java_sorted(spec.classic_members)
    else:
        strategy = None if election is None else election.elected
        to_bounce = java_sorted(m.member_id for m in spec.members)
    progress.starting(spec.group_id, strategy or ELECTED, progress.MIGRATION)
    partitions = sum(spec.partition_count(t) for t in spec.subscribed_topics())
    costed = (max_members is None or len(spec.members) <= max_members) and (
        max_partitions is None or partitions <= max_partitions
    )
    alike = _Alike.of(spec, memo) if memo is not None and costed else None
    rows = [
        _classic_to_consumer(
            spec,
            plan,
            catalog,
            settings,
            strategy,
            to_bounce,
            user_data,
            patterns,
            costed,
            alike,
            shortcuts,
        )
    ]
    if not mixed and strategy is not None:
        old = _assignor(catalog, strategy)
        if old is not None and not is_cooperative(old):
            rows.extend(
                _eager_to_cooperative(
                    spec, plan, catalog, strategy, to_bounce, costed, alike, shortcuts
                )
            )
    return rows


def _classic_to_consumer(
    spec: GroupSpec,
    plan: GroupPlan,
    catalog: StrategyCatalog,
    settings: MigrationSettings,
    strategy: str | None,
    to_bounce: Sequence[str],
    user_data: frozenset[str],
    patterns: Mapping[str, str],
    costed: bool,
    alike: _Alike | None,
    shortcuts: bool,
) -> MigrationRow:
    mixed = bool(spec.classic_members)
    if mixed:
        # already converted: only what every joining member must pass
        blockers = [GROUP_TOO_LARGE] if len(spec.members) > settings.consumer_max_size else []
        landing = plan.election.elected if plan.election is not None else None
        landing = landing or settings.landing_for(None)
    else:
        blockers = upgrade_refusal(settings, len(spec.members))
        landing = settings.landing_for(strategy)
    if any(m in user_data for m in spec.member_ids):
        blockers.append(ASSIGNMENT_USER_DATA)
    blockers.sort(key=BLOCKERS.index)
    warnings: list[str] = []
    if strategy is not None and strategy not in KAFKA_CLIENT_STRATEGIES:
        warnings.append(CUSTOM_ASSIGNOR)
    re2j = _re2j_members(patterns, to_bounce)
    if re2j:
        warnings.append(PATTERN_NOT_RE2J)
    if strategy in RACK_AWARE_STRATEGIES and sticky_rack_aware(spec):
        warnings.append(RACK_AWARENESS_LOST)
    row: MigrationRow = {
        "group_id": spec.group_id,
        "path": CLASSIC_TO_CONSUMER,
        "ready": not blockers,
        "blockers": blockers,
        "warnings": warnings,
        "from_strategy": strategy,
        "landing_assignor": landing,
        "moved_at_conversion": None,
        "bounce_moved": None,
        "bounce_paused": None,
        "first_bounce_moved": None,
        "first_bounce_paused": None,
        "steps": len(to_bounce),
        "detail": "",
    }
    target, target_factory = _built(catalog, landing)
    old, old_factory = (None, None) if strategy is None else _built(catalog, strategy)
    parts = []
    if mixed:
        parts.append(
            f"mixed group: {len(to_bounce)} of {_count(len(spec.members), 'member')} still on"
            f" the classic protocol, assigned by {landing}"
        )
    if target is None or not costed or (not mixed and old is None):
        parts.append("bounce not costed")
    else:
        start = start_assignment(spec, plan, strategy)
        key = None
        costs = None
        if alike is not None:
            factories = (target_factory, None if mixed else old_factory)
            label: tuple[object, ...] = (strategy, landing, mixed, costed)
            key = alike.key(CLASSIC_TO_CONSUMER, factories, label, to_bounce, start)
            costs = None if key is None else alike.memo.get(key)
        if costs is None:
            costs = _classic_bounce(
                spec, start, target, None if mixed else old, to_bounce, shortcuts
            )
            if key is not None and alike is not None:
                alike.memo.put(key, costs)
        at_conversion, moved, paused, rebalances = costs
        row["moved_at_conversion"] = at_conversion
        row["bounce_moved"], row["bounce_paused"] = moved, paused
        parts.append(
            f"{_count(len(to_bounce), 'restart')}, {_count(rebalances, 'rebalance')}:"
            f" moves {moved},"
            f" pauses {paused}"
        )
    if re2j:
        parts.append(f"patterns RE2/J reads differently: {', '.join(re2j[:5])}")
    row["detail"] = "; ".join(parts)
    return row


def _classic_bounce(
    spec: GroupSpec,
    start: Assignment,
    target: Assignor,
    old: Assignor | None,
    to_bounce: Sequence[str],
    shortcuts: bool = True,
) -> tuple[int, int, int, int]:
    """`classic_to_consumer`'s costs: (moved at conversion, moved, paused, rebalances); `old`
    runs the first leave (None: a mixed group, a consumer group already)."""
    landing = 0
    steps = [(target, True)]
    if old is not None:
        steps.append((old, is_cooperative(old)))
    walk = _bounce(spec, start, steps, to_bounce, shortcuts)
    at_conversion = walk.converted(landing)
    bounce = BounceCost()
    leave = landing if old is None else 1
    for mid in to_bounce:
        bounce.add(walk.restart(mid, leave, landing))
        leave = landing  # the group is a consumer group from the first rejoin on
    return at_conversion, bounce.moved, bounce.paused, bounce.rebalances


def _eager_to_cooperative(
    spec: GroupSpec,
    plan: GroupPlan,
    catalog: StrategyCatalog,
    strategy: str,
    to_bounce: Sequence[str],
    costed: bool,
    alike: _Alike | None,
    shortcuts: bool,
) -> list[MigrationRow]:
    lists = [_strategy_list(m, catalog) for m in spec.members]
    direct_safe = len(spec.members) <= 1 or all(COOPERATIVE_STICKY in names for names in lists)
    base: MigrationRow = {
        "group_id": spec.group_id,
        "ready": True,
        "blockers": [],
        "warnings": [],
        "from_strategy": strategy,
        "landing_assignor": COOPERATIVE_STICKY,
        "moved_at_conversion": None,
        "bounce_moved": None,
        "bounce_paused": None,
        "first_bounce_moved": None,
        "first_bounce_paused": None,
    }
    two: MigrationRow = {
        **base,
        "path": EAGER_TO_COOPERATIVE,
        "steps": 2 * len(to_bounce),
        "detail": f"bounce 1: [{COOPERATIVE_STICKY}, {strategy}]; bounce 2: [{COOPERATIVE_STICKY}]",
    }
    direct: MigrationRow = {
        **base,
        "path": EAGER_TO_COOPERATIVE_DIRECT,
        "steps": len(to_bounce),
        "ready": direct_safe,
        "blockers": [] if direct_safe else [INCONSISTENT_GROUP_PROTOCOL],
        "detail": f"one bounce: [{COOPERATIVE_STICKY}]"
        if direct_safe
        else f"a member restarted with [{COOPERATIVE_STICKY}] alone shares no strategy with"
        f" the members still on [{strategy}]: JoinGroup fails with INCONSISTENT_GROUP_PROTOCOL",
    }
    old, old_factory = _built(catalog, strategy)
    coop, coop_factory = _built(catalog, COOPERATIVE_STICKY)
    if not costed or old is None or coop is None:
        return [two, direct]
    start = start_assignment(spec, plan, strategy)
    key = None
    costs = None
    if alike is not None:
        label: tuple[object, ...] = (strategy, COOPERATIVE_STICKY, direct_safe, costed)
        key = alike.key(EAGER_TO_COOPERATIVE, (old_factory, coop_factory), label, to_bounce, start)
        costs = None if key is None else alike.memo.get(key)
    if costs is None:
        costs = _cooperative_bounces(spec, start, old, coop, to_bounce, direct_safe, shortcuts)
        if key is not None and alike is not None:
            alike.memo.put(key, costs)
    two["first_bounce_moved"], two["first_bounce_paused"] = costs[0], costs[1]
    two["bounce_moved"], two["bounce_paused"] = costs[2], costs[3]
    if direct_safe:
        direct["bounce_moved"], direct["bounce_paused"] = costs[4], costs[5]
    return [two, direct]


def _cooperative_bounces(
    spec: GroupSpec,
    start: Assignment,
    old: Assignor,
    coop: Assignor,
    to_bounce: Sequence[str],
    direct_safe: bool,
    shortcuts: bool = True,
) -> tuple[int, ...]:
    """`eager_to_cooperative`'s costs: the first bounce's moved and paused, the two bounces'
    moved and paused, then, when `direct_safe`, the one bounce's moved and paused."""
    eager, cooperative = 0, 1
    walk = _bounce(spec, start, [(old, False), (coop, True)], to_bounce, shortcuts)
    # two bounces: the old strategy runs every rebalance until the last rejoin of the first
    first = BounceCost()
    for k, mid in enumerate(to_bounce):
        last = k == len(to_bounce) - 1
        first.add(walk.restart(mid, eager, cooperative if last else eager))
    second = BounceCost()
    for mid in to_bounce:
        second.add(walk.restart(mid, cooperative, cooperative))
    costs = (first.moved, first.paused, first.moved + second.moved, first.paused + second.paused)
    if not direct_safe:
        return costs
    # the first restarted member lists cooperative-sticky alone: the old strategy is no
    # longer common to all, the group switches at its rejoin
    one, walk = BounceCost(), walk.again()
    for k, mid in enumerate(to_bounce):
        one.add(walk.restart(mid, eager if k == 0 else cooperative, cooperative))
    return (*costs, one.moved, one.paused)
