"""Consumer-protocol (KIP-848) groups: `generation` holds the member epoch, which the
coordinator never holds a member at below 0 (NEGATIVE_MEMBER_EPOCH, a warning)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from assignors.inputs.validation import MemberRow, TopicStatus, build_group
from assignors.model import CONSUMER, GroupSpec
from assignors.problems import WARNING, Problem, Reason

CATALOG = {"aa": TopicStatus(1)}


def build(members: Sequence[MemberRow]) -> tuple[GroupSpec | None, list[Problem]]:
    return build_group("g", members, (), CATALOG, lambda name: name == "range")


@pytest.mark.parametrize("epoch", [-1, -2, -3, -(2**31)])
def test_negative_member_epoch_in_a_consumer_group_is_flagged(epoch: int) -> None:
    spec, problems = build(
        [MemberRow("m1", topics=["aa"], generation=epoch, group_protocol=CONSUMER)]
    )
    assert [(p.severity, p.reason, p.member_id) for p in problems] == [
        (WARNING, Reason.NEGATIVE_MEMBER_EPOCH, "m1")
    ]
    assert f"member epoch {epoch} is negative" in problems[0].detail
    assert spec is not None  # planned: the broker's assignors never read epochs
    assert spec.members[0].generation is None


def test_member_epoch_zero_and_up_is_not_flagged() -> None:
    spec, problems = build(
        [
            MemberRow("m1", topics=["aa"], generation=0, group_protocol=CONSUMER),
            MemberRow("m2", topics=["aa"], generation=7, group_protocol=CONSUMER),
        ]
    )
    assert problems == []
    assert spec is not None
    assert [m.generation for m in spec.members] == [0, 7]


def test_negative_generation_in_a_classic_group_is_unchanged() -> None:
    spec, problems = build([MemberRow("m1", topics=["aa"], generation=-1)])
    assert problems == []
    assert spec is not None
    assert spec.members[0].generation == -1


def test_epoch_outside_int32_stays_invalid_generation() -> None:
    spec, problems = build(
        [MemberRow("m1", topics=["aa"], generation=-(2**40), group_protocol=CONSUMER)]
    )
    assert [p.reason for p in problems] == [Reason.INVALID_GENERATION]
    assert spec is not None
