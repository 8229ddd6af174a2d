"""Random groups and their renamed look-alikes, for the look-alike memos' property tests
(`assignors.whatif.lookalike`: the what-if figures and the migration bounces)."""

from __future__ import annotations

import random

from assignors.model import GroupSpec, Member, TopicMetadata, TopicPartition
from helpers.groups import RACKS, random_topics


def random_group(rng: random.Random, gid: str = "g") -> GroupSpec:
    """One to eight members on one to three topics: equal or random subscriptions (a missing
    topic now and then), static members and client and replica racks by chance, and half the
    time previous owners (`with_owners`)."""
    topics = random_topics(rng, 0.4, 12)
    names = list(topics)
    same = rng.random() < 0.5
    static_share = rng.choice((0.0, 0.0, 0.4, 1.0))
    rack_share = rng.choice((0.0, 0.5, 1.0))
    members = []
    for i in range(rng.randint(1, 8)):
        subs = frozenset(names) if same else frozenset(t for t in names if rng.random() < 0.6)
        if rng.random() < 0.1:
            subs |= {"missing"}  # a subscribed topic that does not exist
        static = f"i{rng.randint(0, 99):02d}-{i}" if rng.random() < static_share else None
        rack = rng.choice(RACKS) if rng.random() < rack_share else None
        members.append(Member(f"m{rng.randint(0, 99):02d}-{i}", subs, static, rack))
    if rng.random() < 0.5:
        members = with_owners(rng, members, topics)
    return GroupSpec(gid, tuple(members), topics)


def with_owners(
    rng: random.Random, members: list[Member], topics: dict[str, TopicMetadata]
) -> list[Member]:
    """`members` owning most partitions, at one generation, a stale one now and then."""
    owned: dict[str, list[TopicPartition]] = {m.member_id: [] for m in members}
    ids = list(owned)
    for t, meta in topics.items():
        for p in range(meta.partition_count):
            if rng.random() < 0.85:
                owned[rng.choice(ids)].append((t, p))
    generation = rng.randint(1, 9)
    return [
        Member(
            m.member_id,
            m.topics,
            m.group_instance_id,
            m.rack,
            tuple(owned[m.member_id]),
            generation - (1 if rng.random() < 0.2 else 0),
            m.assignment_strategies,
        )
        for m in members
    ]


def order_kept(names: set[str], scheme: int) -> dict[str, str]:
    """New names in the same order: padded numbers, growing runs, or non-ASCII letters."""
    ordered = sorted(names)
    if scheme == 0:
        return {n: f"renamed-{k:04d}" for k, n in enumerate(ordered)}
    if scheme == 1:
        return {n: "a" * (k + 1) for k, n in enumerate(ordered)}
    return {n: f"\u00fc\u00df-{k:03d}" for k, n in enumerate(ordered)}


def renamed(
    spec: GroupSpec, gid: str, scheme: int, shift: int, *, reverse: bool = True
) -> GroupSpec:
    """`spec` under new names in the same orders, generations moved by `shift`, and a topic
    nobody subscribes to besides; its members listed in reverse (`reverse`: the input order is
    not an order Kafka reads) or in the same order. Strategy lists, the protocol and the
    classic members of a mixed group come along."""
    ids = order_kept({m.member_id for m in spec.members}, scheme)
    statics = order_kept({m.group_instance_id for m in spec.members} - {None}, scheme)  # type: ignore[arg-type]
    topic_names = set(spec.topics).union(*(m.topics for m in spec.members))
    topic = order_kept(topic_names, scheme)
    rack_names = {m.rack for m in spec.members if m.rack is not None}
    for meta in spec.topics.values():
        rack_names.update(*meta.replica_racks)
    rack = order_kept(rack_names, scheme)
    topics = {
        topic[t]: TopicMetadata(
            topic[t],
            meta.partition_count,
            tuple(frozenset(rack[r] for r in racks) for racks in meta.replica_racks),
        )
        for t, meta in spec.topics.items()
    }
    topics["~unsubscribed"] = TopicMetadata("~unsubscribed", 5)
    listed = reversed(spec.members) if reverse else iter(spec.members)
    members = tuple(
        Member(
            ids[m.member_id],
            frozenset(topic[t] for t in m.topics),
            None if m.group_instance_id is None else statics[m.group_instance_id],
            None if m.rack is None else rack[m.rack],
            tuple((topic[t], p) for t, p in m.owned),
            None if m.generation is None else m.generation + shift,
            m.assignment_strategies,
        )
        for m in listed
    )
    classic = tuple(ids[c] for c in spec.classic_members)
    return GroupSpec(
        gid, members, topics, group_protocol=spec.group_protocol, classic_members=classic
    )
