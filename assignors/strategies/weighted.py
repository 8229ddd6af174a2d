"""Load-balanced assignment: the heuristic behind `balanced` with `balance_by = "weight" | "lag"`.

Kafka has no weighted assignor (every built-in one balances partition counts). This is the
planner's own: minimise the heaviest member's load (the sum of its partitions' integer loads,
see `assignors.analysis.load.weight_units` and `lag_loads`) subject to subscriptions, then the
number of rack mismatches (KIP-881: a member with a rack that is not among the partition's replica
racks, counted only when both are known), then the partitions moved away from their valid
previous owner. Minimising the max load is NP-hard (it contains multiprocessor scheduling,
P||Cmax), so this is a deterministic heuristic that reports its gap to
`assignors.analysis.load.weight_lower_bound` (`assignors.analysis.load.load_gap`):

1. Constructions, each followed by local improvement: longest processing time first (LPT:
   heaviest partition first to the least-loaded eligible member, ties by fewest partitions,
   then rack match, then previous owner, then member id in Java order); plain LPT (ties by
   count and member id only, so the result is never worse than LPT); and two "targeted"
   greedy passes that, under the best max found so far, prefer a rack-matching member, or
   the previous owner (placing previously owned partitions first). Zero-load partitions go
   to the eligible member with the fewest partitions, so they never pile up on one member.
2. Local improvement: while a heaviest member can hand a partition to, or swap one with, an
   eligible member so that both end below the current max, do the best such move. Every move
   strictly lowers the sum of squared loads, so this ends.
3. The best construction by (max load, rack mismatches, partitions not kept, sum of squared
   loads) is polished: moves and swaps that lower (rack mismatches, partitions not kept)
   without raising the max load; a zero-load partition only moves to a member with fewer
   partitions than its owner.

Example: loads 3, 3, 2, 2, 2 on one topic and two members. LPT gives {3, 2, 2} and {3, 2}
(max 7); no single move helps (the 2 would make the other member 7 too), but swapping a 3
with a 2 gives {2, 2, 2} and {3, 3}: max 6, which is the lower bound ceil(12 / 2), so the
gap is 0 and the result provably optimal.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from assignors.model import Assignment, GroupSpec, TopicPartition, java_key, java_sorted

Key = tuple[int, ...]


@dataclass(frozen=True, slots=True, init=False)
class _Instance:
    """The group flattened to indices: members in Java member-id order, partitions in LPT
    order (heaviest first, then topic in Java order, then partition number)."""

    members: tuple[str, ...]
    tps: tuple[TopicPartition, ...]
    load: tuple[int, ...]
    eligible: tuple[tuple[int, ...], ...]
    mismatch: tuple[frozenset[int], ...]  # members whose rack is not among the replica racks
    prev: tuple[int, ...]  # valid, eligible previous owner, or -1

    def __init__(
        self,
        members: tuple[str, ...],
        tps: tuple[TopicPartition, ...],
        load: tuple[int, ...],
        eligible: tuple[tuple[int, ...], ...],
        mismatch: tuple[frozenset[int], ...],
        prev: tuple[int, ...],
    ) -> None:
        object.__setattr__(self, "members", members)
        object.__setattr__(self, "tps", tps)
        object.__setattr__(self, "load", load)
        object.__setattr__(self, "eligible", eligible)
        object.__setattr__(self, "mismatch", mismatch)
        object.__setattr__(self, "prev", prev)


@dataclass(slots=True, init=False)
class _State:
    owner: list[int]
    mload: list[int]
    count: list[int]
    parts: list[set[int]] = field(default_factory=list)

    def __init__(
        self,
        owner: list[int],
        mload: list[int],
        count: list[int],
        parts: list[set[int]] | None = None,
    ) -> None:
        self.owner = owner
        self.mload = mload
        self.count = count
        self.parts = [] if parts is None else parts

    @classmethod
    def empty(cls, inst: _Instance) -> _State:
        n = len(inst.members)
        return cls([-1] * len(inst.tps), [0] * n, [0] * n, [set() for _ in range(n)])

    def put(self, inst: _Instance, i: int, m: int) -> None:
        old = self.owner[i]
        if old >= 0:
            self.mload[old] -= inst.load[i]
            self.count[old] -= 1
            self.parts[old].discard(i)
        self.owner[i] = m
        self.mload[m] += inst.load[i]
        self.count[m] += 1
        self.parts[m].add(i)


def _instance(
    spec: GroupSpec, loads: Mapping[TopicPartition, int], previous: Mapping[TopicPartition, str]
) -> _Instance:
    members = tuple(java_sorted(spec.member_ids))
    index = {m: i for i, m in enumerate(members)}
    racks = {index[m.member_id]: m.rack for m in spec.members if m.rack}
    rank = {t: r for r, t in enumerate(spec.subscribed_topics())}  # Java order of topics
    no_racks: frozenset[int] = frozenset()
    rows = []
    for topic, subs in spec.subscribers().items():
        eligible = tuple(sorted(index[m.member_id] for m in subs))
        replica_racks = spec.topics[topic].replica_racks if racks else ()
        for p in range(spec.partition_count(topic)):
            load = loads.get((topic, p), 0)
            bad = no_racks
            if p < len(replica_racks) and (prs := replica_racks[p]):
                bad = frozenset(i for i in eligible if i in racks and racks[i] not in prs)
            owner = previous.get((topic, p)) if previous else None
            prev = index.get(owner, -1) if owner is not None else -1
            if prev not in eligible:
                prev = -1
            rows.append(((-load, rank[topic], p), (topic, p), load, eligible, bad, prev))
    rows.sort(key=lambda r: r[0])
    return _Instance(
        members,
        tuple(r[1] for r in rows),
        tuple(r[2] for r in rows),
        tuple(r[3] for r in rows),
        tuple(r[4] for r in rows),
        tuple(r[5] for r in rows),
    )


def _easy_bound(inst: _Instance) -> int:
    """max(heaviest partition, ceil(total / members that can take any)): a cheap lower bound
    (the class-graph bound with every class at once); reaching it proves the max optimal."""
    able = len({m for eligible in inst.eligible for m in eligible})
    return max(max(inst.load, default=0), -(-sum(inst.load) // able) if able else 0)


# ---------------------------------------------------------------------------- constructions

Chooser = Callable[[_Instance, _State, int], int]


def _greedy(inst: _Instance, choose: Chooser, owned_first: bool = False) -> _State:
    """Place the partitions in LPT order (owned_first: those with a previous owner first, so
    unowned partitions do not take the room their owners need to keep theirs)."""
    st = _State.empty(inst)
    order = list(range(len(inst.tps)))
    if owned_first:
        order.sort(key=lambda i: inst.prev[i] < 0)  # stable: LPT order within
    for i in order:
        st.put(inst, i, choose(inst, st, i))
    return st


def _lpt_plain(inst: _Instance, st: _State, i: int) -> int:
    return min(inst.eligible[i], key=lambda m: (st.mload[m], st.count[m], m))


def _lpt_preferring(inst: _Instance, st: _State, i: int) -> int:
    bad, prev = inst.mismatch[i], inst.prev[i]
    if inst.load[i] == 0:  # a zero load changes no max: spread by count
        return min(inst.eligible[i], key=lambda m: (st.count[m], m in bad, m != prev, m))
    return min(inst.eligible[i], key=lambda m: (st.mload[m], st.count[m], m in bad, m != prev, m))


def _targeted(cap: int, sticky_first: bool) -> Chooser:
    """Greedy under a max load `cap`: the best-placed member that stays within the cap."""

    def choose(inst: _Instance, st: _State, i: int) -> int:
        w, bad, prev = inst.load[i], inst.mismatch[i], inst.prev[i]
        if w == 0:
            return _lpt_preferring(inst, st, i)
        fits = [m for m in inst.eligible[i] if st.mload[m] + w <= cap]
        if not fits:
            return _lpt_preferring(inst, st, i)
        if sticky_first:
            return min(fits, key=lambda m: (m != prev, m in bad, st.mload[m], st.count[m], m))
        return min(fits, key=lambda m: (m in bad, m != prev, st.mload[m], st.count[m], m))

    return choose


# ------------------------------------------------------------------------ local improvement


def _relief(inst: _Instance, st: _State, h: int, top: int) -> tuple[Key, int, int] | None:
    """The best move taking load off member h (at the max `top`) with both members ending
    below `top`, else the best such swap: (key, partition moved off h, partition moved onto
    h or -1); the key's third entry is the other member.

    A move's best target is the least-loaded other eligible member, the same for every
    partition of a topic class: found once per class.
    """
    best: tuple[Key, int, int] | None = None
    least: dict[tuple[int, ...], int] = {}
    load = st.mload
    for i in st.parts[h]:
        w = inst.load[i]
        if w == 0:
            continue
        eligible = inst.eligible[i]
        m = least.get(eligible)
        if m is None:
            m = min((x for x in eligible if x != h), key=lambda x: (load[x], x), default=-1)
            least[eligible] = m
        if m >= 0 and load[m] + w < top:
            move: Key = (max(load[m] + w, top - w), 0, m, i)
            if best is None or move < best[0]:
                best = (move, i, -1)
    return best if best is not None else _swap_relief(inst, st, h, top)


def _swap_relief(inst: _Instance, st: _State, h: int, top: int) -> tuple[Key, int, int] | None:
    """The best swap of a partition i of h with a lighter partition j of another member m.

    With room = top - load(m), the swap is useful when d = load(i) - load(j) is in
    (0, room), and best when d is nearest room / 2 (the new peak max(load(m) + d, top - d)
    falls, then rises, as d grows): a binary search among m's partitions sorted by load
    finds the two candidates around it.
    """
    best: tuple[Key, int, int] | None = None
    takers: dict[int, tuple[list[int], list[int]]] = {}  # m -> sorted loads, partitions
    for i in st.parts[h]:
        w = inst.load[i]
        for m in inst.eligible[i] if w > 0 else ():
            room = top - st.mload[m]
            if m == h or room <= 1:
                continue
            if m not in takers:
                pairs = sorted((inst.load[j], j) for j in st.parts[m] if h in inst.eligible[j])
                takers[m] = ([x for x, _ in pairs], [j for _, j in pairs])
            loads, parts = takers[m]
            k = bisect_left(loads, w - room // 2)
            for idx in (k - 1, k):
                d = w - loads[idx] if 0 <= idx < len(loads) else 0
                if 0 < d < room:
                    swap: Key = (max(st.mload[m] + d, top - d), 1, m, i, parts[idx])
                    if best is None or swap < best[0]:
                        best = (swap, i, parts[idx])
    return best


def _improve_max(inst: _Instance, st: _State) -> None:
    """Moves and swaps off the heaviest members while they lower it (see module docstring)."""
    for _ in range(10 * len(inst.tps) + 10):  # a guard only: every step lowers sum(load^2)
        top = max(st.mload, default=0)
        if top == 0:
            return
        progressed = False
        for h in [m for m, load in enumerate(st.mload) if load == top]:
            found = _relief(inst, st, h, top)
            if found is None:
                return  # h cannot shed load by one move or swap: the max stays
            key, i, j = found
            m = key[2]
            st.put(inst, i, m)
            if j >= 0:
                st.put(inst, j, h)
            progressed = True
        if not progressed:
            return


# ---------------------------------------------------------------- racks, then stickiness


def _cost(inst: _Instance, i: int, m: int) -> tuple[int, int]:
    """(rack mismatch, moved away from its previous owner) of partition i on member m."""
    prev = inst.prev[i]
    return (m in inst.mismatch[i], prev >= 0 and m != prev)


def _better_move(inst: _Instance, st: _State, i: int, top: int) -> int:
    """An eligible member that lowers partition i's (mismatch, not kept) within the max, or -1."""
    o, w = st.owner[i], inst.load[i]
    cur = _cost(inst, i, o)
    best, best_key = -1, None
    for m in inst.eligible[i]:
        if m == o or _cost(inst, i, m) >= cur or st.mload[m] + w > top:
            continue
        if w == 0 and st.count[m] >= st.count[o]:
            continue  # a zero-load partition never piles up
        key = (*_cost(inst, i, m), st.mload[m], st.count[m], m)
        if best_key is None or key < best_key:
            best, best_key = m, key
    return best


