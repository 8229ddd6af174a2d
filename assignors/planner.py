"""Plan one group under several strategies: assignment rows and a metrics row per strategy.

This is the whole per-group computation the Spark layer runs; it is plain Python so it can be
tested (and used) without a JVM. The strategies come from a `StrategyCatalog`, built once on
the driver.

Failures are contained to one (group, strategy), as Kafka contains an assignor's failure to
the group whose leader ran it: a plugin that raises or returns an invalid assignment is an
`ASSIGNOR_FAILED` / `INVALID_ASSIGNMENT` problem naming the strategy, a bug in a built-in
assignor an `INTERNAL_ERROR` one (exception and innermost frame in `detail`, traceback in the
log); the group's other strategies are still planned. `elected` fails only when the elected
strategy failed. A client library's variant (`range@kafka-python`) whose library fails on the
group, as that library's leader would, is a `CLIENT_ASSIGNOR_FAILED` warning naming the
library and what the group sees: a fact about the group, not a planner bug.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import cast

from assignors import progress
from assignors.analysis.live import library_variant
from assignors.analysis.load import (
    Lags,
    OffsetRow,
    balance_loads,
    group_partitions,
    group_weights,
    load_metrics,
    partition_lags,
    weight_loads,
    weight_lower_bound,
)
from assignors.analysis.metrics import (
    ELECTED_STRATEGY,
    REBALANCE_ROUNDS,
    Metrics,
    balance_metrics,
    previous_by_topic,
)
from assignors.catalog.catalog import Strategy, StrategyCatalog
from assignors.catalog.election import (
    KAFKA_DEFAULT_STRATEGIES,
    Election,
    elect,
    elect_server_assignor,
)
from assignors.catalog.plugins import InvalidAssignmentError
from assignors.catalog.registry import ELECTED, JAVA, Assignor
from assignors.inputs.validation import TopicStatus
from assignors.model import CONSUMER, Assignment, GroupSpec, Rebalance, TopicPartition
from assignors.ownership import Owners, previous_owners
from assignors.problems import ERROR, WARNING, Problem, Reason
from assignors.strategies.clients import ClientAssignorFailure

__all__ = [
    "ASSIGNMENT_ROW_FIELDS",
    "BALANCE_BY",
    "GroupLoad",
    "GroupPlan",
    "InvalidAssignmentError",
    "group_load",
    "internal_error",
    "plan_group",
]

log = logging.getLogger(__name__)

AssignmentRow = tuple[str, str | None, str, int, str | None, int, int | None]
"""One `assignments` row without group and strategy (plain tuples: millions are built):
(member_id, group_instance_id, topic, partition, previous_member_id, rebalance_round, lag)."""
ASSIGNMENT_ROW_FIELDS = (
    "member_id",
    "group_instance_id",
    "topic",
    "partition",
    "previous_member_id",
    "rebalance_round",
    "lag",
)

BALANCE_BY = ("count", "weight", "lag")
"""What `balanced` balances (config `balance_by`): partition counts, weights, or lag."""


@dataclass(frozen=True, slots=True, init=False)
class GroupLoad:
    """The load inputs of one group (`assignors.analysis.load`).

    `lags`: partition -> lag (None when unknown) from `partition_lags`; None when the run
    has no `offsets` table (every lag column null). `weights`: partition -> load units from
    the topic catalog (`group_weights`); None when the input has no weights (every weight
    column null). `balance_by`: see `BALANCE_BY` and `balanced_loads`.
    """

    lags: Lags | None = None
    weights: Mapping[TopicPartition, int] | None = None
    balance_by: str = "count"

    def __init__(
        self,
        lags: Lags | None = None,
        weights: Mapping[TopicPartition, int] | None = None,
        balance_by: str = "count",
    ) -> None:
        object.__setattr__(self, "lags", lags)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "balance_by", balance_by)


NO_LOAD = GroupLoad()


def group_load(
    spec: GroupSpec,
    offsets: Sequence[OffsetRow] | None,
    catalog: Mapping[str, TopicStatus] | None,
    balance_by: str = "count",
) -> tuple[GroupLoad, list[Problem]]:
    """The group's `GroupLoad` and the problems of its `offsets` rows.

    `offsets`: the group's rows of the `offsets` table (None when the run has none: every
    lag is then null); `catalog`: the topic catalog, for weights (None when the input has no
    weights).
    """
    problems: list[Problem] = []
    lags = None
    if offsets is not None:
        lags, problems = partition_lags(offsets, group_partitions(spec), spec.group_id)
    weights = group_weights(spec, catalog) if catalog is not None else None
    return GroupLoad(lags, weights, balance_by), problems


def balanced_loads(spec: GroupSpec, load: GroupLoad) -> dict[TopicPartition, int] | None:
    """The loads `balanced` minimises for this group, or None to balance partition counts.

    Counts (exact) are used with `balance_by = "count"`, when the input the setting names is
    absent (no weights in `topic_partitions`, no `offsets` table), and when every partition
    of the group has the same load: then the max load is a multiple of the max count, and the
    exact count optimum is also the load optimum. Unknown lags count as 0 (never guessed).

    >>> from assignors.model import Member, TopicMetadata
    >>> spec = GroupSpec("g", (Member("a", frozenset({"t"})),), {"t": TopicMetadata("t", 2)})
    >>> balanced_loads(spec, GroupLoad({("t", 0): 5, ("t", 1): None}, None, "lag"))
    {('t', 0): 5, ('t', 1): 0}
    >>> balanced_loads(spec, GroupLoad({("t", 0): 5, ("t", 1): 5}, None, "lag")) is None
    True
    >>> balanced_loads(spec, GroupLoad({("t", 0): 5}, None, "weight")) is None
    True
    """
    by = load.balance_by
    if by == "count" or (by == "weight" and load.weights is None):
        return None
    if by == "lag" and load.lags is None:
        return None
    loads = balance_loads(spec, by, load.lags, load.weights)
    return loads if len(set(loads.values())) > 1 else None


AssignmentColumns = tuple[
    list[str], list[str | None], list[str], list[int], list[str | None], list[int], list[int | None]
]
"""A strategy's `assignments` rows as columns, in `ASSIGNMENT_ROW_FIELDS` order: what the
Spark layer turns into Arrow arrays (one list per column, no tuple per row to build and
transpose)."""


@dataclass(slots=True, init=False)
class StrategyPlan:
    strategy: str
    columns: AssignmentColumns
    metrics: Metrics = field(default_factory=dict)
    # the plan itself (member -> partitions): the steady state of the what-if rebalances
    assignment: Assignment = field(default_factory=dict)
    # how the what-if rebalances rebuild this strategy's assignor when it is not the
    # catalog's (`balanced` with balance_by weight or lag carries the group's loads)
    factory: Callable[[], Assignor] | None = None

    def __init__(
        self,
        strategy: str,
        columns: AssignmentColumns | None = None,
        metrics: Metrics | None = None,
        assignment: Assignment | None = None,
        factory: Callable[[], Assignor] | None = None,
    ) -> None:
        self.strategy = strategy
        self.columns = ([], [], [], [], [], [], []) if columns is None else columns
        self.metrics = {} if metrics is None else metrics
        self.assignment = {} if assignment is None else assignment
        self.factory = factory

    @property
    def rows(self) -> list[AssignmentRow]:
        """The rows as tuples (`AssignmentRow`), built from `columns` on each call."""
        return list(zip(*self.columns, strict=True))


@dataclass(slots=True, init=False)
class GroupPlan:
    """Everything planned for one group: a plan per strategy that succeeded, and the problems
    (a failed strategy is an error problem with `strategy` set, and has no plan)."""

    group_id: str
    plans: list[StrategyPlan] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    election: Election | None = None
    # the library whose leader assigns a classic group (`assignors.analysis.live`; None: a
    # KIP-848 group, whose broker assigns) and the strategy `elected` is planned with (the
    # elected one, or that library's variant of it: `range@kafka-python`)
    client_library: str | None = None
    elected_with: str | None = None

    def __init__(
        self,
        group_id: str,
        plans: list[StrategyPlan] | None = None,
        problems: list[Problem] | None = None,
        election: Election | None = None,
        client_library: str | None = None,
        elected_with: str | None = None,
    ) -> None:
        self.group_id = group_id
        self.plans = [] if plans is None else plans
        self.problems = [] if problems is None else problems
        self.election = election
        self.client_library = client_library
        self.elected_with = elected_with


def run_election(spec: GroupSpec, catalog: StrategyCatalog) -> Election:
    """The classic coordinator's election over the members' `assignment_strategies`; for a
    KIP-848 group, the broker's choice (`server_election`, its warnings dropped)."""
    if spec.group_protocol == CONSUMER:
        return server_election(spec, catalog)[0]
    lists = [m.assignment_strategies for m in spec.members]
    if len(set(lists)) == 1:
        # Usual case: every member configured alike. One voter decides the same way (the
        # candidates are its known names, and every vote goes to the first of them).
        lists = lists[:1]
    return elect(lists, catalog.vote, catalog.default_strategies)


