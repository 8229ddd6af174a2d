"""librdkafka 2.16.0's `cooperative-sticky`, as its group leader runs it.

librdkafka's sticky assignor (`rdkafka_sticky_assignor.c`) is a port of Java 2.4's
`AbstractStickyAssignor` general algorithm and nothing else: no constrained path for equal
subscriptions, but the old `sortPartitions` branch for them (when every member could take
every partition, the partitions owned are listed round robin from the members with the most
of them). Its result depends on how it iterates its hash maps and sorts its lists, which this
port follows step by step:

* `rd_map_t` iterates in reverse insertion order (each new element goes to the head of the
  list) and keeps an element's position when its value is replaced;
* lists are sorted with `qsort` (glibc's merge sort, stable); members by partition count,
  then member id (`strcmp`); partitions by potential members, then topic and partition;
* partition lists delete and find the first equal element, `upsert` appends.

What the leader sees, and how the spec stands for it: members in the JoinGroup order (the
spec's member order), a member with no topic left out (its metadata does not parse);
generation None as -1 (a subscription below v2); owned partitions as reported, duplicates
and partitions that do not exist included. The topics in code point order: librdkafka's
metadata lists them in the order of the leader's request, the first member's sorted
subscription first, and the order only matters when every member subscribes to the same
topics (a broker answering in another order would list the unowned partitions of such a
group in another order). Racks (KIP-881) as librdkafka decides them, over the members'
racks and the replicas' racks; a member without a rack counts as on the empty rack, what a
librdkafka member without `client.rack` sends (`""`, which the exporter records as null):
in a rack-aware group it matches no partition: it keeps none of what it owned, and is passed
over when partitions are first handed out on their racks (seen live; a Java member without
a rack sends null, which matches every partition).

Deliberate fidelity, where librdkafka differs from the Java code it ports:

* a partition two members claim at any one generation is dropped for all its claimants
  (Java: only a tie at the top); the "current owner" used to move a partition is the last
  claimant in member order, which may not be the one that keeps it (a stale claimant), so a
  partition can end up in two members' lists;
* the cooperative step (`rd_kafka_cooperative_protocol_adjust_assignment`) is librdkafka's:
  a partition assigned to another member than its owner (the last claimant in member order)
  is withheld, one nobody owns is assigned, and one somebody owns that the assignor gave to
  nobody (a topic no member subscribes to any more) goes back to its owner; a member that
  is not given back all it owned revokes and rejoins, which starts the next round;
* partition movements (`PartitionMovements_t`): a partition that moves back to where it
  came from keeps its old record; replacing a record frees it while it may still key
  another partition's list; and undoing an earlier move looks for moves from the new owner
  to the current one (Java: to the one the partition came from), then moves the first
  partition of that list through a pointer the move itself shifts, so the list's next
  partition moves (or, when it was the only one, freed memory is read). Where librdkafka
  fails an assertion, dereferences NULL or reads freed memory the variant raises
  `ClientAssignorFailure`: the leader's process dies (a segmentation fault, seen live,
  for the freed list).

Live (librdkafka's mock cluster): topics ta (5), tb (3), tc (4), every member on all three;
c1 owns all 12 at one generation and c2 joins (member ids sort c1 < c2):

>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> topics = {t: TopicMetadata(t, n) for t, n in {"ta": 5, "tb": 3, "tc": 4}.items()}
>>> every = frozenset(topics)
>>> all12 = tuple((t, p) for t, n in (("ta", 5), ("tb", 3), ("tc", 4)) for p in range(n))
>>> spec = GroupSpec("g", (Member("c1", every, owned=all12, generation=1),
...                        Member("c2", every)), topics)
>>> got = LibrdkafkaCooperativeStickyAssignor().rebalance(spec)
>>> {m: sorted(tps) for m, tps in got.assignment.items()}
{'c1': [('tb', 1), ('tb', 2), ('tc', 0), ('tc', 1), ('tc', 2), ('tc', 3)], \
'c2': [('ta', 0), ('ta', 1), ('ta', 2), ('ta', 3), ('ta', 4), ('tb', 0)]}
>>> got.rounds
2
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import ClassVar

from mypy_extensions import mypyc_attr

from assignors.model import Assignment, GroupSpec, Rebalance, TopicPartition
from assignors.ownership import MAX_ROUNDS, max_generation, next_round, received_rounds
from assignors.protocol import COOPERATIVE_ONLY, RebalanceProtocol
from assignors.racks import topic_racks
from assignors.strategies.clients import ClientAssignorFailure

LIBRARY = "librdkafka"
STRATEGY = "cooperative-sticky"
NO_GENERATION = -1
"""librdkafka's `rkgm_generation` for a member whose subscription carries none."""
NO_RACK = ""
"""The rack of a member without one: librdkafka's default `client.rack` is the empty string."""

