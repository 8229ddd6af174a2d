"""The sticky assignors' general path: members subscribe to different topics
(Java's `AbstractStickyAssignor.GeneralAssignmentBuilder`).

Works on the int-encoded view prepared by `assignors.strategies.sticky.assignor`: members
0..N-1 in Java string order of their ids, partitions 0..P-1 in (topic, partition) order,
topics 0..T-1 in Java string order.

Kafka keeps every valid owned partition the member still subscribes to, places the free ones
one by one on the least-loaded subscriber (by (size, member id)), then moves partitions from
members with at least two more partitions than some other subscriber, preferring to hand a
partition back to its lower-generation previous owner. It keeps the moves only if the pairwise
balance score strictly improves (or the group was empty).

Kafka scans a TreeSet of all members for every "least-loaded subscriber" query and rebuilds a
partition->owner map for every balance check. Here topics with the same subscriber set share a
class; each class keeps a lazy min-heap of its subscribers by (size, rank) and a lazy max-heap of
its holders by size, and the balance check works per class (a class is unbalanced iff some
member holding one of its partitions has at least two more partitions than its least-loaded
subscriber), cached until the next move. The result is identical to Kafka's scans.

Where Kafka depends on Java's HashMap iteration order we use a deterministic one:
* previous owners of equal generation: the member first in id order wins;
* when a move would undo an earlier move of the same topic, the partition that moved back is
  the earliest recorded of those that made the reverse move (Java: first in a HashSet).

Where Kafka's balancing loop never ends (a pass state repeats, see `_GeneralBuilder.perform`)
we stop it at the first repeat and finish with moves that each improve the balance.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from assignors.racks import RackView


# Heap keys are plain ints ordered as the tuple (size, rank): one int per push, no tuple to
# build and compare. Valid while 0 <= rank < n (tests/assignors/strategies/test_packed_keys.py).
def _pack_key(size: int, rank: int, n: int) -> int:
    return size * n + rank


def _unpack_key(key: int, n: int) -> tuple[int, int]:
    """(size, rank) of a key made by `_pack_key`."""
    return divmod(key, n)


class _Movements:
    """Kafka's PartitionMovements: per topic, which partitions moved between which members."""

    def __init__(self) -> None:
        self.pair: dict[int, tuple[int, int]] = {}  # partition -> (first source, current dest)
        self.by_topic: dict[int, dict[tuple[int, int], dict[int, None]]] = {}

    def _remove(self, g: int, topic: int) -> tuple[int, int]:
        pair = self.pair.pop(g)
        per_topic = self.by_topic[topic]
        moved = per_topic[pair]
        del moved[g]
        if not moved:
            del per_topic[pair]
            if not per_topic:
                del self.by_topic[topic]
        return pair

    def _add(self, g: int, topic: int, pair: tuple[int, int]) -> None:
        self.pair[g] = pair
        self.by_topic.setdefault(topic, {}).setdefault(pair, {})[g] = None

    def record(self, g: int, topic: int, src: int, dst: int) -> None:
        if g in self.pair:
            first_src, _ = self._remove(g, topic)
            if first_src != dst:  # a partition moving back home leaves no record
                self._add(g, topic, (first_src, dst))
        else:
            self._add(g, topic, (src, dst))

    def actual_partition(self, g: int, topic: int, src: int, dst: int) -> int:
        """The partition to move instead of g so that no topic moves back and forth."""
        per_topic = self.by_topic.get(topic)
        if per_topic is None:
            return g
        if g in self.pair:
            src = self.pair[g][0]
        reverse = per_topic.get((dst, src))
        if not reverse:
            return g
        return next(iter(reverse))