def server_election(spec: GroupSpec, catalog: StrategyCatalog) -> tuple[Election, list[Problem]]:
    """A `consumer` group's broker-side assignor (`elect_server_assignor`) and its warnings.

    In a mixed group only the `consumer` members vote: a classic member sends no
    `group.remote.assignor` (its `assignment_strategies` are client-side strategies the broker
    does not run for it); the basis then says how many classic members the target covers."""
    classic = frozenset(spec.classic_members)
    election, problems = elect_server_assignor(
        spec.group_id,
        [
            (m.member_id, m.assignment_strategies)
            for m in spec.members
            if m.member_id not in classic
        ],
        catalog.server_assignors,
        catalog.server_vote,
    )
    if classic:
        n = len(spec.classic_members)
        verbs = (
            "member votes for nothing and receives"
            if n == 1
            else "members vote for nothing and receive"
        )
        basis = (
            f"{election.basis}; mixed group: {n} classic {verbs} the broker's target through"
            " JoinGroup/SyncGroup"
        )
        election = Election(
            election.elected,
            election.candidate_strategies,
            election.error,
            election.unknown_names,
            basis,
        )
    return election, problems


def plan_group(
    spec: GroupSpec,
    strategies: StrategyCatalog | Sequence[tuple[str, Assignor]],
    has_current_assignment: bool,
    *,
    plan_elected: bool = False,
    default_strategies: Sequence[str] = KAFKA_DEFAULT_STRATEGIES,
    plugins_allowed: frozenset[str] = frozenset(),
    isolate_interrupts: bool = False,
    load: GroupLoad = NO_LOAD,
    client_library: str | None = None,
) -> GroupPlan:
    """Plan `spec` under each strategy of the catalog, and under `elected` if it says so.

    `strategies` is the run's `StrategyCatalog`; (name, assignor instance) pairs are accepted
    too, with the catalog's other settings as keywords (tests and benchmarks hold instances).
    A strategy that fails is reported (see the module docstring) and left out of `plans`; the
    others are planned. The election is always run (it feeds the `elections` table); a group
    whose members share no strategy gets no `elected` plan and a warning.
    `isolate_interrupts`: a plugin's KeyboardInterrupt fails its strategy like any exception.
    Only the executor path sets it: there it cannot be a real Ctrl-C on the driver.
    `load`: the group's lags and weights (`GroupLoad`): the load columns of every metrics
    row, the `lag` of every assignment row, and what `balanced` balances. `client_library`:
    the library whose leader assigns a classic group (`assignors.analysis.live.group_library`;
    None: Java): `elected` is planned with that library's variant of the elected strategy
    where it has one.
    """
    if isinstance(strategies, StrategyCatalog):
        catalog = strategies
    else:
        catalog = StrategyCatalog.from_assignors(
            strategies,
            plan_elected=plan_elected,
            default_strategies=default_strategies,
            plugins_allowed=plugins_allowed,
        )
    previous = previous_owners(spec) if has_current_assignment else None
    out = GroupPlan(spec.group_id)
    runner = _Runner(spec, previous, out.problems, isolate_interrupts, load)
    if load.weights is not None:  # the same on every strategy row: computed once
        runner.weight_bound = weight_lower_bound(spec, weight_loads(spec, load.weights))
    runner.balanced_loads = balanced_loads(spec, load)
    for strategy, assignor in catalog.assignors():
        plan = runner.run(strategy, assignor)
        if plan is not None:
            out.plans.append(plan)

    if spec.group_protocol == CONSUMER:
        election, found = server_election(spec, catalog)
        out.problems.extend(found)
    else:
        election = run_election(spec, catalog)
    out.election = election
    if spec.group_protocol != CONSUMER:
        out.client_library = client_library or JAVA
    if election.error is not None:
        out.problems.append(
            Problem(
                spec.group_id,
                None,
                None,
                WARNING,
                election.error,
                "no assignment strategy is supported by every member; `elected` not planned",
            )
        )
    elif election.elected is not None:
        chosen = election.elected
        if spec.group_protocol != CONSUMER:
            chosen = library_variant(chosen, client_library)
        out.elected_with = chosen
    if catalog.plan_elected and out.elected_with is not None:
        elected = _plan_elected(catalog, out.elected_with, out, runner)
        if elected is not None:
            out.plans.append(elected)
    return out


