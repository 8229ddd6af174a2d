"""Consumer-protocol (KIP-848) groups: patterns the broker's RE2/J would not resolve as Java
does (PATTERN_NOT_RE2J)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from assignors.inputs.patterns import InvalidPatternError, match_topics, re2j_refusal
from assignors.inputs.validation import MemberRow, TopicStatus, build_group
from assignors.model import CLASSIC, CONSUMER, GroupSpec
from assignors.problems import ERROR, Problem, Reason

CATALOG = {
    "orders.eu": TopicStatus(3),
    "orders.us": TopicStatus(2),
    "orders.test": TopicStatus(1),
    "aa": TopicStatus(1),
}
TOPICS = sorted(CATALOG)


def known(name: str) -> bool:
    return name in {"range", "uniform", "server-range"}


def build(
    members: Sequence[MemberRow], group_id: str = "g"
) -> tuple[GroupSpec | None, list[Problem]]:
    return build_group(group_id, members, (), CATALOG, known)


def member(pattern: str, protocol: str | None, mid: str = "m1") -> MemberRow:
    return MemberRow(mid, topic_pattern=pattern, group_protocol=protocol)


# --- what RE2/J refuses, reads differently, or reads alike ----------------------------------

REFUSED = [
    (r"orders\.(?!test).*", "negative look-ahead '(?!test)'"),
    (r"orders\.(?=eu).*", "look-ahead '(?=eu)'"),
    (r".*(?<=eu)", "look-behind '(?<=eu)'"),
    (r".*(?<!test)", "negative look-behind '(?<!test)'"),
    (r"(a)\1", "back-reference '\\\\1'"),
    (r"(?<x>a)\k<x>", "back-reference '\\\\k<x>'"),
    (r"orders\.[a-z]++", "possessive quantifier '++'"),
    (r"orders\.[a-z]{2}+", "possessive quantifier '{2}+'"),
    (r"(?>orders)\..*", "atomic group '(?>orders)'"),
    (r"a{1,1001}", "repeat count above 1000 '{1,1001}'"),
    (r"(?d)orders.*", "inline flag 'd' in '(?d)'"),
    (r"(?u)orders.*", "inline flag 'u' in '(?u)'"),
    (r"(?-x)orders.*", "inline flag 'x' in '(?-x)'"),
    (r"(?i-)orders.*", "'-' with no flag after it"),
    (r"orders.*\Z", "escape '\\\\Z'"),
    (r"orders\.\p{Alpha}+", "character property '\\\\p{Alpha}'"),
    (r"orders\.\p{IsL}+", "character property '\\\\p{IsL}'"),
    (r"orders\.\p{LC}+", "character property '\\\\p{LC}'"),
    (r"orders\.\e", "escape '\\\\e'"),
    (r"orders\.\u0065u", "escape '\\\\u0065'"),
    (r"orders\.[\Qeu\E]+", "quotation '\\\\Qeu\\\\E' (inside a character class)"),
]
DIFFERENT = [
    (r"orders\.[a-z&&[^t]][a-z]*", "class intersection '&&'"),
    (r"orders\.[e[u]]+", "nested character class '[u]'"),
    (r"orders\.[[:alpha:]]+", "nested character class '[:alpha:]'"),
    (r"orders\.\0145u", "octal escape '\\\\0145' (RE2/J reads two digits after \\0)"),
]
ALIKE = [
    r"orders\..*",
    r"(?<region>eu|us)",
    r"orders\.(eu|us)",
    r"(?i)ORDERS\.(?s:.)+?",
    r"(?U)\w+\.\w+",
    r"\Qorders.\E[a-z]+",
    r"orders\.\p{L}+",
    r"orders\.\pL\p{Ll}",
    r"orders\.\x{65}\x75",
    r"orders\.v\065",  # two digits after \0: the same in both
    r"\borders\b\.[^.]{2,4}\z",
    r"(?i-m:ORDERS)\..*",
    r"a{1000}",
    r"(?:orders|aa)(?:\..*)?",
]


@pytest.mark.parametrize(("pattern", "construct"), REFUSED)
def test_refused_by_re2j_names_the_construct(pattern: str, construct: str) -> None:
    refusal = re2j_refusal(pattern)
    assert refusal is not None
    assert "refuses" in refusal
    assert "INVALID_REGULAR_EXPRESSION" in refusal
    assert construct in refusal


@pytest.mark.parametrize(("pattern", "construct"), DIFFERENT)
def test_read_differently_by_re2j_names_the_construct(pattern: str, construct: str) -> None:
    refusal = re2j_refusal(pattern)
    assert refusal is not None
    assert "differently from Java" in refusal
    assert construct in refusal


@pytest.mark.parametrize("pattern", ALIKE)
def test_read_alike_is_accepted(pattern: str) -> None:
    assert re2j_refusal(pattern) is None


def test_every_construct_is_named_in_pattern_order() -> None:
    refusal = re2j_refusal(r"(?=o)(a)\1[x&&[y]]")
    assert refusal is not None
    refused, differs = refusal.split("; and ")
    assert refused.index("look-ahead") < refused.index("back-reference")
    assert differs.index("intersection") < differs.index("nested")


def test_a_pattern_java_cannot_read_raises() -> None:
    with pytest.raises(InvalidPatternError):
        re2j_refusal("orders(")


# --- validation: consumer groups refuse, classic groups keep Java's semantics ---------------


def test_consumer_member_with_look_ahead_is_rejected_and_its_group_not_planned() -> None:
    spec, problems = build([member(r"orders\.(?!test).*", CONSUMER), member("aa", CONSUMER, "m2")])
    assert spec is None
    assert [(p.severity, p.reason, p.member_id) for p in problems] == [
        (ERROR, Reason.PATTERN_NOT_RE2J, "m1")
    ]
    detail = problems[0].detail
    assert detail.startswith("topic pattern 'orders\\\\.(?!test).*': ")
    assert "RE2/J" in detail
    assert "negative look-ahead '(?!test)'" in detail
    assert problems[0].strategy is None  # group-level: the group counts as rejected


def test_other_groups_are_still_planned() -> None:
    bad, _ = build([member(r"orders\.(?!test).*", CONSUMER)], "bad")
    good, problems = build([member(r"orders\.(eu|us)", CONSUMER)], "good")
    assert bad is None
    assert problems == []
    assert good is not None
    assert good.members[0].topics == frozenset({"orders.eu", "orders.us"})


@pytest.mark.parametrize("protocol", [None, CLASSIC])
def test_classic_groups_keep_java_semantics(protocol: str | None) -> None:
    pattern = r"orders\.(?!test).*"
    spec, problems = build([member(pattern, protocol)])
    assert problems == []
    assert spec is not None
    assert spec.members[0].topics == frozenset({"orders.eu", "orders.us"})
    assert sorted(spec.members[0].topics) == match_topics(pattern, TOPICS)


@pytest.mark.parametrize(("pattern", "_"), DIFFERENT)
def test_consumer_member_with_a_construct_read_differently_is_rejected(
    pattern: str, _: str
) -> None:
    spec, problems = build([member(pattern, CONSUMER)])
    assert spec is None
    assert [p.reason for p in problems] == [Reason.PATTERN_NOT_RE2J]


def test_a_pattern_java_cannot_read_stays_invalid_pattern() -> None:
    spec, problems = build([member("orders(", CONSUMER)])
    assert spec is None
    assert [(p.severity, p.reason) for p in problems] == [(ERROR, Reason.INVALID_PATTERN)]


def test_re2j_refusal_comes_before_the_backtracking_guard() -> None:
    # Java-valid, refused by the guard, and by RE2/J for its back-reference: the broker's
    # reason is the one that holds for a consumer group; a classic group keeps the guard's.
    pattern = r"(a+)+b\1"
    spec, problems = build([member(pattern, CONSUMER)])
    assert spec is None
    assert [p.reason for p in problems] == [Reason.PATTERN_NOT_RE2J]
    _, classic = build([member(pattern, CLASSIC)])
    assert [p.reason for p in classic] == [Reason.INVALID_PATTERN]


def test_consumer_member_with_an_re2j_pattern_is_planned_as_before() -> None:
    spec, problems = build([member(r"(?<r>eu|us)|orders\.[a-z]+?", CONSUMER)])
    assert problems == []
    assert spec is not None
    assert spec.members[0].topics == frozenset({"orders.eu", "orders.us", "orders.test"})
