"""Helpers shared by the classic-assignor unit tests (imported by the test modules).

Kafka's member order and string order computed by hand, the member builder, the
'topic-partition' parser and the seeded random-group pieces used by the range and
round-robin property tests.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from assignors.model import Assignment, GroupSpec, Member, TopicPartition

# --------------------------------------------------------------------------------- builders


def mem(member_id: str, topics: Iterable[str], instance: str | None = None) -> Member:
    return Member(member_id, frozenset(topics), group_instance_id=instance)


def tp_list(text: str) -> list[TopicPartition]:
    """'t1-0, t1-1' -> [('t1', 0), ('t1', 1)], order kept (Kafka's TopicPartition.toString)."""
    out: list[TopicPartition] = []
    for item in text.split(","):
        item = item.strip()
        if item:
            topic, p = item.rsplit("-", 1)
            out.append((topic, int(p)))
    return out


# ----------------------------------------------------------------------- Kafka's order


def java_units(s: str) -> list[int]:
    """UTF-16 code units of s, computed by hand (Java's String.compareTo compares these)."""
    units: list[int] = []
    for ch in s:
        cp = ord(ch)
        if cp >= 0x10000:
            cp -= 0x10000
            units += [0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)]
        else:
            units.append(cp)
    return units


def kafka_order(members: Iterable[Member]) -> list[Member]:
    static = [m for m in members if m.group_instance_id is not None]
    dynamic = [m for m in members if m.group_instance_id is None]
    static.sort(key=lambda m: java_units(m.group_instance_id or ""))
    dynamic.sort(key=lambda m: java_units(m.member_id))
    return static + dynamic


# ------------------------------------------------------------------- seeded properties

ALPHABET = "abcXYZ09-\u00e9\uff21\U0001f600"

SEEDS = range(50)


def rand_name(rng: random.Random, prefix: str) -> str:
    return prefix + "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 4)))


def random_members(
    rng: random.Random, pick_subs: Callable[[], list[str]], all_static: bool = False
) -> list[Member]:
    """1-9 members with distinct random ids, ~40% static (all if all_static), shuffled.

    `pick_subs` is called once per member, after its instance id is drawn.
    """
    member_ids: set[str] = set()
    size = rng.randint(1, 9)
    while len(member_ids) < size:
        member_ids.add(rand_name(rng, "m"))
    members = []
    instances: set[str] = set()
    for mid in sorted(member_ids):
        inst = None
        if all_static or rng.random() < 0.4:
            inst = rand_name(rng, "i")
            while inst in instances:
                inst = rand_name(rng, "i")
            instances.add(inst)
        members.append(mem(mid, pick_subs(), inst))
    rng.shuffle(members)
    return members


def renamed_copy(rng: random.Random, spec: GroupSpec) -> GroupSpec:
    """`spec` with every member given a fresh distinct random id, shuffled."""
    renamed_members = []
    used: set[str] = set()
    for m in spec.members:
        new_id = rand_name(rng, "r")
        while new_id in used:
            new_id = rand_name(rng, "r")
        used.add(new_id)
        renamed_members.append(Member(new_id, m.topics, m.group_instance_id))
    rng.shuffle(renamed_members)
    return GroupSpec("g", tuple(renamed_members), spec.topics)


def check_valid(spec: GroupSpec, result: Assignment) -> None:
    assert set(result) == {m.member_id for m in spec.members}
    subs = {m.member_id: m.topics for m in spec.members}
    seen: list[TopicPartition] = []
    for member_id, got in result.items():
        for topic, p in got:
            assert topic in subs[member_id], (member_id, topic)
            assert topic in spec.topics
            assert 0 <= p < spec.topics[topic].partition_count
            seen.append((topic, p))
    expected = [
        (t, p)
        for t, meta in spec.topics.items()
        if any(t in s for s in subs.values())
        for p in range(meta.partition_count)
    ]
    assert sorted(seen) == sorted(expected)  # every partition exactly once
