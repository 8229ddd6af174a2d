"""Every reason code of the bad-input policy (docs/data-contract.md), on the validation layer."""

from __future__ import annotations

import random

import pytest

from assignors.catalog.registry import canonical_name
from assignors.inputs.validation import (
    MemberRow,
    OwnedRow,
    TopicStatus,
    build_group,
    check_topic,
    null_group_problem,
)
from assignors.model import GroupSpec
from assignors.problems import ERROR, WARNING, Problem, Reason

CATALOG = {
    "t1": TopicStatus(3),
    "t2": TopicStatus(2),
    "gap": TopicStatus(0, Reason.NON_CONTIGUOUS_PARTITIONS, "topic 'gap' misses 1"),
}


def known(name: str) -> bool:
    return canonical_name(name) is not None


def build(
    members: list[MemberRow], owned: list[OwnedRow] | None = None, resolve=None
) -> tuple[GroupSpec | None, list[Problem]]:
    return build_group("g", members, owned or [], CATALOG, known, resolve)


def reasons(problems: list[Problem]) -> list[tuple[str, str]]:
    return [(p.severity, p.reason) for p in problems]


def test_clean_group_builds_spec_with_owned_and_departed() -> None:
    spec, problems = build(
        [MemberRow("a", topics=["t1"], generation=3), MemberRow("b", topics=["t1", "t2"])],
        [OwnedRow("a", "t1", 2), OwnedRow("a", "t1", 0), OwnedRow("gone", "t2", 1)],
    )
    assert problems == []
    assert spec is not None
    assert [m.member_id for m in spec.members] == ["a", "b"]
    assert spec.members[0].owned == (("t1", 0), ("t1", 2))
    assert spec.members[0].generation == 3
    assert spec.departed == {"gone": (("t2", 1),)}
    assert spec.partition_count("t1") == 3
    assert spec.partition_count("t2") == 2


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        ([MemberRow(None, topics=["t1"])], (ERROR, Reason.NULL_MEMBER_ID)),
        ([MemberRow("", topics=["t1"])], (ERROR, Reason.NULL_MEMBER_ID)),
        (
            # two different rows (identical ones are counted once: DUPLICATE_SUBSCRIPTION)
            [MemberRow("a", topics=["t1"]), MemberRow("a", topics=["t1"], generation=2)],
            (ERROR, Reason.DUPLICATE_MEMBER_ID),
        ),
        (
            [MemberRow("a", "i", topics=["t1"]), MemberRow("b", "i", topics=["t1"])],
            (ERROR, Reason.DUPLICATE_GROUP_INSTANCE_ID),
        ),
        (
            [MemberRow("a", topics=["t1"], topic_pattern="t.*")],
            (ERROR, Reason.TOPICS_AND_PATTERN),
        ),
        ([MemberRow("a", topic_pattern="(a+)+b")], (ERROR, Reason.INVALID_PATTERN)),
        ([MemberRow("a", topics=["gap", "t1"])], (ERROR, Reason.NON_CONTIGUOUS_PARTITIONS)),
    ],
)
def test_errors_reject_the_group(members: list[MemberRow], expected: tuple[str, str]) -> None:
    spec, problems = build(members)
    assert spec is None
    assert expected in reasons(problems)
    assert all(p.group_id == "g" for p in problems)


def test_broken_topic_is_named_in_the_problem() -> None:
    _, problems = build([MemberRow("a", topics=["gap"])])
    (p,) = problems
    assert (p.topic, p.member_id, p.reason) == ("gap", None, Reason.NON_CONTIGUOUS_PARTITIONS)
    assert "misses" in p.detail


def test_invalid_pattern_from_resolver() -> None:
    def resolve(pattern: str) -> list[str]:
        raise ValueError(f"cannot translate {pattern!r}")

    spec, problems = build([MemberRow("a", topic_pattern="(")], resolve=resolve)
    assert spec is None
    assert reasons(problems) == [(ERROR, Reason.INVALID_PATTERN)]
    assert "cannot translate" in problems[0].detail


def test_pattern_matches_the_catalog_in_full() -> None:
    spec, problems = build([MemberRow("a", topic_pattern="t."), MemberRow("b", topic_pattern="t")])
    assert problems == []
    assert spec is not None
    assert [sorted(m.topics) for m in spec.members] == [["t1", "t2"], []]


def test_pattern_resolved_by_the_given_resolver() -> None:
    spec, problems = build([MemberRow("a", topic_pattern="t.*")], resolve=lambda p: ["t1", "t2"])
    assert problems == []
    assert spec is not None
    assert spec.members[0].topics == {"t1", "t2"}


