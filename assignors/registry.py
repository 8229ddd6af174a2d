"""Strategy names -> assignors, the way Kafka configures `partition.assignment.strategy`.

Kafka accepts either an assignor's protocol name (`range`) or its class name
(`org.apache.kafka.clients.consumer.RangeAssignor`); both resolve to the same assignor here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from assignors.model import Assignment, GroupSpec
from assignors.range import RangeAssignor
from assignors.roundrobin import RoundRobinAssignor


class Assignor(Protocol):
    """What every strategy implements: a pure function of the group."""

    name: str

    def assign(self, spec: GroupSpec) -> Assignment: ...


class UnknownStrategyError(ValueError):
    """A strategy name that is neither built in nor loadable."""


_BUILTINS: dict[str, Callable[[], Assignor]] = {
    RangeAssignor.name: RangeAssignor,
    RoundRobinAssignor.name: RoundRobinAssignor,
}

_CLASS_NAMES: dict[str, str] = {
    RangeAssignor.java_class: RangeAssignor.name,
    RoundRobinAssignor.java_class: RoundRobinAssignor.name,
}

# Kafka's classic default `partition.assignment.strategy` (Kafka 3.x/4.x).
KAFKA_DEFAULT_STRATEGIES: tuple[str, ...] = ("range", "cooperative-sticky")


def builtin_names() -> list[str]:
    return list(_BUILTINS)


def canonical_name(name: str) -> str | None:
    """The protocol name for a protocol or Kafka class name; None when unknown."""
    name = name.strip()
    if name in _BUILTINS:
        return name
    return _CLASS_NAMES.get(name)


def get_assignor(name: str) -> Assignor:
    """A fresh assignor for `name`; raises UnknownStrategyError naming the culprit."""
    canonical = canonical_name(name)
    if canonical is None:
        known = ", ".join(sorted(_BUILTINS))
        raise UnknownStrategyError(f"unknown assignment strategy {name!r} (known: {known})")
    return _BUILTINS[canonical]()
