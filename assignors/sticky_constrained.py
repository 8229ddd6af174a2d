"""The sticky assignors' constrained path: every member subscribes to the same topics (§4.3).

Works on an int-encoded view prepared by `assignors.sticky`: members are numbered 0..N-1 in
Java string order of their member ids, partitions 0..P-1 in (topic in Java string order,
partition number) order. Kafka iterates its owned-partitions HashMap in step 1; we iterate
members in member-id order instead, so when more members own >= maxQuota partitions than
`P mod N` allows, the members with the smallest ids keep maxQuota (Java's pick depends on hash
order; the number of partitions retained is the same either way).

With quotas minQ = P // N and maxQ = ceil(P / N), of which exactly E = P mod N members end at
maxQ:

1. every member keeps its valid owned partitions, sorted by (partition number, topic), up to
   its quota; the surplus becomes free;
2. (rack-aware round robin goes here once racks are supported, §4.6);
3. the free partitions, in partition order, are dealt round robin over the members still below
   minQ (an iterator that keeps its position), then one each to members at exactly minQ while
   fewer than E members hold maxQ.

A fresh group is therefore the global round robin of roundrobin, by member id.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from itertools import compress


def assign_constrained(total: int, owned_sorted: Sequence[Sequence[int]]) -> list[list[int]]:
    """Per member (index = rank), its kept owned partitions then its new ones, in Kafka order.

    `owned_sorted[r]` are member r's valid owned partitions (int ids), already sorted by
    (partition number, topic), with no partition appearing twice across members.
    """
    n = len(owned_sorted)
    if n == 0:
        return []
    min_q, extra = divmod(total, n)
    max_q = min_q + (1 if extra else 0)
    over = 0  # members holding maxQ, which only `extra` of them may
    assignment: list[list[int]] = []
    under: list[int] = []  # below minQ, in member order
    exactly: deque[int] = deque()  # at exactly minQ and still eligible for one more
    free = bytearray(b"\x01") * total

    # Step 1: keep owned partitions up to the quota.
    for r, owned in enumerate(owned_sorted):
        k = len(owned)
        if k < min_q:
            keep = list(owned)
            under.append(r)
        elif k >= max_q and over < extra:
            keep = list(owned[:max_q])
            over += 1
            if over == extra:
                exactly.clear()
        else:
            keep = list(owned[:min_q])
            if over < extra:
                exactly.append(r)
        for g in keep:
            free[g] = 0
        assignment.append(keep)

    unassigned = compress(range(total), free)

    # Step 2 would be the rack-aware round robin (§4.3 step 3); without racks it assigns nothing.

    # Step 3: round robin. `cur[pos:]` is the part of the under-minQ list the iterator has not
    # reached; `nxt` collects the members it passed that are still under minQ, so when it runs
    # off the end the under-minQ list is exactly `nxt` (Java restarts the iterator there).
    cur, pos = under, 0
    nxt: list[int] = []
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
        lst = assignment[r]
        lst.append(g)
        count = len(lst)
        if count == min_q:
            exactly.append(r)  # leaves the under-minQ list
        else:
            if from_under:
                nxt.append(r)
            if count == max_q:
                over += 1
    return assignment