def _plan_elected(
    catalog: StrategyCatalog, chosen: str, out: GroupPlan, runner: _Runner
) -> StrategyPlan | None:
    """The `elected` plan: the elected strategy's own plan when it is planned anyway, else
    that strategy run now. None when it failed: its own row names it (`strategy` is the
    elected protocol when it is planned anyway, else `elected`)."""
    done = next((p for p in out.plans if p.strategy == chosen), None)
    if done is None:
        if any(p.strategy == chosen for p in out.problems):
            return None  # failed above, and its row says so: not run twice
        strategy = catalog.elected_strategy(chosen)
        done = runner.run(strategy, strategy.factory(), column=ELECTED)
        if done is None:
            return None
    return StrategyPlan(
        ELECTED,
        done.columns,
        {**done.metrics, ELECTED_STRATEGY: chosen},
        done.assignment,
        done.factory,
    )


@dataclass(slots=True, init=False)
class _Runner:
    """Runs one strategy on the group, containing any failure to that strategy."""

    spec: GroupSpec
    previous: Owners | None
    problems: list[Problem]
    isolate_interrupts: bool
    load: GroupLoad = NO_LOAD
    weight_bound: int | None = None
    balanced_loads: dict[TopicPartition, int] | None = None
    memo: dict[object, list[_Seen]] = field(default_factory=dict)
    # the last strategy's result, metrics row and columns (see `_rows`)
    last: tuple[Rebalance, Metrics, AssignmentColumns] | None = None

    def __init__(
        self,
        spec: GroupSpec,
        previous: Owners | None,
        problems: list[Problem],
        isolate_interrupts: bool,
        load: GroupLoad = NO_LOAD,
        weight_bound: int | None = None,
        balanced_loads: dict[TopicPartition, int] | None = None,
        memo: dict[object, list[_Seen]] | None = None,
        last: tuple[Rebalance, Metrics, AssignmentColumns] | None = None,
    ) -> None:
        self.spec = spec
        self.previous = previous
        self.problems = problems
        self.isolate_interrupts = isolate_interrupts
        self.load = load
        self.weight_bound = weight_bound
        self.balanced_loads = balanced_loads
        self.memo = {} if memo is None else memo
        self.last = last

    def run(
        self, strategy: Strategy, assignor: Assignor, column: str | None = None
    ) -> StrategyPlan | None:
        """The plan of `strategy`; None (and a problem for `column`, default the strategy's
        protocol) when it failed."""
        label = column or strategy.protocol
        progress.starting(self.spec.group_id, label, progress.PLAN)
        factory = None
        loads = self.balanced_loads
        if loads is not None and assignor.balances_load:
            # balance_by weight or lag: such a class takes the loads as its one argument
            factory = partial(cast("Callable[..., Assignor]", type(assignor)), loads)
            assignor = factory()
        try:
            result = assignor.rebalance(self.spec)
        except BaseException as exc:
            reason = _failure_reason(strategy.builtin, exc, self.isolate_interrupts)
            if reason is None:
                raise
            self._failed(strategy, label, reason, exc)
            return None
        try:
            plan = self._rows(strategy.protocol if column is None else column, result)
            plan.factory = factory
            return plan
        except Exception as exc:  # the planner's own code failed: never the plugin's fault
            self._failed(strategy, label, Reason.INTERNAL_ERROR, exc)
            return None

    def _rows(self, name: str, result: Rebalance) -> StrategyPlan:
        spec = self.spec
        assignment = result.assignment
        progress.starting(spec.group_id, name, progress.METRICS)
        last = self.last
        if last is not None and _same_rows(last[0].assignment, assignment):
            # The strategy before gave these very rows (sticky and cooperative-sticky
            # usually do): its metrics row and columns serve again, with this one's rounds.
            before, found, columns = last
            metrics = {**found, REBALANCE_ROUNDS: result.rounds}
            if result.received_round != before.received_round:
                received = self._received(result)
                c = columns
                columns = (c[0], c[1], c[2], c[3], c[4], received, c[6])
        else:
            metrics = self._metrics(assignment, result.rounds)
            columns = self._columns(result)
        self.last = (result, dict(metrics), columns)
        return StrategyPlan(name, columns, metrics, assignment)

    @staticmethod
    def _received(result: Rebalance) -> list[int]:
        """The `rebalance_round` column alone (see `_columns`)."""
        rounds = result.received_round
        received: list[int] = []
        for tps in result.assignment.values():
            received += [rounds.get(tp, 1) for tp in tps]
        return received

    def _columns(self, result: Rebalance) -> AssignmentColumns:
        """The assignment rows as columns, member by member. A column that is the same on
        every row of a member (its ids) or of the group (no previous owners, every partition
        received in round 1, no lags) is repeated, not looked up per partition."""
        members: list[str] = []
        instances: list[str | None] = []
        topics: list[str] = []
        partitions: list[int] = []
        previous: list[str | None] = []
        received: list[int] = []
        lags: list[int | None] = []
        prev = self.previous or None
        # by topic and partition: a list index per row, not a hashed partition tuple
        before = previous_by_topic(self.spec, prev) if prev is not None else {}
        rounds = result.received_round or None
        lag_map = self.load.lags
        instance = {m.member_id: m.group_instance_id for m in self.spec.members}
        for member_id, tps in result.assignment.items():
            n = len(tps)
            members += [member_id] * n
            instances += [instance[member_id]] * n
            if n:  # both columns at once, in C
                topic_column, partition_column = zip(*tps, strict=True)
                topics += topic_column
                partitions += partition_column
            if prev is None:
                previous += [None] * n
            else:
                get_prev, get_before = prev.get, before.get
                # `before` has every partition of a valid assignment; a plugin's bogus or
                # unsubscribed partition is looked up in `prev`
                previous += [
                    row[tp[1]]
                    if (row := get_before(tp[0])) is not None and 0 <= tp[1] < len(row)
                    else get_prev(tp)
                    for tp in tps
                ]
            if rounds is None:
                received += [1] * n
            else:
                get_round = rounds.get
                received += [get_round(tp, 1) for tp in tps]
            if lag_map is None:
                lags += [None] * n
            else:
                get_lag = lag_map.get
                lags += [get_lag(tp) for tp in tps]
        return members, instances, topics, partitions, previous, received, lags

    def _metrics(self, assignment: Assignment, rounds: int) -> Metrics:
        """The metrics row of `assignment`, computed once per distinct assignment of the group:
        strategies often agree (sticky and cooperative-sticky converge to the same target,
        `balanced` often matches one of them), and every input of the metrics but the
        assignment and its rounds is the group's. The rounds only set `rebalance_rounds`:
        an eager and a cooperative strategy that agree share the rest of the row."""
        # Keyed by the members' partition counts (cheap); a full key (hashing every partition)
        # only when an earlier assignment has the same counts.
        shape = _assignment_shape(assignment)
        seen = self.memo.setdefault(shape, [])
        if seen:
            key = _assignment_key(assignment)
            for other in seen:
                if other.key() == key:
                    return {**other.metrics, REBALANCE_ROUNDS: rounds}
        spec = self.spec
        metrics = balance_metrics(spec, assignment, self.previous, rounds)
        metrics.update(
            load_metrics(
                spec,
                assignment,
                self.load.lags,
                self.load.weights,
                self.previous,
                weight_bound=self.weight_bound,
            )
        )
        seen.append(_Seen(assignment, metrics))
        return dict(metrics)

    def _failed(self, strategy: Strategy, label: str, reason: str, exc: BaseException) -> None:
        if reason == Reason.INTERNAL_ERROR:
            self.problems.append(internal_error(self.spec.group_id, label, exc))
            return
        if reason == Reason.CLIENT_ASSIGNOR_FAILED:
            detail = f"a {exc} (strategy {strategy.protocol!r} not planned)"
            self.problems.append(
                Problem(self.spec.group_id, None, None, WARNING, reason, detail, label)
            )
            return
        detail = f"strategy {strategy.protocol!r} failed: {type(exc).__name__}: {exc}"
        self.problems.append(Problem(self.spec.group_id, None, None, ERROR, reason, detail, label))