_Pair = tuple[str, str]  # (source, destination) member ids of a partition's move


class _Crash(Exception):
    """The leader process dies (a failed assertion, a NULL dereference) or its behaviour is
    undefined (it reads freed memory)."""


class _Key:
    """A `ConsumerPair_t`: a partition's movement record, and the key of the list of its
    topic's partitions that made the same move. Freed when the record is replaced."""

    def __init__(self, src: str, dst: str) -> None:
        self.src = src
        self.dst = dst
        self.freed = False


class _Moved:
    """One (source, destination) list of a topic's movements, under the key it was made with."""

    def __init__(self, key: _Key) -> None:
        self.key = key
        self.parts: list[TopicPartition] = []


def _del_first(lst: list[TopicPartition], tp: TopicPartition) -> None:
    """`rd_kafka_topic_partition_list_del`: the first equal element, if any."""
    if tp in lst:
        lst.remove(tp)


class _Movements:
    """librdkafka's `PartitionMovements_t`, its defects included: a record is never removed
    (a partition that moves back keeps its stale record), and replacing a record frees the
    old one, which may still be the key of another partition's list."""

    def __init__(self) -> None:
        self.records: dict[TopicPartition, _Key] = {}
        self.by_topic: dict[str, dict[_Pair, _Moved]] = {}

    def _list(self, topic_moves: dict[_Pair, _Moved], pair: _Pair) -> _Moved | None:
        found = topic_moves.get(pair)
        if found is not None and found.key.freed:
            raise _Crash("it looks up a partition movement under a freed key (use after free)")
        return found

    def actual(self, tp: TopicPartition, old: str, new: str) -> _Moved | None:
        """`getTheActualPartitionToBeMoved`: None to move `tp` itself, else the list whose
        first partition moves instead, one that moved from `new` to `old` before. (Java
        looks for moves from `new` to where tp came from; librdkafka builds the pair before
        it reads tp's record.)"""
        topic_moves = self.by_topic.get(tp[0])
        if topic_moves is None:
            return None
        record = self.records.get(tp)
        if record is not None and record.dst != old:
            raise _Crash("an assertion fails: a partition's movement record is stale")
        return self._list(topic_moves, (new, old))

    def move(self, tp: TopicPartition, alias: _Moved | None, old: str, new: str) -> TopicPartition:
        """`PartitionMovements_movePartition` of `tp` (`alias`: the list whose first element
        the caller's pointer is); returns the partition that pointer names afterwards."""
        record = self.records.get(tp)
        if record is None:
            self._add(tp, _Key(old, new))
            return tp
        topic_moves = self.by_topic.get(tp[0])
        if topic_moves is None:
            raise _Crash("it dereferences NULL: a stale movement record's topic has no moves")
        moved = self._list(topic_moves, (record.src, record.dst))
        if moved is None:
            raise _Crash("an assertion fails: a stale movement record has no list")
        _del_first(moved.parts, tp)
        if not moved.parts:
            del topic_moves[(record.src, record.dst)]
        # the caller's pointer into a shortened list now names the next element, or freed memory
        now = tp if alias is None else (alias.parts[0] if alias.parts else None)
        if not topic_moves:
            if now is None:
                raise _Crash("it reads a freed partition list (use after free)")
            del self.by_topic[now[0]]
        if record.dst != old:
            raise _Crash("an assertion fails: a partition moves from where it is not")
        if now is None:
            raise _Crash("it reads a freed partition list (use after free)")
        if record.src != new:
            self._add(now, _Key(record.src, new))
        return now

    def _add(self, tp: TopicPartition, key: _Key) -> None:
        replaced = self.records.get(tp)
        if replaced is not None:
            replaced.freed = True
        self.records[tp] = key
        topic_moves = self.by_topic.setdefault(tp[0], {})
        pair = (key.src, key.dst)
        moved = self._list(topic_moves, pair)
        if moved is None:
            moved = _Moved(key)
            topic_moves[pair] = moved
        moved.parts.append(tp)


