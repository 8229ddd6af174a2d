"""Strategy names -> assignors, the way Kafka configures `partition.assignment.strategy`.

Kafka accepts either an assignor's protocol name (`range`) or its class name
(`org.apache.kafka.clients.consumer.RangeAssignor`); both resolve to the same assignor here.
Custom assignors are named by Python class path (`package.module:ClassName` or
`package.module.ClassName`), as Kafka names them by Java class; they are known by the protocol
name their `name` attribute gives, like Kafka's `ConsumerPartitionAssignor.name()`.

A classic strategy may be qualified by the client library whose group leader runs it:
`STRATEGY@LIBRARY` (`range@kafka-python`). Unqualified, and `@java`, mean Java's assignor.
A library whose assignor gives Java's result on every input tried is an alias of Java's
(`range@librdkafka` is `range`); one that differs has its own variant
(`assignors.strategies.clients`). Members never vote with these names: they are the
planner's, not Kafka's.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from assignors.catalog import plugins
from assignors.catalog.election import KAFKA_DEFAULT_STRATEGIES
from assignors.protocol import Assignor
from assignors.strategies.balanced import BalancedAssignor
from assignors.strategies.clients.kafka_python import VARIANTS as KAFKA_PYTHON_VARIANTS
from assignors.strategies.clients.librdkafka import VARIANTS as LIBRDKAFKA_VARIANTS
from assignors.strategies.range import RangeAssignor
from assignors.strategies.roundrobin import RoundRobinAssignor
from assignors.strategies.server_range import ServerRangeAssignor
from assignors.strategies.sticky.assignor import CooperativeStickyAssignor, StickyAssignor
from assignors.strategies.uniform import UniformAssignor

__all__ = [
    "ELECTED",
    "KAFKA_DEFAULT_STRATEGIES",
    "SERVER_SIDE",
    "Assignor",
    "UnknownStrategyError",
    "builtin_names",
    "canonical_name",
    "classic_protocol_name",
    "client_variant_names",
    "get_assignor",
    "is_builtin",
    "is_builtin_factory",
    "is_client_variant",
    "protocol_name",
    "resolve",
    "server_protocol_name",
]


class UnknownStrategyError(ValueError):
    """A strategy name that is neither built in nor a loadable plugin."""


_BUILTINS: dict[str, Callable[[], Assignor]] = {
    RangeAssignor.name: RangeAssignor,
    RoundRobinAssignor.name: RoundRobinAssignor,
    StickyAssignor.name: StickyAssignor,
    CooperativeStickyAssignor.name: CooperativeStickyAssignor,
    UniformAssignor.name: UniformAssignor,
    ServerRangeAssignor.name: ServerRangeAssignor,
    BalancedAssignor.name: BalancedAssignor,
}

_CLASS_NAMES: dict[str, str] = {
    RangeAssignor.java_class: RangeAssignor.name,
    RoundRobinAssignor.java_class: RoundRobinAssignor.name,
    StickyAssignor.java_class: StickyAssignor.name,
    CooperativeStickyAssignor.java_class: CooperativeStickyAssignor.name,
    UniformAssignor.java_class: UniformAssignor.name,
    ServerRangeAssignor.java_class: ServerRangeAssignor.name,
    BalancedAssignor.java_class: BalancedAssignor.name,
}

JAVA = "java"
LIBRARIES: tuple[str, ...] = (JAVA, "kafka-python", "librdkafka")
"""The client libraries a strategy may be qualified by (`range@kafka-python`)."""

# `strategy@library` -> the variant reproducing that library's leader where it differs from
# Java's assignor.
_CLIENT_VARIANTS: dict[str, Callable[[], Assignor]] = {
    v.name: v for v in (*KAFKA_PYTHON_VARIANTS, *LIBRDKAFKA_VARIANTS)
}

# `strategy@library` -> Java's strategy: the library's assignor gave Java's result on every
# input tried (docs/strategies.md, "Client libraries", lists them).
_CLIENT_ALIASES: dict[str, str] = {}

# KIP-848 server-side assignors: chosen by the broker (`group.consumer.assignors`), never in a
# classic group's client-side election.
SERVER_SIDE: frozenset[str] = frozenset({UniformAssignor.name, ServerRangeAssignor.name})

# The pseudo-strategy: the assignment under the strategy the group coordinator elects.
ELECTED = "elected"


def builtin_names() -> list[str]:
    """Java's strategies (unqualified names); `client_variant_names` lists the others."""
    return list(_BUILTINS)


def client_variant_names() -> list[str]:
    """The `strategy@library` names with an assignor of their own (not aliases of Java's)."""
    return list(_CLIENT_VARIANTS)


def is_client_variant(name: str) -> bool:
    """True for a canonical `strategy@library` name (a client library's own variant)."""
    return name in _CLIENT_VARIANTS


def _own_factories() -> list[Callable[[], Assignor]]:
    return [*_BUILTINS.values(), *_CLIENT_VARIANTS.values()]