class _GeneralBuilder:
    """Kafka's `GeneralAssignmentBuilder`, step by step (see `assign_general` for the recipe).

    Members are ranks 0..N-1, partitions ints 0..P-1, topics 0..T-1. Topics with the same
    subscriber set form a class: one heap of its subscribers by (size, rank), one heap of its
    holders by size, one balance check. Heap keys encode (size, rank) as size * N + rank, so
    ints compare like the tuples.
    """

    def __init__(
        self,
        total: int,
        topic_sizes: Sequence[int],
        subs: Sequence[Sequence[int]],
        owned: Sequence[Sequence[int]],
        prev_owner: dict[int, int],
        revocation_required: bool,
        racks: RackView | None = None,
    ) -> None:
        self.n = n = len(subs)
        self.racks = racks
        self.total = total
        self.topic_sizes = topic_sizes
        self.subs = subs
        self.prev_owner = prev_owner
        self.revocation_required = revocation_required
        self.offsets: list[int] = []
        self.gtopic: list[int] = []
        for t, count in enumerate(topic_sizes):
            self.offsets.append(len(self.gtopic))
            self.gtopic.extend([t] * count)
        self.consumers: list[list[int]] = [[] for _ in topic_sizes]
        for r, topics in enumerate(subs):
            for t in topics:
                self.consumers[t].append(r)
        self._build_classes()
        self.lists: list[dict[int, None]] = [dict.fromkeys(o) for o in owned]
        self.size = [len(x) for x in self.lists]
        self.owner = [-1] * total
        # held[k][r]: how many partitions of class k member r holds (reassignable classes only).
        self.held: list[dict[int, int]] = [{} for _ in self.class_members]
        self.active = [False] * n
        self.active_classes: list[int] = []
        self.top_heaps: list[list[int]] = [[] for _ in self.class_members]
        self.hist: dict[int, int] = {}
        self.lo = self.hi = 0
        self.balanced_cache: bool | None = None
        self.movements = _Movements()
        self.saved_lists: dict[int, dict[int, None]] = {}  # copy-on-first-move, for the revert
        # How the balancing loop went: passes, moves, and whether it stopped on a cycle.
        self.passes = self.moves = 0
        self.cycled = False

    def _build_classes(self) -> None:
        """Topics with the same subscriber set form a class (one heap, one balance check)."""
        class_of_key: dict[tuple[int, ...], int] = {}
        self.tclass: list[int] = []
        self.class_members: list[list[int]] = []
        for subscribers in self.consumers:
            key = tuple(subscribers)
            k = class_of_key.get(key)
            if k is None:
                k = class_of_key[key] = len(self.class_members)
                self.class_members.append(subscribers)
            self.tclass.append(k)
        self.member_classes: list[list[int]] = [[] for _ in range(self.n)]
        for k, ms in enumerate(self.class_members):
            for r in ms:
                self.member_classes[r].append(k)
        self.reassignable_class = [len(ms) >= 2 for ms in self.class_members]

    def build(self) -> list[list[int]]:
        """The recipe, as Kafka's `GeneralAssignmentBuilder.build` and `balance` run it."""
        self.keep_owned()
        partitions = self.sorted_partitions()
        unassigned = [g for g in partitions if self.owner[g] < 0]
        initializing = max(self.size, default=0) == 0
        self.place(unassigned)
        self.freeze()
        self.balance(partitions, unassigned, initializing)
        return [list(lst) for lst in self.lists]

    # ---------------------------------------------------------------- the recipe's steps

    def keep_owned(self) -> None:
        """Step 2: every valid owned partition stays with its owner for now."""
        owner, held, gtopic, tclass = self.owner, self.held, self.gtopic, self.tclass
        for r, lst in enumerate(self.lists):
            for g in lst:
                owner[g] = r
                k = tclass[gtopic[g]]
                if self.reassignable_class[k]:
                    held[k][r] = held[k].get(r, 0) + 1

    def sorted_partitions(self) -> list[int]:
        """Step 3: topics by (number of subscribers, name), partitions ascending."""
        consumers, offsets, sizes = self.consumers, self.offsets, self.topic_sizes
        order = sorted(range(len(sizes)), key=lambda t: (len(consumers[t]), t))
        out: list[int] = []
        for t in order:
            out.extend(range(offsets[t], offsets[t] + sizes[t]))
        return out

    def place(self, unassigned: Sequence[int]) -> None:
        """Step 4: every free partition to its least-loaded subscriber, by (size, rank)."""
        self.heaps: list[list[int]] = [
            sorted(_pack_key(self.size[r], r, self.n) for r in ms) for ms in self.class_members
        ]
        if self.racks is not None:
            unassigned = self._place_on_racks(unassigned, self.racks)
        # The hot loop of a fresh group: `_give` inlined.
        n, gtopic, tclass, lists, size, owner = (
            self.n,
            self.gtopic,
            self.tclass,
            self.lists,
            self.size,
            self.owner,
        )
        least_loaded, reassignable, held = self.least_loaded, self.reassignable_class, self.held
        for g in unassigned:
            k = tclass[gtopic[g]]
            r = _unpack_key(least_loaded(k), n)[1]
            lists[r][g] = None
            size[r] += 1
            owner[g] = r
            if reassignable[k]:
                hk = held[k]
                hk[r] = hk.get(r, 0) + 1

    def _place_on_racks(self, unassigned: Sequence[int], racks: RackView) -> list[int]:
        """Step 4, rack-aware first pass (KIP-881): each free partition to the least-loaded
        subscriber that is on one of its racks or has no rack; returns those left over.

        One lazy heap per (class, member rack): sizes only grow while placing, so a stale
        entry is simply refreshed when it surfaces.
        """
        n, size, gtopic, tclass = self.n, self.size, self.gtopic, self.tclass
        heaps: dict[tuple[int, str | None], list[int]] = {}
        for k, ms in enumerate(self.class_members):
            for r in ms:
                heaps.setdefault((k, racks.member[r]), []).append(_pack_key(size[r], r, n))
        for heap in heaps.values():
            heap.sort()
        left: list[int] = []
        for g in unassigned:
            k = tclass[gtopic[g]]
            best = -1
            for rack in (None, *racks.part[g]):
                candidates = heaps.get((k, rack))
                if candidates:
                    key = _fresh_top(candidates, size, n)
                    if best < 0 or key < best:
                        best = key
            if best < 0:
                left.append(g)
            else:
                self._give(g, _unpack_key(best, n)[1])
        return left

    def _give(self, g: int, r: int) -> None:
        self.lists[r][g] = None
        self.size[r] += 1
        self.owner[g] = r
        k = self.tclass[self.gtopic[g]]
        if self.reassignable_class[k]:
            hk = self.held[k]
            hk[r] = hk.get(r, 0) + 1

    def freeze(self) -> None:
        """Step 5: single-subscriber topics and members that cannot change sit out."""
        size, n = self.size, self.n
        for r in range(n):
            max_size = sum(self.topic_sizes[t] for t in self.subs[r])
            if size[r] < max_size or any(
                self.reassignable_class[k] and self.held[k].get(r) for k in self.member_classes[r]
            ):
                self.active[r] = True
        self.active_classes = [k for k, ok in enumerate(self.reassignable_class) if ok]
        # Members of reassignable classes are always active (they hold partitions of that
        # class or miss some), so the heaps need no filtering; rebuild them with current sizes.
        for k in self.active_classes:
            self.heaps[k] = sorted(_pack_key(size[r], r, n) for r in self.class_members[k])
            self.top_heaps[k] = [-_pack_key(size[r], r, n) for r, c in self.held[k].items() if c]
            heapq.heapify(self.top_heaps[k])
        # Global min/max over active members (Kafka's first/last of its TreeSet).
        for r in range(n):
            if self.active[r]:
                self.hist[size[r]] = self.hist.get(size[r], 0) + 1
        self.lo = min(self.hist, default=0)
        self.hi = max(self.hist, default=0)

    def balance(self, partitions: list[int], unassigned: list[int], initializing: bool) -> None:
        """Steps 6-9: reassign the new partitions (unless something must be revoked anyway),
        then all of them, until balanced; keep the moves only if the balance score improved
        (or the group started empty)."""
        ok, tclass, gtopic = self.reassignable_class, self.tclass, self.gtopic
        if not self.revocation_required:
            self.perform([g for g in unassigned if ok[tclass[gtopic[g]]]])
        performed = self.perform([g for g in partitions if ok[tclass[gtopic[g]]]])
        if performed and not initializing:
            self._revert_unless_better()

    def _revert_unless_better(self) -> None:
        active = [r for r in range(self.n) if self.active[r]]
        now = [self.size[r] for r in active]
        before = list(now)
        if self.saved_lists:
            idx = {r: i for i, r in enumerate(active)}
            for r, saved in self.saved_lists.items():
                before[idx[r]] = len(saved)
        if _balance_score(now) >= _balance_score(before):
            for r, saved in self.saved_lists.items():
                self.lists[r] = saved

    # ---------------------------------------------------------------- queries and moves

    def least_loaded(self, k: int) -> int:
        """The (size, rank) minimum of class k, as a heap key; repairs stale entries lazily.

        An entry is current iff its size equals the member's size. Sizes that grew are fixed
        when they surface; every decrease pushes a fresh entry, so an entry above the current
        size is a leftover and can be dropped.
        """
        heap, size, n = self.heaps[k], self.size, self.n
        while True:
            key = heap[0]
            s, r = _unpack_key(key, n)
            cs = size[r]
            if s == cs:
                return key
            if s < cs:
                heapq.heapreplace(heap, _pack_key(cs, r, n))
            else:
                heapq.heappop(heap)

    def most_loaded_holder(self, k: int) -> int:
        """The largest size among members holding a partition of class k (-1 if none).

        A lazy max-heap keyed -(size * N + rank): increases push a fresh entry; decreases
        and lost holdings are repaired when the entry surfaces.
        """
        heap, hk, size, n = self.top_heaps[k], self.held[k], self.size, self.n
        while heap:
            s, r = _unpack_key(-heap[0], n)
            cs = size[r]
            if s == cs and hk.get(r):
                return s
            if s > cs and hk.get(r):
                heapq.heapreplace(heap, -_pack_key(cs, r, n))
            else:
                heapq.heappop(heap)
        return -1

    def is_balanced(self) -> bool:
        """Kafka's isBalanced: sizes within 1, or no partition could move to a member 2 smaller.

        Per class: unbalanced iff its largest holder has >= 2 more partitions than its
        least-loaded subscriber. Cached until the next move.
        """
        cached = self.balanced_cache
        if cached is not None:
            return cached
        result = True
        if self.hi - self.lo > 1:
            n = self.n
            for k in self.active_classes:
                if self.most_loaded_holder(k) >= _unpack_key(self.least_loaded(k), n)[0] + 2:
                    result = False
                    break
        self.balanced_cache = result
        return result

    def perform(self, partitions: list[int]) -> bool:
        """Kafka's performReassignments: passes over `partitions` until a pass moves nothing,
        or until a pass ends in a state an earlier pass ended in.

        Kafka stops only on the first condition, and its movement records do not rule out a
        cycle: to move partition g from c to d, Kafka moves instead a partition of the same
        topic that once moved from d to g's first owner, from wherever it is now. That member
        may already be among the least loaded, so the move leaves c as large as before, and a
        later partition of the same pass moves straight back: every pass repeats the same
        moves and Kafka's loop never ends (its consumer group leader would hang). A pass
        depends only on who owns what and on the movement records (`_pass_state`), so a
        repeated state means exactly that, and every group on which Kafka's loop ends still
        gets Kafka's result. After a repeat the loop goes on with moves that all balance
        (`move`): each lowers the sum of squared member sizes by at least 2, so at most half
        that sum more moves, and the loop ends balanced, as Kafka's does where it ends.
        """
        performed = False
        n, owner, size, gtopic, tclass = self.n, self.owner, self.size, self.gtopic, self.tclass
        prev_owner, active = self.prev_owner, self.active
        seen: set[tuple[object, ...]] = set()
        while True:
            modified = False
            self.passes += 1
            for g in partitions:
                if self.is_balanced():
                    break
                c = owner[g]
                o = prev_owner.get(g)
                if o is not None and active[o] and size[c] > size[o] + 1:
                    self.move(g, o)
                    performed = modified = True
                    continue
                key = self.least_loaded(tclass[gtopic[g]])
                if size[c] > _unpack_key(key, n)[0] + 1:
                    self.move(g, _unpack_key(key, n)[1])
                    performed = modified = True
            if not modified:
                return performed
            # A balanced state ends the loop at the next pass, so only an unbalanced one can
            # be part of a cycle: the common case never builds a state.
            if not self.cycled and not self.is_balanced():
                state = self._pass_state()
                if state in seen:
                    self.cycled = True  # from now on `move` only makes moves that balance
                    seen.clear()
                else:
                    seen.add(state)

    def _pass_state(self) -> tuple[object, ...]:
        """What the next pass depends on: every partition's owner and the movement records,
        each record set in the order `actual_partition` picks from it."""
        moves = tuple(
            (t, pair, tuple(moved))
            for t, per_topic in sorted(self.movements.by_topic.items())
            for pair, moved in sorted(per_topic.items())
        )
        return tuple(self.owner), moves

    def move(self, g: int, dst: int) -> None:
        owner, gtopic = self.owner, self.gtopic
        h = self.movements.actual_partition(g, gtopic[g], owner[g], dst)
        # Kafka moves h instead of g; once the loop has cycled, only if that balances too.
        if not self.cycled or self.size[owner[h]] > self.size[dst] + 1:
            g = h
        src = owner[g]
        t = gtopic[g]
        self.movements.record(g, t, src, dst)
        self.moves += 1
        for r in (src, dst):
            if r not in self.saved_lists:
                self.saved_lists[r] = dict(self.lists[r])
        del self.lists[src][g]
        self.lists[dst][g] = None
        owner[g] = dst
        hk = self.held[self.tclass[t]]
        hk[src] -= 1
        hk[dst] = hk.get(dst, 0) + 1
        self._shift(dst, 1)  # after the holding changed, so dst's fresh max-heap entry counts
        self._shift(src, -1)
        self.balanced_cache = None

    def _shift(self, r: int, delta: int) -> None:
        """Member r's size changes by delta: histogram, global min/max, one heap per class."""
        hist = self.hist
        s = self.size[r]
        hist[s] -= 1
        ns = s + delta
        hist[ns] = hist.get(ns, 0) + 1
        self.size[r] = ns
        if delta > 0:
            if s == self.hi:
                self.hi = ns
            if s == self.lo and not hist[s]:
                self.lo = ns
            key, heaps = -_pack_key(ns, r, self.n), self.top_heaps
        else:
            if s == self.lo:
                self.lo = ns
            if s == self.hi and not hist[s]:
                self.hi = ns
            key, heaps = _pack_key(ns, r, self.n), self.heaps
        for k in self.member_classes[r]:
            if self.reassignable_class[k]:
                heapq.heappush(heaps[k], key)


