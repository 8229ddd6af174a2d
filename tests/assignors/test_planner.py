"""plan_group: rows, previous owners, and failing strategies."""

from __future__ import annotations

import logging

import pytest
from helpers.assignors import EagerAssignor

from assignors.catalog.catalog import StrategyCatalog
from assignors.model import Assignment, GroupSpec, Member, TopicMetadata
from assignors.planner import ASSIGNMENT_ROW_FIELDS, InvalidAssignmentError, plan_group
from assignors.strategies.range import RangeAssignor
from assignors.strategies.roundrobin import RoundRobinAssignor

SPEC = GroupSpec(
    "g",
    (
        Member("c0", frozenset({"t"}), owned=(("t", 2),), generation=4),
        Member("c1", frozenset({"t"}), "inst-1"),
    ),
    {"t": TopicMetadata("t", 3)},
    departed={"old": (("t", 0),)},
)


class Raising(EagerAssignor):
    name = "boom"

    def assign(self, spec: GroupSpec) -> Assignment:
        raise RuntimeError("plugin exploded")


class Invalid(EagerAssignor):
    name = "bad"

    def assign(self, spec: GroupSpec) -> Assignment:
        raise InvalidAssignmentError("partition t-0 assigned twice")


def test_rows_carry_instance_previous_owner_and_round() -> None:
    plan = plan_group(SPEC, [("range", RangeAssignor())], has_current_assignment=True)
    assert plan.problems == []
    (sp,) = plan.plans
    rows = {(r[0], r[2], r[3]): dict(zip(ASSIGNMENT_ROW_FIELDS, r, strict=True)) for r in sp.rows}
    # range over [c1 (static, first), c0]: c1 gets p0,p1 and c0 gets p2.
    assert set(rows) == {("c1", "t", 0), ("c1", "t", 1), ("c0", "t", 2)}
    assert rows[("c1", "t", 0)]["previous_member_id"] == "old"
    assert rows[("c1", "t", 0)]["group_instance_id"] == "inst-1"
    assert rows[("c0", "t", 2)]["previous_member_id"] == "c0"
    assert rows[("c1", "t", 1)]["previous_member_id"] is None
    assert {r[5] for r in sp.rows} == {1}
    assert sp.metrics["moved_partition_count"] == 1
    assert sp.metrics["rebalance_rounds"] == 1


def test_without_current_assignment_moved_is_null() -> None:
    plan = plan_group(SPEC, [("roundrobin", RoundRobinAssignor())], has_current_assignment=False)
    (sp,) = plan.plans
    assert sp.metrics["moved_partition_count"] is None
    assert all(r[4] is None for r in sp.rows)


def test_failing_strategy_fails_only_itself() -> None:
    # A plugin that raises or returns an invalid
    # assignment fails only its own (group, strategy); the other strategies are planned.
    plan = plan_group(
        SPEC,
        [("range", RangeAssignor()), ("boom", Raising()), ("bad", Invalid())],
        has_current_assignment=False,
    )
    assert [p.strategy for p in plan.plans] == ["range"]
    assert [(p.reason, p.severity) for p in plan.problems] == [
        ("ASSIGNOR_FAILED", "error"),
        ("INVALID_ASSIGNMENT", "error"),
    ]
    assert [p.strategy for p in plan.problems] == ["boom", "bad"]
    assert "plugin exploded" in plan.problems[0].detail
    assert "'boom'" in plan.problems[0].detail


def voters(*lists: list[str] | None) -> GroupSpec:
    return GroupSpec(
        "g",
        tuple(
            Member(f"c{i}", frozenset({"t"}), assignment_strategies=None if s is None else tuple(s))
            for i, s in enumerate(lists)
        ),
        {"t": TopicMetadata("t", 4)},
    )


def test_elected_plans_the_elected_strategy_and_ignores_unknown_names() -> None:
    spec = voters(["com.acme.LagAssignor", "roundrobin"], ["roundrobin", "range"])
    plan = plan_group(spec, [("range", RangeAssignor())], False, plan_elected=True)
    assert plan.problems == []
    assert plan.election is not None
    assert plan.election.elected == "roundrobin"
    assert [p.strategy for p in plan.plans] == ["range", "elected"]
    elected = plan.plans[1]
    assert elected.metrics["elected_strategy"] == "roundrobin"
    assert sorted((r[0], r[3]) for r in elected.rows) == [
        ("c0", 0),
        ("c0", 2),
        ("c1", 1),
        ("c1", 3),
    ]


def test_elected_strategy_that_failed_is_not_run_twice() -> None:
    plan = plan_group(voters(None, None), [("range", Raising())], False, plan_elected=True)
    assert plan.plans == []
    assert [p.reason for p in plan.problems] == ["ASSIGNOR_FAILED"]


def test_no_common_strategy_is_a_warning_and_no_elected_plan() -> None:
    plan = plan_group(voters(["range"], ["roundrobin"]), [("range", RangeAssignor())], False,
                      plan_elected=True)  # fmt: skip
    assert [p.strategy for p in plan.plans] == ["range"]
    assert [(p.severity, p.reason) for p in plan.problems] == [
        ("warning", "INCONSISTENT_GROUP_PROTOCOL")
    ]


