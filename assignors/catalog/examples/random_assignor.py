"""A seeded random assignor: the documented example of an assignor plugin.

Each partition goes to a random subscriber of its topic. The randomness is seeded from a
SHA-256 digest of the group's content (member ids with their subscriptions, topics with their
partition counts), never from Python's `hash()` (salted per process) or the clock, so the same
group always gets the same assignment, on the driver and on every executor.

Configure it as `assignors.catalog.examples.random_assignor:RandomAssignor`. It depends only on the
standard library: a plugin needs nothing from this package, just the contract (a `name`, and
`assign(partitions_per_topic, subscriptions)` returning member_id -> (topic, partition) pairs).

>>> from types import SimpleNamespace as Sub
>>> subs = {"m1": Sub(topics=["t"]), "m2": Sub(topics=["t", "u"])}
>>> out = RandomAssignor().assign({"t": 4, "u": 2}, subs)
>>> out == RandomAssignor().assign({"t": 4, "u": 2}, subs)  # deterministic
True
>>> sorted(tp for tps in out.values() for tp in tps)
[('t', 0), ('t', 1), ('t', 2), ('t', 3), ('u', 0), ('u', 1)]
>>> all(topic == "t" for topic, _ in out["m1"])  # only subscribers get a topic's partitions
True
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from typing import Any


class RandomAssignor:
    name = "random"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Any]
    ) -> dict[str, list[tuple[str, int]]]:
        members = sorted(subscriptions)
        topics_of = {m: sorted(set(subscriptions[m].topics)) for m in members}
        rng = random.Random(_seed(partitions_per_topic, topics_of))
        out: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
        for topic in sorted(partitions_per_topic):
            subscribers = [m for m in members if topic in topics_of[m]]
            if not subscribers:
                continue
            for partition in range(partitions_per_topic[topic]):
                out[rng.choice(subscribers)].append((topic, partition))
        return out


def _seed(partitions_per_topic: Mapping[str, int], topics_of: Mapping[str, list[str]]) -> int:
    content = json.dumps(
        [sorted(partitions_per_topic.items()), sorted(topics_of.items())], ensure_ascii=False
    )
    return int.from_bytes(hashlib.sha256(content.encode("utf-8")).digest()[:8], "big")
