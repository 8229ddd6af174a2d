"""Tests of the group model and Kafka's member order (`AbstractPartitionAssignor.MemberInfo`)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable

import pytest
from helpers.classic import java_units

from assignors.model import (
    GroupSpec,
    Member,
    TopicMetadata,
    empty_assignment,
    java_key,
    java_sorted,
    member_order,
)

# Above U+FFFF: a surrogate pair in UTF-16, whose first unit (U+D800..U+DBFF) sorts *before*
# any BMP character in U+E000..U+FFFF in Java, although its code point is larger.
ABOVE_BMP = "\U0001f600"  # UTF-16: D83D DE00
PRIVATE_USE = "\ue000"
FULLWIDTH_A = "\uff21"


def mem(member_id: str, instance: str | None = None, topics: Iterable[str] = ()) -> Member:
    return Member(member_id, frozenset(topics), group_instance_id=instance)


def ids(members: Iterable[Member]) -> list[str]:
    return [m.member_id for m in members]


# ---------------------------------------------------------------------- MemberInfo order


def test_dynamic_members_by_member_id() -> None:
    assert ids(member_order([mem("b"), mem("c"), mem("a")])) == ["a", "b", "c"]


def test_static_members_by_instance_id() -> None:
    members = [mem("a", "y"), mem("b", "z"), mem("c", "x")]
    assert ids(member_order(members)) == ["c", "a", "b"]


def test_static_members_before_dynamic() -> None:
    members = [mem("a"), mem("b", "y"), mem("c", "x")]
    assert ids(member_order(members)) == ["c", "b", "a"]


def test_static_first_even_when_dynamic_id_sorts_first() -> None:
    members = [mem("zz-static", "zz"), mem("000-dynamic"), mem("AAA-static", "\uffff")]
    assert ids(member_order(members)) == ["zz-static", "AAA-static", "000-dynamic"]


def test_member_order_java_utf16_for_dynamic_ids() -> None:
    # Python code-point order would put PRIVATE_USE first; Java puts ABOVE_BMP first.
    assert sorted([ABOVE_BMP, PRIVATE_USE]) == [PRIVATE_USE, ABOVE_BMP]
    members = [mem(PRIVATE_USE), mem(ABOVE_BMP), mem(FULLWIDTH_A)]
    assert ids(member_order(members)) == [ABOVE_BMP, PRIVATE_USE, FULLWIDTH_A]


def test_member_order_java_utf16_for_instance_ids() -> None:
    members = [mem("m1", "x" + FULLWIDTH_A), mem("m2", "x" + ABOVE_BMP), mem("m0")]
    assert ids(member_order(members)) == ["m2", "m1", "m0"]


def test_member_order_utf16_decided_by_other_members_strings() -> None:
    """Only one instance id has a high character; the order must still be Java's."""
    members = [mem("p", PRIVATE_USE), mem("q", ABOVE_BMP), mem("r", "plain")]
    assert ids(member_order(members)) == ["r", "q", "p"]


def test_member_order_bmp_below_surrogates_unchanged() -> None:
    # Characters below U+D800 compare the same way in both orders.
    members = [mem("\u00e9"), mem("z"), mem(ABOVE_BMP), mem("\u4e2d")]
    assert ids(member_order(members)) == ["z", "\u00e9", "\u4e2d", ABOVE_BMP]


@pytest.mark.parametrize("seed", range(10))
def test_hundred_random_members_about_half_static(seed: int) -> None:
    """AbstractPartitionAssignorTest: about half have an instance id equal to their member id."""
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-" + PRIVATE_USE + FULLWIDTH_A + ABOVE_BMP
    names: set[str] = set()
    while len(names) < 100:
        names.add("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))))
    members = [mem(n, n if rng.random() < 0.5 else None) for n in names]
    rng.shuffle(members)
    static = sorted((m.member_id for m in members if m.is_static), key=java_units)
    dynamic = sorted((m.member_id for m in members if not m.is_static), key=java_units)
    assert 0 < len(static) < 100
    assert ids(member_order(members)) == static + dynamic


def test_member_order_does_not_mutate_input() -> None:
    members = [mem("b"), mem("a")]
    member_order(members)
    assert ids(members) == ["b", "a"]


# ------------------------------------------------------------------ java_key, java_sorted


@pytest.mark.parametrize(
    ("lo", "hi"),
    [
        (ABOVE_BMP, PRIVATE_USE),
        (ABOVE_BMP, FULLWIDTH_A),
        ("\U00010000", "\uffff"),
        ("a", "b"),
        ("a", "ab"),
        ("", "a"),
        ("\u00e9", ABOVE_BMP),
    ],
)
def test_java_key_orders_by_code_units(lo: str, hi: str) -> None:
    assert java_units(lo) < java_units(hi)  # the fact itself, computed by hand
    assert java_key(lo) < java_key(hi)


def test_java_sorted_slow_and_fast_paths() -> None:
    assert java_sorted(["b", "a", "c"]) == ["a", "b", "c"]
    assert java_sorted([PRIVATE_USE, "a", ABOVE_BMP]) == ["a", ABOVE_BMP, PRIVATE_USE]
    assert java_sorted(iter(["y", "x"])) == ["x", "y"]


# ------------------------------------------------------------------------------ GroupSpec


def test_subscribed_topics_skip_missing_and_empty_and_unsubscribed() -> None:
    spec = GroupSpec(
        "g",
        (mem("a", topics=["t2", "ghost", "empty"]), mem("b", topics=["t1", "t2"])),
        {
            "t1": TopicMetadata("t1", 1),
            "t2": TopicMetadata("t2", 2),
            "empty": TopicMetadata("empty", 0),
            "other": TopicMetadata("other", 4),
        },
    )
    assert spec.subscribed_topics() == ["t1", "t2"]
    assert spec.partition_count("ghost") == 0
    assert spec.partition_count("other") == 4
    assert {t: ids(ms) for t, ms in spec.subscribers().items()} == {
        "t1": ["b"],
        "t2": ["a", "b"],
    }
    assert spec.member_ids == ["a", "b"]


def test_subscribed_topics_in_java_order() -> None:
    spec = GroupSpec(
        "g",
        (mem("a", topics=[PRIVATE_USE, ABOVE_BMP, "t"]),),
        {t: TopicMetadata(t, 1) for t in (PRIVATE_USE, ABOVE_BMP, "t")},
    )
    assert spec.subscribed_topics() == ["t", ABOVE_BMP, PRIVATE_USE]


def test_empty_assignment_has_every_member() -> None:
    spec = GroupSpec("g", (mem("b"), mem("a", "i")), {})
    assert empty_assignment(spec) == {"b": [], "a": []}


def test_member_defaults_and_immutability() -> None:
    m = Member("m", frozenset({"t"}))
    assert (m.group_instance_id, m.rack, m.owned, m.generation) == (None, None, (), None)
    assert not m.is_static
    assert mem("m", "i").is_static
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.member_id = "x"  # type: ignore[misc]