def _better_swap(inst: _Instance, st: _State, i: int, top: int) -> int:
    """A partition j to swap with i that lowers their (mismatches, not kept), or -1."""
    o, w = st.owner[i], inst.load[i]
    cur = _cost(inst, i, o)
    best, best_key = -1, None
    for m in inst.eligible[i]:
        if m == o or _cost(inst, i, m) >= cur:
            continue
        for j in st.parts[m]:
            d = w - inst.load[j]
            if o not in inst.eligible[j] or st.mload[m] + d > top or st.mload[o] - d > top:
                continue
            before = tuple(map(sum, zip(cur, _cost(inst, j, m), strict=True)))
            after = tuple(map(sum, zip(_cost(inst, i, m), _cost(inst, j, o), strict=True)))
            if after < before:
                key = (*after, m, j)
                if best_key is None or key < best_key:
                    best, best_key = j, key
    return best


def _polish(inst: _Instance, st: _State) -> None:
    """Lower (rack mismatches, partitions not kept) by moves and swaps, never raising the max.

    Each step strictly lowers that pair lexicographically, so this ends.
    """
    top = max(st.mload, default=0)
    changed = True
    while changed:
        changed = False
        for i in range(len(inst.tps)):
            o = st.owner[i]
            if _cost(inst, i, o) == (0, 0):
                continue
            m = _better_move(inst, st, i, top)
            if m >= 0:
                st.put(inst, i, m)
                changed = True
                continue
            j = _better_swap(inst, st, i, top)
            if j >= 0:
                st.put(inst, i, st.owner[j])
                st.put(inst, j, o)
                changed = True


