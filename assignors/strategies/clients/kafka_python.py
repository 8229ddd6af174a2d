"""kafka-python 3.0.12's assignors, as its group leader runs them (`range@kafka-python`, ...),
and for `cooperative-sticky@kafka-python` the rounds as its members take them.

Reimplemented over `GroupSpec` (kafka-python itself is not a dependency of the core); the
differential tests run kafka-python's own classes on the same groups.

What kafka-python's leader sees, and how the spec stands for it:

* members in the order the coordinator lists them in the JoinGroup response: here the order of
  `spec.members`;
* each member's topics as a list (a kafka-python member sends its subscription set as a list,
  in that process's string-hash order): here sorted;
* the cluster's topics (`ClusterMetadata.topics()`): the group's subscribed topics that exist,
  what a leader subscribed by topic list fetches metadata for;
* a sticky member's previous assignment and generation in its user data, a cooperative-sticky
  member's in its subscription (a kafka-python member sends version 1: owned partitions, no
  generation); a kafka-python member reports its assignment sorted by topic, then partition,
  and generation -1 when it has none (`Member.generation` None).

Strings compare by code point (Python), not by UTF-16 unit (Java).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import groupby
from typing import ClassVar

from mypy_extensions import mypyc_attr

from assignors.model import Assignment, GroupSpec, Member, Rebalance, TopicPartition
from assignors.ownership import MAX_ROUNDS, NO_GENERATION, next_round, received_rounds
from assignors.protocol import COOPERATIVE_ONLY, EAGER_ONLY, RebalanceProtocol
from assignors.strategies.clients import ClientAssignorFailure

LIBRARY = "kafka-python"
RAISES = (
    "the exception leaves the leader's poll(), the leader sends no SyncGroup and the group"
    " gets no assignment from it"
)

_Entry = tuple[str | None, str]  # (group.instance.id, member.id)
# member id -> (subscribed topics as listed, owned partitions as reported, generation)
_Members = dict[str, tuple[list[str], list[TopicPartition], int]]


def kafka_python_order(entries: Sequence[_Entry]) -> list[_Entry]:
    """kafka-python's member order: static members by (instance id, member id), then dynamic
    ones by member id, but only of the *last* run of each kind in `entries`' order.

    kafka-python splits the list with `itertools.groupby`, which groups consecutive runs only,
    into a dict that keeps the last run per key: when static and dynamic members interleave,
    the earlier runs are dropped.

    >>> kafka_python_order([("i1", "b"), (None, "a"), ("i2", "c")])
    [('i2', 'c'), (None, 'a')]
    >>> kafka_python_order([("i2", "c"), ("i1", "b"), (None, "a")])
    [('i1', 'b'), ('i2', 'c'), (None, 'a')]
    """
    runs: dict[bool, list[_Entry]] = {}
    for static, run in groupby(entries, key=_is_static):
        runs[static] = list(run)
    static_runs = sorted(runs.get(True, []), key=_static_key)
    return static_runs + sorted(runs.get(False, []), key=_member_id)


def _is_static(entry: _Entry) -> bool:
    return entry[0] is not None


def _static_key(entry: _Entry) -> tuple[str, str]:
    return (entry[0] or "", entry[1])


def _member_id(entry: _Entry) -> str:
    return entry[1]


def _entries(members: Iterable[Member]) -> list[_Entry]:
    return [(m.group_instance_id, m.member_id) for m in members]


def _exists(spec: GroupSpec, topic: str) -> bool:
    """`cluster.partitions_for_topic(topic)` is not None (a topic without metadata is skipped
    with a logged warning, as Java skips it)."""
    return spec.partition_count(topic) > 0


def _sorted_out(spec: GroupSpec, assignment: dict[str, list[TopicPartition]]) -> Assignment:
    # kafka-python's ConsumerProtocolAssignment: topics sorted, each topic's list as built
    return {m.member_id: sorted(assignment.get(m.member_id, [])) for m in spec.members}


@mypyc_attr(native_class=False)
class KafkaPythonRangeAssignor:
    """kafka-python's `RangePartitionAssignor`: Java's range without racks, over kafka-python's
    member order (`kafka_python_order`, per topic over that topic's subscribers). When static
    and dynamic subscribers of a topic interleave in the JoinGroup order, the earlier runs get
    none of it and the others share all of it."""

    name: ClassVar[str] = "range@kafka-python"
    kafka_name: ClassVar[str] = "range"
    library: ClassVar[str] = LIBRARY
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = EAGER_ONLY
    stateless: ClassVar[bool] = True
    balances_load: ClassVar[bool] = False

    def assign(self, spec: GroupSpec) -> Assignment:
        per_topic: dict[str, list[Member]] = {}
        for m in spec.members:
            for topic in m.topics:
                per_topic.setdefault(topic, []).append(m)
        out: dict[str, list[TopicPartition]] = {}
        for topic, subscribers in per_topic.items():
            if not _exists(spec, topic):
                continue
            ordered = kafka_python_order(_entries(subscribers))
            n = spec.partition_count(topic)
            q, extra = divmod(n, len(ordered))
            for i, (_, member_id) in enumerate(ordered):
                start = q * i + min(i, extra)
                length = q + (1 if i < extra else 0)
                mine = out.setdefault(member_id, [])
                mine.extend((topic, p) for p in range(start, start + length))
        return _sorted_out(spec, out)

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        return Rebalance(self.assign(spec))


@mypyc_attr(native_class=False)
class KafkaPythonRoundRobinAssignor:
    """kafka-python's `RoundRobinPartitionAssignor`: Java's roundrobin (topics in code point
    order) over kafka-python's member order of the whole group; a member dropped by that order
    gets nothing. Where Java skips a member not subscribed to the next partition's topic,
    kafka-python raises (`ClientAssignorFailure`): any group whose subscriptions make the
    pointer meet a non-subscriber, which unequal subscriptions usually do."""

    name: ClassVar[str] = "roundrobin@kafka-python"
    kafka_name: ClassVar[str] = "roundrobin"
    library: ClassVar[str] = LIBRARY
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = EAGER_ONLY
    stateless: ClassVar[bool] = True
    balances_load: ClassVar[bool] = False

    def assign(self, spec: GroupSpec) -> Assignment:
        topics: set[str] = set()
        for m in spec.members:
            topics.update(m.topics)
        partitions = sorted(
            (t, p) for t in topics if _exists(spec, t) for p in range(spec.partition_count(t))
        )
        ordered = kafka_python_order(_entries(spec.members))
        subs = {m.member_id: m.topics for m in spec.members}
        out: dict[str, list[TopicPartition]] = {}
        k = len(ordered)
        pointer = 0
        for tp in partitions:
            member_id = ordered[pointer][1]
            if tp[0] not in subs[member_id]:
                # kafka-python's skip loop rebinds the (instance id, member id) pair to its
                # member id variable, then looks the pair up: the first skip raises
                raise ClientAssignorFailure(
                    LIBRARY,
                    "roundrobin",
                    f"raises KeyError: it must skip {member_id!r}, not subscribed to"
                    f" {tp[0]!r}, and its skip loop is broken; {RAISES}",
                )
            out.setdefault(member_id, []).append(tp)
            pointer = (pointer + 1) % k
        return _sorted_out(spec, out)

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        return Rebalance(self.assign(spec))


# --- sticky ---------------------------------------------------------------------------------


class _Movements:
    """kafka-python's `PartitionMovements`: where each moved partition came from, per topic
    and (source, destination) pair, to undo a move rather than make a new one."""

    def __init__(self) -> None:
        self.by_topic: dict[str, dict[tuple[str, str], set[TopicPartition]]] = {}
        self.moves: dict[TopicPartition, tuple[str, str]] = {}

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self.moves:
            src, dst = self._remove(tp)
            if dst != old:
                raise _Broken("PartitionMovements.move_partition raises ValueError")
            if src != new:  # not moving back to where it came from
                self._add(tp, (src, new))
        else:
            self._add(tp, (old, new))

    def to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        topic_moves = self.by_topic.get(tp[0])
        if topic_moves is None:
            return tp
        if tp in self.moves:
            src, dst = self.moves[tp]
            if old != dst:
                raise _Broken("PartitionMovements.get_partition_to_be_moved raises ValueError")
            old = src
        reverse = topic_moves.get((new, old))
        if reverse is None:
            return tp
        # kafka-python takes the first of a set (string-hash order, salted per process):
        # the smallest here
        return min(reverse)

    def _remove(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        topic_moves = self.by_topic[tp[0]]
        topic_moves[pair].discard(tp)
        if not topic_moves[pair]:
            del topic_moves[pair]
        if not topic_moves:
            del self.by_topic[tp[0]]
        return pair

    def _add(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        self.by_topic.setdefault(tp[0], {}).setdefault(pair, set()).add(tp)


class _Broken(Exception):
    """An internal check of kafka-python's sticky executor that fails (it raises)."""


class _SortedConsumers:
    """kafka-python's `SortedSet` of consumers keyed by (assigned count, member id)."""

    def __init__(self, current: dict[str, list[TopicPartition]]) -> None:
        self.current = current
        self.members: set[str] = set(current)

    def ordered(self) -> list[str]:
        current = self.current
        return sorted(self.members, key=lambda c: (len(current[c]), c))

    def first(self) -> str:
        current = self.current
        return min(self.members, key=lambda c: (len(current[c]), c))

    def last(self) -> str:
        current = self.current
        return max(self.members, key=lambda c: (len(current[c]), c))


class _StickyExecutor:
    """kafka-python's `StickyAssignmentExecutor` (the KIP-54 algorithm), step by step.

    Where kafka-python takes an element of a Python set (string-hash order, salted per
    process, so two runs of the same leader may differ), this takes the smallest (topic,
    partition): the plan is the result of one such run.
    """

    def __init__(
        self,
        spec: GroupSpec,
        members: _Members,
    ) -> None:
        self.members = members
        self.current: dict[str, list[TopicPartition]] = {}
        self.previous: dict[TopicPartition, tuple[str, int]] = {}
        self.owner: dict[TopicPartition, str] = {}
        self.partition_consumers: dict[TopicPartition, list[str]] = {}
        self.consumer_partitions: dict[str, list[TopicPartition]] = {}
        self.sorted_partitions: list[TopicPartition] = []
        self.unassigned: list[TopicPartition] = []
        self.revocation_required = False
        self.movements = _Movements()
        self.subscriptions = _SortedConsumers(self.current)
        self._init_current(members)
        for topic in sorted(spec.subscribed_topics()):
            for p in range(spec.partition_count(topic)):
                self.partition_consumers[(topic, p)] = []
        for consumer, (topics, _, _) in members.items():
            mine: list[TopicPartition] = []
            self.consumer_partitions[consumer] = mine
            for topic in topics:
                if not _exists(spec, topic):
                    continue
                for p in range(spec.partition_count(topic)):
                    mine.append((topic, p))
                    self.partition_consumers[(topic, p)].append(consumer)
            self.current.setdefault(consumer, [])

    def _init_current(self, members: _Members) -> None:
        by_generation: dict[TopicPartition, dict[int, str]] = {}
        for consumer, (_, owned, generation) in members.items():
            for tp in owned:
                claims = by_generation.get(tp)
                if claims is None:
                    by_generation[tp] = {generation: consumer}
                elif generation and generation in claims:
                    # the same partition claimed twice in one generation: the first claim
                    # stays (a generation of 0 is falsy there: the later claim wins)
                    continue
                else:
                    claims[generation] = consumer
        for tp, claims in by_generation.items():
            gens = sorted(claims, reverse=True)
            self.current.setdefault(claims[gens[0]], []).append(tp)
            if len(gens) > 1:
                self.previous[tp] = (claims[gens[1]], gens[1])
        self.fresh = not self.current
        for consumer, tps in self.current.items():
            for tp in tps:
                self.owner[tp] = consumer

    def _identical(self) -> bool:
        pc = list(self.partition_consumers.values())
        if any(pc[i] != pc[i - 1] for i in range(1, len(pc))):
            return False
        cp = list(self.consumer_partitions.values())
        return all(cp[i] == cp[i - 1] for i in range(1, len(cp)))

    def initial(self) -> None:
        by_potential = sorted(
            self.partition_consumers, key=lambda tp: (len(self.partition_consumers[tp]), tp)
        )
        self.sorted_partitions = []
        if not self.fresh and self._identical():
            # Round robin over the current owners, most loaded first: each gives up one
            # partition in turn (one that had another owner before, if it has one).
            assignments = {
                c: [tp for tp in tps if tp in self.partition_consumers]
                for c, tps in self.current.items()
            }
            pending = set(assignments)
            while pending:
                consumer = max(pending, key=lambda c: (len(assignments[c]), c))
                pending.discard(consumer)
                remaining = assignments[consumer]
                moved_before = [tp for tp in remaining if tp in self.previous]
                if moved_before:
                    tp = min(moved_before)  # kafka-python: `set.pop()`
                    remaining.remove(tp)
                    self.sorted_partitions.append(tp)
                    pending.add(consumer)
                elif remaining:
                    self.sorted_partitions.append(remaining.pop())
                    pending.add(consumer)
            listed = set(self.sorted_partitions)
            self.sorted_partitions.extend(tp for tp in by_potential if tp not in listed)
        else:
            self.sorted_partitions = by_potential
        self._partitions_to_reassign()

    def _partitions_to_reassign(self) -> None:
        self.unassigned = list(self.sorted_partitions)
        gone: list[str] = []
        for consumer, tps in self.current.items():
            if consumer not in self.members:
                for tp in tps:
                    del self.owner[tp]
                gone.append(consumer)
                continue
            drop: list[TopicPartition] = []
            for tp in tps:
                if tp not in self.partition_consumers:
                    drop.append(tp)
                elif tp[0] not in self.members[consumer][0]:
                    drop.append(tp)
                    self.revocation_required = True
                else:
                    try:
                        self.unassigned.remove(tp)
                    except ValueError:
                        raise _Broken("list.remove raises ValueError") from None
            for tp in drop:
                tps.remove(tp)
                del self.owner[tp]
        for consumer in gone:
            del self.current[consumer]

    def balance(self) -> None:
        self.subscriptions = _SortedConsumers(self.current)
        initializing = len(self.current[self.subscriptions.last()]) == 0
        for tp in self.unassigned:
            if self.partition_consumers[tp]:
                self._assign(tp)
        fixed_partitions = {tp for tp, cs in self.partition_consumers.items() if len(cs) < 2}
        self.sorted_partitions = [tp for tp in self.sorted_partitions if tp not in fixed_partitions]
        self.unassigned = [tp for tp in self.unassigned if tp not in fixed_partitions]
        fixed: dict[str, list[TopicPartition]] = {}
        for consumer in self.consumer_partitions:
            if not self._can_move_consumer(consumer):
                self.subscriptions.members.discard(consumer)
                fixed[consumer] = self.current.pop(consumer)
        before = {c: list(tps) for c, tps in self.current.items()}
        before_owner = dict(self.owner)
        if not self.revocation_required:
            self._reassign_all(self.unassigned)
        performed = self._reassign_all(self.sorted_partitions)
        if not initializing and performed and _score(self.current) >= _score(before):
            self.current.clear()
            self.current.update(before)
            self.owner.clear()
            self.owner.update(before_owner)
        for consumer, tps in fixed.items():
            self.current[consumer] = tps
            self.subscriptions.members.add(consumer)

    def _assign(self, tp: TopicPartition) -> None:
        for consumer in self.subscriptions.ordered():
            if tp in self.consumer_partitions[consumer]:
                self.current[consumer].append(tp)
                self.owner[tp] = consumer
                return

    def _can_move_consumer(self, consumer: str) -> bool:
        tps = self.current.get(consumer, [])
        if len(tps) < len(self.consumer_partitions[consumer]):
            return True
        return any(len(self.partition_consumers[tp]) >= 2 for tp in tps)

    def _balanced(self) -> bool:
        current = self.current
        if len(current[self.subscriptions.first()]) >= len(current[self.subscriptions.last()]) - 1:
            return True
        owners = {tp: c for c, tps in current.items() for tp in tps}
        for consumer in self.subscriptions.ordered():
            count = len(current[consumer])
            if count == len(self.consumer_partitions[consumer]):
                continue
            mine = set(current[consumer])
            for tp in self.consumer_partitions[consumer]:
                if tp not in mine and count < len(current[owners[tp]]):
                    return False
        return True

    def _reassign_all(self, partitions: list[TopicPartition]) -> bool:
        performed = False
        while True:
            modified = False
            for tp in partitions:
                if self._balanced():
                    break
                consumer = self.owner[tp]
                size = len(self.current[consumer])
                prev = self.previous.get(tp)
                if prev is not None and size > len(self.current.setdefault(prev[0], [])) + 1:
                    self._reassign_to(tp, prev[0])
                    performed = modified = True
                    continue
                for other in self.partition_consumers[tp]:
                    if size > len(self.current.setdefault(other, [])) + 1:
                        self._reassign(tp)
                        performed = modified = True
                        break
            if not modified:
                return performed

    def _reassign(self, tp: TopicPartition) -> None:
        for consumer in self.subscriptions.ordered():
            if tp in self.consumer_partitions[consumer]:
                self._reassign_to(tp, consumer)
                return
        raise _Broken("an assert raises AssertionError (no consumer for a partition)")

    def _reassign_to(self, tp: TopicPartition, new: str) -> None:
        consumer = self.owner[tp]
        moving = self.movements.to_move(tp, consumer, new)
        substitute = self.owner[moving]
        if substitute != consumer:
            self._move(tp, substitute)
        self._move(moving, new)

    def _move(self, tp: TopicPartition, new: str) -> None:
        old = self.owner[tp]
        members = self.subscriptions.members
        if old not in members or new not in members:
            # kafka-python removes both from its sorted set first: a consumer left out of it
            # (one whose partitions can never move) raises there
            raise _Broken("SortedSet.remove raises KeyError")
        self.movements.move(tp, old, new)
        self.current[old].remove(tp)
        self.current[new].append(tp)
        self.owner[tp] = new


def _score(assignment: dict[str, list[TopicPartition]]) -> int:
    """kafka-python's balance score: the sum of size differences over all consumer pairs."""
    sizes = [len(tps) for tps in assignment.values()]
    return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])


