"""Custom assignors configured by name, as Kafka configures them by class name.

`partition.assignment.strategy` may name a class; here that is `package.module:ClassName` or
`package.module.ClassName`. The plugin contract mirrors Kafka's
`AbstractPartitionAssignor.assign(partitionsPerTopic, subscriptions)`::

    class MyAssignor:
        name = "mine"                      # the protocol name members vote for

        def assign(self, partitions_per_topic, subscriptions):
            # partitions_per_topic: {topic: partition count}, only subscribed topics that
            #     exist (as Kafka passes them)
            # subscriptions: {member_id: Subscription}; `.topics` is the member's subscribed
            #     topic names; also owned_partitions, generation, group_instance_id, rack
            return {member_id: [(topic, partition), ...], ...}

        # optional, as Kafka's supportedProtocols(): ("EAGER",) unless it says otherwise
        supported_protocols = ("EAGER", "COOPERATIVE")

`load_assignor` returns an adapter implementing this package's `Assignor` protocol. The
adapter validates every result: a plugin that raises (any exception, `SystemExit` and
`asyncio.CancelledError` included) fails with `AssignorFailedError`, one that returns an
invalid assignment with `InvalidAssignmentError`; the planner fails that (group, strategy)
only (ASSIGNOR_FAILED / INVALID_ASSIGNMENT) and goes on. A `KeyboardInterrupt` passes
through: the planner isolates it only where it cannot be a real Ctrl-C (on an executor).
Import problems are configuration errors and raise `PluginLoadError` naming the culprit.
Classes are imported once per process (the job loads them on the driver and again on each
executor); each `load_assignor` call makes a fresh instance.

>>> a = load_assignor("assignors.catalog.examples.random_assignor:RandomAssignor")
>>> a.name, a.java_class
('random', 'assignors.catalog.examples.random_assignor:RandomAssignor')
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from assignors.analysis.metrics import scan_assignment
from assignors.model import Assignment, GroupSpec, Rebalance, TopicPartition, java_sorted
from assignors.ownership import cooperative_rebalance
from assignors.problems import Reason
from assignors.protocol import EAGER_ONLY, RebalanceProtocol, is_cooperative

ASSIGNOR_FAILED = Reason.ASSIGNOR_FAILED.value
INVALID_ASSIGNMENT = Reason.INVALID_ASSIGNMENT.value

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_PATH = re.compile(rf"({_IDENT}(?:\.{_IDENT})*)(?::({_IDENT}(?:\.{_IDENT})*))?")
# Kafka's own classes are never Python plugins: an unknown one is an unknown strategy.
_KAFKA_PACKAGE = "org.apache.kafka."


class PluginLoadError(ValueError):
    """A plugin that cannot be loaded: bad name, import failure, or not an assignor."""


class AssignorFailedError(RuntimeError):
    """The plugin raised while assigning a group (reason ASSIGNOR_FAILED)."""

    reason = ASSIGNOR_FAILED


class InvalidAssignmentError(ValueError):
    """The plugin returned an assignment Kafka would not accept (reason INVALID_ASSIGNMENT)."""

    reason = INVALID_ASSIGNMENT


@dataclass(frozen=True, slots=True)
class Subscription:
    """What a plugin learns about one member, like Kafka's `ConsumerPartitionAssignor.Subscription`.

    `topics` is the member's whole subscription, in Java string order, including topics that
    have no metadata (Kafka passes those too; they are absent from `partitions_per_topic`).
    """

    topics: list[str]
    owned_partitions: list[TopicPartition]
    generation: int | None
    group_instance_id: str | None
    rack: str | None


def is_plugin_path(name: str) -> bool:
    """True for names that denote a Python class rather than a Kafka strategy name.

    >>> is_plugin_path("pkg.mod:Cls"), is_plugin_path("pkg.mod.Cls"), is_plugin_path("range")
    (True, True, False)
    >>> is_plugin_path("org.apache.kafka.clients.consumer.StickyAssignor")
    False
    """
    name = name.strip()
    if name.startswith(_KAFKA_PACKAGE):
        return False
    return _PATH.fullmatch(name) is not None and (":" in name or "." in name)


def load_assignor(name: str) -> PluginAssignor:
    """An adapter around a fresh instance of the plugin class `name`; see the module doc."""
    cls = _load_class(name.strip())
    try:
        plugin = cls()
    except Exception as exc:  # any constructor failure is a load error
        raise PluginLoadError(f"assignor plugin {name!r}: {cls.__name__}() raised {exc!r}") from exc
    plugin_name = getattr(plugin, "name", None)
    if callable(plugin_name):  # allow a Kafka-style name() method too
        plugin_name = plugin_name()
    if not isinstance(plugin_name, str) or not plugin_name.strip():
        raise PluginLoadError(f"assignor plugin {name!r} has no non-empty string `name`")
    if not callable(getattr(plugin, "assign", None)):
        raise PluginLoadError(f"assignor plugin {name!r} has no `assign` method")
    protocols = _supported_protocols(plugin, name)
    return PluginAssignor(plugin, plugin_name.strip(), name.strip(), protocols)


def _supported_protocols(plugin: Any, name: str) -> tuple[RebalanceProtocol, ...]:
    """The plugin's `supported_protocols` (attribute or method, Kafka's names), EAGER if none."""
    declared = getattr(plugin, "supported_protocols", None)
    if callable(declared):  # a Kafka-style supportedProtocols() method
        declared = declared()
    if declared is None:
        return EAGER_ONLY
    known = [p.value for p in RebalanceProtocol]
    values = [declared] if isinstance(declared, str) else declared
    try:
        protocols = tuple(RebalanceProtocol(str(v).upper()) for v in values)
    except (TypeError, ValueError):
        protocols = ()
    if not protocols:
        raise PluginLoadError(
            f"assignor plugin {name!r}: supported_protocols must list some of {known},"
            f" not {declared!r}"
        )
    return tuple(sorted(set(protocols), key=known.index))


@lru_cache(maxsize=256)
def _load_class(path: str) -> type[Any]:
    m = _PATH.fullmatch(path)
    if m is None or (":" not in path and "." not in path):
        raise PluginLoadError(
            f"{path!r} is not a plugin class path ('package.module:ClassName' or "
            "'package.module.ClassName')"
        )
    if m.group(2) is not None:
        module_name, attrs = m.group(1), m.group(2).split(".")
    else:
        module_name, _, last = m.group(1).rpartition(".")
        attrs = [last]
    try:
        obj: Any = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # ImportError, or anything the module raises (SystemExit too)
        raise PluginLoadError(
            f"assignor plugin {path!r}: cannot import module {module_name!r}: {exc!r}"
        ) from exc
    for attr in attrs:
        try:
            obj = getattr(obj, attr)
        except AttributeError:
            raise PluginLoadError(
                f"assignor plugin {path!r}: {module_name!r} has no attribute {attr!r}"
            ) from None
    if not isinstance(obj, type):
        raise PluginLoadError(f"assignor plugin {path!r} is not a class")
    return obj


class PluginAssignor:
    """Adapts a plugin to the `Assignor` protocol: builds its input, checks its output.

    `name` is the plugin's protocol name (what Kafka members vote for); `java_class` is the
    configured class path, by analogy with Kafka's built-in assignors.
    """

    # Plugins may read what members own, and balance partition counts.
    stateless = False
    balances_load = False

    def __init__(
        self,
        plugin: Any,
        name: str,
        java_class: str,
        supported_protocols: tuple[RebalanceProtocol, ...] = EAGER_ONLY,
    ) -> None:
        self.plugin = plugin
        self.name = name
        self.java_class = java_class
        self.supported_protocols = supported_protocols

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        """Eager: one round. Cooperative: the rounds Kafka's coordinator runs around it."""
        if is_cooperative(self):
            return cooperative_rebalance(self.assign, spec)
        return Rebalance(self.assign(spec))

    def assign(self, spec: GroupSpec) -> Assignment:
        partitions_per_topic = {t: spec.partition_count(t) for t in spec.subscribed_topics()}
        by_id = {m.member_id: m for m in spec.members}
        subscriptions = {
            mid: Subscription(
                topics=java_sorted(by_id[mid].topics),
                owned_partitions=list(by_id[mid].owned),
                generation=by_id[mid].generation,
                group_instance_id=by_id[mid].group_instance_id,
                rack=by_id[mid].rack,
            )
            for mid in java_sorted(by_id)
        }
        try:
            raw = self.plugin.assign(dict(partitions_per_topic), subscriptions)
        except KeyboardInterrupt:
            raise  # maybe a real Ctrl-C: only the executor path isolates it (see the planner)
        except BaseException as exc:  # SystemExit, CancelledError...: never take the job down
            raise AssignorFailedError(
                f"assignor {self.name!r} ({self.java_class}) raised {type(exc).__name__}: {exc}"
            ) from exc
        return validate_assignment(spec, raw, self.name)