@pytest.mark.parametrize(
    ("members", "owned", "expected"),
    [
        ([MemberRow("a")], [], Reason.NO_SUBSCRIPTION),
        ([MemberRow("a", topics=["t1", None])], [], Reason.NULL_TOPIC_NAME),
        ([MemberRow("a", topics=["nope"])], [], Reason.UNKNOWN_TOPIC),
        (
            [MemberRow("a", topics=["t1"], assignment_strategies=["nope", "range"])],
            [],
            Reason.UNKNOWN_ASSIGNMENT_STRATEGY,
        ),
        ([MemberRow("a", topics=["t1"])], [OwnedRow("a", None, 0)], Reason.OWNED_NULL_KEY),
        ([MemberRow("a", topics=["t1"])], [OwnedRow("a", "gone", 0)], Reason.OWNED_UNKNOWN_TOPIC),
        ([MemberRow("a", topics=["t1"])], [OwnedRow("a", "gap", 0)], Reason.OWNED_UNKNOWN_TOPIC),
        ([MemberRow("a", topics=["t1"])], [OwnedRow("a", "t1", 3)], Reason.OWNED_UNKNOWN_PARTITION),
        (
            [MemberRow("a", topics=["t1"])],
            [OwnedRow("a", "t1", 0), OwnedRow("a", "t1", 0)],
            Reason.DUPLICATE_OWNED_PARTITION,
        ),
    ],
)
def test_warnings_are_planned_around(
    members: list[MemberRow], owned: list[OwnedRow], expected: str
) -> None:
    spec, problems = build(members, owned)
    assert spec is not None
    assert reasons(problems) == [(WARNING, expected)]


def test_class_names_are_known_strategies() -> None:
    _, problems = build(
        [
            MemberRow(
                "a",
                topics=["t1"],
                assignment_strategies=["org.apache.kafka.clients.consumer.RangeAssignor"],
            )
        ]
    )
    assert problems == []


def test_stale_double_claim_is_legal() -> None:
    spec, problems = build(
        [MemberRow("a", topics=["t1"], generation=1), MemberRow("b", topics=["t1"], generation=1)],
        [OwnedRow("a", "t1", 0), OwnedRow("b", "t1", 0)],
    )
    assert problems == []
    assert spec is not None


@pytest.mark.parametrize(
    ("args", "error", "warnings"),
    [
        ((3, 3, 0, 2, 0), None, []),
        ((4, 3, 0, 2, 0), None, [Reason.DUPLICATE_PARTITION]),
        ((2, 2, 0, 2, 0), Reason.NON_CONTIGUOUS_PARTITIONS, []),
        ((2, 2, 1, 2, 0), Reason.NON_CONTIGUOUS_PARTITIONS, []),
        ((2, 2, -1, 0, 0), Reason.NEGATIVE_PARTITION, []),
        ((3, 2, 0, 1, 1), Reason.NULL_PARTITION, []),
    ],
)
def test_check_topic(
    args: tuple[int, int, int, int, int], error: str | None, warnings: list[str]
) -> None:
    status, problems = check_topic("t", *args)
    assert status.error == error
    assert [p.reason for p in problems] == warnings + ([error] if error else [])
    assert all(p.group_id is None and p.topic == "t" for p in problems)
    if error is None:
        assert status.partition_count == args[3] + 1


def test_null_group_problem() -> None:
    p = null_group_problem("m")
    assert (p.group_id, p.member_id, p.severity, p.reason) == (None, "m", ERROR, "NULL_GROUP_ID")


def test_empty_group_instance_id_is_a_dynamic_member() -> None:
    spec, problems = build([MemberRow("a", "", topics=["t1"]), MemberRow("b", "", topics=["t1"])])
    assert reasons(problems) == [(WARNING, Reason.EMPTY_GROUP_INSTANCE_ID)] * 2
    assert spec is not None
    assert [m.group_instance_id for m in spec.members] == [None, None]


def test_generation_outside_int32_is_treated_as_absent() -> None:
    spec, problems = build([MemberRow("a", topics=["t1"], generation=2**40)])
    assert reasons(problems) == [(WARNING, Reason.INVALID_GENERATION)]
    assert spec is not None
    assert spec.members[0].generation is None


def test_empty_owner_id_is_a_null_key() -> None:
    spec, problems = build([MemberRow("a", topics=["t1"])], [OwnedRow("", "t1", 0)])
    assert reasons(problems) == [(WARNING, Reason.OWNED_NULL_KEY)]
    assert spec is not None
    assert spec.departed == {}


# --- Kafka's limits and who subscribed ----------------------------------------------------------


def test_empty_group_id_is_not_planned() -> None:
    spec, problems = build_group("", [MemberRow("a", topics=["t1"])], [], CATALOG, known)
    assert spec is None
    assert [(p.group_id, p.severity, p.reason) for p in problems] == [
        ("", ERROR, Reason.EMPTY_GROUP_ID)
    ]