def _sticky_target(spec: GroupSpec, strategy: str) -> dict[str, list[TopicPartition]]:
    """What kafka-python's `StickyAssignmentExecutor` assigns `spec`'s members, each member's
    owned partitions and generation as `_Members` holds them (from the sticky user data, or
    from the subscription for `cooperative-sticky`: the same shape)."""
    members: _Members = {}
    for m in spec.members:
        generation = -1 if m.generation is None else m.generation
        members[m.member_id] = (sorted(m.topics), sorted(set(m.owned)), generation)
    executor = _StickyExecutor(spec, members)
    try:
        executor.initial()
        executor.balance()
    except _Broken as exc:
        raise ClientAssignorFailure(LIBRARY, strategy, f"raises: {exc}; {RAISES}") from exc
    return executor.current


@mypyc_attr(native_class=False)
class KafkaPythonStickyAssignor:
    """kafka-python's `StickyPartitionAssignor`: the older KIP-54 sticky algorithm (one
    general path, no constrained fast path, no racks). It agrees with Java on simple fresh
    groups and differs on rebalances; a same-generation double claim keeps the first
    claimant (Java invalidates both)."""

    name: ClassVar[str] = "sticky@kafka-python"
    kafka_name: ClassVar[str] = "sticky"
    library: ClassVar[str] = LIBRARY
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = EAGER_ONLY
    stateless: ClassVar[bool] = False
    balances_load: ClassVar[bool] = False

    def assign(self, spec: GroupSpec) -> Assignment:
        if not spec.members:
            return {}
        current = _sticky_target(spec, "sticky")
        return {m.member_id: sorted(current.get(m.member_id, [])) for m in spec.members}

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        return Rebalance(self.assign(spec))


