"""The members' figures of an `elections` row: the highest generation reported, and the digest
of the members as an operator counts them (static members by `group.instance.id`)."""

from __future__ import annotations

import hashlib

from assignors.analysis.membership import (
    DIGEST_CHARS,
    max_generation,
    member_identity,
    members_digest,
)
from assignors.model import Member


def m(member_id: str, instance: str | None = None, generation: int | None = None) -> Member:
    return Member(member_id, frozenset({"t"}), group_instance_id=instance, generation=generation)


def test_max_generation_is_the_highest_reported_and_none_when_none_is() -> None:
    assert max_generation([m("a", generation=7), m("b", generation=9), m("c")]) == 9
    assert max_generation([m("a"), m("b")]) is None
    assert max_generation([]) is None
    # -1 is the classic "no generation yet" a fresh member reports: a value, not absence
    assert max_generation([m("a", generation=-1)]) == -1


def test_the_digest_ignores_member_order() -> None:
    a, b, c = m("a"), m("b"), m("c")
    assert members_digest([a, b, c]) == members_digest([c, a, b])
    assert len(members_digest([a])) == DIGEST_CHARS
    assert all(ch in "0123456789abcdef" for ch in members_digest([a]))


def test_a_dynamic_member_replaced_at_the_same_count_changes_the_digest() -> None:
    assert members_digest([m("a"), m("b")]) != members_digest([m("a"), m("b2")])


def test_a_static_member_restarting_under_a_new_member_id_is_the_same_member() -> None:
    before = [m("consumer-1-0a1b", "host-1"), m("consumer-1-9f8e", "host-2")]
    after = [m("consumer-1-77aa", "host-1"), m("consumer-1-9f8e", "host-2")]
    assert members_digest(before) == members_digest(after)
    # another instance in its place is another member
    assert members_digest(before) != members_digest([after[1], m("consumer-1-77aa", "host-3")])


def test_identities_of_both_kinds_never_collide() -> None:
    # a dynamic member whose member.id is another's group.instance.id is not that member
    assert member_identity(m("x")) != member_identity(m("y", "x"))
    assert members_digest([m("x")]) != members_digest([m("y", "x")])
    # the digest is a function of the identities only, stable across processes (no
    # hash() seed): SHA-256 of the sorted identities as compact JSON
    assert members_digest([m("a")]) == members_digest([m("a", generation=3)])
    text = '[["instance","h"],["member","a"]]'
    expected = hashlib.sha256(text.encode()).hexdigest()[:DIGEST_CHARS]
    assert members_digest([m("a"), m("z", "h")]) == expected
