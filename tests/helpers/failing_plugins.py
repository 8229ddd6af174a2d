"""Plugins that fail on purpose, loaded by class path in the planner and catalog tests."""

from __future__ import annotations

import asyncio
from typing import Any


class _Base:
    name = "base"

    def everything_to_first(self, partitions_per_topic: dict[str, int], subscriptions: Any) -> Any:
        out: dict[str, list[tuple[str, int]]] = {m: [] for m in subscriptions}
        for topic, n in partitions_per_topic.items():
            first = min(m for m, s in subscriptions.items() if topic in s.topics)
            out[first].extend((topic, p) for p in range(n))
        return out


class LeastLoaded(_Base):
    """A working plugin whose protocol name differs from its class path."""

    name = "least-loaded"

    def assign(self, partitions_per_topic: dict[str, int], subscriptions: Any) -> Any:
        return self.everything_to_first(partitions_per_topic, subscriptions)


class Exits(_Base):
    name = "exits"

    def assign(self, partitions_per_topic: dict[str, int], subscriptions: Any) -> Any:
        raise SystemExit(3)


class Cancelled(_Base):
    name = "cancelled"

    def assign(self, partitions_per_topic: dict[str, int], subscriptions: Any) -> Any:
        raise asyncio.CancelledError()


class Interrupted(_Base):
    name = "interrupted"

    def assign(self, partitions_per_topic: dict[str, int], subscriptions: Any) -> Any:
        raise KeyboardInterrupt()


class Bogus(_Base):
    name = "bogus"

    def assign(self, partitions_per_topic: dict[str, int], subscriptions: Any) -> Any:
        return {"nobody": []}


class Ranged(_Base):
    """A plugin that claims a built-in's protocol name."""

    name = "range"

    def assign(self, partitions_per_topic: dict[str, int], subscriptions: Any) -> Any:
        return self.everything_to_first(partitions_per_topic, subscriptions)
