"""Plan one group under several strategies: assignment rows and a metrics row per strategy.

This is the whole per-group computation the Spark layer runs; it is plain Python so it can be
tested (and used) without a JVM.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from assignors.election import Election, elect
from assignors.metrics import Metrics, balance_metrics
from assignors.model import GroupSpec, Rebalance, TopicPartition
from assignors.ownership import previous_owners
from assignors.plugins import InvalidAssignmentError
from assignors.registry import (
    ELECTED,
    KAFKA_DEFAULT_STRATEGIES,
    Assignor,
    classic_protocol_name,
    resolve,
)
from assignors.validation import ERROR, WARNING, Problem, Reason

__all__ = ["ASSIGNMENT_ROW_FIELDS", "GroupPlan", "InvalidAssignmentError", "plan_group"]

AssignmentRow = tuple[str, str | None, str, int, str | None, int]
"""One `assignments` row without group and strategy (plain tuples: millions are built):
(member_id, group_instance_id, topic, partition, previous_member_id, rebalance_round)."""
ASSIGNMENT_ROW_FIELDS = (
    "member_id",
    "group_instance_id",
    "topic",
    "partition",
    "previous_member_id",
    "rebalance_round",
)


@dataclass(slots=True)
class StrategyPlan:
    strategy: str
    rows: list[AssignmentRow] = field(default_factory=list)
    metrics: Metrics = field(default_factory=dict)


@dataclass(slots=True)
class GroupPlan:
    """Everything planned for one group; `plans` is empty when a strategy failed."""

    group_id: str
    plans: list[StrategyPlan] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    election: Election | None = None


def rebalance(assignor: Assignor, spec: GroupSpec) -> Rebalance:
    """Run the assignor's full rebalance when it has rounds, else one eager round."""
    multi = getattr(assignor, "rebalance", None)
    if callable(multi):
        result = multi(spec)
        assert isinstance(result, Rebalance)
        return result
    return Rebalance(assignor.assign(spec))


def run_election(
    spec: GroupSpec, default: Sequence[str], plugins_allowed: frozenset[str] = frozenset()
) -> Election:
    """The classic coordinator's election over the members' `assignment_strategies`."""
    lists = [m.assignment_strategies for m in spec.members]
    if len(set(lists)) == 1:
        # Usual case: every member configured alike. One voter decides the same way (the
        # candidates are its known names, and every vote goes to the first of them).
        lists = lists[:1]
    return elect(lists, default, lambda name: classic_protocol_name(name, plugins_allowed))


def plan_group(
    spec: GroupSpec,
    strategies: Sequence[tuple[str, Assignor]],
    has_current_assignment: bool,
    *,
    plan_elected: bool = False,
    default_strategies: Sequence[str] = KAFKA_DEFAULT_STRATEGIES,
    plugins_allowed: frozenset[str] = frozenset(),
) -> GroupPlan:
    """Plan `spec` under each (strategy name, assignor), and under `elected` if asked.

    A strategy that raises, or returns an invalid assignment, rejects the whole group
    (`ASSIGNOR_FAILED` / `INVALID_ASSIGNMENT`) so that every planned group has every strategy.
    The election is always run (it feeds the `elections` table); a group whose members share
    no strategy gets no `elected` plan and a warning.
    """
    out = GroupPlan(spec.group_id)
    previous: dict[TopicPartition, str] | None = (
        previous_owners(spec) if has_current_assignment else None
    )
    for name, assignor in strategies:
        plan = _plan_one(spec, name, assignor, previous, out.problems)
        if plan is not None:
            out.plans.append(plan)

    out.election = election = run_election(spec, default_strategies, plugins_allowed)
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
    elif plan_elected and election.elected is not None:
        chosen = election.elected
        done = next((p for p in out.plans if p.strategy == chosen), None)
        if done is None and chosen not in {name for name, _ in strategies}:  # not failed above
            assignor = _elected_assignor(spec, chosen, default_strategies, plugins_allowed)
            done = _plan_one(spec, chosen, assignor, previous, out.problems)
        if done is not None:
            metrics = {**done.metrics, "elected_strategy": chosen}
            out.plans.append(StrategyPlan(ELECTED, done.rows, metrics))
    if any(p.severity == ERROR for p in out.problems):
        out.plans = []
    return out


def _elected_assignor(
    spec: GroupSpec, protocol: str, default: Sequence[str], plugins_allowed: frozenset[str]
) -> Assignor:
    """The assignor behind an elected protocol name, found through the names members gave
    (a plugin is elected by its protocol name but loaded by its class path)."""
    for m in spec.members:
        for name in m.assignment_strategies if m.assignment_strategies is not None else default:
            if classic_protocol_name(name, plugins_allowed) == protocol:
                return resolve(name)[1]()
    raise AssertionError(f"elected {protocol!r} is not a name any member gave")


def _plan_one(
    spec: GroupSpec,
    name: str,
    assignor: Assignor,
    previous: dict[TopicPartition, str] | None,
    problems: list[Problem],
) -> StrategyPlan | None:
    try:
        result = rebalance(assignor, spec)
    except InvalidAssignmentError as exc:
        problems.append(_failed(spec, name, Reason.INVALID_ASSIGNMENT, exc))
        return None
    except Exception as exc:  # a plugin may raise anything; it must not take the job down
        problems.append(_failed(spec, name, Reason.ASSIGNOR_FAILED, exc))
        return None
    assignment = result.assignment
    metrics = balance_metrics(spec, assignment, previous, result.rounds)
    prev = previous or {}
    instance = {m.member_id: m.group_instance_id for m in spec.members}
    rounds = result.received_round
    rows: list[AssignmentRow] = [
        (member_id, instance[member_id], tp[0], tp[1], prev.get(tp), rounds.get(tp, 1))
        for member_id, tps in assignment.items()
        for tp in tps
    ]
    return StrategyPlan(name, rows, metrics)


def _failed(spec: GroupSpec, strategy: str, reason: str, exc: Exception) -> Problem:
    detail = f"strategy {strategy!r} failed: {type(exc).__name__}: {exc}"
    return Problem(spec.group_id, None, None, ERROR, reason, detail)
