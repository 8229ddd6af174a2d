"""Who a group's members are, and the generation they report: two figures of its `elections`
row (`max_generation`, `members_digest`) that a later run compares with to tell whether the
group went through a rebalance in between (docs/changes.md).

* `max_generation`: the highest `generation` a member reports (a classic member's generation
  of its owned partitions, a `consumer` member's epoch): every completed rebalance of a
  classic group moves it, every new target assignment of a `consumer` group moves it once
  the members reconcile. None when no member reports one.
* `members_digest`: a digest of the members as an operator counts them, one identity each:
  a static member's `group.instance.id`, a dynamic member's `member.id`. A static member
  that restarts comes back under a new `member.id` (the coordinator hands it one, or the
  KIP-848 client makes a new one) but keeps its `group.instance.id`, and Kafka does not
  rebalance the group for it: the same member. A dynamic member that restarts joins as a
  new `member.id`: the member it replaces has left, and the group rebalanced.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from assignors.model import Member

DIGEST_CHARS = 16
"""Hex characters of a digest kept: 64 bits, so two different member sets of one group agree
by chance about once in 10^19 comparisons."""


def max_generation(members: Iterable[Member]) -> int | None:
    """The highest generation the members report; None when none reports one.

    >>> max_generation([Member("a", frozenset(), generation=4), Member("b", frozenset())])
    4
    """
    found = [m.generation for m in members if m.generation is not None]
    return max(found) if found else None


def member_identity(member: Member) -> tuple[str, str]:
    """The member as an operator counts it: ("instance", its `group.instance.id`) for a
    static member, ("member", its `member.id`) for a dynamic one."""
    if member.group_instance_id is not None:
        return ("instance", member.group_instance_id)
    return ("member", member.member_id)


def members_digest(members: Iterable[Member]) -> str:
    """A stable digest of the members' identities, whatever their order (SHA-256 of the
    sorted identities as JSON, the first DIGEST_CHARS hex characters).

    >>> static = [Member("c-1-0a", frozenset(), group_instance_id="host-1")]
    >>> restarted = [Member("c-1-7f", frozenset(), group_instance_id="host-1")]
    >>> members_digest(static) == members_digest(restarted)
    True
    >>> dynamic, replaced = Member("c-1-0a", frozenset()), Member("c-1-7f", frozenset())
    >>> members_digest([dynamic]) == members_digest([replaced])
    False
    """
    identities = sorted(member_identity(m) for m in members)
    text = json.dumps(identities, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:DIGEST_CHARS]