class RdMember:
    """A group member as librdkafka's leader parses it from the JoinGroup response."""

    def __init__(
        self,
        member_id: str,
        topics: frozenset[str],
        owned: Sequence[TopicPartition],
        generation: int,
        rack: str | None,
    ) -> None:
        self.member_id = member_id
        self.topics = topics
        self.owned = list(owned)
        self.generation = generation
        self.rack = rack


class RdTopic:
    """An eligible topic: its partition count and each partition's replica racks."""

    def __init__(self, name: str, partitions: int, racks: Sequence[frozenset[str]]) -> None:
        self.name = name
        self.partitions = partitions
        self.racks = racks


def _score(lists: Iterable[list[TopicPartition]]) -> int:
    """`getBalanceScore`: the sum of size differences over all pairs."""
    sizes = [len(v) for v in lists]
    return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])


class _Racks:
    """`rd_kafka_rack_info_t`: each member's rack (None: null) and each partition's racks."""

    def __init__(
        self, member: dict[str, str | None], part: dict[TopicPartition, frozenset[str]]
    ) -> None:
        self.member = member
        self.part = part

    def mismatch(self, consumer: str, tp: TopicPartition) -> bool:
        """`rd_kafka_racks_mismatch`: the member has a rack that none of tp's replicas is on."""
        rack = self.member.get(consumer)
        if rack is None:
            return False
        racks = self.part.get(tp)
        return racks is None or rack not in racks


def _rack_info(members: list[RdMember], topics: list[RdTopic]) -> _Racks | None:
    """`rd_kafka_rack_info_new`: None unless `rd_kafka_use_rack_aware_assignment` holds."""
    consumer_racks = {m.rack for m in members if m.rack}
    if not consumer_racks:
        return None
    part: dict[TopicPartition, frozenset[str]] = {}
    for t in topics:
        for p in range(t.partitions):
            part[(t.name, p)] = t.racks[p] if p < len(t.racks) else frozenset()
    union = frozenset().union(*part.values())
    if not union or consumer_racks.isdisjoint(union):
        return None
    if all(len(r) == len(union) for r in part.values()):
        return None  # every partition on every rack
    return _Racks({m.member_id: m.rack for m in members}, part)