def test_members_cannot_make_the_planner_import_unconfigured_plugins() -> None:
    rand = "assignors.catalog.examples.random_assignor:RandomAssignor"
    spec = voters([rand, "range"], [rand])
    plan = plan_group(spec, [("range", RangeAssignor())], False, plan_elected=True)
    assert plan.election is not None
    assert plan.election.error == "UNKNOWN_COMMON_STRATEGY"  # they share only the plugin
    allowed = plan_group(
        spec,
        [("range", RangeAssignor())],
        False,
        plan_elected=True,
        plugins_allowed=frozenset({rand}),
    )
    assert allowed.election is not None
    assert allowed.election.elected == "random"
    assert [p.strategy for p in allowed.plans] == ["range", "elected"]


# --- failures stay with their (group, strategy) ----------------------------------------------

LEAST = "helpers.failing_plugins:LeastLoaded"


def catalog(*names: str, defaults: tuple[str, ...] = ("range",)) -> StrategyCatalog:
    return StrategyCatalog.build(names, defaults)


@pytest.mark.internal_error_expected
def test_builtin_bug_is_an_internal_error_of_that_strategy_only(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(self: RoundRobinAssignor, spec: GroupSpec) -> Assignment:
        raise ZeroDivisionError("division by zero in the dealer")

    monkeypatch.setattr(RoundRobinAssignor, "assign", broken)
    with caplog.at_level(logging.ERROR, logger="assignors.planner"):
        plan = plan_group(SPEC, catalog("range", "roundrobin", LEAST), False)
    assert [p.strategy for p in plan.plans] == ["range", "least-loaded"]
    (p,) = plan.problems
    assert (p.severity, p.reason, p.strategy, p.group_id) == (
        "error",
        "INTERNAL_ERROR",
        "roundrobin",
        "g",
    )
    assert "ZeroDivisionError: division by zero in the dealer" in p.detail
    assert "assignors/test_planner.py" in p.detail  # the innermost frame
    assert "in broken" in p.detail
    (record,) = caplog.records
    assert record.exc_info is not None  # the traceback goes to the log


def plugin_protocol(path: str) -> str:
    return StrategyCatalog.build([path], ["range"]).protocols[0]


@pytest.mark.parametrize(
    ("plugin", "text"),
    [
        ("helpers.failing_plugins:Exits", "SystemExit"),
        ("helpers.failing_plugins:Cancelled", "CancelledError"),
        ("helpers.failing_plugins:Bogus", "unknown member 'nobody'"),
    ],
)
def test_plugin_failure_fails_only_its_strategy(plugin: str, text: str) -> None:
    plan = plan_group(SPEC, catalog("range", plugin, "roundrobin"), False)
    assert [p.strategy for p in plan.plans] == ["range", "roundrobin"]
    (p,) = plan.problems
    assert p.reason in {"ASSIGNOR_FAILED", "INVALID_ASSIGNMENT"}
    assert p.strategy == plugin_protocol(plugin)
    assert text in p.detail


def test_plugin_keyboard_interrupt_is_isolated_only_on_the_executor_path() -> None:
    strategies = catalog("range", "helpers.failing_plugins:Interrupted")
    with pytest.raises(KeyboardInterrupt):  # on the driver it may be a real Ctrl-C
        plan_group(SPEC, strategies, False)
    plan = plan_group(SPEC, strategies, False, isolate_interrupts=True)
    assert [p.strategy for p in plan.plans] == ["range"]
    assert [(p.reason, p.strategy) for p in plan.problems] == [("ASSIGNOR_FAILED", "interrupted")]


def test_builtin_base_exceptions_are_never_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(self: RangeAssignor, spec: GroupSpec) -> Assignment:
        raise KeyboardInterrupt

    monkeypatch.setattr(RangeAssignor, "assign", interrupted)
    with pytest.raises(KeyboardInterrupt):
        plan_group(SPEC, catalog("range"), False, isolate_interrupts=True)


def test_elected_fails_only_when_the_elected_strategy_failed() -> None:
    # Members vote for the failing plugin: `elected` fails with it, `range` is planned.
    spec = voters(["exits", "range"], ["exits"])
    plan = plan_group(spec, catalog("range", "helpers.failing_plugins:Exits", "elected"), False)
    assert plan.election is not None
    assert plan.election.elected == "exits"
    assert [p.strategy for p in plan.plans] == ["range"]
    assert [(p.reason, p.strategy) for p in plan.problems] == [("ASSIGNOR_FAILED", "exits")]
    # They vote for range instead: `elected` is planned although the plugin failed.
    ok = plan_group(
        voters(None, None), catalog("range", "helpers.failing_plugins:Exits", "elected"), False
    )
    assert [p.strategy for p in ok.plans] == ["range", "elected"]
    assert [p.strategy for p in ok.problems] == ["exits"]


def test_elected_plugin_planned_only_for_elected_fails_as_elected() -> None:
    spec = voters(["exits"], ["exits"])
    plan = plan_group(
        spec, catalog("range", "elected", defaults=("helpers.failing_plugins:Exits",)), False
    )
    assert [p.strategy for p in plan.plans] == ["range"]
    assert [(p.reason, p.strategy) for p in plan.problems] == [("ASSIGNOR_FAILED", "elected")]


def test_members_vote_for_a_plugin_by_its_protocol_name() -> None:
    # `least-loaded` is the protocol name of the configured `...:LeastLoaded`.
    spec = voters(["least-loaded", "range"], ["least-loaded"])
    plan = plan_group(spec, catalog("range", LEAST, "elected"), False)
    assert plan.problems == []
    assert plan.election is not None
    assert plan.election.elected == "least-loaded"
    assert [p.strategy for p in plan.plans] == ["range", "least-loaded", "elected"]
    assert plan.plans[2].rows == plan.plans[1].rows
