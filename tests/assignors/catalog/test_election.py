"""Classic-protocol strategy election (`ClassicGroup.selectProtocol`, `ClassicGroupMember.vote`)."""

from __future__ import annotations

import itertools

import pytest

from assignors.catalog.election import (
    INCONSISTENT_GROUP_PROTOCOL,
    UNKNOWN_COMMON_STRATEGY,
    Election,
    elect,
)

RANGE_CLASS = "org.apache.kafka.clients.consumer.RangeAssignor"
RR_CLASS = "org.apache.kafka.clients.consumer.RoundRobinAssignor"


def known(name: str) -> str | None:
    """A registry that also knows the sticky strategies and a plugin."""
    aliases = {
        RANGE_CLASS: "range",
        RR_CLASS: "roundrobin",
        "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
        "my.plugins:Custom": "custom",
    }
    name = name.strip()
    if name in {"range", "roundrobin", "sticky", "cooperative-sticky", "custom"}:
        return name
    return aliases.get(name)


def test_kafka_select_protocol_fact() -> None:
    # testSelectProtocol: a third member breaks the tie.
    two = [["range", "roundrobin"], ["roundrobin", "range"]]
    assert elect(two, known=known).elected in {"range", "roundrobin"}
    assert elect([*two, ["roundrobin", "range"]], known=known).elected == "roundrobin"


def test_kafka_compatible_protocol_fact() -> None:
    # testSelectProtocolChoosesCompatibleProtocol: foo is not supported by everyone.
    result = elect([["range", "roundrobin"], ["roundrobin", "foo"]], known=known)
    assert result == Election("roundrobin", ["roundrobin"], None, [(1, "foo")])


def test_supports_protocols_fact() -> None:
    # testSupportsProtocols: after m1 [range, roundrobin], {foo, bar} has nothing in common.
    result = elect([["range", "roundrobin"], ["foo", "bar"]], known=known)
    assert result.elected is None
    assert result.error == INCONSISTENT_GROUP_PROTOCOL
    assert result.unknown_names == [(1, "foo"), (1, "bar")]
    assert elect([["range", "roundrobin"], ["range", "bar"]], known=known).elected == "range"


def test_null_list_means_default() -> None:
    result = elect([None, ["cooperative-sticky"]], known=known)
    assert result.elected == "cooperative-sticky"
    assert result.candidate_strategies == ["cooperative-sticky"]
    assert elect([None, None], known=known).elected == "range"
    assert elect([None], default=["roundrobin"], known=known).elected == "roundrobin"


def test_class_names_and_protocol_names_are_interchangeable() -> None:
    result = elect([[RANGE_CLASS, "roundrobin"], ["range", RR_CLASS]], known=known)
    assert result.candidate_strategies == ["range", "roundrobin"]
    assert result.elected == "range"
    assert result.unknown_names == []
    # A member naming one strategy twice (as class and protocol) votes once.
    assert elect([[RANGE_CLASS, "range", RR_CLASS]], known=known).candidate_strategies == [
        "range",
        "roundrobin",
    ]


def test_plugins_vote_like_any_strategy() -> None:
    assert elect([["my.plugins:Custom", "range"], ["custom"]], known=known).elected == "custom"


def test_most_votes_win() -> None:
    lists = [["range", "roundrobin"]] * 2 + [["roundrobin", "range"]] * 3
    result = elect(lists, known=known)
    assert result.elected == "roundrobin"
    assert result.candidate_strategies == ["roundrobin", "range"]


def test_tie_broken_by_overall_preference_then_name() -> None:
    # 1 vote each for range and sticky; roundrobin is everyone's second choice.
    lists = [["range", "roundrobin", "sticky"], ["sticky", "roundrobin", "range"]]
    result = elect(lists, known=known)
    assert result.elected == "range"  # equal votes, equal rank sums: name order
    assert result.candidate_strategies == ["range", "sticky", "roundrobin"]
    # One vote each; rank sums roundrobin 2, sticky 3, range 4.
    lists = [
        ["roundrobin", "sticky", "range"],
        ["sticky", "roundrobin", "range"],
        ["range", "roundrobin", "sticky"],
    ]
    assert elect(lists, known=known).candidate_strategies == ["roundrobin", "sticky", "range"]


def test_result_does_not_depend_on_member_order() -> None:
    lists = [
        ["range", "sticky", "roundrobin"],
        ["roundrobin", "sticky", "range"],
        ["sticky", "range", "roundrobin"],
        ["roundrobin", "range"],
    ]
    results = {
        (e.elected, tuple(e.candidate_strategies))
        for e in (elect(list(p), known=known) for p in itertools.permutations(lists))
    }
    assert len(results) == 1


def test_unknown_names_are_reported_not_voted() -> None:
    result = elect([["bogus", "range"], ["range", RR_CLASS + "X"]], known=known)
    assert result.elected == "range"
    assert result.unknown_names == [(0, "bogus"), (1, RR_CLASS + "X")]


def test_only_unknown_names_in_common() -> None:
    result = elect([["com.acme.Custom", "range"], ["com.acme.Custom"]], known=known)
    assert result == Election(
        None, [], UNKNOWN_COMMON_STRATEGY, [(0, "com.acme.Custom"), (1, "com.acme.Custom")]
    )


@pytest.mark.parametrize("lists", [[[]], [["range"], []]])
def test_member_with_empty_list_is_inconsistent(lists: list[list[str]]) -> None:
    assert elect(lists, known=known).error == INCONSISTENT_GROUP_PROTOCOL


def test_empty_group_elects_nothing_without_error() -> None:
    assert elect([], known=known) == Election(None, [], None, [])


def test_default_registry_resolution() -> None:
    # With the package registry (range/roundrobin at least) and class names. The election no
    # longer imports the registry: the caller passes its resolver in.
    from assignors.catalog.registry import canonical_name

    assert elect([[RANGE_CLASS], ["range"]], known=canonical_name).elected == "range"
