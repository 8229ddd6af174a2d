"""Plan one group under several strategies: assignment rows and a metrics row per strategy.

This is the whole per-group computation the Spark layer runs; it is plain Python so it can be
tested (and used) without a JVM.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from assignors.metrics import Metrics, balance_metrics
from assignors.model import GroupSpec, Rebalance, TopicPartition
from assignors.ownership import previous_owners
from assignors.registry import Assignor
from assignors.validation import ERROR, Problem, Reason


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


class InvalidAssignmentError(ValueError):
    """An assignor returned an assignment that is not a valid plan of the group."""


def rebalance(assignor: Assignor, spec: GroupSpec) -> Rebalance:
    """Run the assignor's full rebalance when it has rounds, else one eager round."""
    multi = getattr(assignor, "rebalance", None)
    if callable(multi):
        result = multi(spec)
        assert isinstance(result, Rebalance)
        return result
    return Rebalance(assignor.assign(spec))


def plan_group(
    spec: GroupSpec,
    strategies: Sequence[tuple[str, Assignor]],
    has_current_assignment: bool,
) -> GroupPlan:
    """Plan `spec` under each (strategy name, assignor).

    A strategy that raises, or returns an invalid assignment, rejects the whole group
    (`ASSIGNOR_FAILED` / `INVALID_ASSIGNMENT`) so that every planned group has every strategy.
    """
    out = GroupPlan(spec.group_id)
    previous: dict[TopicPartition, str] | None = (
        previous_owners(spec) if has_current_assignment else None
    )
    prev = previous or {}
    instance = {m.member_id: m.group_instance_id for m in spec.members}
    for name, assignor in strategies:
        try:
            result = rebalance(assignor, spec)
        except InvalidAssignmentError as exc:
            out.problems.append(_failed(spec, name, Reason.INVALID_ASSIGNMENT, exc))
            continue
        except Exception as exc:  # a plugin may raise anything; it must not take the job down
            out.problems.append(_failed(spec, name, Reason.ASSIGNOR_FAILED, exc))
            continue
        assignment = result.assignment
        metrics = balance_metrics(spec, assignment, previous)
        metrics["rebalance_rounds"] = result.rounds
        rounds = result.received_round
        rows: list[AssignmentRow] = [
            (member_id, instance[member_id], tp[0], tp[1], prev.get(tp), rounds.get(tp, 1))
            for member_id, tps in assignment.items()
            for tp in tps
        ]
        out.plans.append(StrategyPlan(name, rows, metrics))
    if out.problems:
        out.plans = []
    return out


def _failed(spec: GroupSpec, strategy: str, reason: str, exc: Exception) -> Problem:
    detail = f"strategy {strategy!r} failed: {type(exc).__name__}: {exc}"
    return Problem(spec.group_id, None, None, ERROR, reason, detail)