# --- cooperative-sticky ---------------------------------------------------------------------


def _cooperative_round(spec: GroupSpec) -> Assignment:
    """One JoinGroup round of kafka-python's `CooperativeStickyAssignor`: the sticky
    executor's target, less every partition assigned to another member than its owner. The
    owner is the last member in JoinGroup order that reports owning it, whatever the
    generations (the executor itself goes by generation); a partition nobody reports owning
    is assigned at once."""
    if not spec.members:
        return {}
    target = _sticky_target(spec, "cooperative-sticky")
    owner: dict[TopicPartition, str] = {}
    for m in spec.members:
        for tp in m.owned:
            owner[tp] = m.member_id
    out: Assignment = {}
    for m in spec.members:
        member_id = m.member_id
        out[member_id] = sorted(
            tp for tp in target.get(member_id, []) if owner.get(tp, member_id) == member_id
        )
    return out


def _members_take(spec: GroupSpec, out: Assignment) -> tuple[Assignment, GroupSpec, bool]:
    """What kafka-python's members do with a round's assignment (`_on_join_complete_async`):
    what each then holds, the group as it rejoins (each member reporting its assignor's last
    accepted assignment, without a generation: version 1), and whether some member requests
    the rejoin that starts the next round.

    A member given a partition of a topic it does not subscribe to rejects the whole
    assignment (`assign_from_subscribed` raises ValueError): it keeps what it holds, reports
    what it reported, and rejoins. Any other member takes its assignment and rejoins when it
    lost a partition it holds; it holds none of the topics it no longer subscribes to (it
    gave those up before it joined, though it still reported them as owned)."""
    held: Assignment = {}
    reported: Assignment = {}
    rejoin = False
    for m in spec.members:
        given = out[m.member_id]
        kept = [tp for tp in m.owned if tp[0] in m.topics]
        if any(tp[0] not in m.topics for tp in given):
            held[m.member_id] = sorted({tp for tp in kept if _partition_exists(spec, tp)})
            reported[m.member_id] = list(m.owned)
            rejoin = True
            continue
        held[m.member_id] = given
        reported[m.member_id] = given
        if not rejoin:
            mine = set(given)
            rejoin = any(tp not in mine for tp in kept)
    return held, next_round(spec, reported, NO_GENERATION), rejoin


