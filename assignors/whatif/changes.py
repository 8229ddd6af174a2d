"""Operator-typed changes to one group, and what the next rebalance does under a strategy.

`plan_group --what-if EXPR` takes the changes an on-call operator wants to try on a group
that runs a strategy's plan (the steady state of the what-if rebalances, docs/whatif.md):

| form | change |
|---|---|
| `member_join` | one new dynamic member, as the `member_join` scenario makes it |
| `member_join:ID` | one new dynamic member subscribed like member ID, on its rack |
| `member_leave` | the member holding the most partitions leaves (the scenario's choice) |
| `member_leave:ID` | member ID leaves |
| `partition_growth` | every subscribed topic gains one partition (the scenario) |
| `partition_growth:TOPIC=N` | TOPIC grows to N partitions (`kafka-topics.sh --alter`) |
| `subscription_change` | the narrowest member subscribes to every topic (the scenario) |
| `subscription_change:ID=T1,T2` | member ID now subscribes to exactly T1, T2 |

Several changes apply together, in one rebalance. The bare forms are the configured
scenarios' triggers, so their costs equal the `rebalance_costs` rows.

>>> parse_change("partition_growth:orders=12")
Change(kind='partition_growth', target='orders', topics=(), count=12)
>>> parse_change("member_crash")
Traceback (most recent call last):
...
ValueError: cannot parse what-if 'member_crash'; accepted forms: member_join, member_join:ID, \
member_leave, member_leave:ID, partition_growth, partition_growth:TOPIC=N, \
subscription_change, subscription_change:ID=TOPIC[,TOPIC...]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from assignors.catalog.registry import Assignor
from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.protocol import is_cooperative
from assignors.whatif.simulation import (
    CostRow,
    ScenarioCost,
    _biggest,
    _figures,
    _grown,
    _grown_topics,
    _joiner,
    _narrowest,
    _row,
    _Simulator,
    _widened,
)

FORMS = (
    "member_join",
    "member_join:ID",
    "member_leave",
    "member_leave:ID",
    "partition_growth",
    "partition_growth:TOPIC=N",
    "subscription_change",
    "subscription_change:ID=TOPIC[,TOPIC...]",
)
_KINDS = ("member_join", "member_leave", "partition_growth", "subscription_change")


@dataclass(frozen=True)
class Change:
    kind: str
    target: str | None = None  # member id, or topic for partition_growth
    topics: tuple[str, ...] = ()  # subscription_change: the new subscription
    count: int | None = None  # partition_growth: the new partition count


def parse_change(text: str) -> Change:
    """One `--what-if` expression; ValueError showing the accepted forms."""
    kind, _, arg = text.strip().partition(":")
    error = ValueError(f"cannot parse what-if {text!r}; accepted forms: {', '.join(FORMS)}")
    if kind not in _KINDS:
        raise error
    if not arg:
        return Change(kind)
    if kind in ("member_join", "member_leave"):
        return Change(kind, arg)
    target, eq, value = arg.partition("=")
    if not eq or not target:
        raise error
    if kind == "partition_growth":
        if not re.fullmatch(r"\d+", value):
            raise error
        return Change(kind, target, count=int(value))
    topics = tuple(t for t in (v.strip() for v in value.split(",")) if t)
    if not topics:
        raise error
    return Change(kind, target, topics=topics)


def change_topics(changes: Sequence[Change]) -> set[str]:
    """The topics the changes name (their metadata must be known)."""
    out = {c.target for c in changes if c.kind == "partition_growth" and c.target}
    return out | {t for c in changes for t in c.topics}


def _member(members: Sequence[Member], member_id: str) -> Member:
    for m in members:
        if m.member_id == member_id:
            return m
    known = ", ".join(m.member_id for m in members)
    raise ValueError(f"no member {member_id!r} in the group (members: {known})")


def _meta(
    topics: Mapping[str, TopicMetadata], known: Mapping[str, TopicMetadata], t: str
) -> TopicMetadata:
    meta = topics.get(t) or known.get(t)
    if meta is None:
        raise ValueError(f"topic {t!r} is not in topic_partitions")
    return meta


def _apply(
    change: Change,
    members: tuple[Member, ...],
    topics: dict[str, TopicMetadata],
    assignment: Assignment,
    known: Mapping[str, TopicMetadata],
) -> tuple[tuple[Member, ...], str | None]:
    """The members after `change` (topics updated in place), and who left."""
    subscribed = frozenset(t for m in members for t in m.topics if t in topics)
    if change.kind == "member_join":
        new = _joiner(members)
        if change.target is not None:
            like = _member(members, change.target)
            new = Member(new.member_id, like.topics, None, like.rack)
        return (*members, new), None
    if change.kind == "member_leave":
        gone = change.target or _biggest(members, assignment)
        _member(members, gone)
        return tuple(m for m in members if m.member_id != gone), gone
    if change.kind == "partition_growth":
        if change.target is None:
            topics.update(_grown_topics(topics, sorted(subscribed)))
            return members, None
        meta = _meta(topics, known, change.target)
        assert change.count is not None
        if change.count <= meta.partition_count:
            raise ValueError(
                f"topic {change.target!r} has {meta.partition_count} partitions; Kafka can only"
                f" increase them (asked for {change.count})"
            )
        while meta.partition_count < change.count:
            meta = _grown(meta)
        topics[change.target] = meta
        return members, None
    if change.target is None:
        if _narrowest(members, subscribed) is None:
            raise ValueError("every member subscribes to the same topics")
        return _widened(members, subscribed), None
    who = _member(members, change.target)
    for t in change.topics:
        topics.setdefault(t, _meta(topics, known, t))
    changed = Member(
        who.member_id,
        frozenset(change.topics),
        who.group_instance_id,
        who.rack,
        who.owned,
        who.generation,
        who.assignment_strategies,
    )
    return tuple(changed if m is who else m for m in members), None


def check_changes(
    spec: GroupSpec, changes: Sequence[Change], known: Mapping[str, TopicMetadata]
) -> None:
    """ValueError when a change cannot apply to this group (unknown member or topic)."""
    members, topics = spec.members, dict(spec.topics)
    for c in changes:
        members, _ = _apply(c, members, topics, {}, known)


@dataclass
class ChangeResult:
    strategy: str
    cost: CostRow
    before: Assignment
    after: Assignment


def change_cost(
    spec: GroupSpec,
    strategy: str,
    factory: Callable[[], Assignor],
    planned: Assignment,
    changes: Sequence[Change],
    *,
    known: Mapping[str, TopicMetadata] | None = None,
    lags: Mapping[TopicPartition, int] | None = None,
    best_max: Callable[[GroupSpec], int] | None = None,
    label: str = "what-if",
) -> ChangeResult:
    """The next rebalance after `changes`, from `strategy`'s plan, as a `rebalance_costs`
    row (`scenario` = `label`) and the assignment it leads to."""
    assignor = factory()
    sim = _Simulator(
        spec,
        assignor,
        planned,
        cooperative=is_cooperative(assignor),
        stateless=False,
        lags=lags,
        shortcuts=False,
    )
    steady = sim.steady
    members, topics = sim.current(steady), dict(steady.topics)
    leaving = None
    for c in changes:
        members, gone = _apply(c, members, topics, steady.assignment, known or {})
        leaving = gone or leaving
    state, step = sim.step(steady, members, topics, leaving=leaving)
    cost = ScenarioCost(label)
    cost.record(step)
    cost.end(state)
    fig = _figures(cost)
    gap = None
    if best_max is not None:
        gap = fig.max_after - best_max(GroupSpec(spec.group_id, cost.members, cost.topics))
    row = _row(spec.group_id, strategy, fig, lags is not None, gap)
    return ChangeResult(strategy, row, steady.assignment, state.assignment)