class _Run:
    """One run of `rd_kafka_sticky_assignor_assign_cb`, its maps and lists as librdkafka
    keeps them (a dict's insertion order is the map's; iterating the map is `reversed`)."""

    def __init__(self, members: list[RdMember], topics: list[RdTopic]) -> None:
        self.members = members
        self.subs: dict[str, frozenset[str]] = {m.member_id: m.topics for m in members}
        self.current: dict[str, list[TopicPartition]] = {}
        self.pot: dict[str, list[TopicPartition]] = {}
        self.pot_set: dict[str, set[TopicPartition]] = {}
        self.p2c: dict[TopicPartition, list[str]] = {}
        self.prev: dict[TopicPartition, str] = {}
        self.cpc: dict[TopicPartition, str] = {}  # currentPartitionConsumer
        self.sorted_subs: list[str] = []
        self.sorted_parts: list[TopicPartition] = []
        self.unassigned: list[TopicPartition] = []
        self.revocation_required = False
        self.movements = _Movements()
        self.racks = _rack_info(members, topics)
        self._prepopulate()
        self._potential(topics)

    # --- set-up -----------------------------------------------------------------------

    def _prepopulate(self) -> None:
        """`prepopulateCurrentAssignments`: the highest-generation claimant of a partition
        keeps it, the next one is its previous owner; any two claims at one generation drop
        it (and its current consumer)."""
        claims: dict[TopicPartition, list[tuple[str, int]]] = {}
        for m in self.members:
            self.current[m.member_id] = []
            self.pot[m.member_id] = []
            self.pot_set[m.member_id] = set()
            for tp in m.owned:
                claims.setdefault(tp, []).append((m.member_id, m.generation))
                self.cpc[tp] = m.member_id
        for tp in reversed(claims):
            by_gen = sorted(claims[tp], key=_generation)
            if any(by_gen[i - 1][1] == by_gen[i][1] for i in range(1, len(by_gen))):
                self.cpc.pop(tp, None)
                continue
            self.current[by_gen[-1][0]].append(tp)
            if len(by_gen) >= 2:
                self.prev[tp] = by_gen[-2][0]

    def _potential(self, topics: list[RdTopic]) -> None:
        """`populatePotentialMaps`, topic by topic, each topic's subscribers in member order."""
        for t in topics:
            parts = [(t.name, p) for p in range(t.partitions)]
            for m in self.members:
                if t.name not in m.topics:
                    continue
                self.pot[m.member_id].extend(parts)
                self.pot_set[m.member_id].update(parts)
                for tp in parts:
                    self.p2c.setdefault(tp, []).append(m.member_id)

    def _identical(self) -> bool:
        """`areSubscriptionsIdentical`: every partition the same members, every member the
        same partitions."""
        if any(a != b for a, b in pairwise(self.p2c.values())):
            return False
        return all(
            len(a) == len(b) and (not a or set(a) <= set(b)) for a, b in pairwise(self.pot.values())
        )

    def _sort_partitions(self) -> list[TopicPartition]:
        """`sortPartitions`. A group is never fresh here (every member has a current
        assignment, if empty), so equal subscriptions always take the round robin."""
        if not self._identical():
            p2c = self.p2c
            return sorted(p2c, key=lambda tp: (len(p2c[tp]), tp))
        lists: dict[str, list[TopicPartition]] = {}
        for consumer in reversed(self.current):
            mine = self.current[consumer]
            mine.sort()  # in place: librdkafka sorts the current assignment itself
            kept = [tp for tp in mine if tp in self.p2c]
            if kept:
                lists[consumer] = kept
        out = _round_robin(lists, self.prev)
        was_empty = not out
        listed = set(out)
        out.extend(tp for tp in reversed(self.p2c) if tp not in listed)
        if was_empty:
            out.sort()
        return out

    def _drop_invalid(self) -> None:
        """Owned partitions that no longer exist, of topics the member left, or (rack-aware)
        on other racks are dropped; the rest need no assignment."""
        racks = self.racks
        for consumer in reversed(self.current):
            topics = self.subs[consumer]
            kept: list[TopicPartition] = []
            for tp in self.current[consumer]:
                if tp not in self.p2c:
                    self.cpc.pop(tp, None)
                elif tp[0] not in topics or (racks is not None and racks.mismatch(consumer, tp)):
                    self.revocation_required = True
                else:
                    _del_first(self.unassigned, tp)
                    kept.append(tp)
            self.current[consumer][:] = kept

    # --- the lists librdkafka dereferences ----------------------------------------------

    def _list(self, consumer: str | None) -> list[TopicPartition]:
        mine = self.current.get(consumer) if consumer is not None else None
        if mine is None:
            raise _Crash("it dereferences NULL: a member taken out of the reassignment")
        return mine

    def _resort(self) -> None:
        current = self.current
        self.sorted_subs.sort(key=lambda c: (len(current[c]), c))

    # --- balance ------------------------------------------------------------------------

    def run(self) -> dict[str, list[TopicPartition]]:
        self.sorted_parts = self._sort_partitions()
        self.unassigned = list(self.sorted_parts)
        self._drop_invalid()
        self.sorted_subs = list(reversed(self.current))
        self._resort()
        self._balance()
        return {m.member_id: list(self.current[m.member_id]) for m in self.members}

    def _balance(self) -> None:
        initializing = not self.current[self.sorted_subs[-1]]
        leftover = self.unassigned
        if self.racks is not None:
            leftover = list(self.unassigned)
            self._maybe_assign(leftover, on_rack=True)
        self._maybe_assign(leftover, on_rack=False)
        for tp in reversed(self.p2c):
            if len(self.p2c[tp]) < 2:
                _del_first(self.sorted_parts, tp)
                _del_first(self.unassigned, tp)
        fixed = self._take_fixed()
        before = {c: list(v) for c, v in self.current.items()}
        before_cpc = dict(self.cpc)
        if not self.revocation_required and self.unassigned:
            self._perform(self.unassigned)
        performed = self._perform(self.sorted_parts)
        if (
            not initializing
            and performed
            and _score(self.current.values()) >= _score(before.values())
        ):
            for c, v in before.items():
                self.current[c] = v
            self.cpc = before_cpc
        for c, v in fixed.items():
            self.current[c] = v
            self.sorted_subs.append(c)
        self._resort()

    def _maybe_assign(self, partitions: list[TopicPartition], on_rack: bool) -> None:
        """`maybeAssign`: each partition to the least loaded member that may take it (on its
        rack, in the rack-aware pass, which takes what it assigns off the list)."""
        racks = self.racks if on_rack else None
        i = 0
        while i < len(partitions):
            tp = partitions[i]
            if self.p2c.get(tp) and self._assign_one(tp, racks) and on_rack:
                del partitions[i]
            else:
                i += 1

    def _assign_one(self, tp: TopicPartition, racks: _Racks | None) -> bool:
        for consumer in self.sorted_subs:
            if tp not in self.pot_set[consumer]:
                continue
            if racks is not None and racks.mismatch(consumer, tp):
                continue
            self.current[consumer].append(tp)
            self.cpc[tp] = consumer
            self._resort()
            return True
        return False

    def _take_fixed(self) -> dict[str, list[TopicPartition]]:
        """Members that cannot take part in a reassignment leave it (and the current
        assignment) until the end."""
        fixed: dict[str, list[TopicPartition]] = {}
        i = 0
        while i < len(self.sorted_subs):
            consumer = self.sorted_subs[i]
            if self._can_move(consumer):
                i += 1
                continue
            del self.sorted_subs[i]
            fixed[consumer] = self.current.pop(consumer)
        return fixed

    def _can_move(self, consumer: str) -> bool:
        mine = self.current[consumer]
        if len(mine) < len(self.pot[consumer]):
            return True
        return any(len(self.p2c.get(tp, ())) >= 2 for tp in mine)

    def _balanced(self) -> bool:
        """`isBalanced`: within one partition, or no member could take a partition from a
        member with more."""
        subs = self.sorted_subs
        if not subs:
            raise _Crash("it dereferences NULL: no member is left to balance")
        current = self.current
        low, high = len(current[subs[0]]), len(current[subs[-1]])
        if low >= high - 1:
            return True
        holder: dict[TopicPartition, str] = {}
        for c in reversed(current):
            for tp in current[c]:
                holder[tp] = c
        for c in subs:
            count = len(current[c])
            if count >= high:
                break  # nobody holds more: neither this member nor a later one can gain
            pot = self.pot[c]
            if count == len(pot):
                continue
            have = set(current[c])
            for tp in pot:
                if tp in have:
                    continue
                other = holder.get(tp)
                if other is None:
                    raise _Crash("it dereferences NULL: a partition nobody holds")
                if count < len(current[other]):
                    return False
        return True

    def _perform(self, partitions: list[TopicPartition]) -> bool:
        """`performReassignments`: passes over the partitions until one moves none."""
        performed = False
        while True:
            modified = False
            i = 0
            while i < len(partitions) and not self._balanced():
                if self._reassign_one(partitions[i]):
                    performed = modified = True
                i += 1
            if not modified:
                return performed

    def _reassign_one(self, tp: TopicPartition) -> bool:
        consumers = self.p2c.get(tp)
        if consumers is None:
            raise _Crash("it dereferences NULL: a partition without potential members")
        consumer = self.cpc.get(tp)
        if consumer is None:
            raise _Crash("an assertion fails: a partition without a current member")
        count = len(self._list(consumer))
        prev = self.prev.get(tp)
        if prev is not None and count > len(self._list(prev)) + 1:
            self._move_to(tp, prev)  # back to its previous owner, subscribed or not
            return True
        if self.racks is not None and self._rack_move(tp, consumer, count, consumers):
            return True
        for other in consumers:
            if other != consumer and count > len(self._list(other)) + 1:
                self._reassign(tp)
                return True
        return False

    def _rack_move(self, tp: TopicPartition, consumer: str, count: int, others: list[str]) -> bool:
        """A member on tp's rack with fewer partitions lets tp move (to whichever member the
        plain step picks: the least loaded, on a rack or not)."""
        racks = self.racks
        assert racks is not None
        rack = racks.member.get(consumer)
        on = racks.part.get(tp)
        if rack is None or not on or rack not in on:
            return False
        for other in others:
            other_rack = racks.member.get(other)
            if other_rack is None or other_rack not in on:
                continue
            if count > len(self._list(other)) + 1:
                self._reassign(tp)
                return True
        return False

    def _reassign(self, tp: TopicPartition) -> None:
        """`reassignPartition`: to the least loaded member that may take it."""
        for consumer in self.sorted_subs:
            if tp in self.pot_set[consumer]:
                self._move_to(tp, consumer)
                return
        raise _Crash("an assertion fails: no member for a partition")

    def _move_to(self, tp: TopicPartition, new: str) -> None:
        """`reassignPartitionToConsumer`, then `processPartitionMovement`."""
        consumer = self.cpc[tp]
        alias = self.movements.actual(tp, consumer, new)
        moving = tp if alias is None else alias.parts[0]
        old = self.cpc.get(moving)
        if old is None:
            raise _Crash("it dereferences NULL: a partition without a current member")
        now = self.movements.move(moving, alias, old, new)
        self._list(new).append(now)
        _del_first(self._list(old), now)
        self.cpc[now] = new
        self._resort()


