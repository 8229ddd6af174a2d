"""The strategy catalog: configured names resolved once, votes, elected lookups."""

from __future__ import annotations

import pickle

import pytest

from assignors.catalog.catalog import KAFKA_DEFAULT_STRATEGIES, StrategyCatalog
from assignors.catalog.registry import UnknownStrategyError
from assignors.strategies.range import RangeAssignor
from assignors.strategies.roundrobin import RoundRobinAssignor

LEAST = "helpers.failing_plugins:LeastLoaded"
RANDOM = "assignors.catalog.examples.random_assignor:RandomAssignor"
RANGE_CLASS = "org.apache.kafka.clients.consumer.RangeAssignor"


def test_build_resolves_protocols_in_configured_order() -> None:
    catalog = StrategyCatalog.build([RANGE_CLASS, "elected", LEAST, "uniform"])
    assert catalog.protocols == ["range", "elected", "least-loaded", "uniform"]
    assert catalog.plan_elected
    assert [(s.name, s.builtin) for s in catalog.strategies] == [
        (RANGE_CLASS, True),
        (LEAST, False),
        ("uniform", True),
    ]
    assert catalog.default_strategies == KAFKA_DEFAULT_STRATEGIES


def test_assignors_are_fresh_per_call() -> None:
    catalog = StrategyCatalog.build(["range", LEAST])
    first, second = catalog.assignors(), catalog.assignors()
    assert [type(a).__name__ for _, a in first] == ["RangeAssignor", "PluginAssignor"]
    assert all(a is not b for (_, a), (_, b) in zip(first, second, strict=True))


def test_members_vote_for_a_configured_plugin_by_protocol_name_or_path() -> None:
    # `least-loaded` counts when `helpers.failing_plugins:LeastLoaded` is configured.
    catalog = StrategyCatalog.build(["range", LEAST])
    assert catalog.vote("least-loaded") == "least-loaded"
    assert catalog.vote(f" {LEAST} ") == "least-loaded"
    assert catalog.is_known("least-loaded")
    unconfigured = StrategyCatalog.build(["range"])
    assert unconfigured.vote("least-loaded") is None
    assert unconfigured.vote(LEAST) is None  # data never decides what gets imported


def test_votes_exclude_server_side_and_unknown_names() -> None:
    catalog = StrategyCatalog.build(["range", "uniform"])
    assert catalog.vote(RANGE_CLASS) == "range"
    assert catalog.vote("roundrobin") == "roundrobin"  # built-ins need no configuring
    assert catalog.vote("uniform") is None  # KIP-848 server-side: never in a classic election
    assert catalog.vote("com.acme.Custom") is None


def test_strategy_for_finds_planned_plugins_and_builtins() -> None:
    catalog = StrategyCatalog.build(["range"], default_strategies=["range", RANDOM])
    assert catalog.strategy_for("random").name == RANDOM
    assert isinstance(catalog.strategy_for("roundrobin").factory(), RoundRobinAssignor)
    with pytest.raises(KeyError):
        catalog.strategy_for("uniform")


@pytest.mark.parametrize(
    ("names", "defaults", "message"),
    [
        (["range", RANGE_CLASS], KAFKA_DEFAULT_STRATEGIES, "same assignor twice: range"),
        (["rangee"], KAFKA_DEFAULT_STRATEGIES, "'rangee'"),
        (["range"], ["uniform"], "not a client-side strategy"),
        (
            ["range", "helpers.failing_plugins:Ranged"],
            KAFKA_DEFAULT_STRATEGIES,
            "same assignor twice",
        ),
        (
            ["roundrobin"],
            ["roundrobin", "helpers.failing_plugins:Ranged"],
            "'range' is already taken",
        ),
    ],
)
def test_build_refuses_what_cannot_be_planned(
    names: list[str], defaults: list[str], message: str
) -> None:
    with pytest.raises(UnknownStrategyError, match=message):
        StrategyCatalog.build(names, defaults)


def test_catalog_pickles_by_reference() -> None:
    # The Spark layer ships the catalog built on the driver to the executors.
    catalog = StrategyCatalog.build(["range", LEAST, "elected"])
    catalog.vote("least-loaded")  # a warm vote cache travels too
    copy = pickle.loads(pickle.dumps(catalog))
    assert copy.protocols == catalog.protocols
    assert copy.vote("least-loaded") == "least-loaded"
    assert [type(a).__name__ for _, a in copy.assignors()] == ["RangeAssignor", "PluginAssignor"]


def test_from_assignors_reuses_instances_and_marks_builtins() -> None:
    rr = RoundRobinAssignor()
    catalog = StrategyCatalog.from_assignors(
        [("range", RangeAssignor()), ("rr", rr)], plan_elected=True, plugins_allowed=[RANDOM]
    )
    assert catalog.protocols == ["range", "rr", "elected"]
    assert catalog.assignors()[1][1] is rr
    assert all(s.builtin for s in catalog.strategies)
    assert catalog.vote("random") == "random"