def _fresh_top(heap: list[int], size: Sequence[int], n: int) -> int:
    """The smallest current (size, rank) key of a heap whose members' sizes only grew."""
    while True:
        key = heap[0]
        s, r = _unpack_key(key, n)
        if s == size[r]:
            return key
        heapq.heapreplace(heap, _pack_key(size[r], r, n))


def assign_general(
    total: int,
    topic_sizes: Sequence[int],
    subs: Sequence[Sequence[int]],
    owned: Sequence[Sequence[int]],
    prev_owner: dict[int, int],
    revocation_required: bool,
    racks: RackView | None = None,
) -> list[list[int]]:
    """Per member (index = rank): its kept partitions then its new ones, in Kafka order.

    `topic_sizes[t]` partitions of topic t (in scope: subscribed by someone and existing);
    `subs[r]` the topics member r subscribes to; `owned[r]` its valid owned partitions it still
    subscribes to (rack-aware: on its rack), in reported order; `prev_owner[g]` the
    lower-generation member that claimed g (only members subscribed to g's topic);
    `revocation_required` whether some member reported partitions it may not keep (a topic it
    no longer subscribes to, or another rack); `racks` when the group is rack-aware.
    """
    return _GeneralBuilder(
        total, topic_sizes, subs, owned, prev_owner, revocation_required, racks
    ).build()


def _balance_score(sizes: list[int]) -> int:
    """Sum over all member pairs of |size difference| (Kafka's getBalanceScore)."""
    ordered = sorted(sizes)
    m = len(ordered)
    return sum(s * (2 * i - m + 1) for i, s in enumerate(ordered))
