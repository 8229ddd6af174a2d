"""Max-flow and the subscription class graph, shared by the balance and load bounds.

Both bounds (`assignors.analysis.bounds.best_balance` on partition counts and
`assignors.analysis.load.weight_lower_bound` on loads) are Hall-type bounds on the bipartite graph
topics -> subscribers. Neither needs single topics or members: topics with the same subscriber
set form a topic class, members with the same subscription (restricted to the topics in scope)
a member class, and the bound is a max-flow on that small class graph.

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> topics = {t: TopicMetadata(t, 1) for t in "tuv"}
>>> subs = {"a": "tu", "b": "tu", "c": "v", "d": "tuv"}
>>> spec = GroupSpec("g", tuple(Member(m, frozenset(s)) for m, s in subs.items()), topics)
>>> subscription_classes(spec)
SubscriptionClasses(topics=(('t', 'u'), ('v',)), subscribers=((0, 2), (1, 2)), \
members=((0, 1), (2,), (3,)))
"""

from __future__ import annotations

from dataclasses import dataclass

from assignors.model import GroupSpec, per_group


@dataclass(frozen=True, slots=True, init=False)
class SubscriptionClasses:
    """A group's topics and members merged into classes (numbered by first appearance).

    `topics[c]`: the topics of topic class c, in `GroupSpec.subscribed_topics` order;
    `subscribers[c]`: the member classes subscribed to it, ascending; `members[j]`: the
    indices (into `spec.members`) of member class j. Members subscribed to no topic in scope
    belong to no class.
    """

    topics: tuple[tuple[str, ...], ...]
    subscribers: tuple[tuple[int, ...], ...]
    members: tuple[tuple[int, ...], ...]

    def __init__(
        self,
        topics: tuple[tuple[str, ...], ...],
        subscribers: tuple[tuple[int, ...], ...],
        members: tuple[tuple[int, ...], ...],
    ) -> None:
        object.__setattr__(self, "topics", topics)
        object.__setattr__(self, "subscribers", subscribers)
        object.__setattr__(self, "members", members)


@per_group
def subscription_classes(spec: GroupSpec) -> SubscriptionClasses:
    """The topic and member classes of a group (see `SubscriptionClasses`).

    Two topics have the same subscribers exactly when the same member classes subscribe to
    them, so topic classes are keyed by their member classes.
    """
    in_scope = spec.subscribed_topics()
    scope = frozenset(in_scope)
    by_subscription: dict[frozenset[str], list[int]] = {}
    for i, m in enumerate(spec.members):
        mine = m.topics & scope
        if mine:
            by_subscription.setdefault(mine, []).append(i)
    keys = list(by_subscription)
    by_subscribers: dict[tuple[int, ...], list[str]] = {}
    for t in in_scope:
        js = tuple(j for j, key in enumerate(keys) if t in key)
        by_subscribers.setdefault(js, []).append(t)
    return SubscriptionClasses(
        tuple(tuple(ts) for ts in by_subscribers.values()),
        tuple(by_subscribers),
        tuple(tuple(ms) for ms in by_subscription.values()),
    )


class FlowNetwork:
    """A small max-flow network (Dinic's algorithm) with integer capacities.

    Edges are stored in pairs (edge e and its residual twin e ^ 1), so pushing flow on e
    frees the same amount on e ^ 1.

    >>> net = FlowNetwork(4)
    >>> for u, v, cap in [(0, 1, 3), (0, 2, 2), (1, 2, 1), (1, 3, 2), (2, 3, 3)]:
    ...     net.add_edge(u, v, cap)
    >>> net.max_flow(0, 3), sorted(net.reachable(0))
    (5, [0])
    """

    def __init__(self, nodes: int) -> None:
        self.adj: list[list[int]] = [[] for _ in range(nodes)]
        self.to: list[int] = []
        self.cap: list[int] = []

    def add_edge(self, u: int, v: int, cap: int) -> None:
        self.adj[u].append(len(self.to))
        self.to.append(v)
        self.cap.append(cap)
        self.adj[v].append(len(self.to))
        self.to.append(u)
        self.cap.append(0)

    def _levels(self, source: int, sink: int) -> list[int] | None:
        level = [-1] * len(self.adj)
        level[source] = 0
        queue = [source]
        for u in queue:  # the list grows while we walk it: a BFS
            for e in self.adj[u]:
                v = self.to[e]
                if self.cap[e] > 0 and level[v] < 0:
                    level[v] = level[u] + 1
                    queue.append(v)
        return level if level[sink] >= 0 else None

    def _push(self, u: int, sink: int, amount: int, level: list[int], it: list[int]) -> int:
        if u == sink:
            return amount
        while it[u] < len(self.adj[u]):
            e = self.adj[u][it[u]]
            v = self.to[e]
            if self.cap[e] > 0 and level[v] == level[u] + 1:
                pushed = self._push(v, sink, min(amount, self.cap[e]), level, it)
                if pushed:
                    self.cap[e] -= pushed
                    self.cap[e ^ 1] += pushed
                    return pushed
            it[u] += 1
        return 0

    def max_flow(self, source: int, sink: int) -> int:
        total = 0
        unbounded = sum(self.cap) + 1
        while (level := self._levels(source, sink)) is not None:
            it = [0] * len(self.adj)
            while pushed := self._push(source, sink, unbounded, level, it):
                total += pushed
        return total

    def reachable(self, source: int) -> set[int]:
        """Nodes reachable from `source` in the residual network (a min cut's source side)."""
        seen = {source}
        stack = [source]
        while stack:
            u = stack.pop()
            for e in self.adj[u]:
                if self.cap[e] > 0 and self.to[e] not in seen:
                    seen.add(self.to[e])
                    stack.append(self.to[e])
        return seen