def _same_rows(a: Assignment, b: Assignment) -> bool:
    """Whether two assignments give the same rows in the same order: the same members in
    the same order, each with the same partitions in the same order (compared in C, and at
    once where the partition tuples are the same objects)."""
    return a is b or (len(a) == len(b) and list(a.items()) == list(b.items()))


@dataclass(slots=True, init=False)
class _Seen:
    """An assignment whose metrics row was computed, with its full key once one is needed."""

    assignment: Assignment
    metrics: Metrics
    _key: object | None = field(default=None, init=False)

    def __init__(self, assignment: Assignment, metrics: Metrics) -> None:
        self.assignment = assignment
        self.metrics = metrics
        self._key = None

    def key(self) -> object:
        if self._key is None:
            self._key = _assignment_key(self.assignment)
        return self._key


def _assignment_shape(assignment: Assignment) -> object:
    """Each member's partition count, sorted by member: equal for equal assignments."""
    return tuple(sorted((member_id, len(tps)) for member_id, tps in assignment.items()))


def _assignment_key(assignment: Assignment) -> object:
    """A hashable key equal for equal assignments (members and each one's partitions, in any
    order, with their multiplicity): a frozenset per member where its partitions are distinct
    (hashing them is cheaper than sorting a big group's million tuples), else the sorted
    tuple."""
    out: list[tuple[str, object]] = []
    for member_id, tps in assignment.items():
        distinct = frozenset(tps)
        out.append((member_id, distinct if len(distinct) == len(tps) else tuple(sorted(tps))))
    out.sort(key=_first)
    return tuple(out)