def _generation(claim: tuple[str, int]) -> int:
    return claim[1]


def _round_robin(
    lists: dict[str, list[TopicPartition]], prev: dict[TopicPartition, str]
) -> list[TopicPartition]:
    """`sortPartitions` for equal subscriptions: from the member with the most partitions
    (ties: the greater member id), one at a time, one that had another owner before first."""
    consumers = sorted(lists, key=lambda c: (len(lists[c]), c))
    out: list[TopicPartition] = []
    while consumers:
        remaining = lists[consumers[-1]]
        moved_before = [tp for tp in remaining if tp in prev]
        if moved_before:
            tp = moved_before[0]
            _del_first(remaining, tp)
            out.append(tp)
        elif remaining:
            out.append(remaining.pop(0))
        else:
            consumers.pop()
            continue
        consumers.sort(key=lambda c: (len(lists[c]), c))
    return out


def assign_cb(members: list[RdMember], topics: list[RdTopic]) -> dict[str, list[TopicPartition]]:
    """librdkafka's `assign_cb` for `members` (JoinGroup order) over `topics` (the eligible
    ones, in metadata order): each member's partitions, in librdkafka's list order. Raises
    `ClientAssignorFailure` where the leader would die."""
    if not members:
        return {}
    try:
        return _Run(members, topics).run()
    except _Crash as crash:
        raise ClientAssignorFailure(
            LIBRARY,
            STRATEGY,
            f"crashes the leader: {crash}. Its process dies before it sends SyncGroup; the"
            " group rebalances again without it once its session times out",
        ) from crash