def validate_assignment(spec: GroupSpec, raw: object, assignor: str = "plugin") -> Assignment:
    """Check a plugin's result and normalise it: every member present, plain (str, int) pairs.

    Valid means: only group members; each partition of a subscribed, existing topic assigned
    exactly once, and only to a member that subscribes to its topic.

    >>> from assignors.model import GroupSpec, Member, TopicMetadata
    >>> spec = GroupSpec("g", (Member("a", frozenset({"t"})), Member("b", frozenset({"t"}))),
    ...                  {"t": TopicMetadata("t", 2)})
    >>> validate_assignment(spec, {"a": [("t", 1), ("t", 0)]})
    {'a': [('t', 1), ('t', 0)], 'b': []}
    >>> validate_assignment(spec, {"a": [("t", 0)], "b": [("t", 0)]})
    Traceback (most recent call last):
    ...
    assignors.catalog.plugins.InvalidAssignmentError: plugin: partition t-0 assigned to both \
'a' and 'b'
    """
    if not isinstance(raw, Mapping):
        raise InvalidAssignmentError(
            f"{assignor}: assign() must return a mapping member_id -> partitions, "
            f"got {type(raw).__name__}"
        )
    out: Assignment = {}  # in the plugin's order, so the first violation is the one it made
    for member, parts in raw.items():
        if isinstance(parts, str | bytes) or not isinstance(parts, Iterable):
            raise InvalidAssignmentError(
                f"{assignor}: partitions of {member!r} must be an iterable of (topic, partition)"
            )
        out[member] = [_as_partition(item, member, assignor) for item in parts]
    # Validity has one definition, shared with the `is_valid` metric.
    violation = scan_assignment(spec, out).violation
    if violation is not None:
        raise InvalidAssignmentError(f"{assignor}: {violation}")
    return {m.member_id: out.get(m.member_id, []) for m in spec.members}


def _as_partition(item: object, member: str, assignor: str) -> TopicPartition:
    """(topic, partition) from a pair, or from an object with .topic and .partition."""
    if isinstance(item, tuple | list) and len(item) == 2:
        topic, p = item
    elif hasattr(item, "topic") and hasattr(item, "partition"):
        topic, p = item.topic, item.partition
    else:
        raise InvalidAssignmentError(
            f"{assignor}: {member!r} got {item!r}, expected a (topic, partition) pair"
        )
    if not isinstance(topic, str) or isinstance(p, bool) or not hasattr(p, "__index__"):
        raise InvalidAssignmentError(
            f"{assignor}: {member!r} got {item!r}, expected a (str topic, int partition) pair"
        )
    return (topic, p.__index__())
