"""Kafka's rack-test fixtures (`verifyRackAssignment`), restated for our unit tests.

Broker i is on rack `broker_racks[i]` (None: no rack). Topics are laid out in the order given
with a running offset `off` (the sum of the earlier topics' partition counts): partition p of a
topic has replicas on brokers (p + j + off) mod len(broker_racks), j < rf. Consumers are named
consumer0..consumerN-1 with `consumer_racks[i]`. Results print as Kafka's tests print them:
each consumer's partitions as "t-p", sorted as strings, joined with ", ".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition

ALL = "abcdef"


def racks(n: int) -> list[str | None]:
    """Kafka's racks(n): the first n of a, b, c, d, e, f."""
    return list(ALL[:n])


def nulls(n: int) -> list[str | None]:
    return [None] * n


def layout(
    topics: Mapping[str, int], rf: int, broker_racks: Sequence[str | None]
) -> dict[str, TopicMetadata]:
    meta: dict[str, TopicMetadata] = {}
    off = 0
    nb = len(broker_racks)
    for t, n in topics.items():
        per: list[frozenset[str]] = []
        for p in range(n):
            rs = (broker_racks[(p + j + off) % nb] for j in range(rf))
            per.append(frozenset(r for r in rs if r is not None))
        meta[t] = TopicMetadata(t, n, tuple(per))
        off += n
    return meta


def rack_group(
    topics: Mapping[str, int],
    rf: int,
    broker_racks: Sequence[str | None],
    consumer_racks: Sequence[str | None],
    subs: Sequence[Sequence[str]],
    owned: Sequence[Sequence[TopicPartition]] | None = None,
    generation: int | None = None,
) -> GroupSpec:
    members = tuple(
        Member(
            f"consumer{i}",
            frozenset(s),
            rack=consumer_racks[i],
            owned=tuple(owned[i]) if owned else (),
            generation=generation if owned else None,
        )
        for i, s in enumerate(subs)
    )
    return GroupSpec("g", members, layout(topics, rf, broker_racks))


def printed(assignment: Assignment, n: int) -> list[str]:
    return [", ".join(sorted(f"{t}-{p}" for t, p in assignment[f"consumer{i}"])) for i in range(n)]