def _score(inst: _Instance, st: _State) -> Key:
    mismatches = sum(1 for i, m in enumerate(st.owner) if m in inst.mismatch[i])
    moved = sum(1 for i, m in enumerate(st.owner) if m != inst.prev[i] and inst.prev[i] >= 0)
    return (max(st.mload, default=0), mismatches, moved, sum(x * x for x in st.mload))


def _to_assignment(spec: GroupSpec, inst: _Instance, st: _State) -> Assignment:
    out: Assignment = {m.member_id: [] for m in spec.members}
    for i in sorted(range(len(inst.tps)), key=lambda i: (java_key(inst.tps[i][0]), inst.tps[i][1])):
        out[inst.members[st.owner[i]]].append(inst.tps[i])
    return out


def assign_by_load(
    spec: GroupSpec,
    loads: Mapping[TopicPartition, int],
    previous_valid_owners: Mapping[TopicPartition, str],
) -> Assignment:
    """Assign every partition of the group's subscribed topics, minimising the max member load.

    `loads` are integer loads (absent partitions: 0), e.g. `assignors.analysis.load.weight_loads` or
    `lag_loads`. `previous_valid_owners` is partition -> its valid previous owner
    (`assignors.ownership.valid_owned`, inverted); owners that left or no longer subscribe
    are ignored. Deterministic: the result depends on neither the order of members nor of
    the mappings. See the module docstring for the method; `assignors.analysis.load.load_gap` gives
    the gap to the proven lower bound.

    >>> from assignors.model import Member, TopicMetadata
    >>> spec = GroupSpec("g", (Member("a", frozenset({"t"})), Member("b", frozenset({"t"}))),
    ...                  {"t": TopicMetadata("t", 4)})
    >>> loads = {("t", 0): 5, ("t", 1): 3, ("t", 2): 3, ("t", 3): 1}
    >>> assign_by_load(spec, loads, {("t", 1): "b"})
    {'a': [('t', 0), ('t', 3)], 'b': [('t', 1), ('t', 2)]}
    """
    inst = _instance(spec, loads, previous_valid_owners)
    if not inst.members:
        return {}
    first = _greedy(inst, _lpt_preferring)
    _improve_max(inst, first)
    candidates = [first]
    if max(first.mload) > _easy_bound(inst):  # not proven optimal: try more constructions
        plain = _greedy(inst, _lpt_plain)
        _improve_max(inst, plain)
        candidates.append(plain)
    cap = min(max(st.mload) for st in candidates)
    constrained = any(inst.mismatch) or any(p >= 0 for p in inst.prev)
    if constrained:  # racks or stickiness to care about
        for sticky_first in (False, True):
            st = _greedy(inst, _targeted(cap, sticky_first), owned_first=sticky_first)
            _improve_max(inst, st)
            candidates.append(st)
    best = min(candidates, key=lambda st: _score(inst, st))
    if constrained:
        _polish(inst, best)
    return _to_assignment(spec, inst, best)
