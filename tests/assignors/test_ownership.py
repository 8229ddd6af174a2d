"""The generation rule for reported ownership (`AbstractStickyAssignor`) and departed owners."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import pytest

from assignors.model import GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.ownership import (
    NO_GENERATION,
    PreviousOwners,
    claims_by_topic,
    invalidated_claims,
    max_generation,
    previous_owners,
    valid_owned,
)

T0: TopicPartition = ("t", 0)
T1: TopicPartition = ("t", 1)
T2: TopicPartition = ("t", 2)


def owner(member_id: str, owned: Sequence[TopicPartition], generation: int | None) -> Member:
    return Member(member_id, frozenset({"t"}), owned=tuple(owned), generation=generation)


def group(
    members: Sequence[Member],
    departed: Mapping[str, tuple[TopicPartition, ...]] | None = None,
    partitions: int = 3,
) -> GroupSpec:
    return GroupSpec(
        "g", tuple(members), {"t": TopicMetadata("t", partitions)}, dict(departed or {})
    )


def winners(spec: GroupSpec) -> dict[TopicPartition, str]:
    return {tp: m for m, tps in valid_owned(spec).items() for tp in tps}


# --------------------------------------------------------------------- generation rule


@pytest.mark.parametrize("order", [0, 1])
def test_higher_generation_wins_in_either_order(order: int) -> None:
    members = [owner("old", [T0], 1), owner("new", [T0], 2)]
    if order:
        members.reverse()
    spec = group(members)
    assert valid_owned(spec) == {"old": [], "new": [T0]}
    assert winners(spec) == {T0: "new"}
    assert invalidated_claims(spec) == set()
    assert previous_owners(spec) == {T0: "new"}


def test_tie_at_the_top_invalidates_for_every_claimant() -> None:
    spec = group([owner("a", [T0, T1], 3), owner("b", [T0], 3)])
    assert valid_owned(spec) == {"a": [T1], "b": []}
    assert invalidated_claims(spec) == {T0}
    assert previous_owners(spec) == {T1: "a"}


@pytest.mark.parametrize("perm", list(itertools.permutations([("a", 1), ("b", 1), ("c", 2)])))
def test_tie_below_the_top_does_not_invalidate(perm: tuple[tuple[str, int], ...]) -> None:
    spec = group([owner(m, [T0], g) for m, g in perm])
    assert winners(spec) == {T0: "c"}
    assert invalidated_claims(spec) == set()


@pytest.mark.parametrize("perm", list(itertools.permutations([("a", 2), ("b", 2), ("c", 1)])))
def test_tie_at_the_top_with_a_lower_third_claimant(perm: tuple[tuple[str, int], ...]) -> None:
    spec = group([owner(m, [T0], g) for m, g in perm])
    assert winners(spec) == {}
    assert invalidated_claims(spec) == {T0}
    assert previous_owners(spec) == {}


def test_absent_generation_counts_as_minus_one() -> None:
    assert NO_GENERATION == -1
    # None vs explicit -1: a tie at the top.
    tie = group([owner("a", [T0], None), owner("b", [T0], -1)])
    assert winners(tie) == {}
    assert invalidated_claims(tie) == {T0}
    # None loses to generation 0, in both orders.
    for members in (
        [owner("a", [T0], None), owner("b", [T0], 0)],
        [owner("b", [T0], 0), owner("a", [T0], None)],
    ):
        assert winners(group(members)) == {T0: "b"}


def test_negative_generation_means_absent() -> None:
    """A negative `Subscription.generationId` means absent, so it also counts as -1."""
    tie = group([owner("a", [T0], -7), owner("b", [T0], None)])
    assert winners(tie) == {}
    assert invalidated_claims(tie) == {T0}
    assert winners(group([owner("a", [T0], -7), owner("b", [T0], 0)])) == {T0: "b"}
    assert max_generation([owner("a", [], -7)]) == -1


def test_non_existing_partitions_are_ignored() -> None:
    ghost: TopicPartition = ("ghost", 0)
    out_of_range: TopicPartition = ("t", 3)
    negative: TopicPartition = ("t", -1)
    spec = group(
        [
            owner("a", [ghost, out_of_range, negative, T1], 1),
            owner("b", [ghost, out_of_range, negative], 1),
        ]
    )
    # Same-generation double claims on partitions that do not exist invalidate nothing.
    assert valid_owned(spec) == {"a": [T1], "b": []}
    assert invalidated_claims(spec) == set()
    assert previous_owners(spec) == {T1: "a"}


def test_unique_claims_kept_in_reported_order_without_duplicates() -> None:
    spec = group([owner("a", [T2, T0, T2], 0), owner("b", [T1], None), owner("c", [], 5)])
    assert valid_owned(spec) == {"a": [T2, T0], "b": [T1], "c": []}


def test_every_live_member_is_a_key() -> None:
    spec = group([owner("a", [], None), owner("b", [], 1)])
    assert valid_owned(spec) == {"a": [], "b": []}
    assert previous_owners(spec) == {}


# -------------------------------------------------------------------------- departed owners


def test_departed_owner_used_when_nobody_live_claims() -> None:
    spec = group([owner("a", [T0], 1)], departed={"gone": (T1,)})
    assert previous_owners(spec) == {T0: "a", T1: "gone"}
    # Departed members are not live claimants: they never appear in valid_owned.
    assert valid_owned(spec) == {"a": [T0]}


def test_live_claim_beats_departed_owner() -> None:
    spec = group([owner("a", [T0], None)], departed={"gone": (T0,)})
    assert previous_owners(spec) == {T0: "a"}


def test_departed_owner_not_used_for_invalidated_live_claims() -> None:
    spec = group([owner("a", [T0], 2), owner("b", [T0], 2)], departed={"gone": (T0,)})
    assert previous_owners(spec) == {}


def test_departed_owner_must_be_unique() -> None:
    spec = group([], departed={"gone1": (T0, T1), "gone2": (T0,), "gone3": (T0,)})
    assert previous_owners(spec) == {T1: "gone1"}


def test_departed_owner_listing_a_partition_twice_is_unique() -> None:
    spec = group([], departed={"gone": (T2, T2)})
    assert previous_owners(spec) == {T2: "gone"}


def test_departed_non_existing_partitions_ignored() -> None:
    spec = group([], departed={"gone": (("ghost", 0), ("t", 7), T0)})
    assert previous_owners(spec) == {T0: "gone"}


# ------------------------------------------------------------- previous owners by topic


def test_previous_owners_is_a_mapping_over_per_topic_lists() -> None:
    spec = group([owner("a", [T2, T0], 1), owner("b", [], 1)], departed={"gone": (T1,)})
    previous = previous_owners(spec)
    assert isinstance(previous, PreviousOwners)
    assert previous.rows == {"t": ["a", "gone", "a"]}
    assert previous.counts == {"t": 3}
    assert len(previous) == 3
    assert sorted(previous) == [T0, T1, T2]
    assert previous.items() == [(T0, "a"), (T1, "gone"), (T2, "a")]
    assert previous == {T0: "a", T1: "gone", T2: "a"}
    assert previous != {T0: "a"}
    assert dict(previous) == {T0: "a", T1: "gone", T2: "a"}
    assert previous.values() == ["a", "gone", "a"]
    assert previous
    assert not previous_owners(group([owner("a", [], 1)]))
    assert previous[T1] == "gone"
    assert previous.get(("t", 9)) is None
    assert previous.get(("other", 0)) is None
    assert previous.get(("t", -1)) is None
    assert previous.get(("t", 3), "none") == "none"
    assert ("t", 3) not in previous
    assert T0 in previous
    with pytest.raises(KeyError):
        previous[("t", 3)]


def test_departed_owners_do_not_touch_the_live_claims_the_metrics_share() -> None:
    spec = group([owner("a", [T0], 1)], departed={"gone": (T1, T2)})
    assert claims_by_topic(spec) == {"t": ["a", None, None]}
    assert previous_owners(spec) == {T0: "a", T1: "gone", T2: "gone"}
    assert claims_by_topic(spec) == {"t": ["a", None, None]}


def test_without_departed_members_the_live_claims_are_the_previous_owners() -> None:
    spec = group([owner("a", [T1], 1), owner("b", [T0], 1)])
    assert previous_owners(spec).rows is claims_by_topic(spec)


def test_claims_by_topic_is_none_when_a_partition_is_claimed_twice() -> None:
    spec = group([owner("a", [T0], 1), owner("b", [T0], 2)])
    assert claims_by_topic(spec) is None
    assert previous_owners(spec).rows == {"t": ["b", None, None]}


# --------------------------------------------------------------------------- max_generation


def test_max_generation() -> None:
    assert max_generation([]) == -1
    assert max_generation([owner("a", [], None)]) == -1
    assert max_generation([owner("a", [], None), owner("b", [], 4), owner("c", [], 2)]) == 4
