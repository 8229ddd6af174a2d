"""`subscriptions.group_state`: a group the snapshot caught in a rebalance is planned, with
one GROUP_REBALANCING warning saying its ownership figures describe an unsettled group."""

from __future__ import annotations

import pytest

from assignors.inputs.validation import MemberRow, OwnedRow, TopicStatus, build_group
from assignors.problems import WARNING, Reason

CATALOG = {"t": TopicStatus(4)}


def build(states: list[str | None]) -> list[tuple[str, str, str | None]]:
    members = [
        MemberRow(f"m{i}", topics=["t"], group_state=state) for i, state in enumerate(states)
    ]
    spec, problems = build_group("g", members, [OwnedRow("m0", "t", 0)], CATALOG, bool)
    assert spec is not None  # planned whatever the state
    return [(p.severity, p.reason, p.member_id) for p in problems]


@pytest.mark.parametrize(
    "state", ["PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"]
)
def test_a_group_caught_in_a_rebalance_is_planned_with_one_warning(state: str) -> None:
    assert build([state, state, state]) == [(WARNING, Reason.GROUP_REBALANCING, None)]


@pytest.mark.parametrize("state", [None, "Stable", "Empty", "", "Dead"])
def test_a_settled_or_unknown_state_says_nothing(state: str | None) -> None:
    assert build([state, state]) == []


def test_the_detail_names_the_state_and_the_figures_it_spoils() -> None:
    members = [MemberRow("m0", topics=["t"], group_state=" preparingrebalance ")]
    _, problems = build_group("g", members, [], CATALOG, bool)
    (problem,) = problems
    assert "was preparingrebalance when the snapshot was taken" in problem.detail
    assert "moved_partition_count" in problem.detail