def _partition_exists(spec: GroupSpec, tp: TopicPartition) -> bool:
    return 0 <= tp[1] < spec.partition_count(tp[0])


def _same(a: Assignment, b: Assignment) -> bool:
    return a.keys() == b.keys() and all(set(a[m]) == set(b[m]) for m in a)


@mypyc_attr(native_class=False)
class KafkaPythonCooperativeStickyAssignor:
    """kafka-python's `CooperativeStickyAssignor`: its KIP-54 sticky executor
    (`sticky@kafka-python`) over the owned partitions and generation of each member's
    subscription, then its cooperative step (`_cooperative_round`). COOPERATIVE only: a
    kafka-python consumer refuses it next to an eager assignor. `assign` is one round;
    `rebalance` runs the rounds as kafka-python's members take them (`_members_take`) until
    none rejoins."""

    name: ClassVar[str] = "cooperative-sticky@kafka-python"
    kafka_name: ClassVar[str] = "cooperative-sticky"
    library: ClassVar[str] = LIBRARY
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = COOPERATIVE_ONLY
    stateless: ClassVar[bool] = False
    balances_load: ClassVar[bool] = False

    def assign(self, spec: GroupSpec) -> Assignment:
        return _cooperative_round(spec)

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        # A round whose members hold what they held after the round before is not counted.
        history: list[Assignment] = []
        for _ in range(MAX_ROUNDS):
            held, spec, rejoin = _members_take(spec, _cooperative_round(spec))
            if not history or not _same(held, history[-1]):
                history.append(held)
            if not rejoin:
                break
        return Rebalance(history[-1], received_rounds(history), len(history))


VARIANTS = (
    KafkaPythonRangeAssignor,
    KafkaPythonRoundRobinAssignor,
    KafkaPythonStickyAssignor,
    KafkaPythonCooperativeStickyAssignor,
)
