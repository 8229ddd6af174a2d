"""PATTERN_NOT_RE2J on the way to the consumer protocol: a classic member's pattern that
RE2/J (the broker's engine once the member moves) does not read as Java does. One test per
construct of RE2's syntax page that RE2 lacks ("NOT SUPPORTED") or reads differently."""

from __future__ import annotations

import pytest

from assignors.catalog.catalog import StrategyCatalog
from assignors.inputs.validation import MemberRow, TopicStatus, build_group
from assignors.migration.conditions import PATTERN_NOT_RE2J, MigrationSettings
from assignors.migration.paths import CLASSIC_TO_CONSUMER, group_migrations
from assignors.planner import plan_group

CATALOG = StrategyCatalog.build(["range", "cooperative-sticky", "uniform", "server-range"])
TOPICS = {"orders": TopicStatus(2), "orders-v2": TopicStatus(2), "audit": TopicStatus(1)}


def warnings_of(pattern: str) -> tuple[list[str], str]:
    rows = [
        MemberRow("a", topic_pattern=pattern, assignment_strategies=["range"]),
        MemberRow("b", topics=["orders"], assignment_strategies=["range"]),
    ]
    spec, problems = build_group("g", rows, (), TOPICS, CATALOG.is_known)
    assert spec is not None, problems  # a classic group: Java reads it, the group is planned
    plan = plan_group(spec, CATALOG, False)
    patterns = {"a": pattern}
    out = group_migrations(spec, plan, CATALOG, MigrationSettings(), patterns=patterns)
    row = next(r for r in out if r["path"] == CLASSIC_TO_CONSUMER)
    return list(row["warnings"]), str(row["detail"])  # type: ignore[call-overload]


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param(r"(o)\1.*", id="back-reference"),
        pytest.param(r"(?<t>o)\k<t>.*", id="named-back-reference"),
        pytest.param(r"(?=orders).*", id="look-ahead"),
        pytest.param(r"(?!audit).*", id="negative-look-ahead"),
        pytest.param(r".*(?<=-v2)", id="look-behind"),
        pytest.param(r".*(?<!-v2)", id="negative-look-behind"),
        pytest.param(r"orders.*+", id="possessive-star"),
        pytest.param(r"orders(-v\d)?+", id="possessive-question"),
        pytest.param(r"orders(-v\d)++", id="possessive-plus"),
        pytest.param(r"orders(-v\d){1}+", id="possessive-repeat"),
        pytest.param(r"(?>orders).*", id="atomic-group"),
        pytest.param(r"orders\Z", id="end-before-newline"),
        pytest.param(r"orders\R?", id="linebreak-escape"),
        pytest.param(r"orders\h?.*", id="horizontal-space-class"),
        pytest.param(r"orders\e?.*", id="escape-character"),
        pytest.param(r"\u006frders.*", id="unicode-escape"),
        pytest.param(r"\p{Alpha}+.*", id="posix-property"),
        pytest.param(r"(?d)orders.*", id="unix-lines-flag"),
        pytest.param(r"o{1001}|orders", id="repeat-over-1000"),
        pytest.param(r"[a-z&&[^x]]+.*", id="class-intersection"),
        pytest.param(r"[a-c[o]]rders.*", id="nested-class"),
    ],
)
def test_construct_re2j_lacks(pattern: str) -> None:
    warnings, detail = warnings_of(pattern)
    assert warnings == [PATTERN_NOT_RE2J]
    assert "patterns RE2/J reads differently: a" in detail


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param(r"orders.*", id="plain"),
        pytest.param(r"(?<n>orders).*", id="named-group"),
        pytest.param(r"orders.*?", id="lazy-quantifier"),
        pytest.param(r"(?i)ORDERS.*", id="case-insensitive-flag"),
        pytest.param(r"\Qorders\E.*", id="quoted-literal"),
    ],
)
def test_construct_both_engines_read_alike(pattern: str) -> None:
    assert warnings_of(pattern)[0] == []
