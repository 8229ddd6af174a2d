"""Kafka's `sticky` (eager) and `cooperative-sticky` assignors (Java's `AbstractStickyAssignor`).

Both compute the same target: **balance first, stickiness second**. Every member ends within one
partition of the others when subscriptions allow it, and keeps as many of the partitions it
validly owns as that balance permits. When every member subscribes to the same topics the
constrained path runs (`assignors.strategies.sticky.constrained`), otherwise the general path
(`assignors.strategies.sticky.general`).

Ownership (Java's `MemberData` and generation rule): a member reports `owned` partitions
with its `generation` (None or negative counts as -1).
Only partitions of topics that exist and that some member subscribes to count. When several
members claim a partition, the unique claimant with the highest generation keeps it; a tie at
the top invalidates it for every claimant. `GroupSpec.departed` is invisible to Kafka: those
partitions are simply free.

Deliberate differences from Java (quirks of `AbstractStickyAssignor`):
* the maximum generation is computed per call, never carried over between groups or calls;
* a member with an empty subscription never receives partitions (Java's constrained path can
  give it some when it happens to be iterated first);
* in a three-way claim the clean rule above decides (Java may drop a partition that a newer
  claimant took over); a claim on a partition number the topic does not have is ignored;
* the general path only hands a partition back to a lower-generation previous owner that is
  still subscribed to its topic (Java could assign it to a non-subscriber);
* cooperative withholding is computed from valid claims on both paths, where Java's general
  path compares raw owned lists: a partition handed back to a lower-generation previous owner
  while a newer-generation member still holds it is withheld for a round. Java assigns it at
  once, so it is revoked and assigned in the same round, which Kafka's own client-side check
  forbids for every other cooperative assignor.

Deterministic orders where Java iterates hash maps: members are taken in Java string
order of member id (`group.instance.id` plays no role), topics in Java string order. Hence in
the constrained path, when more members own >= maxQuota partitions than may keep that many,
those with the smallest member ids keep maxQuota; see `assignors.strategies.sticky.general` for the
general path's choices.

Cooperative rounds (Java's `CooperativeStickyAssignor`): a round's assignment is the sticky
target minus every partition whose current owner must give it up first: a partition validly
owned by another member, or invalidated by a same-generation double claim (withheld even from
its eventual owner, on both paths). Partitions nobody validly owns (e.g. from departed members)
are assigned at once. The losers revoke and rejoin; `rebalance` replays rounds, each one's
owned partitions being the previous round's output at the group's next generation, until the
assignment stops changing.

Worked example (Kafka's StickyAssignor javadoc): topics t0..t3 with 2 partitions each, members
C0, C1, C2 subscribed to all. A fresh group gets the global round robin; when C1 leaves and the
others report what they own, C0 and C2 keep theirs and split C1's.

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> topics = {t: TopicMetadata(t, 2) for t in ("t0", "t1", "t2", "t3")}
>>> subs = frozenset(topics)
>>> spec = GroupSpec("g", tuple(Member(c, subs) for c in ("C0", "C1", "C2")), topics)
>>> fresh = StickyAssignor().assign(spec)
>>> fresh
{'C0': [('t0', 0), ('t1', 1), ('t3', 0)], 'C1': [('t0', 1), ('t2', 0), ('t3', 1)], \
'C2': [('t1', 0), ('t2', 1)]}
>>> again = GroupSpec("g", tuple(Member(c, subs, owned=tuple(fresh[c]), generation=1)
...                              for c in ("C0", "C2")), topics)
>>> {m: sorted(tps) for m, tps in StickyAssignor().assign(again).items()}
{'C0': [('t0', 0), ('t0', 1), ('t1', 1), ('t3', 0)], 'C2': [('t1', 0), ('t2', 0), ('t2', 1), \
('t3', 1)]}

Unequal subscriptions (general path): C0 -> [t0], C1 -> [t1], C2 -> [t0, t1, t2] with t0 (1),
t1 (2), t2 (3) partitions. Roundrobin would leave C1 a single partition; sticky balances:

>>> topics = {"t0": TopicMetadata("t0", 1), "t1": TopicMetadata("t1", 2),
...           "t2": TopicMetadata("t2", 3)}
>>> subs = {"C0": {"t0"}, "C1": {"t1"}, "C2": {"t0", "t1", "t2"}}
>>> spec = GroupSpec("g", tuple(Member(c, frozenset(t)) for c, t in subs.items()), topics)
>>> StickyAssignor().assign(spec)
{'C0': [('t0', 0)], 'C1': [('t1', 0), ('t1', 1)], 'C2': [('t2', 0), ('t2', 1), ('t2', 2)]}

Cooperative: C1 owns all of t (3 partitions) and C2 joins. Round 1 withholds t-2 while C1
revokes it; round 2 hands it to C2.

>>> topics = {"t": TopicMetadata("t", 3)}
>>> spec = GroupSpec("g", (Member("C1", frozenset({"t"}), owned=(("t", 0), ("t", 1), ("t", 2)),
...                                generation=1), Member("C2", frozenset({"t"}))), topics)
>>> CooperativeStickyAssignor().assign(spec)
{'C1': [('t', 0), ('t', 1)], 'C2': []}
>>> CooperativeStickyAssignor().rebalance(spec)
Rebalance(assignment={'C1': [('t', 0), ('t', 1)], 'C2': [('t', 2)]}, \
received_round={('t', 2): 2}, rounds=2)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from typing import ClassVar, TypeVar, cast

from mypy_extensions import mypyc_attr

from assignors.model import (
    Assignment,
    GroupSpec,
    LastSeen,
    Member,
    Rebalance,
    TopicPartition,
    java_sorted,
    partitions_of,
)
from assignors.ownership import MAX_ROUNDS, NO_GENERATION, arrivals, effective_generation
from assignors.protocol import EAGER_AND_COOPERATIVE, EAGER_ONLY, RebalanceProtocol
from assignors.racks import RackView, group_partition_racks, member_rack, sticky_rack_aware
from assignors.strategies import shared
from assignors.strategies.sticky.constrained import assign_constrained
from assignors.strategies.sticky.general import assign_general

_NO_OWNER = -1
_TIED = -2

K = TypeVar("K", bound=Hashable)
H = TypeVar("H", bound=Hashable)


@dataclass(slots=True, init=False)
class _Group:
    """A GroupSpec int-encoded for the sticky paths (built fresh per call: no state leaks).

    Members are numbered in Java order of member id, topics in Java order of name, and
    partition (topic i, p) is `offsets[i] + p`, so int order is (topic, partition) order.
    """

    members: list[Member]
    topics: list[str]
    sizes: list[int]
    offsets: list[int]
    total: int
    claims: list[list[int]]  # raw claims on in-scope partitions, deduplicated, reported order
    valid: list[list[int]]  # claims that survive the generation rule
    tied: set[int]  # partitions invalidated by a same-generation double claim
    gens: list[int]  # effective generation per member
    racks: RackView | None = None  # set when the group is rack-aware (KIP-881)

    def __init__(
        self,
        members: list[Member],
        topics: list[str],
        sizes: list[int],
        offsets: list[int],
        total: int,
        claims: list[list[int]],
        valid: list[list[int]],
        tied: set[int],
        gens: list[int],
        racks: RackView | None = None,
    ) -> None:
        self.members = members
        self.topics = topics
        self.sizes = sizes
        self.offsets = offsets
        self.total = total
        self.claims = claims
        self.valid = valid
        self.tied = tied
        self.gens = gens
        self.racks = racks

    def next_round(self, owned: list[list[int]], generation: int) -> _Group:
        """The group as it rejoins for the next cooperative round: every member owns what
        `owned` (a round's output: disjoint, in scope) gives it, at `generation`. What
        `_encode` would make of `assignors.ownership.next_round`, without the detour
        through members and partition names."""
        n = len(self.members)
        return _Group(
            self.members,
            self.topics,
            self.sizes,
            self.offsets,
            self.total,
            owned,
            owned,
            set(),
            [generation] * n,
            self.racks,
        )

    def on_rack(self, r: int, gs: list[int]) -> list[int]:
        """The partitions of gs member r may keep: all, unless they are on other racks."""
        racks = self.racks
        if racks is None or not gs:
            return gs
        rack = racks.member[r]
        if rack is None:
            return gs
        part = racks.part
        return [g for g in gs if rack in part[g]]

    def gtopic(self) -> list[int]:
        out: list[int] = []
        for t, size in enumerate(self.sizes):
            out.extend(repeat(t, size))
        return out

    def table(self) -> list[TopicPartition]:
        """Partition g is table()[g]."""
        table: list[TopicPartition] = []
        for name, size in zip(self.topics, self.sizes, strict=True):
            table.extend(partitions_of(name, size))
        return table

    def decode(self, lists: Sequence[Sequence[int]]) -> Assignment:
        get = self.table().__getitem__
        return {
            m.member_id: list(map(get, lst)) for m, lst in zip(self.members, lists, strict=True)
        }


def _encode(spec: GroupSpec) -> _Group:
    by_id = {m.member_id: m for m in spec.members}
    members = [by_id[i] for i in java_sorted(by_id)]
    topics = spec.subscribed_topics()
    sizes = [spec.partition_count(t) for t in topics]
    offsets: list[int] = []
    total = 0
    for size in sizes:
        offsets.append(total)
        total += size
    off = dict(zip(topics, offsets, strict=True))
    count = dict(zip(topics, sizes, strict=True)).get

    claims: list[list[int]] = []
    for m in members:
        gs = [off[t] + p for t, p in m.owned if 0 <= p < count(t, 0)]
        if len(set(gs)) != len(gs):
            gs = list(dict.fromkeys(gs))
        claims.append(gs)

    valid = claims
    tied: set[int] = set()
    n_claims = sum(map(len, claims))
    if n_claims and len(set(chain.from_iterable(claims))) != n_claims:
        # Some partition has several claimants: apply the generation rule to those only.
        contested = {g for g, c in Counter(chain.from_iterable(claims)).items() if c > 1}
        best: dict[int, tuple[int, int]] = {}  # partition -> (generation, winner or _NO_OWNER)
        for r, (m, gs) in enumerate(zip(members, claims, strict=True)):
            gen = effective_generation(m)
            for g in gs:
                if g in contested:
                    prev = best.get(g)
                    if prev is None or gen > prev[0]:
                        best[g] = (gen, r)
                    elif gen == prev[0]:
                        best[g] = (gen, _NO_OWNER)
        tied = {g for g, (_, w) in best.items() if w == _NO_OWNER}
        valid = [
            [g for g in gs if g not in contested or best[g][1] == r] for r, gs in enumerate(claims)
        ]
    racks = None
    if sticky_rack_aware(spec):
        racks = RackView([member_rack(m) for m in members], group_partition_racks(spec, topics))
    gens = [effective_generation(m) for m in members]
    return _Group(members, topics, sizes, offsets, total, claims, valid, tied, gens, racks)


_last_planned: LastSeen[tuple[_Group, list[list[int]]]] = LastSeen()


def _planned(spec: GroupSpec) -> tuple[_Group, list[list[int]]]:
    """The encoded group and its sticky target, once per spec: `sticky` and the first round
    of `cooperative-sticky` compute the same target from the same spec, so a group planned
    under both pays for it once. Neither result is modified by its users.

    Inside a `assignors.strategies.shared.sharing` scope (a group's what-if replays, which
    build a new spec per rebalance and run `sticky` and `cooperative-sticky` one after the
    other) the result is also found by content (`_content_key`)."""
    hit = _last_planned.get(spec)
    if hit is not None:
        return hit
    scope = shared.current()
    key = _content_key(spec) if scope is not None else None
    if scope is not None:
        found = scope.get(key)
        if found is not None:
            return _last_planned.put(spec, None, cast(tuple[_Group, list[list[int]]], found))
    grp = _encode(spec)
    out = (grp, _target(grp))
    if scope is not None:
        scope.put(key, out, 2 * grp.total + 1)
    return _last_planned.put(spec, None, out)


def _content_key(spec: GroupSpec) -> tuple[object, ...]:
    """Everything `_encode` and `_target` read of a spec: each member's id, subscription,
    owned partitions and rack (in the spec's order), the subscribed topics' metadata, and
    the members' generations by rank. Generations are only ever compared with each other
    (the generation rule, the general path's previous owners; a cooperative round after the
    first gives every member one new generation), so two specs whose generations are in the
    same order get the same target: `sticky` runs one rebalance per generation where
    `cooperative-sticky` may run two."""
    gens = [effective_generation(m) for m in spec.members]
    rank = {g: i for i, g in enumerate(sorted(set(gens)))}
    members = tuple(
        (m.member_id, m.topics, m.owned, m.rack, rank[g])
        for m, g in zip(spec.members, gens, strict=True)
    )
    topics = spec.topics
    return members, tuple(topics[t] for t in spec.subscribed_topics())


def _target(grp: _Group) -> list[list[int]]:
    """The sticky target for every member (index = rank), in Kafka's list order."""
    members = grp.members
    if not members:
        return []
    first = members[0].topics
    if all(m.topics == first for m in members):
        return _constrained(grp)
    return _general(grp)


def _constrained(grp: _Group) -> list[list[int]]:
    # Rack-aware: owned partitions on other racks are not kept (KIP-881), so a partition may
    # move purely for locality; balance still comes first.
    owned = [grp.on_rack(r, gs) for r, gs in enumerate(grp.valid)]
    if any(len(o) > 1 for o in owned):
        # Kafka keeps owned partitions in (partition number, topic) order (KAFKA-16277), so a
        # member cut to its quota does not keep whole topics. key[g] = p * topics + topic.
        nt = len(grp.topics)
        key: list[int] = []
        for t, size in enumerate(grp.sizes):
            key.extend(range(t, t + size * nt, nt))
        owned = [sorted(o, key=key.__getitem__) if len(o) > 1 else o for o in owned]
    return assign_constrained(grp.total, owned, grp.racks)


def _general(grp: _Group) -> list[list[int]]:
    index = {t: i for i, t in enumerate(grp.topics)}
    subs = [sorted(index[t] for t in m.topics if t in index) for m in grp.members]
    gtopic = grp.gtopic()
    owned: list[list[int]] = []
    revocation_required = False
    for r, (valid, topics) in enumerate(zip(grp.valid, subs, strict=True)):
        subscribed = set(topics)
        kept = grp.on_rack(r, [g for g in valid if gtopic[g] in subscribed])
        revocation_required |= len(kept) != len(valid)
        owned.append(kept)

    # Claims of members below the group's max generation name a "previous owner" that the
    # balancing step may hand the partition back to (the general path's first step; ties: first
    # in id order).
    max_gen = max(grp.gens, default=NO_GENERATION)
    prev: dict[int, tuple[int, int]] = {}
    for r, (gen, gs) in enumerate(zip(grp.gens, grp.claims, strict=True)):
        if gen >= max_gen:
            continue
        subscribed = set(subs[r])
        for g in gs:
            if gtopic[g] in subscribed:
                old = prev.get(g)
                if old is None or gen > old[1]:
                    prev[g] = (r, gen)
    prev_owner = {g: r for g, (r, _) in prev.items()}
    return assign_general(
        grp.total, grp.sizes, subs, owned, prev_owner, revocation_required, grp.racks
    )


def _withhold(grp: _Group, target: list[list[int]]) -> list[list[int]]:
    """Cooperative round: drop partitions another live member must revoke first (KIP-429): those
    validly owned by another member, and those tied between claimants. A member that loses
    nothing keeps its target list itself (`_settled` tests that by identity)."""
    valid, tied = grp.valid, grp.tied
    if not tied and not any(valid):
        return target
    owner = [_NO_OWNER] * grp.total
    for r, gs in enumerate(valid):
        for g in gs:
            owner[g] = r
    for g in tied:
        owner[g] = _TIED
    out: list[list[int]] = []
    for r, lst in enumerate(target):
        kept = [g for g in lst if owner[g] == r or owner[g] == _NO_OWNER]
        out.append(lst if len(kept) == len(lst) else kept)
    return out


def _same(a: Mapping[K, Sequence[H]], b: Mapping[K, Sequence[H]]) -> bool:
    """The same members holding the same items (lists compared as sets)."""
    return a.keys() == b.keys() and all(set(a[m]) == set(b[m]) for m in a)


def _settled(grp: _Group, target: list[list[int]], out: list[list[int]]) -> bool:
    """Whether the round after the one that gave `out` provably returns it unchanged.

    That holds when this round withheld nothing (it gave the whole target) on the
    constrained path, and (rack-aware groups) every member's target is on its rack: there
    every member then owns a balanced share of the same topics, the check round drops none
    of it as off-rack, and `assign_constrained` keeps every owned partition of a balanced
    assignment, so replaying the check round would only confirm it.
    """
    return (
        all(a is b for a, b in zip(out, target, strict=True))
        and len({m.topics for m in grp.members}) <= 1
        and (
            grp.racks is None
            or all(len(grp.on_rack(r, gs)) == len(gs) for r, gs in enumerate(target))
        )
    )


def _received_rounds(grp: _Group, history: list[list[list[int]]]) -> dict[TopicPartition, int]:
    """`assignors.ownership.received_rounds` of int-encoded rounds: int order is (topic in
    Java order, partition) order already."""
    arrived = arrivals(history)
    if not arrived:
        return {}
    table = grp.table()
    return {table[g]: arrived[g] for g in sorted(arrived)}


@mypyc_attr(native_class=False)  # an ordinary class: tests and plugins may patch it
class StickyAssignor:
    """Kafka's eager `StickyAssignor`: the balanced, sticky target in a single round."""

    name: ClassVar[str] = "sticky"
    java_class: ClassVar[str] = "org.apache.kafka.clients.consumer.StickyAssignor"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = EAGER_ONLY
    stateless: ClassVar[bool] = False
    balances_load: ClassVar[bool] = False

    def assign(self, spec: GroupSpec) -> Assignment:
        grp, target = _planned(spec)
        return grp.decode(target)

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        """Eager: every member revokes everything and gets the target in one round."""
        return Rebalance(self.assign(spec))


@mypyc_attr(native_class=False)  # an ordinary class: tests and plugins may patch it
class CooperativeStickyAssignor:
    """Kafka's `CooperativeStickyAssignor`: the sticky target, reached incrementally.

    `assign` is one JoinGroup round (partitions that must be revoked first are withheld);
    `rebalance` replays rounds until the assignment stops changing. Every round after the
    first runs at the group's next generation (max reported + 1) with each member owning what
    the previous round gave it. `rounds` is the round that produced the final assignment.
    """

    name: ClassVar[str] = "cooperative-sticky"
    java_class: ClassVar[str] = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = EAGER_AND_COOPERATIVE
    stateless: ClassVar[bool] = False
    balances_load: ClassVar[bool] = False

    def assign(self, spec: GroupSpec) -> Assignment:
        grp, target = _planned(spec)
        return grp.decode(_withhold(grp, target))

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        """Rounds replayed on the int-encoded group (`_cooperative_rounds`); the last round is
        decoded once."""
        grp, target = _planned(spec)
        grp, history = _cooperative_rounds(grp, target)
        return Rebalance(grp.decode(history[-1]), _received_rounds(grp, history), len(history))


def _cooperative_rounds(
    grp: _Group, target: list[list[int]]
) -> tuple[_Group, list[list[list[int]]]]:
    """The cooperative rounds from `target` (the first round's sticky target): a round's
    output is the next one's owned partitions (`_Group.next_round`). A round that returns the
    previous one's assignment is not counted, and none is run after a round that provably
    settles the group (`_settled`). Returns the group as the last round saw it and every
    round's output."""
    out = _withhold(grp, target)
    history = [out]
    generation = max(grp.gens, default=NO_GENERATION)
    settled = _settled(grp, target, out)
    while len(history) < MAX_ROUNDS and not settled:
        generation += 1
        last = history[-1]
        grp = grp.next_round(last, generation)
        target = _target(grp)
        out = _withhold(grp, target)
        settled = _settled(grp, target, out)
        if _same(dict(enumerate(out)), dict(enumerate(last))):
            break
        history.append(out)
    return grp, history


_NUMBERED = "numbered"
"""Marks `_numbered_target`'s keys in a shared scope (apart from `_content_key`'s)."""


def _numbered_target(grp: _Group) -> list[list[int]]:
    """`_target(grp)` of a numbered group. `sticky` and the first round of
    `cooperative-sticky` replay the same targets while their groups stay alike, so inside a
    `shared.sharing` scope (one group's what-if) a target is kept with what the members
    owned, under the members present and the topics' sizes, and found by comparing owned
    lists (cheaper than hashing them)."""
    scope = shared.current()
    if scope is None:
        return _target(grp)
    key = (_NUMBERED, tuple(grp.sizes), tuple([m.member_id for m in grp.members]))
    seen = cast(list[tuple[list[list[int]], list[list[int]]]] | None, scope.get(key))
    owned = grp.valid
    if seen is not None:
        for before, target in seen:
            if before == owned:
                return target
    target = _target(grp)
    if scope.reserve(2 * grp.total + 1):
        if seen is None:
            scope.put(key, [(owned, target)], 0)
        else:
            seen.append((owned, target))
    return target


def rebalance_numbered(
    members: list[Member],
    topics: list[str],
    sizes: list[int],
    owned: list[list[int]],
    cooperative: bool,
) -> tuple[list[list[int]], int]:
    """One `sticky` (or, `cooperative`, `cooperative-sticky`) rebalance of a group given in
    partition numbers: each member's final partitions and the rounds.

    `members` in Java order of member id, none with a rack; `topics` the subscribed ones that
    exist, in Java order, topic i having `sizes[i]` partitions numbered from the sum of the
    sizes before it; `owned[r]` member r's partitions, of topics it subscribes to, disjoint
    and at one generation. What `rebalance` computes for that group, without its partition
    names (a what-if replay runs many rebalances of one group: `assignors.whatif.numbered`).
    Generations only settle double claims and name previous owners below the group's
    generation, which such a group has neither of.
    """
    offsets: list[int] = []
    total = 0
    for size in sizes:
        offsets.append(total)
        total += size
    grp = _Group(members, topics, sizes, offsets, total, owned, owned, set(), [0] * len(owned))
    target = _numbered_target(grp)
    if not cooperative:
        return target, 1
    _, history = _cooperative_rounds(grp, target)
    return history[-1], len(history)