def _first(item: tuple[str, object]) -> str:
    return item[0]


def _failure_reason(builtin: bool, exc: BaseException, isolate_interrupts: bool) -> str | None:
    """The reason code of an assignor's exception; None when it must propagate.

    A built-in assignor that raises is a planner bug (INTERNAL_ERROR); a plugin is to blame
    for whatever it raises, BaseExceptions included (SystemExit, CancelledError). Only a
    KeyboardInterrupt may be a real Ctrl-C: it is isolated only where asked.
    """
    if isinstance(exc, KeyboardInterrupt):
        return Reason.ASSIGNOR_FAILED if isolate_interrupts and not builtin else None
    if isinstance(exc, ClientAssignorFailure):
        return Reason.CLIENT_ASSIGNOR_FAILED
    if builtin:
        return Reason.INTERNAL_ERROR if isinstance(exc, Exception) else None
    if isinstance(exc, InvalidAssignmentError):
        return Reason.INVALID_ASSIGNMENT
    return Reason.ASSIGNOR_FAILED


def internal_error(group_id: str | None, strategy: str | None, exc: BaseException) -> Problem:
    """The INTERNAL_ERROR problem of a planner bug: the exception and its innermost frame in
    `detail`; the whole traceback goes to the log."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = ""
    if frames:
        last = frames[-1]
        path = "/".join(last.filename.replace("\\", "/").split("/")[-2:])
        where = f" at {path}:{last.lineno} in {last.name}"
    log.error("internal error planning group %r, strategy %r", group_id, strategy, exc_info=exc)
    what = "planning" if strategy is None else f"strategy {strategy!r}"
    detail = f"{what} failed{where}: {type(exc).__name__}: {exc} (a planner bug: please report it)"
    return Problem(group_id, None, None, ERROR, Reason.INTERNAL_ERROR, detail, strategy)
