"""Baselines the tests compare the planner's own solvers with (no caller in the planner)."""

from __future__ import annotations

from collections.abc import Mapping

from assignors.analysis.bounds import BalanceBound, _classes, _closed_form
from assignors.model import Assignment, GroupSpec, TopicPartition
from assignors.strategies.weighted import _greedy, _instance, _lpt_plain, _to_assignment


def lpt(spec: GroupSpec, loads: Mapping[TopicPartition, int]) -> Assignment:
    """Plain LPT: heaviest partition first (then topic, partition) to the least-loaded
    eligible member, ties by fewest partitions, then member id in Java order.

    The classic 4/3-approximation of P||Cmax (Graham 1969) without subscriptions; here only a
    baseline that `assign_by_load` never does worse than.
    """
    inst = _instance(spec, loads, {})
    return _to_assignment(spec, inst, _greedy(inst, _lpt_plain))


def lower_bound(spec: GroupSpec) -> tuple[int, BalanceBound, bool]:
    """(closed-form lower bound, the bound as a result, whether it is already exact)."""
    return _closed_form(_classes(spec))
