"""The strategy catalog: the configured strategies, resolved once on the driver.

Kafka's consumer resolves `partition.assignment.strategy` once, when it is configured
(`ConsumerPartitionAssignor.getAssignorInstances`), into assignor instances known by their
protocol `name()`; the group leader then finds the assignor for the protocol the coordinator
elected by that name (`ConsumerCoordinator.lookupAssignor`). The catalog is the planner's
equivalent: built once from the operator's strategy names and default strategies, it holds

* the planned strategies: (name as configured, protocol name, factory, built in or plugin);
* whether the `elected` pseudo-strategy is planned;
* the default strategies of a member without `assignment_strategies` (Kafka's default
  `[range, cooperative-sticky]` unless configured otherwise);
* the plugins members may vote for: only configured ones (input data never decides which
  Python modules get imported), named by class path or by protocol name (KIP-429's
  `cooperative-sticky` is voted for by name too);
* `vote`: the protocol a member's `assignment_strategies` entry votes for, and
  `strategy_for`: the assignor behind an elected protocol.

It is immutable and pickles by reference (built-in classes, plugin class paths), so the Spark
layer ships it to the executors as it is.

>>> random = "assignors.catalog.examples.random_assignor:RandomAssignor"
>>> catalog = StrategyCatalog.build(["range", random, "elected"])
>>> catalog.protocols, catalog.plan_elected
(['range', 'random', 'elected'], True)
>>> [catalog.vote(n) for n in ("random", "org.apache.kafka.clients.consumer.RangeAssignor",
...                            "uniform", "com.acme.Custom")]
['random', 'range', None, None]
>>> type(catalog.strategy_for("roundrobin").factory()).__name__
'RoundRobinAssignor'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from assignors.catalog import plugins
from assignors.catalog.election import KAFKA_DEFAULT_SERVER_ASSIGNORS, KAFKA_DEFAULT_STRATEGIES
from assignors.catalog.registry import (
    ELECTED,
    SERVER_SIDE,
    Assignor,
    UnknownStrategyError,
    canonical_name,
    is_builtin,
    is_client_variant,
    resolve,
    server_protocol_name,
)

__all__ = ["ELECTED", "KAFKA_DEFAULT_STRATEGIES", "Strategy", "StrategyCatalog"]

_MAX_CACHED_VOTES = 4096


class _PluginFactory:
    """A fresh plugin assignor per call; pickles as its class path (the executor imports it)."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self) -> Assignor:
        return plugins.load_assignor(self.path)

    def __reduce__(self) -> tuple[type[_PluginFactory], tuple[str]]:
        return (_PluginFactory, (self.path,))

    # A value, like the class path it stands for: the catalog an executor unpickles equals
    # the driver's.
    def __eq__(self, other: object) -> bool:
        return isinstance(other, _PluginFactory) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    def __repr__(self) -> str:
        return f"_PluginFactory({self.path!r})"


class _Same:
    """The same assignor instance on every call (callers that hold instances: tests, benches)."""

    __slots__ = ("assignor",)

    def __init__(self, assignor: Assignor) -> None:
        self.assignor = assignor

    def __call__(self) -> Assignor:
        return self.assignor


@dataclass(frozen=True, slots=True)
class Strategy:
    """One resolved strategy: `builtin` assignors are this package's own (a failure there is
    a planner bug, INTERNAL_ERROR), the others plugins (ASSIGNOR_FAILED)."""

    name: str
    protocol: str
    factory: Callable[[], Assignor]
    builtin: bool


def _resolved(name: str) -> Strategy:
    """`name` (protocol, Kafka class name or plugin path) resolved; raises
    UnknownStrategyError naming the culprit."""
    protocol, factory = resolve(name)
    if canonical_name(name) is not None:
        return Strategy(name.strip(), protocol, factory, builtin=True)
    return Strategy(name.strip(), protocol, _PluginFactory(name.strip()), builtin=False)


def _votable_plugins(names: Iterable[str]) -> dict[str, Strategy]:
    """Configured plugins by every name a member may vote with: class path and protocol."""
    out: dict[str, Strategy] = {}
    for name in names:
        if name == ELECTED or not plugins.is_plugin_path(name):
            continue
        strategy = _resolved(name)
        for key in (strategy.name, strategy.protocol):
            other = out.get(key)
            clash = canonical_name(key) is not None and key == strategy.protocol
            if clash or (other is not None and other.name != strategy.name):
                raise UnknownStrategyError(
                    f"assignment strategy {name!r}: its protocol name {key!r} is already"
                    " taken; members could not tell the assignors apart"
                )
            out[key] = strategy
    return out


