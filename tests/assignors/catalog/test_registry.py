"""Strategy names resolve the way Kafka's `partition.assignment.strategy` does."""

from __future__ import annotations

import pytest

from assignors.catalog.registry import (
    UnknownStrategyError,
    builtin_names,
    canonical_name,
    get_assignor,
)
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.strategies.range import RangeAssignor
from assignors.strategies.roundrobin import RoundRobinAssignor

RANGE_CLASS = "org.apache.kafka.clients.consumer.RangeAssignor"
ROUNDROBIN_CLASS = "org.apache.kafka.clients.consumer.RoundRobinAssignor"


@pytest.mark.parametrize(
    ("protocol", "java_class", "cls"),
    [
        ("range", RANGE_CLASS, RangeAssignor),
        ("roundrobin", ROUNDROBIN_CLASS, RoundRobinAssignor),
    ],
)
def test_protocol_and_class_names_resolve_to_the_same_assignor(
    protocol: str, java_class: str, cls: type
) -> None:
    by_name = get_assignor(protocol)
    by_class = get_assignor(java_class)
    assert type(by_name) is cls
    assert type(by_class) is cls
    assert by_name.name == by_class.name == protocol
    assert canonical_name(protocol) == canonical_name(java_class) == protocol


def test_resolved_assignors_behave_identically() -> None:
    # 3 partitions over two members: range gives c1 two in a row, roundrobin alternates.
    spec = GroupSpec(
        "g",
        (Member("c1", frozenset({"t"})), Member("c2", frozenset({"t"}))),
        {"t": TopicMetadata("t", 3)},
    )
    assert get_assignor(RANGE_CLASS).assign(spec)["c1"] == [("t", 0), ("t", 1)]
    assert get_assignor("roundrobin").assign(spec)["c1"] == [("t", 0), ("t", 2)]


def test_builtin_names() -> None:
    assert {"range", "roundrobin"} <= set(builtin_names())


def test_names_are_trimmed() -> None:
    assert canonical_name("  range ") == "range"
    assert type(get_assignor(f" {ROUNDROBIN_CLASS}\n")) is RoundRobinAssignor


def test_fresh_instance_per_call() -> None:
    assert get_assignor("range") is not get_assignor("range")


@pytest.mark.parametrize(
    "name",
    [
        "rangee",
        "round-robin",
        "org.apache.kafka.clients.consumer.NoSuchAssignor",
        "com.example.RangeAssignor",
        "",
    ],
)
def test_unknown_name_raises_naming_it(name: str) -> None:
    assert canonical_name(name) is None
    with pytest.raises(UnknownStrategyError) as info:
        get_assignor(name)
    assert repr(name) in str(info.value)
    assert isinstance(info.value, ValueError)