@pytest.mark.parametrize("name", ["", ".", "..", "a b", "ünïcode", "x" * 250, "t1/"])
def test_illegal_topic_names_are_skipped_with_a_warning(name: str) -> None:
    spec, problems = build([MemberRow("a", topics=[name, "t1"])])
    assert reasons(problems) == [(WARNING, Reason.INVALID_TOPIC_NAME)]
    assert problems[0].member_id == "a"
    assert spec is not None
    assert spec.members[0].topics == {"t1"}


def test_longest_legal_topic_name_is_just_unknown() -> None:
    _, problems = build([MemberRow("a", topics=["x" * 249])])
    assert reasons(problems) == [(WARNING, Reason.UNKNOWN_TOPIC)]


def test_empty_topics_array_is_no_subscription() -> None:
    spec, problems = build([MemberRow("a", topics=[]), MemberRow("b", topics=["t1"])])
    assert [(p.member_id, p.reason) for p in problems] == [("a", Reason.NO_SUBSCRIPTION)]
    assert "empty topics" in problems[0].detail
    assert spec is not None


def test_unknown_topic_rows_name_each_subscriber() -> None:
    _, problems = build(
        [
            MemberRow("b", topics=["nope", "t1"]),
            MemberRow("a", topics=["nope", "gone"]),
            MemberRow("c", topics=["t1"]),
        ]
    )
    assert [(p.member_id, p.topic, p.reason) for p in problems] == [
        ("a", "gone", Reason.UNKNOWN_TOPIC),
        ("a", "nope", Reason.UNKNOWN_TOPIC),
        ("b", "nope", Reason.UNKNOWN_TOPIC),
    ]


def test_overlong_pattern_is_invalid() -> None:
    spec, problems = build([MemberRow("a", topic_pattern="t1|" * 3_400 + "t2")])
    assert spec is None
    assert reasons(problems) == [(ERROR, Reason.INVALID_PATTERN)]
    assert "longer than 10000 characters" in problems[0].detail


def test_backtracking_budget_is_per_group() -> None:
    # `.*a.*a.*b` is accepted for one name (about 5e7 steps); against many names its worst
    # case is counted for every name, and the group's patterns share one budget.
    many = {f"topic-{i}": TopicStatus(1) for i in range(300)}
    risky = ".*a.*a.*b"
    one = [MemberRow("a", topic_pattern=risky)]
    spec, problems = build_group("g", one, [], {"t1": TopicStatus(1)}, known)
    assert problems == []
    spec, problems = build_group("g", one, [], many, known)
    assert spec is None
    assert reasons(problems) == [(ERROR, Reason.INVALID_PATTERN)]
    assert "per group" in problems[0].detail
    # Each of two such patterns fits against 150 names; together they exceed the budget.
    fewer = {f"topic-{i}": TopicStatus(1) for i in range(150)}
    assert build_group("g", one, [], fewer, known)[1] == []
    two = [*one, MemberRow("b", topic_pattern=".*a.*a.*c")]
    spec, problems = build_group("g", two, [], fewer, known)
    assert spec is None
    assert [(p.member_id, p.reason) for p in problems] == [("b", Reason.INVALID_PATTERN)]
    # Cheap patterns pass against the same names, however many members share them.
    cheap = [MemberRow(f"m{i}", topic_pattern="topic-1.*") for i in range(50)]
    spec, problems = build_group("g", cheap, [], many, known)
    assert problems == []
    assert spec is not None


def test_patterns_match_legal_topic_names_only() -> None:
    catalog = {"ok.1": TopicStatus(1), "bad name": TopicStatus(1)}
    spec, problems = build_group("g", [MemberRow("a", topic_pattern=".*")], [], catalog, known)
    assert problems == []
    assert spec is not None
    assert spec.members[0].topics == {"ok.1"}


# --- whatever order the rows arrive in ----------------------------------------------------------


def test_group_does_not_depend_on_row_order() -> None:
    members = [
        MemberRow("m2", topics=["t1", "nope"], generation=2),
        MemberRow("m10", "i-10", topics=["t2"]),
        MemberRow("m1", topics=["t1", "t2"], generation=1),
        MemberRow("m3", topic_pattern="t.", assignment_strategies=["bogus", "range"]),
    ]
    owned = [
        OwnedRow("m1", "t1", 0),
        OwnedRow("m1", "t1", 0),
        OwnedRow("gone", "t2", 1),
        OwnedRow("m2", "t1", 9),
        OwnedRow("m2", "t1", 1),
        OwnedRow("gone", "t2", 0),
    ]
    expected = build(members, owned)
    rng = random.Random(7)
    for _ in range(20):
        rng.shuffle(members)
        rng.shuffle(owned)
        assert build(members, owned) == expected
    spec, _ = expected
    assert spec is not None
    assert [m.member_id for m in spec.members] == ["m1", "m10", "m2", "m3"]
