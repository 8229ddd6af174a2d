"""The sticky assignors' general path: members subscribe to different topics (§4.4).

Works on the int-encoded view prepared by `assignors.sticky`: members 0..N-1 in Java string order
of their ids, partitions 0..P-1 in (topic, partition) order, topics 0..T-1 in Java string order.

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

Where Kafka depends on hash order (§1.3) we use a deterministic one:
* previous owners of equal generation: the member first in id order wins;
* when a move would undo an earlier move of the same topic, the partition that moved back is
  the earliest recorded of those that made the reverse move (Java: first in a HashSet).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence


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


def assign_general(
    total: int,
    topic_sizes: Sequence[int],
    subs: Sequence[Sequence[int]],
    owned: Sequence[Sequence[int]],
    prev_owner: dict[int, int],
    revocation_required: bool,
) -> list[list[int]]:
    """Per member (index = rank): its kept partitions then its new ones, in Kafka order.

    `topic_sizes[t]` partitions of topic t (in scope: subscribed by someone and existing);
    `subs[r]` the topics member r subscribes to; `owned[r]` its valid owned partitions it still
    subscribes to, in reported order; `prev_owner[g]` the lower-generation member that claimed
    g (only members subscribed to g's topic); `revocation_required` whether some member
    reported partitions of a topic it no longer subscribes to.
    """
    n = len(subs)
    offsets: list[int] = []
    gtopic: list[int] = []
    for t, count in enumerate(topic_sizes):
        offsets.append(len(gtopic))
        gtopic.extend([t] * count)

    consumers: list[list[int]] = [[] for _ in topic_sizes]
    for r, topics in enumerate(subs):
        for t in topics:
            consumers[t].append(r)

    # Topics with the same subscriber set form a class (one heap, one balance check).
    class_of_key: dict[tuple[int, ...], int] = {}
    tclass: list[int] = []
    class_members: list[list[int]] = []
    for t in range(len(topic_sizes)):
        key = tuple(consumers[t])
        k = class_of_key.get(key)
        if k is None:
            k = class_of_key[key] = len(class_members)
            class_members.append(consumers[t])
        tclass.append(k)
    member_classes: list[list[int]] = [[] for _ in range(n)]
    for k, ms in enumerate(class_members):
        for r in ms:
            member_classes[r].append(k)
    reassignable_class = [len(ms) >= 2 for ms in class_members]

    lists: list[dict[int, None]] = [dict.fromkeys(o) for o in owned]
    size = [len(x) for x in lists]
    owner = [-1] * total
    # held[k][r]: how many partitions of class k member r holds (reassignable classes only).
    held: list[dict[int, int]] = [{} for _ in class_members]
    for r, lst in enumerate(lists):
        for g in lst:
            owner[g] = r
            k = tclass[gtopic[g]]
            if reassignable_class[k]:
                hk = held[k]
                hk[r] = hk.get(r, 0) + 1

    # Kafka's partition order: topics by (number of subscribers, name), partitions ascending.
    topic_order = sorted(range(len(topic_sizes)), key=lambda t: (len(consumers[t]), t))
    sorted_partitions: list[int] = []
    for t in topic_order:
        sorted_partitions.extend(range(offsets[t], offsets[t] + topic_sizes[t]))
    unassigned = [g for g in sorted_partitions if owner[g] < 0]

    initializing = max(size, default=0) == 0

    # Heap keys encode (size, rank) as size * n + rank, so ints compare like the tuples.
    heaps: list[list[int]] = [sorted(size[r] * n + r for r in ms) for ms in class_members]

    def least_loaded(k: int) -> int:
        """The (size, rank) minimum of class k, as a heap key; repairs stale entries lazily.

        An entry is current iff its size equals the member's size. Sizes that grew are fixed
        when they surface; every decrease pushes a fresh entry, so an entry above the current
        size is a leftover and can be dropped.
        """
        heap = heaps[k]
        while True:
            key = heap[0]
            s, r = divmod(key, n)
            cs = size[r]
            if s == cs:
                return key
            if s < cs:
                heapq.heapreplace(heap, cs * n + r)
            else:
                heapq.heappop(heap)

    # Initial placement: every free partition to its least-loaded subscriber.
    # (Rack-aware placement, §4.4 step 4, would run a rack-matching pass first.)
    for g in unassigned:
        t = gtopic[g]
        k = tclass[t]
        r = least_loaded(k) % n
        lists[r][g] = None
        size[r] += 1
        owner[g] = r
        if reassignable_class[k]:
            hk = held[k]
            hk[r] = hk.get(r, 0) + 1

    # Freeze: single-subscriber topics and members that cannot change.
    reassignable = [g for g in sorted_partitions if reassignable_class[tclass[gtopic[g]]]]
    unassigned = [g for g in unassigned if reassignable_class[tclass[gtopic[g]]]]
    active = [False] * n
    for r in range(n):
        max_size = sum(topic_sizes[t] for t in subs[r])
        if size[r] < max_size or any(
            reassignable_class[k] and held[k].get(r) for k in member_classes[r]
        ):
            active[r] = True
    active_classes = [k for k, ok in enumerate(reassignable_class) if ok]
    # Members of reassignable classes are always active (they hold partitions of that class
    # or miss some), so the heaps need no filtering; rebuild them with current sizes.
    for k in active_classes:
        heaps[k] = sorted(size[r] * n + r for r in class_members[k])

    # Global min/max over active members (Kafka's first/last of its TreeSet).
    hist: dict[int, int] = {}
    for r in range(n):
        if active[r]:
            hist[size[r]] = hist.get(size[r], 0) + 1
    lo = min(hist, default=0)
    hi = max(hist, default=0)

    # Per reassignable class, a lazy max-heap of its holders (members holding one of its
    # partitions), keyed -(size * n + rank). Increases push a fresh entry; decreases and lost
    # holdings are repaired when the entry surfaces (the mirror image of `least_loaded`).
    top_heaps: list[list[int]] = [[] for _ in class_members]
    for k in active_classes:
        top_heaps[k] = [-(size[r] * n + r) for r, c in held[k].items() if c]
        heapq.heapify(top_heaps[k])

    def most_loaded_holder(k: int) -> int:
        """The largest size among members holding a partition of class k (-1 if none)."""
        heap = top_heaps[k]
        hk = held[k]
        while heap:
            s, r = divmod(-heap[0], n)
            cs = size[r]
            if s == cs and hk.get(r):
                return s
            if s > cs and hk.get(r):
                heapq.heapreplace(heap, -(cs * n + r))
            else:
                heapq.heappop(heap)
        return -1

    balanced_cache: list[bool | None] = [None]

    def is_balanced() -> bool:
        """Kafka's isBalanced: sizes within 1, or no partition could move to a member 2 smaller.

        Per class: unbalanced iff its largest holder has >= 2 more partitions than its
        least-loaded subscriber. Cached until the next move.
        """
        cached = balanced_cache[0]
        if cached is not None:
            return cached
        result = True
        if hi - lo > 1:
            for k in active_classes:
                if most_loaded_holder(k) >= least_loaded(k) // n + 2:
                    result = False
                    break
        balanced_cache[0] = result
        return result

    movements = _Movements()
    saved_lists: dict[int, dict[int, None]] = {}  # copy-on-first-move snapshot for the revert

    def shift(r: int, delta: int) -> None:
        nonlocal lo, hi
        s = size[r]
        hist[s] -= 1
        ns = s + delta
        hist[ns] = hist.get(ns, 0) + 1
        size[r] = ns
        if delta > 0:
            if s == hi:
                hi = ns
            if s == lo and not hist[s]:
                lo = ns
            key = -(ns * n + r)
            for k in member_classes[r]:
                if reassignable_class[k]:
                    heapq.heappush(top_heaps[k], key)
        else:
            if s == lo:
                lo = ns
            if s == hi and not hist[s]:
                hi = ns
            key = ns * n + r
            for k in member_classes[r]:
                if reassignable_class[k]:
                    heapq.heappush(heaps[k], key)

    def move(g: int, dst: int) -> None:
        src = owner[g]
        t = gtopic[g]
        g = movements.actual_partition(g, t, src, dst)
        src = owner[g]
        t = gtopic[g]
        movements.record(g, t, src, dst)
        for r in (src, dst):
            if r not in saved_lists:
                saved_lists[r] = dict(lists[r])
        del lists[src][g]
        lists[dst][g] = None
        owner[g] = dst
        hk = held[tclass[t]]
        hk[src] -= 1
        hk[dst] = hk.get(dst, 0) + 1
        shift(dst, 1)  # after the holding changed, so dst's fresh max-heap entry counts
        shift(src, -1)
        balanced_cache[0] = None

    def perform(partitions: list[int]) -> bool:
        performed = False
        while True:
            modified = False
            for g in partitions:
                if is_balanced():
                    break
                c = owner[g]
                o = prev_owner.get(g)
                if o is not None and active[o] and size[c] > size[o] + 1:
                    move(g, o)
                    performed = modified = True
                    continue
                key = least_loaded(tclass[gtopic[g]])
                if size[c] > key // n + 1:
                    move(g, key % n)
                    performed = modified = True
            if not modified:
                return performed

    if not revocation_required:
        perform(unassigned)
    performed = perform(reassignable)

    if not initializing and performed:
        now = [size[r] for r in range(n) if active[r]]
        before = list(now)
        if saved_lists:
            idx = {r: i for i, r in enumerate(x for x in range(n) if active[x])}
            for r, saved in saved_lists.items():
                before[idx[r]] = len(saved)
        if _balance_score(now) >= _balance_score(before):
            for r, saved in saved_lists.items():
                lists[r] = saved
    return [list(lst) for lst in lists]


def _balance_score(sizes: list[int]) -> int:
    """Sum over all member pairs of |size difference| (Kafka's getBalanceScore)."""
    ordered = sorted(sizes)
    m = len(ordered)
    return sum(s * (2 * i - m + 1) for i, s in enumerate(ordered))
