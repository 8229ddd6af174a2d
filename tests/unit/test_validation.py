"""Every reason code of the bad-input policy (DESIGN §5), on the pure validation layer."""

from __future__ import annotations

import pytest

from assignors.model import GroupSpec
from assignors.registry import canonical_name
from assignors.validation import (
    ERROR,
    WARNING,
    MemberRow,
    OwnedRow,
    Problem,
    Reason,
    TopicStatus,
    build_group,
    check_topic,
    null_group_problem,
)

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
            [MemberRow("a", topics=["t1"]), MemberRow("a", topics=["t1"])],
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
