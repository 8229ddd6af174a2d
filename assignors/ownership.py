"""Who owns what before the rebalance: Kafka's generation rule for reported ownership.

Members report the partitions they own together with the generation in which they got them
(`ConsumerProtocolSubscription.generationId`, or the `userData` of the eager `StickyAssignor`,
as `AbstractStickyAssignor.memberData` reads them). When two live members claim the same
partition, the claim from the higher generation wins; claims tied at the highest generation
invalidate the partition for every claimant (a stale double claim is legal input, not an
error). A member reporting no generation (or a negative one) counts as generation -1, as Kafka
does. Only existing partitions count.

Departed members (rows of `current_assignment` whose member is no longer in the group) are not
seen by Kafka's assignors at all; their partitions simply become free. For the planner's
movement metrics they are still the previous owner, when no live member claims the partition
and exactly one departed member does.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import TypeAlias, TypeVar

from assignors.model import (
    Assignment,
    GroupSpec,
    Member,
    Rebalance,
    TopicPartition,
    needs_java_order,
    per_group,
    sort_partitions,
)

NO_GENERATION = -1

H = TypeVar("H", bound=Hashable)

MAX_ROUNDS = 16
"""Safety cap on replayed cooperative rounds (they converge in 2 or 3 in practice)."""


def effective_generation(member: Member) -> int:
    """The generation used for conflicts: absent (None) or negative counts as -1.

    Kafka treats a negative `Subscription.generationId` as absent and absent as -1
    (`AbstractStickyAssignor.DEFAULT_GENERATION`).
    """
    gen = member.generation
    return gen if gen is not None and gen >= 0 else NO_GENERATION


def _exists(spec: GroupSpec, tp: TopicPartition) -> bool:
    return 0 <= tp[1] < spec.partition_count(tp[0])


def owned_claims(spec: GroupSpec) -> tuple[list[list[TopicPartition]], bool]:
    """Per member (in `spec.members` order), the existing partitions it reports owning, once
    each and in its reported order; and whether some partition is claimed by two of them."""
    claims, rows = _claimed(spec)
    return claims, rows is None


@per_group
def valid_owned(spec: GroupSpec) -> dict[str, list[TopicPartition]]:
    """member_id -> the owned partitions it keeps a valid claim on, in its reported order.

    Applies the generation rule: a partition claimed by several live members stays only with
    the unique claimant of the highest generation; on a tie at the top nobody keeps it.
    """
    claims, twice = owned_claims(spec)
    if not twice:
        # No partition claimed twice (the usual case): every claim is valid.
        return {m.member_id: tps for m, tps in zip(spec.members, claims, strict=True)}
    best: dict[TopicPartition, tuple[int, str | None]] = {}
    for m, tps in zip(spec.members, claims, strict=True):
        gen = effective_generation(m)
        for tp in tps:
            prev = best.get(tp)
            if prev is None or gen > prev[0]:
                best[tp] = (gen, m.member_id)
            elif gen == prev[0]:
                best[tp] = (gen, None)  # tie at the top: invalidated for all claimants
    out: dict[str, list[TopicPartition]] = {}
    for m, tps in zip(spec.members, claims, strict=True):
        out[m.member_id] = [tp for tp in tps if best[tp][1] == m.member_id]
    return out


def invalidated_claims(spec: GroupSpec) -> set[TopicPartition]:
    """Existing partitions claimed by several live members tied at the highest generation."""
    kept = {tp for tps in valid_owned(spec).values() for tp in tps}
    claimed = {tp for m in spec.members for tp in m.owned if _exists(spec, tp)}
    return claimed - kept


def claims_by_topic(spec: GroupSpec) -> dict[str, list[str | None]] | None:
    """topic -> each partition's live claimant (its index in the list; None: unclaimed), for
    every topic of the group (empty when no member owns anything); None when some partition
    is claimed by two live members (the generation rule then decides, `valid_owned`).

    A list slot per partition: a large group's million claims are then read by index, where
    a dict of partition tuples hashes each one. Shared by the metrics and `previous_owners`;
    callers must not modify it."""
    return _claimed(spec)[1]


_NO_ROW: list[str | None] = []


@per_group
def _claimed(
    spec: GroupSpec,
) -> tuple[list[list[TopicPartition]], dict[str, list[str | None]] | None]:
    """`owned_claims`' lists and `claims_by_topic`'s, made in one pass over the owned
    partitions: each pass over a large group's million partition tuples costs a cache miss
    a tuple (they are shared, allocated topic by topic, and read member by member)."""
    rows: dict[str, list[str | None]] = {}
    if any(m.owned for m in spec.members):
        rows = {t: [None] * max(0, meta.partition_count) for t, meta in spec.topics.items()}
    claims: list[list[TopicPartition]] = []
    twice = False
    topic: str | None = None
    row = _NO_ROW
    for m in spec.members:
        owned = m.owned
        if len(set(owned)) != len(owned):
            owned = tuple(dict.fromkeys(owned))
        member_id = m.member_id
        mine: list[TopicPartition] = []
        for tp in owned:
            if tp[0] != topic:  # a member's partitions usually come sorted: one lookup a topic
                topic = tp[0]
                row = rows.get(topic, _NO_ROW)
            p = tp[1]
            if 0 <= p < len(row):
                mine.append(tp)
                if row[p] is not None:  # another member's: its own repeats are gone
                    twice = True
                row[p] = member_id
        claims.append(mine)
    return claims, None if twice else rows


class PreviousOwners:
    """partition -> its owner before this rebalance (`previous_owners`), held as one list per
    topic of the group (`rows`: the owner at each partition's index, None for none; `counts`:
    how many of each topic's partitions have one). The metrics and the assignment rows read
    `rows` by index; the read-only mapping methods serve everything else, and it equals the
    dict of the same owners. `rows` may be `claims_by_topic`'s lists: nobody modifies them.

    (Not a `collections.abc.Mapping` subclass: the compiled core's classes cannot take an
    abstract base class; `Owners` names either kind.)"""

    def __init__(self, rows: dict[str, list[str | None]]) -> None:
        self.rows = rows
        self.counts = {t: len(row) - row.count(None) for t, row in rows.items()}

    def get(self, tp: TopicPartition, default: str | None = None) -> str | None:
        row = self.rows.get(tp[0])
        owner = row[tp[1]] if row is not None and 0 <= tp[1] < len(row) else None
        return default if owner is None else owner

    def __getitem__(self, tp: TopicPartition) -> str:
        owner = self.get(tp)
        if owner is None:
            raise KeyError(tp)
        return owner

    def __contains__(self, tp: object) -> bool:
        return isinstance(tp, tuple) and len(tp) == 2 and self.get(tp) is not None

    def __iter__(self) -> Iterator[TopicPartition]:
        for topic, row in self.rows.items():
            for p, owner in enumerate(row):
                if owner is not None:
                    yield (topic, p)

    def __len__(self) -> int:
        return sum(self.counts.values())

    def __bool__(self) -> bool:  # the compiled core would otherwise test `is not None`
        return any(self.counts.values())

    def keys(self) -> list[TopicPartition]:
        return list(self)

    def values(self) -> list[str]:
        return [owner for _, owner in self.items()]

    def items(self) -> list[tuple[TopicPartition, str]]:
        return [
            ((topic, p), owner)
            for topic, row in self.rows.items()
            for p, owner in enumerate(row)
            if owner is not None
        ]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PreviousOwners | Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        return f"PreviousOwners({dict(self.items())!r})"


Owners: TypeAlias = Mapping[TopicPartition, str] | PreviousOwners
"""partition -> previous owner: the planner's `PreviousOwners`, or any mapping (tests, tools)."""


def previous_owners(spec: GroupSpec) -> PreviousOwners:
    """partition -> its owner before this rebalance, for movement metrics.

    A valid live claim wins; otherwise a partition owned by exactly one departed member
    has that member as its previous owner. Invalidated double claims have none. Read-only
    (its lists may be shared, see `PreviousOwners`).
    """
    live = claims_by_topic(spec)
    if live is not None and not spec.departed:  # the usual case: the live claims as they are
        return PreviousOwners(live)
    rows: dict[str, list[str | None]] = {
        t: [None] * max(0, meta.partition_count) for t, meta in spec.topics.items()
    }
    if live is not None:
        rows.update((t, list(row)) for t, row in live.items())  # copies: departed owners go in
    else:
        for member_id, tps in valid_owned(spec).items():
            for tp in tps:
                rows[tp[0]][tp[1]] = member_id
    if spec.departed:
        contested = invalidated_claims(spec)
        gone: dict[TopicPartition, str | None] = {}
        for member_id, departed_tps in spec.departed.items():
            for tp in departed_tps:
                if not _exists(spec, tp) or rows[tp[0]][tp[1]] is not None or tp in contested:
                    continue
                gone[tp] = member_id if tp not in gone or gone[tp] == member_id else None
        for tp, owner in gone.items():
            if owner is not None:
                rows[tp[0]][tp[1]] = owner
    return PreviousOwners(rows)


def max_generation(members: Iterable[Member]) -> int:
    """The highest generation any member reports (computed per group, unlike Java's field)."""
    return max((effective_generation(m) for m in members), default=NO_GENERATION)


# ------------------------------------------------------------------ cooperative rounds


def live_owners(spec: GroupSpec) -> tuple[dict[TopicPartition, str], set[TopicPartition]]:
    """(partition -> its valid live owner, partitions tied at the top generation).

    One pass when no partition is claimed twice (the common case); otherwise Kafka's
    generation rule (`valid_owned`, `invalidated_claims`).
    """
    counts = {t: meta.partition_count for t, meta in spec.topics.items()}
    owners: dict[TopicPartition, str] = {}
    for m in spec.members:
        for tp in m.owned:
            exists = 0 <= tp[1] < counts.get(tp[0], 0)
            if exists and owners.setdefault(tp, m.member_id) != m.member_id:
                return _contested_ownership(spec)
    return owners, set()


def _contested_ownership(spec: GroupSpec) -> tuple[dict[TopicPartition, str], set[TopicPartition]]:
    owners = {tp: m for m, tps in valid_owned(spec).items() for tp in tps}
    return owners, invalidated_claims(spec)


def withhold(
    target: Assignment, owners: dict[TopicPartition, str], contested: set[TopicPartition]
) -> Assignment:
    """One cooperative round: nothing moves while another live member still owns it."""
    if not owners and not contested:
        return target
    out: Assignment = {}
    for member_id, tps in target.items():
        out[member_id] = [
            tp for tp in tps if owners.get(tp, member_id) == member_id and tp not in contested
        ]
    return out


def cooperative_rebalance(assign: Callable[[GroupSpec], Assignment], spec: GroupSpec) -> Rebalance:
    """Kafka's cooperative protocol around any assignor (`assign`: one JoinGroup round).

    A partition that another live member still owns is revoked first and assigned in a later
    round, as `ConsumerCoordinator` requires of a COOPERATIVE assignor; every round after the
    first runs at the next generation with each member owning what the round before gave it.
    Rounds repeat until nothing is withheld or a round changes nothing (at most MAX_ROUNDS).
    """
    history: list[Assignment] = []
    generation = max_generation(spec.members)
    while len(history) < MAX_ROUNDS:
        target = assign(spec)
        owners, contested = live_owners(spec)
        out = withhold(target, owners, contested)
        if history and out == history[-1]:
            break
        history.append(out)
        if out == target:
            break
        generation += 1
        spec = next_round(spec, out, generation)
    return Rebalance(history[-1], received_rounds(history), len(history))


def next_round(spec: GroupSpec, assignment: Assignment, generation: int) -> GroupSpec:
    """The group as it rejoins for the next cooperative round: every member reports what
    `assignment` gave it, at `generation` (as `ConsumerCoordinator` does after a SyncGroup).
    """
    # Built directly, not with dataclasses.replace (interpreted, and this runs every round).
    members = tuple(m.owning(tuple(assignment[m.member_id]), generation) for m in spec.members)
    return GroupSpec(
        spec.group_id,
        members,
        spec.topics,
        spec.departed,
        spec.group_protocol,
        spec.classic_members,
    )


def received_rounds(history: Sequence[Assignment]) -> dict[TopicPartition, int]:
    """tp -> the round from which its final owner holds it without a break (only rounds > 1).

    `history[r - 1]` is round r's assignment; the result is in (topic, partition) Java order.

    >>> received_rounds([{"a": [("t", 0)], "b": []}, {"a": [("t", 0)], "b": [("t", 1)]}])
    {('t', 1): 2}
    """
    members = list(history[-1])
    out = arrivals([[h[m] for m in members] for h in history])
    order = list(out)
    sort_partitions(order, needs_java_order(t for t, _ in order))
    return {tp: out[tp] for tp in order}


def arrivals(history: Sequence[Sequence[Sequence[H]]]) -> dict[H, int]:
    """item -> the round (> 1) from which its final holder holds it without a break, where
    `history[r - 1][i]` is what member i holds after round r (any hashable items)."""
    final = history[-1]
    out: dict[H, int] = {}
    for i, items in enumerate(final):
        since = len(history)
        held = set(items)
        while held and since > 1:
            earlier = held & set(history[since - 2][i])
            for item in held - earlier:
                out[item] = since
            held = earlier
            since -= 1
    return out
