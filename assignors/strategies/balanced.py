"""`balanced`: the planner's own strategy, the optimum Kafka's strategies are compared with.

Not a Kafka assignor (no Java class): the reference an operator measures range, sticky and
uniform against, and an assignor to run where a custom one is possible. Its objectives, in
strict order:

1. balance: the lexicographically smallest sorted-descending vector of partitions per member
   (so the max is `best_max_partitions_per_member`, and every other member is as even as it
   can be);
2. racks (KIP-881): the fewest rack mismatches (a member with a rack given a partition none of
   whose replicas is on it; members without a rack never mismatch);
3. stickiness: the most partitions kept by their valid previous owner (the generation rule
   of the sticky assignors: `assignors.ownership.valid_owned`).

How (counts; weights come later): the feasible per-member load vectors of a bipartite
assignment form an M-convex set, whose decreasingly-minimal elements are exactly the
minimisers of the sum of squared loads (Frank and Murota). So one min-cost flow with cost
W1 * sum(load^2) + W2 * mismatches - kept, the weights far enough apart to make the three
objectives strictly lexicographic, finds the optimum:

* partitions that are interchangeable (same subscribers, same replica racks, same valid
  previous owner) form one supply node, members are sink nodes with a convex cost; a greedy
  start (the cheapest arc plus marginal cost first) is made optimal by cancelling negative
  cycles of the residual graph, exact for separable convex costs (usually none or one
  cycle, where successive shortest paths needed one path per partition); exact, for groups
  whose flow graph is small (almost all of them);
* when every subscribing member subscribes alike and racks cannot matter, a closed form is
  exact: quotas q or q+1, the q+1 going to the members that own the most (then Java
  member-id order), each keeping what it owns up to its quota;
* large groups with unequal subscriptions (or racks) use the same realisation on a
  class-level flow (topic classes x member subscription classes, bulk augmenting paths):
  objective (1) stays exact, (2) and (3) are then best effort.

Realisation is deterministic: each member keeps its partitions lowest first; freed partitions
go in (topic, partition) order to members in Java member-id order, so shuffled input gives the
same output.

As a cooperative assignor (`rebalance`), a round never hands over a partition that another
live member still validly owns (or that two members claim at the same generation): the owner
revokes it first and it moves in the next round, as KIP-429 requires of every cooperative
assignor. The target is computed once per rebalance, from what the members own when it starts
(KIP-848's target assignment): round 1 gives what is free, round 2 what round 1 revoked.

Worked example: topics a (3) and b (3); X -> {a}, Y -> {a, b}, Z -> {b}; X owns
a0, Y owns a1 and a2, Z owns b0..b2. Sticky keeps sizes 1/2/3; `balanced` reaches 2/2/2 by
moving two partitions (Y's a2 to X; Z keeps its lowest two, b2 goes to Y):

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> topics = {"a": TopicMetadata("a", 3), "b": TopicMetadata("b", 3)}
>>> owned = {"X": (("a", 0),), "Y": (("a", 1), ("a", 2)), "Z": (("b", 0), ("b", 1), ("b", 2))}
>>> subs = {"X": "a", "Y": "ab", "Z": "b"}
>>> spec = GroupSpec("g", tuple(Member(m, frozenset(s), owned=owned[m], generation=1)
...                             for m, s in subs.items()), topics)
>>> BalancedAssignor().target(spec)
{'X': [('a', 0), ('a', 2)], 'Y': [('a', 1), ('b', 2)], 'Z': [('b', 0), ('b', 1)]}
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from heapq import heapify, heappop, heappush
from typing import ClassVar

from mypy_extensions import mypyc_attr

from assignors.model import (
    Assignment,
    GroupSpec,
    Member,
    Rebalance,
    TopicPartition,
    java_sorted,
    needs_java_order,
    numbered_partitions,
    partitions_of,
    sort_partitions,
)
from assignors.ownership import live_owners, withhold
from assignors.protocol import COOPERATIVE_ONLY, RebalanceProtocol
from assignors.racks import member_rack, partition_racks, topic_racks
from assignors.strategies.weighted import assign_by_load

EXACT_LIMIT = 400_000
"""Largest partitions x supply nodes x members solved by the exact flow."""


# Packed ints instead of tuples in the start's hot loops
# (tests/assignors/strategies/test_packed_keys.py checks that their integer order is the
# tuple order).
def _pack_key(cost: int, node: int, nodes: int) -> int:
    """A heap entry ordered as (cost, node); 0 <= node < nodes."""
    return cost * nodes + node


def _unpack_key(key: int, nodes: int) -> tuple[int, int]:
    """(cost, node) of a `_pack_key` entry."""
    return divmod(key, nodes)


def _pack_pref(cost: int, owner: int, node: int, kind: int, nodes: int, kinds: int) -> int:
    """Kind `kind` at node `node`, ordered as (cost, 0, 0, kind) if the kind is free (owner
    -1) or the node's own, else as (cost, 1, -owner, -kind); cost >= -1, 0 <= owner < nodes,
    0 <= kind < kinds."""
    if owner == -1 or owner == node:
        return (cost + 1) * 2 * (nodes + 1) * (kinds + 1) + kind
    return (((cost + 1) * 2 + 1) * (nodes + 1) + nodes - owner) * (kinds + 1) + kinds - kind


def _unpack_pref(key: int, nodes: int, kinds: int) -> tuple[int, int]:
    """(cost, kind) of a `_pack_pref` key."""
    cost = key // (2 * (nodes + 1) * (kinds + 1)) - 1
    if key // ((nodes + 1) * (kinds + 1)) % 2 == 0:
        return cost, key % (kinds + 1)
    return cost, kinds - key % (kinds + 1)


class _Problem:
    """A group reduced to what `balanced` optimises: members in Java order, partitions in
    (topic, partition) order, each partition's subscribers, racks and valid owner."""

    def __init__(self, spec: GroupSpec, owners: dict[TopicPartition, str] | None = None) -> None:
        by_id = {m.member_id: m for m in spec.members}
        self.members: list[Member] = [by_id[i] for i in java_sorted(by_id)]
        rank = {m.member_id: r for r, m in enumerate(self.members)}
        self.topics = spec.subscribed_topics()
        self.counts = {t: spec.partition_count(t) for t in self.topics}
        self.java_order = needs_java_order(self.topics)
        self.parts: list[TopicPartition] = [
            tp for t in self.topics for tp in partitions_of(t, self.counts[t])
        ]
        subscribers = {t: [rank[m.member_id] for m in ms] for t, ms in spec.subscribers().items()}
        self.eligible = {t: sorted(rs) for t, rs in subscribers.items()}
        self.topic_index = {t: i for i, t in enumerate(self.topics)}
        if owners is None:
            owners = live_owners(spec)[0]
        self.owner: dict[TopicPartition, int] = {}
        for tp, member_id in owners.items():
            # Only a subscriber can keep a partition (its topic is then in scope).
            if tp[0] in by_id[member_id].topics and tp[0] in self.eligible:
                self.owner[tp] = rank[member_id]
        self.rack: list[str | None] = [member_rack(m) for m in self.members]
        self.part_racks: dict[str, Sequence[frozenset[str]]] = {}
        if any(self.rack):
            for t in self.topics:
                racks = topic_racks(spec.topics.get(t))
                if any(racks):
                    self.part_racks[t] = racks

    @property
    def racks_matter(self) -> bool:
        return bool(self.part_racks)

    def racks_of(self, tp: TopicPartition) -> frozenset[str]:
        return partition_racks(self.part_racks.get(tp[0], ()), tp[1])

    def mismatch(self, r: int, racks: frozenset[str]) -> bool:
        """Whether member r mismatches a partition on `racks`, as
        `assignors.racks.rack_mismatch_count` counts it (nothing without rack data)."""
        rack = self.rack[r]
        return self.racks_matter and rack is not None and rack not in racks

    def decode(self, lists: Sequence[Sequence[TopicPartition]]) -> Assignment:
        return {m.member_id: list(lst) for m, lst in zip(self.members, lists, strict=True)}


