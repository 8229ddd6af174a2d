"""The best achievable balance of a group: the smallest possible max partitions per member.

Partitions of topic t may only go to t's subscribers, so with unequal subscriptions the plain
average can be out of reach. By Hall's theorem (max-flow/min-cut on the bipartite graph), a
valid assignment with at most L partitions per member exists iff every set of topics T has
P(T) <= L * |N(T)| (its partitions fit on the members subscribed to some topic of T). So

    best_max = max over topic sets T of ceil(P(T) / |N(T)|)

and the maximising T is the bottleneck: the topic set whose subscribers cannot share the
load with anyone else.

Computing it never looks at single partitions or members: topics with the same subscriber set
form a topic class, members with the same subscription a member class (`assignors.analysis.flow`),
and the flow network
(source -> topic class (its partitions) -> member class (unbounded) -> sink (L per member))
stays tiny even for Kafka's million-partition tests.

1. Closed form first: T = all topics (the average over subscribing members) and T = each topic
   class give a lower bound; it is exact when all subscribing members subscribe alike or all
   topics share one subscriber set (one class on either side), or when some strategy's
   assignment already reaches it (`achieved`).
2. Otherwise max-flow with cap L = that bound; if the flow falls short, the topic classes
   reachable from the source in the residual graph form a violated set T, whose own
   ceil(P(T) / |N(T)|) is a strictly larger valid bound. Repeat until the flow carries every
   partition: that L is reached, and proven optimal by the last set.

Kafka-shaped examples: topics a (3), b (3), c (1); X, Y -> {a, b}; Z1..Z3 -> {c}.
The plain average is ceil(7 / 5) = 2, but a and b's 6 partitions have 2 subscribers:

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> topics = {t: TopicMetadata(t, n) for t, n in (("a", 3), ("b", 3), ("c", 1))}
>>> subs = {"X": "ab", "Y": "ab", "Z1": "c", "Z2": "c", "Z3": "c"}
>>> spec = GroupSpec("g", tuple(Member(m, frozenset(s)) for m, s in subs.items()), topics)
>>> best_balance(spec)
BalanceBound(best_max=3, bottleneck_topics=('a', 'b'))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assignors.analysis.flow import FlowNetwork, subscription_classes
from assignors.model import Assignment, GroupSpec, java_sorted
from assignors.racks import rack_mismatch_count


@dataclass(frozen=True, slots=True, init=False)
class BalanceBound:
    """best_max: the smallest max partitions per member of any valid assignment;
    bottleneck_topics: the topic set forcing it when it is above the plain average
    (ceil(partitions / members)), else empty (Java string order)."""

    best_max: int
    bottleneck_topics: tuple[str, ...]

    def __init__(self, best_max: int, bottleneck_topics: tuple[str, ...]) -> None:
        object.__setattr__(self, "best_max", best_max)
        object.__setattr__(self, "bottleneck_topics", bottleneck_topics)


@dataclass(slots=True, init=False)
class _Classes:
    """The class graph: topic classes (partitions, adjacent member classes) and member
    classes (size)."""

    topics: list[list[str]]  # topic class -> its topics
    parts: list[int]  # topic class -> its partitions
    adjacent: list[list[int]]  # topic class -> member classes subscribing to it
    members: list[int]  # member class -> how many members
    total: int
    member_count: int

    def __init__(
        self,
        topics: list[list[str]],
        parts: list[int],
        adjacent: list[list[int]],
        members: list[int],
        total: int,
        member_count: int,
    ) -> None:
        self.topics = topics
        self.parts = parts
        self.adjacent = adjacent
        self.members = members
        self.total = total
        self.member_count = member_count

    def subscribers(self, ks: Sequence[int]) -> int:
        js = {j for k in ks for j in self.adjacent[k]}
        return sum(self.members[j] for j in js)

    def ratio(self, ks: Sequence[int]) -> int:
        """ceil(P(T) / |N(T)|) for the topic classes ks."""
        p = sum(self.parts[k] for k in ks)
        return -(-p // self.subscribers(ks))


def _classes(spec: GroupSpec) -> _Classes:
    sc = subscription_classes(spec)
    return _Classes(
        topics=[list(ts) for ts in sc.topics],
        parts=[sum(spec.partition_count(t) for t in ts) for ts in sc.topics],
        adjacent=[list(js) for js in sc.subscribers],
        members=[len(ms) for ms in sc.members],
        total=sum(spec.partition_count(t) for t in spec.subscribed_topics()),
        member_count=len(spec.members),
    )


def _closed_form(c: _Classes) -> tuple[int, BalanceBound, bool]:
    if c.total == 0:
        return 0, BalanceBound(0, ()), True
    everything = list(range(len(c.parts)))
    best, best_set = c.ratio(everything), everything
    for k in everything:
        # A single class that forces the same bound is the more telling bottleneck.
        r = c.ratio([k])
        if r > best or (r == best and len(best_set) > 1):
            best, best_set = r, [k]
    exact = len(c.parts) == 1 or len(c.members) == 1
    return best, _result(c, best, best_set), exact


def _result(c: _Classes, best: int, ks: Sequence[int]) -> BalanceBound:
    plain = -(-c.total // c.member_count)
    if best <= plain:
        return BalanceBound(best, ())
    return BalanceBound(best, tuple(java_sorted(t for k in ks for t in c.topics[k])))


def best_balance(spec: GroupSpec, achieved: int | None = None) -> BalanceBound:
    """The exact best max partitions per member and its bottleneck topics.

    `achieved`: the max partitions per member of some valid assignment of this group, if
    known; when it equals the closed-form bound, that bound is proven and no flow runs.
    """
    c = _classes(spec)
    bound, result, exact = _closed_form(c)
    if exact or achieved == bound:
        return result
    return _by_flow(c, bound, result)


def _by_flow(c: _Classes, bound: int, result: BalanceBound) -> BalanceBound:
    level = bound
    while True:
        flow, reachable = _max_flow(c, level)
        if flow == c.total:
            return result
        # The residual graph's source side is a violated topic set: P(T) > level * |N(T)|.
        raised = c.ratio(reachable)
        level = max(level + 1, raised)
        result = _result(c, level, reachable)


def _max_flow(c: _Classes, level: int) -> tuple[int, list[int]]:
    """Dinic's max-flow on the class graph with `level` partitions per member.

    Returns the flow and, when it falls short, the topic classes on the source side of a
    minimum cut.
    """
    nk, nj = len(c.parts), len(c.members)
    source, sink = nk + nj, nk + nj + 1
    net = FlowNetwork(nk + nj + 2)
    for k in range(nk):
        net.add_edge(source, k, c.parts[k])
        for j in c.adjacent[k]:
            net.add_edge(k, nk + j, c.total)
    for j in range(nj):
        net.add_edge(nk + j, sink, level * c.members[j])
    flow = net.max_flow(source, sink)
    seen = net.reachable(source)
    return flow, [k for k in range(nk) if k in seen]


# One group is planned under several strategies in a row: compute its bound once.
_last: list[tuple[GroupSpec, BalanceBound]] = []


def group_bound(spec: GroupSpec, achieved: int | None = None) -> BalanceBound:
    """`best_balance`, cached for the last group seen (by identity)."""
    if _last and _last[0][0] is spec:
        return _last[0][1]
    bound = best_balance(spec, achieved)
    _last[:] = [(spec, bound)]
    return bound


def rack_and_balance_metrics(
    spec: GroupSpec, assignment: Assignment, max_partitions: int, valid: bool
) -> dict[str, int | list[str] | None]:
    """The rack and best-balance columns of a balance_metrics row (docs/data-contract.md).

    `max_partitions` is this assignment's max partitions per member: when the assignment is
    `valid` and reaches the closed-form bound, the bound is proven without a flow.
    balance_gap is never negative for a valid assignment; an invalid one (a plugin's, say)
    may undercut the bound.
    """
    bound = group_bound(spec, max_partitions if valid else None)
    return {
        "rack_mismatch_count": rack_mismatch_count(spec, assignment),
        "best_max_partitions_per_member": bound.best_max,
        "balance_gap": max_partitions - bound.best_max,
        "bottleneck_topics": list(bound.bottleneck_topics),
    }
