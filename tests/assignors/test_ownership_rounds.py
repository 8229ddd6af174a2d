"""Cooperative round replay helpers shared by sticky and balanced (assignors.ownership)."""

from __future__ import annotations

from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.ownership import next_round, received_rounds


def test_next_round_reports_what_the_round_gave_at_the_new_generation() -> None:
    spec = GroupSpec(
        "g",
        (
            Member("a", frozenset({"t"}), rack="r1", owned=(("t", 1),), generation=3),
            Member("b", frozenset({"t"})),
        ),
        {"t": TopicMetadata("t", 2)},
    )
    after = next_round(spec, {"a": [("t", 0)], "b": [("t", 1)]}, 4)
    assert [(m.member_id, m.owned, m.generation, m.rack) for m in after.members] == [
        ("a", (("t", 0),), 4, "r1"),
        ("b", (("t", 1),), 4, None),
    ]
    assert after.topics == spec.topics
    assert after.group_id == spec.group_id


def test_received_rounds_counts_from_the_last_unbroken_hold() -> None:
    # t-0 stays with a from round 1 (not listed); t-1 reaches b in round 2; t-2 is a's in
    # round 1, b's in round 2 and a's again from round 3; u-0 is b's from round 3.
    history = [
        {"a": [("t", 0), ("t", 2)], "b": []},
        {"a": [("t", 0)], "b": [("t", 1), ("t", 2)]},
        {"a": [("t", 0), ("t", 2)], "b": [("u", 0), ("t", 1)]},
    ]
    assert received_rounds(history) == {("t", 1): 2, ("t", 2): 3, ("u", 0): 3}
    assert list(received_rounds(history)) == [("t", 1), ("t", 2), ("u", 0)]
    assert received_rounds(history[:1]) == {}