@dataclass(frozen=True)
class StrategyCatalog:
    """What the operator configured, resolved (see the module docstring)."""

    strategies: tuple[Strategy, ...]
    plan_elected: bool = False
    default_strategies: tuple[str, ...] = KAFKA_DEFAULT_STRATEGIES
    plugins: Mapping[str, Strategy] = field(default_factory=dict)
    elected_position: int | None = None
    _votes: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)
    # KIP-848: the broker's `group.consumer.assignors` (canonical names; the first is the
    # default of a `consumer` group whose members name none)
    server_assignors: tuple[str, ...] = KAFKA_DEFAULT_SERVER_ASSIGNORS

    @classmethod
    def build(
        cls,
        names: Sequence[str],
        default_strategies: Sequence[str] = KAFKA_DEFAULT_STRATEGIES,
        server_assignors: Sequence[str] = KAFKA_DEFAULT_SERVER_ASSIGNORS,
    ) -> StrategyCatalog:
        """The catalog of the configured `names` (`elected` among them or not).

        Raises UnknownStrategyError (a ValueError) naming the culprit: an unknown name, a
        plugin that cannot load, two names for one protocol, a default strategy that is not a
        client-side strategy, a `group_consumer_assignors` entry that is not a broker-side
        assignor.
        """
        names = [n.strip() for n in names]
        planned = tuple(_resolved(n) for n in names if n != ELECTED)
        protocols = [s.protocol for s in planned]
        dupes = sorted({p for p in protocols if protocols.count(p) > 1})
        if dupes:
            raise UnknownStrategyError(
                f"strategies name the same assignor twice: {', '.join(dupes)}"
            )
        catalog = cls(
            planned,
            plan_elected=ELECTED in names,
            default_strategies=tuple(n.strip() for n in default_strategies),
            plugins=_votable_plugins([*names, *default_strategies]),
            elected_position=names.index(ELECTED) if ELECTED in names else None,
            server_assignors=server_assignor_list(server_assignors),
        )
        for name in catalog.default_strategies:
            if catalog.vote(name) is None:
                raise UnknownStrategyError(
                    f"default_assignment_strategies: {name!r} is not a client-side strategy"
                )
        return catalog

    @classmethod
    def from_assignors(
        cls,
        assignors: Sequence[tuple[str, Assignor]],
        *,
        plan_elected: bool = False,
        default_strategies: Sequence[str] = KAFKA_DEFAULT_STRATEGIES,
        plugins_allowed: Iterable[str] = (),
    ) -> StrategyCatalog:
        """A catalog around assignor instances (each is reused for every group)."""
        planned = tuple(
            Strategy(name, name, _Same(assignor), builtin=is_builtin(assignor))
            for name, assignor in assignors
        )
        return cls(
            planned,
            plan_elected=plan_elected,
            default_strategies=tuple(default_strategies),
            plugins=_votable_plugins(plugins_allowed),
        )

    @property
    def protocols(self) -> list[str]:
        """The `strategy` column values, in configured order (`elected` where configured)."""
        out = [s.protocol for s in self.strategies]
        if self.plan_elected:
            at = len(out) if self.elected_position is None else self.elected_position
            out.insert(at, ELECTED)
        return out

    def assignors(self) -> list[tuple[Strategy, Assignor]]:
        """A fresh assignor per planned strategy: call it per group, so that a stateful
        plugin's result cannot depend on which groups share its bucket."""
        return [(s, s.factory()) for s in self.strategies]

    def vote(self, name: str) -> str | None:
        """The protocol a member's `assignment_strategies` entry votes for, or None.

        Built-in protocol and Kafka class names; configured plugins by class path or protocol
        name. Server-side assignors (KIP-848's `uniform`) are never voted for in a classic
        group, and an unconfigured plugin path counts as unknown.
        """
        key = name.strip()
        if key in self._votes:
            return self._votes[key]
        builtin = canonical_name(key)
        if builtin is not None:
            # a `strategy@library` name is the planner's, never a member's vote
            found = None if builtin in SERVER_SIDE or is_client_variant(builtin) else builtin
        else:
            plugin = self.plugins.get(key)
            found = None if plugin is None else plugin.protocol
        if len(self._votes) < _MAX_CACHED_VOTES:  # names come from input data: bounded
            self._votes[key] = found
        return found

    def server_vote(self, name: str) -> str | None:
        """The broker-side assignor a KIP-848 member's name asks for, when the broker runs it
        (`server_assignors`); None otherwise."""
        found = server_protocol_name(name)
        return found if found in self.server_assignors else None

    def is_known(self, name: str) -> bool:
        """True when a member may vote for `name`."""
        return self.vote(name) is not None

    def strategy_for(self, protocol: str) -> Strategy:
        """The strategy behind an elected protocol: a planned one, a votable plugin, or a
        built-in. Raises KeyError when `vote` never returns `protocol`."""
        for s in self.strategies:
            if s.protocol == protocol:
                return s
        plugin = self.plugins.get(protocol)
        if plugin is not None:
            return plugin
        if canonical_name(protocol) == protocol and protocol not in SERVER_SIDE:
            return _resolved(protocol)
        raise KeyError(f"no votable strategy has protocol name {protocol!r}")

    def elected_strategy(self, protocol: str) -> Strategy:
        """The strategy behind an election's result: `strategy_for`, or a broker-side
        assignor (a KIP-848 group's choice)."""
        if protocol in SERVER_SIDE and protocol in self.server_assignors:
            planned = next((s for s in self.strategies if s.protocol == protocol), None)
            return planned if planned is not None else _resolved(protocol)
        return self.strategy_for(protocol)


def server_assignor_list(names: Sequence[str]) -> tuple[str, ...]:
    """`group_consumer_assignors` as canonical names; UnknownStrategyError naming a name that
    is not a broker-side assignor, a repeated one, or an empty list.

    >>> server_assignor_list(["range", "org.apache.kafka.coordinator.group.assignor."
    ...                                 "UniformAssignor"])
    ('server-range', 'uniform')
    """
    out: list[str] = []
    for name in names:
        found = server_protocol_name(name)
        if found is None:
            known = ", ".join(sorted(SERVER_SIDE | {"range"}))
            raise UnknownStrategyError(
                f"group_consumer_assignors: {name!r} is not a broker-side assignor (known: {known})"
            )
        if found in out:
            raise UnknownStrategyError(f"group_consumer_assignors names {found} twice")
        out.append(found)
    if not out:
        raise UnknownStrategyError("group_consumer_assignors is empty: the broker needs one")
    return tuple(out)
