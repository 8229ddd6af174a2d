"""Eager or cooperative is what an assignor declares (Kafka's `supportedProtocols()`), for
built-ins and plugins alike, and the planner and the what-if simulation follow it."""

from __future__ import annotations

import pytest

from assignors.catalog.plugins import PluginLoadError, load_assignor
from assignors.catalog.registry import builtin_names, get_assignor
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.protocol import RebalanceProtocol, is_cooperative
from assignors.whatif.simulation import run_scenarios

EAGER, COOPERATIVE = RebalanceProtocol.EAGER, RebalanceProtocol.COOPERATIVE
PLUGIN = "helpers.protocol_plugins:"


def test_builtins_declare_the_protocols_kafka_gives_them() -> None:
    declared = {name: get_assignor(name).supported_protocols for name in builtin_names()}
    assert declared == {
        "range": (EAGER,),
        "roundrobin": (EAGER,),
        "sticky": (EAGER,),
        "cooperative-sticky": (EAGER, COOPERATIVE),
        "uniform": (COOPERATIVE,),
        "server-range": (COOPERATIVE,),
        "balanced": (COOPERATIVE,),
    }
    stateless = {name for name in builtin_names() if get_assignor(name).stateless}
    assert stateless == {"range", "roundrobin", "server-range"}


@pytest.mark.parametrize(
    ("cls", "expected"),
    [
        ("Striped", (EAGER,)),
        ("CooperativeStriped", (EAGER, COOPERATIVE)),
        ("KafkaStyleCooperative", (COOPERATIVE,)),
    ],
)
def test_a_plugin_declares_its_protocols(cls: str, expected: tuple[RebalanceProtocol]) -> None:
    assert load_assignor(PLUGIN + cls).supported_protocols == expected


def test_an_unknown_protocol_is_a_load_error() -> None:
    with pytest.raises(PluginLoadError, match="supported_protocols must list some of"):
        load_assignor(PLUGIN + "BadProtocols")


def _owned_group() -> GroupSpec:
    """c0..c2 own what `Striped` gave them over c0..c3 (c3 has left), at generation 5."""
    owned = {"c0": [0, 4, 8], "c1": [1, 5, 9], "c2": [2, 6, 10]}
    members = tuple(
        Member(m, frozenset({"t"}), owned=tuple(("t", p) for p in ps), generation=5)
        for m, ps in owned.items()
    )
    return GroupSpec("g", members, {"t": TopicMetadata("t", 12)})


def test_a_cooperative_plugin_revokes_before_it_assigns() -> None:
    spec = _owned_group()
    eager = load_assignor(PLUGIN + "Striped").rebalance(spec)
    coop = load_assignor(PLUGIN + "CooperativeStriped").rebalance(spec)
    assert not is_cooperative(load_assignor(PLUGIN + "Striped"))
    assert eager.rounds == 1
    # the same target, reached in two rounds: what another member owned arrives in round 2
    assert coop.assignment == eager.assignment
    assert coop.rounds == 2
    owner = {tp: m.member_id for m in spec.members for tp in m.owned}
    moved = {tp for m, tps in coop.assignment.items() for tp in tps if owner.get(tp, m) != m}
    assert moved
    assert set(coop.received_round) == moved
    assert set(coop.received_round.values()) == {2}


def test_a_cooperative_plugin_is_simulated_as_cooperative() -> None:
    members = tuple(Member(f"c{i}", frozenset({"t"})) for i in range(4))
    spec = GroupSpec("g", members, {"t": TopicMetadata("t", 12)})
    paused = {}
    for cls in ("Striped", "CooperativeStriped"):
        plugin = load_assignor(PLUGIN + cls)
        planned = plugin.rebalance(spec).assignment
        costs, problems = run_scenarios(
            spec, plugin.name, lambda cls=cls: load_assignor(PLUGIN + cls), planned
        )
        assert [p.reason for p in problems] == ["SCENARIO_NOT_APPLICABLE"]  # one topic
        paused[cls] = {c.scenario: c.paused for c in costs}
        rounds = {c.scenario: c.rounds for c in costs}
        if cls == "CooperativeStriped":
            assert rounds["member_leave"] == 2  # revoke, then assign
    # eager: a leave pauses all 12 partitions; cooperative: only what moves or was the leaver's
    assert paused["Striped"]["member_leave"] == 12
    assert paused["CooperativeStriped"]["member_leave"] < 12
    assert all(paused["CooperativeStriped"][s] <= paused["Striped"][s] for s in paused["Striped"])