def is_builtin(assignor: object) -> bool:
    """True for an instance of one of this package's own assignors (not a plugin): a failure
    there is a bug of the planner (INTERNAL_ERROR), never the plugin's (ASSIGNOR_FAILED)."""
    return any(type(assignor) is factory for factory in _own_factories())


def is_builtin_factory(factory: object) -> bool:
    """True for the class of one of this package's own assignors, as the catalog builds them
    (not a plugin's factory, not a class bound to a group's loads)."""
    return any(factory is builtin for builtin in _own_factories())


def canonical_name(name: str) -> str | None:
    """The protocol name for a built-in protocol or Kafka class name, or a client library's
    `strategy@library` (its variant's name, or Java's where they agree); None when unknown.

    >>> [canonical_name(n) for n in ("range@java", "range@kafka-python", "sticky@java")]
    ['range', 'range@kafka-python', 'sticky']
    """
    name = name.strip()
    if name in _BUILTINS:
        return name
    if "@" in name:
        strategy, _, library = name.rpartition("@")
        java = canonical_name(strategy) if "@" not in strategy else None
        if java is None or library not in LIBRARIES:
            return None
        if library == JAVA:
            return java
        qualified = f"{java}@{library}"
        if qualified in _CLIENT_VARIANTS:
            return qualified
        return _CLIENT_ALIASES.get(qualified)
    return _CLASS_NAMES.get(name)


def _unknown_variant(name: str) -> UnknownStrategyError:
    strategy, _, library = name.rpartition("@")
    if library not in LIBRARIES:
        return UnknownStrategyError(
            f"unknown client library {library!r} in assignment strategy {name!r}"
            f" (known: {', '.join(LIBRARIES)})"
        )
    names = sorted([*_CLIENT_VARIANTS, *_CLIENT_ALIASES])
    return UnknownStrategyError(
        f"unknown assignment strategy {name!r}: {strategy!r} has no {library} variant"
        f" (known: {', '.join(names)}, or any built-in strategy @{JAVA})"
    )


@lru_cache(maxsize=4096)
def _resolve(name: str) -> tuple[str, Callable[[], Assignor]] | UnknownStrategyError:
    # Failures are cached too: members of many groups list the same unknown Java class names.
    canonical = canonical_name(name)
    if canonical is not None:
        return canonical, _CLIENT_VARIANTS.get(canonical) or _BUILTINS[canonical]
    if plugins.is_plugin_path(name):
        try:
            probe = plugins.load_assignor(name)
        except plugins.PluginLoadError as exc:
            return UnknownStrategyError(f"assignment strategy {name!r}: {exc}")

        def factory() -> Assignor:
            return plugins.load_assignor(name)

        return probe.name, factory
    if "@" in name:
        return _unknown_variant(name)
    known = ", ".join(sorted(_BUILTINS))
    return UnknownStrategyError(
        f"unknown assignment strategy {name!r} (known: {known}, or a plugin"
        " 'package.module:ClassName')"
    )


def resolve(name: str) -> tuple[str, Callable[[], Assignor]]:
    """(protocol name, factory) for a protocol name, Kafka class name or plugin class path.

    Raises UnknownStrategyError naming the culprit (with the reason a plugin cannot load).
    """
    found = _resolve(name.strip())
    if isinstance(found, UnknownStrategyError):
        raise UnknownStrategyError(str(found))
    return found


def protocol_name(name: str) -> str | None:
    """The protocol name `name` stands for, or None when it cannot be resolved."""
    try:
        return resolve(name)[0]
    except UnknownStrategyError:
        return None


@lru_cache(maxsize=4096)  # called for every member's every listed name
def classic_protocol_name(name: str, plugins_allowed: frozenset[str] = frozenset()) -> str | None:
    """The protocol a classic member's `assignment_strategies` entry votes for, or None.

    Server-side assignors are excluded. A plugin path counts only when the operator configured
    it (`plugins_allowed`): input data never decides which Python modules get imported.
    """
    if plugins.is_plugin_path(name) and name.strip() not in plugins_allowed:
        return None
    resolved = protocol_name(name)
    if resolved is None or resolved in SERVER_SIDE or is_client_variant(resolved):
        return None
    return resolved


def server_protocol_name(name: str) -> str | None:
    """The broker-side assignor a KIP-848 name stands for, or None.

    What a `consumer` member sets in `group.remote.assignor`, or an operator lists in
    `group.consumer.assignors`: the broker's own names (`uniform`, `range`), the Java class
    names, or this package's protocol names. `range` means the broker-side range assignor
    here: a KIP-848 group has no client-side assignor.

    >>> java = "org.apache.kafka.coordinator.group.assignor.RangeAssignor"
    >>> [server_protocol_name(n) for n in ("range", "uniform", "server-range", "roundrobin", java)]
    ['server-range', 'uniform', 'server-range', None, 'server-range']
    """
    key = name.strip()
    if key == ServerRangeAssignor.kafka_name:
        return ServerRangeAssignor.name
    found = canonical_name(key)
    return found if found in SERVER_SIDE else None


def get_assignor(name: str) -> Assignor:
    """A fresh assignor for `name`; raises UnknownStrategyError naming the culprit."""
    return resolve(name)[1]()
