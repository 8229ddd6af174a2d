"""`subscriptions.group_protocol`: its validation, and the broker's choice of assignor for
KIP-848 (`consumer`) groups (`ConsumerGroup.computePreferredServerAssignor`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from assignors.catalog.catalog import StrategyCatalog
from assignors.catalog.election import (
    KAFKA_DEFAULT_SERVER_ASSIGNORS,
    Election,
    elect_server_assignor,
)
from assignors.catalog.registry import UnknownStrategyError, builtin_names, get_assignor
from assignors.inputs.validation import (
    ERROR,
    WARNING,
    MemberRow,
    Problem,
    Reason,
    TopicStatus,
    build_group,
)
from assignors.model import CLASSIC, CONSUMER, GroupSpec
from assignors.planner import plan_group
from assignors.protocol import is_cooperative
from assignors.strategies.server_range import ServerRangeAssignor
from assignors.whatif.group import WhatIfSettings, group_whatif
from assignors.whatif.simulation import scenario_costs
from jobs.settings.config import ConfigError, load_config
from jobs.settings.run import RunSettings

CATALOG = {"t": TopicStatus(6), "u": TopicStatus(2)}
STRATEGIES = ["range", "cooperative-sticky", "uniform", "server-range", "elected"]


def rows(
    protocols: Sequence[str | None], strategies: Sequence[Sequence[str] | None] | None = None
) -> list[MemberRow]:
    names = strategies or [None] * len(protocols)
    return [
        MemberRow(f"m{i}", topics=["t"], assignment_strategies=names[i], group_protocol=p)
        for i, p in enumerate(protocols)
    ]


def build(members: list[MemberRow]) -> tuple[GroupSpec | None, list[Problem]]:
    known = StrategyCatalog.build(STRATEGIES).is_known
    return build_group("g", members, (), CATALOG, known)


def reasons(problems: Sequence[Problem]) -> list[tuple[str, str, str | None]]:
    return [(p.severity, p.reason, p.member_id) for p in problems]


# --- validation ---


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([None, None], CLASSIC),
        (["classic", None], CLASSIC),
        (["consumer", "consumer"], CONSUMER),
        ([" Consumer", "CONSUMER "], CONSUMER),  # group.protocol ignores case
    ],
)
def test_protocol_of_a_group(values: list[str | None], expected: str) -> None:
    spec, problems = build(rows(values))
    assert spec is not None
    assert spec.group_protocol == expected
    assert problems == []


def test_unknown_value_is_a_row_level_error_naming_the_group() -> None:
    spec, problems = build(rows(["consumer", "kip848"]))
    assert spec is None
    assert reasons(problems) == [(ERROR, Reason.UNKNOWN_GROUP_PROTOCOL, "m1")]
    assert "'g'" in problems[0].detail
    assert "'kip848'" in problems[0].detail


def test_empty_string_is_not_a_protocol() -> None:
    spec, problems = build(rows([""]))
    assert spec is None
    assert reasons(problems) == [(ERROR, Reason.UNKNOWN_GROUP_PROTOCOL, "m0")]


def test_mixed_protocols_in_one_group_is_a_consumer_group_mid_migration() -> None:
    # to the broker, a group with any consumer-protocol member is a consumer group; its
    # classic members join it through JoinGroup/SyncGroup
    spec, problems = build(rows(["consumer", None, "classic"], [["range"], ["sticky"], None]))
    assert problems == []
    assert spec is not None
    assert spec.group_protocol == CONSUMER
    assert spec.classic_members == ("m1", "m2")


def test_only_consumer_members_vote_in_a_mixed_group() -> None:
    # the classic members' `range` is the client-side RangeAssignor, not a vote for the
    # broker's range: the one consumer member names uniform, and uniform runs
    spec, _ = build(rows(["consumer", None, None], [["uniform"], ["range"], ["range"]]))
    assert spec is not None
    plan = plan_group(spec, StrategyCatalog.build(STRATEGIES), False)
    assert plan.election is not None
    assert plan.election.elected == "uniform"
    assert plan.election.basis == (
        "1 of 1 members name uniform (group.remote.assignor); mixed group: 2 classic members"
        " vote for nothing and receive the broker's target through JoinGroup/SyncGroup"
    )
    assert [p.reason for p in plan.problems] == []


def test_broker_assignor_names_are_not_classic_strategy_warnings_in_a_consumer_group() -> None:
    _, problems = build(rows(["consumer"], [["range"]]))
    assert problems == []
    # the same name in a classic group is the client-side range, and "uniform" cannot be voted
    _, problems = build(rows([None], [["uniform"]]))
    assert reasons(problems) == [(WARNING, Reason.UNKNOWN_ASSIGNMENT_STRATEGY, "m0")]


# --- election ---


def resolve(name: str) -> str | None:
    return StrategyCatalog.build(["range"]).server_vote(name)


def elect(
    *names: Sequence[str] | None, broker: Sequence[str] = KAFKA_DEFAULT_SERVER_ASSIGNORS
) -> tuple[Election, list[Problem]]:
    return elect_server_assignor("g", [(f"m{i}", n) for i, n in enumerate(names)], broker, resolve)


def test_most_named_assignor_wins() -> None:
    e, problems = elect(["range"], ["range"], ["uniform"], None)
    assert (e.elected, e.candidate_strategies, e.error) == (
        "server-range",
        ["server-range", "uniform"],
        None,
    )
    assert e.basis == "2 of 4 members name server-range (group.remote.assignor); 1 names uniform"
    assert reasons(problems) == [(WARNING, Reason.CONFLICTING_SERVER_ASSIGNORS, None)]
    assert "uniform (1)" in problems[0].detail


def test_class_names_and_protocol_names_count_alike() -> None:
    e, problems = elect(
        ["org.apache.kafka.coordinator.group.assignor.RangeAssignor"], ["server-range"]
    )
    assert e.elected == "server-range"
    assert problems == []


def test_no_member_names_one_the_broker_default_runs() -> None:
    e, problems = elect(None, None)
    assert (e.elected, e.candidate_strategies) == ("uniform", ["uniform"])
    assert "broker default" in (e.basis or "")
    assert problems == []
    e, _ = elect(None, broker=("server-range", "uniform"))
    assert e.elected == "server-range"


def test_tie_goes_to_the_assignor_listed_first_in_group_consumer_assignors() -> None:
    # Kafka's tie follows HashMap order: "uniform" hashes to bucket 1, "range" to 9, so
    # uniform wins with the default list; the rule here is the broker list's order.
    e, problems = elect(["range"], ["uniform"])
    assert e.elected == "uniform"
    assert (e.basis or "").startswith("tie: 1 of 2 members name uniform and 1 server-range")
    assert [p.reason for p in problems] == [Reason.CONFLICTING_SERVER_ASSIGNORS]
    e, _ = elect(["uniform"], ["range"], broker=("server-range", "uniform"))
    assert e.elected == "server-range"
    # the order the members are listed in does not matter
    e, _ = elect(["uniform"], ["range"])
    assert e.elected == "uniform"


def test_unknown_names_are_warnings_and_do_not_count() -> None:
    e, problems = elect(["cooperative-sticky"], ["com.acme.Custom", "range"], ["uniform"])
    # m1 votes for its first name the broker runs (range); m0 names nothing the broker runs:
    # a 1-1 tie, uniform listed first
    assert (e.elected, e.candidate_strategies) == ("uniform", ["uniform", "server-range"])
    assert reasons(problems) == [
        (WARNING, Reason.UNKNOWN_SERVER_ASSIGNOR, "m0"),
        (WARNING, Reason.UNKNOWN_SERVER_ASSIGNOR, "m1"),
        (WARNING, Reason.CONFLICTING_SERVER_ASSIGNORS, None),
    ]
    assert e.unknown_names == [(0, "cooperative-sticky"), (1, "com.acme.Custom")]


def test_an_assignor_the_broker_does_not_run_does_not_count() -> None:
    e, problems = elect(["range"], ["range"], ["uniform"], broker=("uniform",))
    assert e.elected == "uniform"
    assert [p.reason for p in problems] == [Reason.UNKNOWN_SERVER_ASSIGNOR] * 2


def test_group_consumer_assignors_are_checked() -> None:
    catalog = StrategyCatalog.build(["range"], server_assignors=["range", "uniform"])
    assert catalog.server_assignors == ("server-range", "uniform")
    for bad in (["roundrobin"], [], ["uniform", "uniform"]):
        with pytest.raises(UnknownStrategyError, match="group_consumer_assignors"):
            StrategyCatalog.build(["range"], server_assignors=bad)


# --- planning ---


def consumer_spec(names: Sequence[Sequence[str] | None]) -> GroupSpec:
    spec, problems = build(
        [
            MemberRow(
                f"m{i}", topics=["t", "u"], assignment_strategies=n, group_protocol="consumer"
            )
            for i, n in enumerate(names)
        ]
    )
    assert spec is not None
    assert problems == []
    return spec


def test_consumer_group_elects_the_broker_assignor_and_plans_it() -> None:
    spec = consumer_spec([["range"], ["range"], ["uniform"]])
    plan = plan_group(spec, StrategyCatalog.build(["range", "elected"]), False)
    assert plan.election is not None
    assert plan.election.elected == "server-range"
    elected = next(p for p in plan.plans if p.strategy == "elected")
    assert elected.metrics["elected_strategy"] == "server-range"
    assert elected.assignment == ServerRangeAssignor().assign(spec)
    assert [p.reason for p in plan.problems] == [Reason.CONFLICTING_SERVER_ASSIGNORS]
    # the client-side range is still planned, for comparison
    assert any(p.strategy == "range" for p in plan.plans)


def test_consumer_group_rebalance_round_is_one_everywhere() -> None:
    spec = consumer_spec([None, None])
    plan = plan_group(spec, StrategyCatalog.build(["uniform", "server-range", "elected"]), False)
    assert plan.election is not None
    assert plan.election.elected == "uniform"
    for sp in plan.plans:
        assert {row[5] for row in sp.rows} == {1}


def test_classic_group_election_is_unchanged() -> None:
    spec, _ = build(rows([None, "classic"], [["roundrobin", "range"], ["roundrobin"]]))
    assert spec is not None
    plan = plan_group(spec, StrategyCatalog.build(["range", "roundrobin", "elected"]), False)
    assert plan.election is not None
    assert (plan.election.elected, plan.election.basis) == ("roundrobin", None)


# --- what-if and recommendation ---


def test_broker_assignors_revoke_before_assign_no_stop_the_world() -> None:
    cooperative = {n for n in builtin_names() if is_cooperative(get_assignor(n))}
    assert {"uniform", "server-range"} <= cooperative
    members = consumer_spec([None, None, None]).members
    spec = GroupSpec("g", members, {"t": CATALOG["t"].metadata("t")}, group_protocol=CONSUMER)
    plan = ServerRangeAssignor().assign(spec)  # t (6) over m0..m2: 0-1, 2-3, 4-5
    rows_, _ = scenario_costs(
        spec, "server-range", ServerRangeAssignor, plan, scenarios=("member_join", "member_leave")
    )
    got = {r["scenario"]: (r["moved_partition_count"], r["paused_partition_count"]) for r in rows_}
    # A join: ranges 0-1, 2-3, 4, 5: only t-5 is revoked (from m2) and assigned to the new
    # member; everything else is consumed throughout (the eager range would pause all 6).
    assert got["member_join"] == (1, 1)
    # m0 leaves: m1 takes 0-2, m2 3-5: t-0 and t-1 (the leaver's) and t-3 (revoked from m1).
    assert got["member_leave"] == (3, 3)
    eager, _ = scenario_costs(
        spec, "range", ServerRangeAssignor, plan, scenarios=("member_join",), cooperative=False
    )
    assert eager[0]["paused_partition_count"] == 6


def test_consumer_group_recommendation_says_what_a_client_side_strategy_takes() -> None:
    # t (6) and u (2) over three members naming `range`: every strategy balances 3/3/2, and
    # over a rolling restart server-range pauses 22 partitions, cooperative-sticky 15.
    spec = consumer_spec([["range"], ["range"], ["range"]])
    catalog = StrategyCatalog.build(["range", "cooperative-sticky", "elected"])
    plan = plan_group(spec, catalog, False)
    settings = WhatIfSettings(
        scenarios=("rolling_restart", "member_join"), recommend_from=("cooperative-sticky",)
    )
    row = group_whatif(spec, plan, catalog, settings).recommendation
    assert (row["current_strategy"], row["recommended_strategy"]) == (
        "server-range",
        "cooperative-sticky",
    )
    assert (row["current_restart_paused"], row["recommended_restart_paused"]) == (22, 15)
    assert row["reason"] == (
        "cooperative-sticky: a rolling restart pauses 15 partitions instead of 22; a member"
        " join moves 2 partitions instead of 1 (client-side: the group would go back to the"
        " classic protocol, group.protocol=classic)"
    )


def test_consumer_group_prefers_a_broker_assignor_on_a_tie() -> None:
    # uniform and cooperative-sticky tie on every figure (15 paused, 2 moved on a join):
    # a classic group would get cooperative-sticky (Kafka's order), this one stays KIP-848.
    spec = consumer_spec([["range"], ["range"], ["range"]])
    catalog = StrategyCatalog.build(["range", "cooperative-sticky", "uniform", "server-range"])
    plan = plan_group(spec, catalog, False)
    settings = WhatIfSettings(scenarios=("rolling_restart", "member_join"))
    row = group_whatif(spec, plan, catalog, settings).recommendation
    assert (row["current_strategy"], row["recommended_strategy"]) == ("server-range", "uniform")
    assert str(row["reason"]).endswith("(broker-side: set group.remote.assignor=uniform)")
    classic = GroupSpec(spec.group_id, spec.members, spec.topics)  # the same group, classic
    plan = plan_group(classic, catalog, False)
    row = group_whatif(classic, plan, catalog, settings).recommendation
    assert row["recommended_strategy"] == "cooperative-sticky"


# --- configuration ---


def test_group_consumer_assignors_config_key(tmp_path: Path) -> None:
    conf = tmp_path / "planner.toml"
    conf.write_text('[planner]\nstrategies = ["range"]\ngroup_consumer_assignors = ["range"]\n')
    config = load_config(conf)
    assert config.planner.group_consumer_assignors == ("range",)
    assert config.as_dict()["group_consumer_assignors"] == ["range"]
    assert RunSettings.from_config(config).catalog.protocols == ["range"]
    assert load_config(None).planner.group_consumer_assignors == KAFKA_DEFAULT_SERVER_ASSIGNORS
    conf.write_text('[planner]\ngroup_consumer_assignors = ["roundrobin"]\n')
    with pytest.raises(ConfigError, match="'roundrobin' is not a broker-side assignor"):
        RunSettings.from_config(load_config(conf))