# ----------------------------------------------------------------------- the exact flow


# The test suite keeps the previous solver as a subclass of this one.
@mypyc_attr(allow_interpreted_subclasses=True)
class _ExactFlow:
    """Min-cost flow, a greedy start then negative cycles cancelled: supply nodes
    (interchangeable partitions) -> member nodes -> sink. Members that own nothing and share
    subscription and rack are interchangeable too and share one node of `size` members, whose
    sink arc is convex: the next unit to a node holding x costs W1 * (2 * (x // size) + 1)
    (an even split), so a step can carry up to the rest of that level at once."""

    def __init__(self, prob: _Problem) -> None:
        self.prob = prob
        self._member_nodes()
        self.kinds = _kinds(prob)
        total = len(prob.parts)
        self.w2 = total + 1
        self.w1 = self.w2 * (total + 1) + total + 1
        self.cost = self._cost_rows()
        # The rows as parallel lists (fixed from here on): the cycle check walks them.
        self.cost_nodes: list[list[int]] = [list(row) for row in self.cost]
        self.cost_values: list[list[int]] = [list(row.values()) for row in self.cost]
        self.supply = [len(tps) for _, tps in self.kinds]
        self.flow: list[dict[int, int]] = [{} for _ in self.kinds]
        self.held: list[dict[int, int]] = [{} for _ in self.nodes]  # node -> kind -> units
        self.load = [0] * len(self.nodes)

    def _cost_rows(self) -> list[dict[int, int]]:
        """Per kind, node -> the cost of one of its partitions there (W2 per rack mismatch,
        -1 on its owner's node)."""
        prob = self.prob
        node_of, w2 = self.node_of, self.w2
        member_rack_of = prob.rack
        out: list[dict[int, int]] = []
        # Kinds that differ only by owner have the same row before the owner's -1.
        rows: dict[tuple[tuple[int, ...], frozenset[str]], dict[int, int]] = {}
        for (eligible, racks, owner), _ in self.kinds:
            base = rows.get((eligible, racks))
            if base is None:
                if prob.racks_matter:
                    # a kind's racks keep every member rack its partitions are on; a member
                    # mismatches as `_Problem.mismatch` says
                    base = {}
                    for r in eligible:
                        rack = member_rack_of[r]
                        base[node_of[r]] = w2 if rack is not None and rack not in racks else 0
                else:
                    base = dict.fromkeys([node_of[r] for r in eligible], 0)
                rows[(eligible, racks)] = base
            row = dict(base)
            if owner >= 0:
                row[node_of[owner]] -= 1  # an owner is eligible, alone on its node
            out.append(row)
        return out

    def _member_nodes(self) -> None:
        prob = self.prob
        owners = set(prob.owner.values())
        scope = frozenset(prob.eligible)
        by_key: dict[tuple[frozenset[str], str | None, int], int] = {}
        self.nodes: list[list[int]] = []
        self.node_of: list[int] = []
        for r, m in enumerate(prob.members):
            key = (m.topics & scope, prob.rack[r], r if r in owners else -1)
            j = by_key.setdefault(key, len(self.nodes))
            if j == len(self.nodes):
                self.nodes.append([])
            self.nodes[j].append(r)
            self.node_of.append(j)

    def size(self) -> int:
        return len(self.prob.parts) * len(self.kinds) * max(1, len(self.nodes))

    def solve(self) -> list[list[TopicPartition]]:
        self._greedy()
        while cycle := self._negative_cycle():
            self._cancel(cycle)
        return self._realise()

    def _next_cost(self, j: int) -> int:
        """W1 times the marginal sum(load^2) of one more unit on node j (an even split)."""
        return self.w1 * (2 * (self.load[j] // len(self.nodes[j])) + 1)

    def _greedy(self) -> None:
        """A feasible start: repeatedly the cheapest single arc kind -> node plus the node's
        next marginal cost (ties: lowest node, then lowest kind), as many units as keep that
        cost. These are the direct paths successive shortest paths would take, so this start
        is often optimal already; `_negative_cycle` proves or repairs it."""
        # Per node its kinds, cheapest first; at equal cost free kinds (and the node's own)
        # lowest first, then other owners' kinds from the last owner's last kind: what later
        # shortest paths would give back to their owners.
        # The order is that of (cost, 0, 0, kind) for free and own kinds and (cost, 1, -owner,
        # -kind) for the others, packed in one int per (kind, node) (no tuple to build and
        # compare) by `_pack_pref`: digits cost + 1, the flag, nodes - owner, and kind or
        # kinds - kind.
        n = len(self.nodes)
        nk = len(self.kinds)
        owner = [o if o < 0 else self.node_of[o] for (_, _, o), _ in self.kinds]
        prefs: list[list[int]] = [[] for _ in self.nodes]
        for k, row in enumerate(self.cost):
            o = owner[k]
            for j, c in row.items():
                prefs[j].append(_pack_pref(c, o, j, k, n, nk))
        # Per node its kinds' costs and indices in that order; heap entries are
        # _pack_key(key, j, n) (plain ints: (key, j) order without a tuple per push).
        pref_cost: list[list[int]] = []
        pref_kind: list[list[int]] = []
        for p in prefs:
            p.sort()
            costs: list[int] = []
            kinds: list[int] = []
            for key in p:
                c, k = _unpack_pref(key, n, nk)
                costs.append(c)
                kinds.append(k)
            pref_cost.append(costs)
            pref_kind.append(kinds)
        ptr = [0] * n
        heap = [_pack_key(cs[0] + self._next_cost(j), j, n) for j, cs in enumerate(pref_cost) if cs]
        heapify(heap)
        supply, load = self.supply, self.load
        sizes = [len(members) for members in self.nodes]
        w1 = self.w1
        left = sum(supply)
        while left:
            key, j = _unpack_key(heappop(heap), n)
            kinds, i = pref_kind[j], ptr[j]
            while i < len(kinds) and not supply[kinds[i]]:
                i += 1
            ptr[j] = i
            if i == len(kinds):
                continue  # no kind left for this node
            c, k = pref_cost[j][i], kinds[i]
            size = sizes[j]
            cost = c + w1 * (2 * (load[j] // size) + 1)  # `_next_cost(j)`
            if cost == key:
                # Node j takes units of kind k for as long as it would be popped next anyway
                # (its entry is the heap's only one for j): the same steps, without the heap.
                taken = 0
                while True:
                    amount = min(size - load[j] % size, supply[k])
                    supply[k] -= amount
                    load[j] += amount
                    taken += amount
                    cost = c + w1 * (2 * (load[j] // size) + 1)
                    if not supply[k] or (heap and _pack_key(cost, j, n) > heap[0]):
                        break
                self.flow[k][j] = self.flow[k].get(j, 0) + taken
                self.held[j][k] = self.held[j].get(k, 0) + taken
                left -= taken
            heappush(heap, _pack_key(cost, j, n))  # stale keys only rise

    def _arcs(self, u: int) -> tuple[list[int], list[int]]:
        """Residual arcs out of vertex u, a node or the sink, as heads and their costs: node ->
        kind (undo a unit held), node -> sink (one more unit, at its marginal cost), sink ->
        node (one unit less). A kind's arcs, kind -> node (send), are its `cost` row."""
        nk, nn = len(self.kinds), len(self.nodes)
        heads: list[int] = []
        costs: list[int] = []
        if u < nk + nn:
            j = u - nk
            for k, units in self.held[j].items():
                if units:
                    heads.append(k)
                    costs.append(-self.cost[k][j])
            heads.append(nk + nn)
            costs.append(self._next_cost(j))
            return heads, costs
        w1, nodes = self.w1, self.nodes
        for j, x in enumerate(self.load):
            if x:
                heads.append(nk + j)
                costs.append(-w1 * (2 * ((x - 1) // len(nodes[j])) + 1))
        return heads, costs

    def _negative_cycle(self) -> list[int]:
        """A negative-cost cycle of the residual graph (vertices, each the head of the arc
        from the next one), or [] when there is none: then the flow is a min-cost flow, as
        the node costs are convex (Bellman-Ford by queue from every vertex at distance 0,
        looking for a cycle among the parent pointers every V relaxation rounds)."""
        nk = len(self.kinds)
        n = nk + len(self.nodes) + 1
        # Fixed while the check runs, as parallel lists of heads and costs (no pair to
        # build or unpack per arc). Kinds' arcs, most of them, are their `cost` rows, with
        # node j at vertex nk + j.
        heads: list[list[int]] = []
        costs: list[list[int]] = []
        for u in range(n):
            if u < nk:
                heads.append([nk + j for j in self.cost_nodes[u]])
                costs.append(self.cost_values[u])
            else:
                hs, cs = self._arcs(u)
                heads.append(hs)
                costs.append(cs)
        dist = [0] * n
        parent = [-1] * n
        # A FIFO of the vertices to scan: each is queued at most once at a time, so a ring
        # of n slots holds it (plain list indexing, no method call per push and pop).
        ring = list(range(n))
        head, size = 0, n
        queued = [True] * n
        done = 0
        while size:
            u = ring[head]
            head = head + 1 if head + 1 < n else 0
            size -= 1
            queued[u] = False
            du = dist[u]
            hs, cs = heads[u], costs[u]
            for i in range(len(hs)):
                v = hs[i]
                d = du + cs[i]
                if d < dist[v]:
                    dist[v], parent[v] = d, u
                    if not queued[v]:
                        queued[v] = True
                        tail = head + size
                        ring[tail if tail < n else tail - n] = v
                        size += 1
            done += 1
            if done % n == 0 and (cycle := _parent_cycle(parent)):
                return cycle
        return []

    def _cancel(self, cycle: list[int]) -> None:
        """Push round the cycle as many units as keep every arc's cost."""
        nk, nn = len(self.kinds), len(self.nodes)
        arcs = [(cycle[(i + 1) % len(cycle)], v) for i, v in enumerate(cycle)]
        amount = len(self.prob.parts)
        for u, v in arcs:
            if nk <= u < nk + nn and v < nk:  # node gives back units of a kind
                amount = min(amount, self.held[u - nk][v])
            elif v == nk + nn:  # one more unit at the same marginal cost
                size = len(self.nodes[u - nk])
                amount = min(amount, size - self.load[u - nk] % size)
            elif u == nk + nn:  # one unit less at the same marginal cost
                amount = min(amount, (self.load[v - nk] - 1) % len(self.nodes[v - nk]) + 1)
        for u, v in arcs:
            if u < nk:
                self._move(u, v - nk, amount)
            elif v < nk:
                self._move(v, u - nk, -amount)
            elif v == nk + nn:
                self.load[u - nk] += amount
            elif u == nk + nn:
                self.load[v - nk] -= amount

    def _move(self, k: int, j: int, amount: int) -> None:
        self.flow[k][j] = self.flow[k].get(j, 0) + amount
        self.held[j][k] = self.held[j].get(k, 0) + amount

    def _realise(self) -> list[list[TopicPartition]]:
        """Owners keep their kind's lowest partitions; the rest go, in (topic, partition)
        order, to each node's members in Java member-id order (the first ones taking the
        node's extra units)."""
        prob = self.prob
        kept: list[list[TopicPartition]] = [[] for _ in prob.members]
        incoming: list[list[TopicPartition]] = [[] for _ in self.nodes]
        for ((_, _, owner), tps), units in zip(self.kinds, self.flow, strict=True):
            stay = units.get(self.node_of[owner], 0) if owner >= 0 else 0
            kept[owner].extend(tps[:stay])
            rest = iter(tps[stay:])
            for j in sorted(units):
                if owner < 0 or j != self.node_of[owner]:
                    incoming[j].extend(next(rest) for _ in range(units[j]))
        fresh: list[list[TopicPartition]] = [[] for _ in prob.members]
        for members, tps in zip(self.nodes, incoming, strict=True):
            sort_partitions(tps, prob.java_order)
            q, extra = divmod(len(tps), len(members))
            start = 0
            for i, r in enumerate(members):
                n = q + (1 if i < extra else 0)
                fresh[r] = tps[start : start + n]
                start += n
        for k in kept:
            sort_partitions(k, prob.java_order)
        return [k + f for k, f in zip(kept, fresh, strict=True)]


_Kind = tuple[tuple[tuple[int, ...], frozenset[str], int], list[TopicPartition]]
"""(eligible members, the members' racks its partitions are on, valid owner or -1), and its
partitions: the interchangeable partitions of one supply node."""


def _kinds(prob: _Problem) -> list[_Kind]:
    """The supply nodes, numbered by first appearance in `prob.parts` order (topic by topic,
    each topic's partitions in order)."""
    member_racks = frozenset(r for r in prob.rack if r is not None)
    merged: dict[tuple[tuple[int, ...], frozenset[str], int], list[TopicPartition]] = {}
    no_racks: frozenset[str] = frozenset()
    owner_of = prob.owner
    stride = len(prob.members) + 1
    for t in prob.topics:
        eligible = tuple(prob.eligible[t])
        if not prob.racks_matter:
            # Only owners tell this topic's partitions apart: group by owner first (in
            # first-seen order, as the general loop would meet the kinds).
            by_owner: dict[int, list[TopicPartition]] = {}
            for tp in partitions_of(t, prob.counts[t]):
                by_owner.setdefault(owner_of.get(tp, -1), []).append(tp)
            for o, tps in by_owner.items():
                merged.setdefault((eligible, no_racks, o), []).extend(tps)
            continue
        # Only the members' racks and owners tell partitions apart (fewer kinds, same
        # costs). Grouped per topic first, in first-seen order as above; a topic's replica
        # racks repeat a few sets, each intersected once.
        # A local kind is keyed by one int, rack set id * stride + owner + 1 (no tuple to
        # build and hash per partition).
        part_racks = prob.part_racks.get(t, ())
        seen: dict[frozenset[str], int] = {}  # replica racks -> rack set id
        ids: dict[frozenset[str], int] = {}  # members' racks among them -> rack set id
        rack_sets: list[frozenset[str]] = []
        by_kind: dict[int, list[TopicPartition]] = {}
        for tp in partitions_of(t, prob.counts[t]):
            raw = partition_racks(part_racks, tp[1])
            rid = seen.get(raw)
            if rid is None:
                racks = raw & member_racks
                rid = ids.get(racks)
                if rid is None:
                    rid = ids[racks] = len(rack_sets)
                    rack_sets.append(racks)
                seen[raw] = rid
            key = rid * stride + owner_of.get(tp, -1) + 1
            by_kind.setdefault(key, []).append(tp)
        for key, tps in by_kind.items():
            rid, o = divmod(key, stride)
            merged.setdefault((eligible, rack_sets[rid], o - 1), []).extend(tps)
    return list(merged.items())


def _parent_cycle(parent: list[int]) -> list[int]:
    """A cycle among the parent pointers (there is one only on a negative cycle), or []."""
    seen = [-1] * len(parent)
    for start in range(len(parent)):
        v = start
        while v >= 0 and seen[v] < 0:
            seen[v] = start
            v = parent[v]
        if v >= 0 and seen[v] == start:  # came back to this walk: v is on a cycle
            cycle = [v]
            u = parent[v]
            while u != v:
                cycle.append(u)
                u = parent[u]
            return cycle
    return []


# ------------------------------------------------------- closed form and the class flow


def _class_targets(
    prob: _Problem,
) -> tuple[list[int], dict[tuple[int, int], int], list[int], dict[str, int]]:
    """Per member its target load, per (topic class, member class) its quota, and per member
    its class: the class-level optimum of sum(load^2), split evenly inside member classes."""
    mclass = _member_classes(prob)
    n_classes = max(mclass, default=-1) + 1
    keys: list[frozenset[str]] = [frozenset()] * n_classes
    for r, j in enumerate(mclass):
        if j >= 0:
            keys[j] = prob.members[r].topics
    tclass_of: dict[tuple[int, ...], int] = {}
    topic_class = {
        t: tclass_of.setdefault(tuple(j for j, k in enumerate(keys) if t in k), len(tclass_of))
        for t in prob.topics
    }
    supply = [0] * len(tclass_of)
    for t, _ in prob.parts:
        supply[topic_class[t]] += 1
    sizes = [0] * n_classes
    for j in mclass:
        if j >= 0:
            sizes[j] += 1
    flows = _class_flow(supply, [list(js) for js in tclass_of], sizes)
    totals = [0] * n_classes
    for (_, j), x in flows.items():
        totals[j] += x
    return _member_targets(prob, mclass, totals, sizes), flows, mclass, topic_class


def _member_classes(prob: _Problem) -> list[int]:
    """Per member (Java order) its subscription class, first-seen numbering; -1: none."""
    scope = frozenset(prob.eligible)
    seen: dict[frozenset[str], int] = {}
    out: list[int] = []
    for m in prob.members:
        key = m.topics & scope
        out.append(seen.setdefault(key, len(seen)) if key else -1)
    return out


def _class_flow(
    supply: list[int], adjacent: list[list[int]], sizes: list[int]
) -> dict[tuple[int, int], int]:
    """Convex min-cost flow on the class graph with bulk augmenting paths.

    All class arcs cost 0; sending the next units to member class j costs 2q + 1 while its
    total x stays within the level q = x // size (an even split), so the cheapest augmenting
    path ends at the reachable member class of lowest level, and carries as many units as
    the level, the source's supply and the reverse arcs on the path allow.
    """
    if len(sizes) == 1:  # one member class: everything goes to it
        return {(k, 0): x for k, x in enumerate(supply) if x}
    flows: dict[tuple[int, int], int] = {}
    total = [0] * len(sizes)
    left = list(supply)
    holders: list[dict[int, int]] = [{} for _ in sizes]  # j -> topic class -> units
    while any(left):
        path = _cheapest_path(left, adjacent, total, sizes, holders)
        k0, steps, j_end = path
        amount = min(left[k0], sizes[j_end] * (total[j_end] // sizes[j_end] + 1) - total[j_end])
        for k, j in steps[1::2]:  # the reverse arcs: class j gives back units of kind k
            amount = min(amount, holders[j][k])
        _apply(flows, holders, steps, amount)
        left[k0] -= amount
        total[j_end] += amount
    return flows


def _cheapest_path(
    left: list[int],
    adjacent: list[list[int]],
    total: list[int],
    sizes: list[int],
    holders: list[dict[int, int]],
) -> tuple[int, list[tuple[int, int]], int]:
    """BFS over alternating paths kind -> member class -> (reverse) kind; returns the start
    kind, the (kind, member class) hops (forward arc, then the reverse arcs' kinds), and the
    end class of lowest level (ties: lowest index)."""
    reached: dict[int, tuple[int, int]] = {}  # member class -> (via kind, parent class or -1)
    kind_from: dict[int, int] = {k: -1 for k, s in enumerate(left) if s}
    queue = deque(kind_from)
    while queue:
        k = queue.popleft()
        for j in adjacent[k]:
            if j in reached:
                continue
            reached[j] = (k, kind_from[k])
            for k2, units in holders[j].items():
                if units and k2 not in kind_from:
                    kind_from[k2] = j
                    queue.append(k2)
    j_end = min(reached, key=lambda j: (total[j] // sizes[j], j))
    steps: list[tuple[int, int]] = []
    j = j_end
    while True:
        k, parent = reached[j]
        steps.append((k, j))
        if parent < 0:
            return k, steps[::-1], j_end
        steps.append((k, parent))  # reverse arc: class `parent` gives back units of k
        j = parent


def _apply(
    flows: dict[tuple[int, int], int],
    holders: list[dict[int, int]],
    steps: list[tuple[int, int]],
    amount: int,
) -> None:
    for i, (k, j) in enumerate(steps):
        sign = 1 if i % 2 == 0 else -1
        flows[(k, j)] = flows.get((k, j), 0) + sign * amount
        holders[j][k] = holders[j].get(k, 0) + sign * amount


def _member_targets(
    prob: _Problem, mclass: list[int], totals: list[int], sizes: list[int]
) -> list[int]:
    """Inside a member class the split is even; the extra units go to the members that own
    the most partitions they could keep (then Java member-id order)."""
    owns = [0] * len(prob.members)
    for r in prob.owner.values():
        owns[r] += 1
    target = [0] * len(prob.members)
    by_class: dict[int, list[int]] = {}
    for r, j in enumerate(mclass):
        if j >= 0:
            by_class.setdefault(j, []).append(r)
    for j, rs in by_class.items():
        q, extra = divmod(totals[j], sizes[j])
        for i, r in enumerate(sorted(rs, key=lambda r: (-owns[r], r))):
            target[r] = q + (1 if i < extra else 0)
    return target


def _by_class_flow(prob: _Problem) -> list[list[TopicPartition]]:
    target, quota, mclass, tclass = _class_targets(prob)
    load = [0] * len(prob.members)
    lists: list[list[TopicPartition]] = [[] for _ in prob.members]
    taken: set[TopicPartition] = set()
    owned_by: list[list[TopicPartition]] = [[] for _ in prob.members]
    for tp, r in prob.owner.items():
        owned_by[r].append(tp)
    index = prob.topic_index
    for r, tps in enumerate(owned_by):
        tps.sort(key=lambda tp: (index[tp[0]], tp[1]))
        for tp in tps:
            q = (tclass[tp[0]], mclass[r])
            if load[r] < target[r] and quota.get(q, 0) > 0:
                quota[q] -= 1
                load[r] += 1
                lists[r].append(tp)
                taken.add(tp)
    free = [tp for tp in prob.parts if tp not in taken]
    _fill(free, tclass, mclass, quota, target, load, lists)
    return lists


def _fill(
    free: list[TopicPartition],
    tclass: dict[str, int],
    mclass: list[int],
    quota: dict[tuple[int, int], int],
    target: list[int],
    load: list[int],
    lists: list[list[TopicPartition]],
) -> None:
    """Freed partitions in (topic, partition) order to members in Java member-id order."""
    members_of: dict[int, list[int]] = {}
    for r, j in enumerate(mclass):
        if j >= 0:
            members_of.setdefault(j, []).append(r)
    cursor = dict.fromkeys(members_of, 0)
    for tp in free:
        k = tclass[tp[0]]
        j = next(j for j in sorted(members_of) if quota.get((k, j), 0) > 0)
        rs = members_of[j]
        while load[rs[cursor[j]]] >= target[rs[cursor[j]]]:
            cursor[j] += 1
        r = rs[cursor[j]]
        quota[(k, j)] -= 1
        load[r] += 1
        lists[r].append(tp)


# ------------------------------------------------------------------------ the assignor


def balanced_target(spec: GroupSpec, owners: dict[TopicPartition, str] | None = None) -> Assignment:
    """The `balanced` assignment of the group (all rounds done); `owners` as `ownership`
    gives them, when the caller has them already."""
    if owners is None:
        owners = live_owners(spec)[0]
    closed = _closed_form(spec, owners)
    if closed is not None:
        return closed
    prob = _Problem(spec, owners)
    if not prob.parts:
        return prob.decode([[] for _ in prob.members])
    small = len(prob.parts) * max(1, len(prob.members)) <= EXACT_LIMIT
    # Without owners or racks only the load vector counts, which the class flow gets exactly.
    trivial = not prob.owner and not prob.racks_matter
    if trivial or not small:
        return prob.decode(_by_class_flow(prob))
    flow = _ExactFlow(prob)
    if flow.size() > EXACT_LIMIT:
        return prob.decode(_by_class_flow(prob))
    return prob.decode(flow.solve())


def _closed_form(spec: GroupSpec, owners: Mapping[TopicPartition, str]) -> Assignment | None:
    """The target when every subscribing member subscribes alike and racks are irrelevant
    (else None: the flows decide). Quotas q or q+1, the q+1 going to the members that own
    the most (then Java member-id order); each keeps its owned partitions lowest first up to
    its quota; the rest go in (topic, partition) order to the members with room, in Java
    member-id order. Exact for all three objectives.

    Most groups of an estate, and most of their what-if rebalances, take this path, so it
    reads the group directly instead of building a `_Problem` (eligible lists, racks)."""
    topics = spec.subscribed_topics()
    scope = frozenset(topics)
    by_id = {m.member_id: m for m in spec.members}
    if not topics or not _alike_without_racks(spec, by_id, scope):
        return None
    lists: dict[str, list[TopicPartition]] = {i: [] for i in java_sorted(by_id)}
    for tp, member_id in owners.items():
        # Only a subscriber keeps a partition (owners hold existing partitions only).
        if tp[0] in scope and tp[0] in by_id[member_id].topics:
            lists[member_id].append(tp)
    subs = [i for i in lists if not by_id[i].topics.isdisjoint(scope)]
    offsets, table = numbered_partitions(spec, topics)
    numbered = closed_form_numbered(
        len(table), [[offsets[t] + p for t, p in lists[i]] for i in subs]
    )
    for i, lst in zip(subs, numbered, strict=True):
        lists[i] = [table[g] for g in lst]
    return lists


def closed_form_numbered(total: int, owned: list[list[int]]) -> list[list[int]]:
    """`_closed_form` on partition numbers (0..total-1 in (topic in Java order, partition)
    order): `owned[j]` are the partitions the j-th subscribing member (in Java order of member
    id) owns; returns each one's target, kept partitions lowest first, then the freed ones.

    >>> closed_form_numbered(5, [[], [4, 0, 1, 2]])  # B owns the most: 3, keeping 0, 1, 2
    [[3, 4], [0, 1, 2]]
    """
    n = len(owned)
    q, extra = divmod(total, n)
    ranked = sorted(range(n), key=lambda j: (-len(owned[j]), j))
    target = [q] * n
    for j in ranked[:extra]:
        target[j] = q + 1
    taken = bytearray(total)
    lists: list[list[int]] = []
    for j, mine in enumerate(owned):
        kept = sorted(mine)[: target[j]]
        for g in kept:
            taken[g] = 1
        lists.append(kept)
    if sum(taken) < total:
        j = 0
        for g in range(total):
            if taken[g]:
                continue
            while len(lists[j]) >= target[j]:
                j += 1
            lists[j].append(g)
    return lists


def rebalance_numbered(total: int, owned: list[list[int]]) -> tuple[list[list[int]], int]:
    """`BalancedAssignor().rebalance` (no loads) of a group given in partition numbers, on
    the closed form's terms (every member subscribes alike, no rack matters; `owned` as
    `closed_form_numbered` takes it, disjoint): the target and the rounds, two when a
    partition moves between members (round 1 withholds it while its owner revokes it)."""
    target = closed_form_numbered(total, owned)
    owner = [-1] * total
    for j, mine in enumerate(owned):
        for g in mine:
            owner[g] = j
    for j, lst in enumerate(target):
        for g in lst:
            if owner[g] != j and owner[g] >= 0:
                return target, 2
    return target, 1


def _alike_without_racks(spec: GroupSpec, by_id: dict[str, Member], scope: frozenset[str]) -> bool:
    """Whether the members that subscribe to some of the `scope` topics all subscribe to the
    same ones of them, and racks are irrelevant (no member has a rack, or no partition of
    those topics has one)."""
    alike: frozenset[str] | None = None
    last: frozenset[str] | None = None
    racks = False
    for m in by_id.values():
        racks = racks or member_rack(m) is not None
        if m.topics is last:  # members listing the same topics share one set
            continue
        last = m.topics
        mine = m.topics & scope
        if mine:
            if alike is None:
                alike = mine
            elif mine != alike:
                return False
    return not (racks and any(any(topic_racks(spec.topics.get(t))) for t in scope))


@mypyc_attr(native_class=False)  # an ordinary class: tests and plugins may patch it
class BalancedAssignor:
    """The `balanced` strategy (docs/strategies.md), run as a cooperative assignor.

    `loads` (integer load per partition, `assignors.analysis.load.balance_loads`) switches
    objective (1) from partition counts to the max member load (`balance_by = "weight" |
    "lag"`): the target is then `assignors.strategies.weighted.assign_by_load`, a heuristic with
    a reported gap, and the cooperative rounds work the same way.
    """

    name: ClassVar[str] = "balanced"
    java_class: ClassVar[str] = "kafka_assignment_planner.BalancedAssignor"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = COOPERATIVE_ONLY
    stateless: ClassVar[bool] = False
    balances_load: ClassVar[bool] = True

    def __init__(self, loads: Mapping[TopicPartition, int] | None = None) -> None:
        self.loads = loads

    def _target(self, spec: GroupSpec, owners: dict[TopicPartition, str]) -> Assignment:
        if self.loads is None:
            return balanced_target(spec, owners)
        return assign_by_load(spec, self.loads, owners)

    def target(self, spec: GroupSpec) -> Assignment:
        if self.loads is None:
            return balanced_target(spec)
        return self._target(spec, live_owners(spec)[0])

    def assign(self, spec: GroupSpec) -> Assignment:
        """One JoinGroup round: the target minus what another member must revoke first."""
        owners, contested = live_owners(spec)
        return withhold(self._target(spec, owners), owners, contested)

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        """The target once, reached in at most two rounds.

        The target is computed from what the members own when the rebalance starts, as a
        KIP-848 coordinator computes one target assignment per group epoch. Round 1 gives
        all of it but what another member must revoke first; round 2 gives the rest, which
        nobody owns any more, and withholds nothing, as every member keeps what round 1 gave
        it. (A target recomputed in round 2 would be optimal too, keeping all of round 1,
        but could break ties between the freed partitions differently: a second solve for an
        assignment no better.)
        """
        owners, contested = live_owners(spec)
        target = self._target(spec, owners)
        first = withhold(target, owners, contested)
        if first == target:
            return Rebalance(target)
        # Round 2 gives exactly what round 1 withheld.
        withheld: list[TopicPartition] = []
        for m, tps in target.items():
            if len(tps) != len(first[m]):
                given = set(first[m])
                withheld.extend(tp for tp in tps if tp not in given)
        sort_partitions(withheld, needs_java_order(spec.subscribed_topics()))
        return Rebalance(target, dict.fromkeys(withheld, 2), 2)
