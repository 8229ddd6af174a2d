"""The sticky assignors' constrained path: every member subscribes to the same topics
(Java's `AbstractStickyAssignor.ConstrainedAssignmentBuilder`).

Works on an int-encoded view prepared by `assignors.strategies.sticky.assignor`: members are
numbered 0..N-1 in Java string order of their member ids, partitions 0..P-1 in (topic in Java
string order, partition number) order. Kafka iterates its owned-partitions HashMap in step 1;
we iterate members in member-id order instead, so when more members own >= maxQuota partitions than
`P mod N` allows, the members with the smallest ids keep maxQuota (Java's pick depends on hash
order; the number of partitions retained is the same either way).

With quotas minQ = P // N and maxQ = ceil(P / N), of which exactly E = P mod N members end at
maxQ, Kafka's `ConstrainedAssignmentBuilder` runs:

1. every member keeps its valid owned partitions, sorted by (partition number, topic), up to
   its quota; the surplus becomes free (rack-aware: owned partitions on other racks are not
   kept, `sticky` drops them before calling);
2. rack-aware only (KIP-881, `assignRackAwareRoundRobin`): the free partitions, stably sorted
   by how many members sit on their racks (scarcest first), go round robin to a member on
   their rack below minQ (from a moving index), else to the first such member at exactly
   minQ while fewer than E members hold maxQ; partitions with no such member stay free;
3. the free partitions, in that order, are dealt round robin over the members still below
   minQ (an iterator that keeps its position), then one each to members at exactly minQ while
   fewer than E members hold maxQ.

A fresh group is therefore the global round robin of roundrobin, by member id.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from itertools import compress

from assignors.racks import RackView


class _Builder:
    """One constrained assignment: quotas, the two waiting lists, and the steps above."""

    def __init__(self, total: int, n: int) -> None:
        self.min_q, self.extra = divmod(total, n)
        self.max_q = self.min_q + (1 if self.extra else 0)
        self.over = 0  # members holding maxQ, which only `extra` of them may
        self.assignment: list[list[int]] = []
        self.under: list[int] = []  # below minQ, in member order
        self.exactly: deque[int] = deque()  # at exactly minQ and still eligible for one more
        self.free = bytearray(b"\x01") * total

    def keep_owned(self, owned_sorted: Sequence[Sequence[int]]) -> None:
        """Step 1: keep owned partitions up to the quota."""
        min_q, max_q = self.min_q, self.max_q
        for r, owned in enumerate(owned_sorted):
            k = len(owned)
            if k < min_q:
                keep = list(owned)
                self.under.append(r)
            elif k >= max_q and self.over < self.extra:
                keep = list(owned[:max_q])
                self._reached_max()
            else:
                keep = list(owned[:min_q])
                if self.over < self.extra:
                    self.exactly.append(r)
            for g in keep:
                self.free[g] = 0
            self.assignment.append(keep)

    def _reached_max(self) -> None:
        self.over += 1
        if self.over == self.extra:
            self.exactly.clear()

    def rack_round_robin(self, unassigned: list[int], racks: RackView) -> list[int]:
        """Step 2 (rack-aware): returns the partitions still free, in order."""
        left: list[int] = []
        start = 0
        for g in unassigned:
            r, start = self._rack_under(g, racks, start)
            if r < 0:
                r = self._rack_exactly(g, racks)
            if r < 0:
                left.append(g)
            else:
                self.assignment[r].append(g)
        return left

    def _rack_under(self, g: int, racks: RackView, start: int) -> tuple[int, int]:
        under = self.under
        index = racks.next_on_rack(g, under, start)
        if index < 0:
            return -1, start
        r = under[index]
        count = len(self.assignment[r]) + 1
        if count >= self.min_q:
            del under[index]
            if count < self.max_q and self.over < self.extra:
                self.exactly.append(r)
        else:
            index += 1
        return r, (index % len(under) if under else 0)

    def _rack_exactly(self, g: int, racks: RackView) -> int:
        exactly = self.exactly
        if not exactly:
            return -1
        index = racks.next_on_rack(g, exactly, 0)
        if index < 0:
            return -1
        r = exactly[index]
        if len(self.assignment[r]) + 1 == self.max_q:
            del exactly[index]
            self._reached_max()
        return r

    def round_robin(self, unassigned: Sequence[int]) -> None:
        """Step 3. `cur[pos:]` is the part of the under-minQ list the iterator has not
        reached; `nxt` collects the members it passed that are still under minQ, so when it
        runs off the end the under-minQ list is exactly `nxt` (Java restarts the iterator)."""
        cur, pos = self.under, 0
        nxt: list[int] = []
        exactly = self.exactly
        for g in unassigned:
            from_under = True
            if pos < len(cur):
                r = cur[pos]
                pos += 1
            elif nxt:
                cur, pos, nxt = nxt, 1, []
                r = cur[0]
            elif exactly:
                r = exactly.popleft()
                from_under = False
            else:  # pragma: no cover - the quotas add up to `total`
                raise AssertionError("no member left below its quota")
            lst = self.assignment[r]
            lst.append(g)
            count = len(lst)
            if count == self.min_q:
                exactly.append(r)  # leaves the under-minQ list
            elif from_under:
                nxt.append(r)
            if count == self.max_q and count != self.min_q:
                self.over += 1


def assign_constrained(
    total: int, owned_sorted: Sequence[Sequence[int]], racks: RackView | None = None
) -> list[list[int]]:
    """Per member (index = rank), its kept owned partitions then its new ones, in Kafka order.

    `owned_sorted[r]` are member r's valid owned partitions (int ids), already sorted by
    (partition number, topic), with no partition appearing twice across members (and, when
    `racks` is given, none on another rack than the member's).
    """
    n = len(owned_sorted)
    if n == 0:
        return []
    b = _Builder(total, n)
    b.keep_owned(owned_sorted)
    unassigned = list(compress(range(total), b.free))
    if racks is not None:
        key = racks.consumers_on()
        unassigned.sort(key=key.__getitem__)
        unassigned = b.rack_round_robin(unassigned, racks)
    b.round_robin(unassigned)
    return b.assignment