def adjust_cooperative(
    members: list[RdMember], assigned: dict[str, list[TopicPartition]]
) -> dict[str, list[TopicPartition]]:
    """`rd_kafka_cooperative_protocol_adjust_assignment`. A partition's owner, and the member
    it is assigned to, is the last in member order to claim it. Kept where assigned to its
    owner, withheld where assigned to another member, assigned where nobody owns it, and
    handed back to its owner where assigned to nobody."""
    owner: dict[TopicPartition, int] = {}
    to: dict[TopicPartition, int] = {}
    for i, m in enumerate(members):
        for tp in assigned.get(m.member_id, ()):
            to[tp] = i
        for tp in m.owned:
            owner[tp] = i
    out: list[list[TopicPartition]] = [[] for _ in members]
    # each of librdkafka's sets is built walking another map and then walked itself: both
    # walks reverse insertion order, so the lists come out in `to`'s and `owner`'s order
    for tp, i in to.items():
        if owner.get(tp) == i:
            out[i].append(tp)
    for tp, i in to.items():
        if tp not in owner:
            out[i].append(tp)
    for tp, i in owner.items():
        if tp not in to:
            out[i].append(tp)
    return {m.member_id: out[i] for i, m in enumerate(members)}


def leader_view(spec: GroupSpec) -> tuple[list[RdMember], list[RdTopic]]:
    """The members and eligible topics librdkafka's leader passes its assignor."""
    members = [
        RdMember(
            m.member_id,
            m.topics,
            m.owned,
            NO_GENERATION if m.generation is None else m.generation,
            NO_RACK if m.rack is None else m.rack,
        )
        for m in spec.members
        if m.topics
    ]
    topics = [
        RdTopic(t, spec.partition_count(t), topic_racks(spec.topics.get(t)))
        for t in sorted(spec.subscribed_topics())
    ]
    return members, topics


