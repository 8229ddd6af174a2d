"""Per-partition topic data of the catalog: replica racks (KIP-881) and weights.

The Spark layer aggregates `topic_partitions` per topic and builds the topic catalog on the
driver (`assignors.inputs.validation.check_topic`); this adds what the assignors and the load
metrics need per partition, for usable topics only, and keeps the catalog small (it is
broadcast to every executor): a topic without rack information carries no rack tuple, a
topic whose weights are all null carries no weights, and equal rack sets are one object
(pickled once).

* racks: `replica_racks` rows with null racks, empty strings and duplicates dropped
  (`assignors.racks.normalize_racks`); a partition listed twice (a `DUPLICATE_PARTITION`
  warning already) gets the union of its rows' racks, whatever the row order.
* weights: `assignors.analysis.load.partition_weights` (integer micro-units; a negative, NaN or
  infinite weight counts as 1.0 and gives one `INVALID_WEIGHT` warning per topic).

>>> from assignors.inputs.validation import TopicStatus
>>> catalog, problems = partition_data(
...     {"t": TopicStatus(3), "u": TopicStatus(1)},
...     [("t", 0, ["a", None, "a"]), ("t", 2, ["", "b"]), ("t", 2, ["c"])],
...     [("t", 1, 2.5), ("t", 2, -1.0)],
... )
>>> [sorted(r) for r in catalog["t"].replica_racks], catalog["t"].weights
([['a'], [], ['b', 'c']], (1000000, 2500000, 1000000))
>>> catalog["u"].replica_racks, catalog["u"].weights
((), ())
>>> [(p.reason, p.topic) for p in problems]
[('INVALID_WEIGHT', 't')]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from assignors.analysis.load import UNIT, partition_weights
from assignors.inputs.validation import TopicStatus
from assignors.model import TopicPartition
from assignors.problems import Problem
from assignors.racks import normalize_racks

RackRow = tuple[str | None, int | None, Sequence[str | None] | None]
"""(topic, partition, replica_racks) of one `topic_partitions` row."""
WeightRow = tuple[str | None, int | None, float | None]
"""(topic, partition, weight) of one `topic_partitions` row."""


def partition_data(
    catalog: Mapping[str, TopicStatus],
    racks: Iterable[RackRow],
    weights: Iterable[WeightRow],
) -> tuple[dict[str, TopicStatus], list[Problem]]:
    """The catalog with each usable topic's replica racks and weights, and the weight warnings.

    `racks` and `weights` may be limited to the rows whose value is not null (a null value
    means "no racks" / 1.0 anyway); rows of unknown or broken topics, or with a partition
    outside the topic, are left out (the topic checks report those).
    """

    def usable(topic: str, p: int) -> bool:
        status = catalog.get(topic)
        return status is not None and status.error is None and 0 <= p < status.partition_count

    per_topic: dict[str, list[set[str]]] = {}
    for topic, p, values in racks:
        if topic is not None and p is not None and usable(topic, p):
            n = catalog[topic].partition_count
            per_topic.setdefault(topic, [set() for _ in range(n)])[p] |= normalize_racks(values)
    units, problems = partition_weights(
        (t, p, w) for t, p, w in weights if t is not None and p is not None and usable(t, p)
    )
    out = dict(catalog)
    shared: dict[frozenset[str], frozenset[str]] = {}
    for topic, sets in per_topic.items():
        if any(sets):
            racks_of = tuple(shared.setdefault(frozenset(s), frozenset(s)) for s in sets)
            out[topic] = replace(out[topic], replica_racks=racks_of)
    for topic in sorted({t for t, _ in units}):
        n = catalog[topic].partition_count
        out[topic] = replace(out[topic], weights=_units_of(units, topic, n))
    return out, problems


def _units_of(units: Mapping[TopicPartition, int], topic: str, n: int) -> tuple[int, ...]:
    return tuple(units.get((topic, p), UNIT) for p in range(n))
