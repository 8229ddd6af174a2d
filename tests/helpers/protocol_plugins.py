"""Plugins (the plugin contract: `assign(partitions_per_topic, subscriptions)`) that declare
their rebalance protocol, as Kafka's `supportedProtocols()` does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Striped:
    """Partitions dealt round-robin over the members in id order: ignores what they own, so
    a membership change moves many partitions between members that stay."""

    name = "striped"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Any]
    ) -> dict[str, list[tuple[str, int]]]:
        members = sorted(subscriptions)
        out: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
        i = 0
        for topic in sorted(partitions_per_topic):
            subscribers = [m for m in members if topic in subscriptions[m].topics]
            for partition in range(partitions_per_topic[topic]):
                out[subscribers[i % len(subscribers)]].append((topic, partition))
                i += 1
        return out


class CooperativeStriped(Striped):
    name = "striped-coop"
    supported_protocols = ("EAGER", "COOPERATIVE")


class KafkaStyleCooperative(Striped):
    """Declared through a Kafka-style method, in Kafka's spelling."""

    name = "striped-kafka"

    def supported_protocols(self) -> list[str]:
        return ["COOPERATIVE"]


class BadProtocols(Striped):
    name = "bad-protocols"
    supported_protocols = ("INCREMENTAL",)