def one_round(spec: GroupSpec) -> Assignment:
    """One JoinGroup round: the assignor's result after the cooperative step."""
    members, topics = leader_view(spec)
    adjusted = adjust_cooperative(members, assign_cb(members, topics))
    return {m.member_id: adjusted.get(m.member_id, []) for m in spec.members}


def _loses(spec: GroupSpec, out: Assignment) -> bool:
    """Whether a member is not given back all it owned: it revokes and rejoins, and the group
    runs another round."""
    return any(not set(m.owned) <= set(out[m.member_id]) for m in spec.members)


@mypyc_attr(native_class=False)  # an ordinary class: tests and plugins may patch it
class LibrdkafkaCooperativeStickyAssignor:
    """librdkafka's `cooperative-sticky` (`assign`: one round; `rebalance`: rounds until no
    member revokes anything, each at the next generation with what the last round gave)."""

    name: ClassVar[str] = "cooperative-sticky@librdkafka"
    kafka_name: ClassVar[str] = "cooperative-sticky"
    library: ClassVar[str] = LIBRARY
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = COOPERATIVE_ONLY
    stateless: ClassVar[bool] = False
    balances_load: ClassVar[bool] = False

    def assign(self, spec: GroupSpec) -> Assignment:
        return one_round(spec)

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        history: list[Assignment] = []
        generation = max_generation(spec.members)
        while len(history) < MAX_ROUNDS:
            out = one_round(spec)
            if history and _same(out, history[-1]):
                break
            history.append(out)
            if not _loses(spec, out):
                break
            generation += 1
            spec = next_round(spec, out, generation)
        return Rebalance(history[-1], received_rounds(history), len(history))


def _same(a: Assignment, b: Assignment) -> bool:
    return a.keys() == b.keys() and all(set(a[m]) == set(b[m]) for m in a)
