"""The declaration of conf/planner.toml: one frozen dataclass per section, one field per key.

A setting is declared here once: its type, its default and, in the field's metadata, how a
value is checked (an integer's range, a list's items, a choice). Everything else is derived
from these classes: the known keys of each section, the ranges the docs list, the defaults a
config-less caller gets and `PlannerConfig.as_dict`. Tests keep conf/planner.toml's values
and range comments, and the docs' tables, equal to the declaration.

The properties of a typed model, with the standard library only (the executors' environment
needs nothing more): a section refuses an unknown key (the dataclass constructor, and
`unknown_keys` for a config file), checks every value when it is built, and a
`SettingsError` lists every bad key of the section at once, each named `section.key`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from assignors.catalog.election import KAFKA_DEFAULT_SERVER_ASSIGNORS, KAFKA_DEFAULT_STRATEGIES
from assignors.migration.conditions import (
    DEFAULT_CONSUMER_MAX_SIZE,
    DEFAULT_LANDING,
    DEFAULT_POLICY,
    POLICIES,
    normalise_policy,
)
from assignors.planner import BALANCE_BY
from assignors.whatif.capacity import parse_target
from assignors.whatif.group import DEFAULT_MAX_PARTITIONS
from assignors.whatif.recommend import DEFAULT_RECOMMEND_FROM
from assignors.whatif.simulation import DEFAULT_MAX_MEMBERS, SCENARIOS, check_scenarios


@dataclass(frozen=True)
class Range:
    """The documented range of an integer setting: values stop at generous upper ends, which
    only stop values that would exhaust the driver or the JVM, or hang a run."""

    low: int
    high: int
    note: str = ""  # what the low end means, when it is special (0 = automatic)

    def describe(self) -> str:
        text = f"an integer >= {self.low:_} and <= {self.high:_}".replace("_", ",")
        return f"{text} ({self.note})" if self.note else text


class SettingsError(ValueError):
    """Every bad value of one section: `problems` maps each key to its message."""

    def __init__(self, problems: Mapping[str, str]) -> None:
        super().__init__("; ".join(problems.values()))
        self.problems = dict(problems)


# A value as given (TOML or a caller) -> the value kept; ValueError with the reason, which
# follows the setting's dotted name in the message ("planner.balance_by must be ...").
Check = Callable[[Any], Any]


@dataclass(frozen=True)
class Spec:
    """How a setting's value is checked; `range` only for integers."""

    check: Check
    range: Range | None = None


def _spec(default: Any, check: Check, rng: Range | None = None) -> Any:
    return field(default=default, metadata={"setting": Spec(check, rng)})


def integer(default: int, low: int, high: int, note: str = "") -> Any:
    """An integer within [low, high] (not a bool, not a float)."""
    rng = Range(low, high, note)

    def check(value: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return value
        raise ValueError(f"must be {rng.describe()}, got {value!r}")

    return _spec(default, check, rng)


def _names_check(unique: bool = False, what: str = "") -> Check:
    def check(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list | tuple) or not all(
            isinstance(v, str) and v.strip() for v in value
        ):
            raise ValueError(f"must be a list of non-empty strings, got {value!r}")
        out = tuple(v.strip() for v in value)
        if what and not out:
            raise ValueError(f"is empty: name at least one {what}")
        return tuple(dict.fromkeys(out)) if unique else out

    return check


def names(default: tuple[str, ...], *, unique: bool = False) -> Any:
    """A list of non-empty strings, stripped (`unique`: repeats dropped, the first kept)."""
    return _spec(default, _names_check(unique))


def strategy_names(default: tuple[str, ...]) -> Any:
    """`strategies`: a non-empty list that names each strategy once."""
    listed = _names_check(what="strategy")

    def check(value: Any) -> tuple[str, ...]:
        out: tuple[str, ...] = listed(value)
        if len(set(out)) != len(out):
            raise ValueError(f"lists a strategy twice: {', '.join(out)}")
        return out

    return _spec(default, check)


def one_of(default: str, choices: tuple[str, ...]) -> Any:
    def check(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"must be one of {', '.join(map(repr, choices))}, got {value!r}")
        return str(value)

    return _spec(default, check)


def scenario_names(default: tuple[str, ...]) -> Any:
    """Scenario names, in SCENARIOS order (`check_scenarios`)."""

    def check(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"must be a list of scenario names, got {value!r}")
        try:
            return check_scenarios(v.strip() for v in value)
        except ValueError as exc:
            raise ValueError(f": {exc}") from None

    return _spec(default, check)


def boolean(default: bool) -> Any:
    """`true` or `false` (not 0 or 1)."""

    def check(value: Any) -> bool:
        if isinstance(value, bool):
            return value
        raise ValueError(f"must be true or false, got {value!r}")

    return _spec(default, check)


def capacity_target() -> Any:
    """`[capacity] target`: absent, or a target `CapacityTarget.parse` reads; kept as
    written, the core parses it again where it plans."""

    def check(value: Any) -> str | None:
        if value is None:
            return None
        try:
            parse_target(value)
        except ValueError as exc:
            raise ValueError(f": {exc}") from None
        return str(value)

    return _spec(None, check)


def migration_policy() -> Any:
    """`[migration] policy`: one of POLICIES, case and blanks ignored as the broker's
    `group.consumer.migration.policy` ignores them."""

    def check(value: Any) -> str:
        found = normalise_policy(value) if isinstance(value, str) else None
        if found is None:
            raise ValueError(f"must be one of {', '.join(map(repr, POLICIES))}, got {value!r}")
        return found

    return _spec(DEFAULT_POLICY, check)


def landing_pairs() -> Any:
    """`[migration] landing`: `"strategy=assignor"` entries (`*` for every other strategy),
    kept as (strategy, assignor) pairs; the run checks the names against its catalog."""
    listed = _names_check()

    def check(value: Any) -> tuple[tuple[str, str], ...]:
        if isinstance(value, tuple) and all(isinstance(v, tuple) for v in value):
            value = [f"{k}={v}" for k, v in value]
        out: list[tuple[str, str]] = []
        for entry in listed(value):
            strategy, sep, assignor = (part.strip() for part in entry.partition("="))
            if not sep or not strategy or not assignor:
                raise ValueError(f"entries must read 'strategy=assignor', got {entry!r}")
            if any(k == strategy for k, _ in out):
                raise ValueError(f"maps {strategy!r} twice")
            out.append((strategy, assignor))
        return tuple(out)

    return _spec(DEFAULT_LANDING, check)


class Section:
    """A section of the config: its values checked when it is built (see the module)."""

    NAME: ClassVar[str]
    # The keys' prefix in `PlannerConfig.as_dict` (a flat mapping), where the bare key would
    # not say what it is of.
    FLAT_PREFIX: ClassVar[str] = ""

    def __post_init__(self) -> None:
        problems: dict[str, str] = {}
        for name, spec in specs(type(self)):
            try:
                object.__setattr__(self, name, spec.check(getattr(self, name)))
            except ValueError as exc:
                reason = str(exc)
                sep = "" if reason.startswith(":") else " "
                problems[name] = f"{self.NAME}.{name}{sep}{reason}"
        if problems:
            raise SettingsError(problems)


def specs(section: type[Section]) -> Iterator[tuple[str, Spec]]:
    """The settings of a section, in declaration order, with their checks."""
    for f in fields(section):  # type: ignore[arg-type]
        yield f.name, f.metadata["setting"]


@dataclass(frozen=True)
class PlannerSection(Section):
    """`[planner]`: which strategies, what `balanced` balances, what-if and KIP-848."""

    NAME: ClassVar[str] = "planner"

    strategies: tuple[str, ...] = strategy_names(
        ("range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "balanced", "elected")
    )
    default_assignment_strategies: tuple[str, ...] = names(KAFKA_DEFAULT_STRATEGIES)
    balance_by: str = one_of("count", BALANCE_BY)
    # what-if rebalances and recommendations (docs/whatif.md)
    scenarios: tuple[str, ...] = scenario_names(SCENARIOS)
    # a rolling restart replays two rebalances per member
    scenario_max_members: int = integer(DEFAULT_MAX_MEMBERS, 0, 10_000, "0 = no what-if rows")
    scenario_max_partitions: int = integer(
        DEFAULT_MAX_PARTITIONS, 0, 1_000_000, "0 = no what-if rows"
    )
    recommend_from: tuple[str, ...] = names(DEFAULT_RECOMMEND_FROM, unique=True)
    # KIP-848: the broker's `group.consumer.assignors` (the first is the default)
    group_consumer_assignors: tuple[str, ...] = names(KAFKA_DEFAULT_SERVER_ASSIGNORS)


@dataclass(frozen=True)
class ExecutionSection(Section):
    """`[execution]`: buckets, output files, the per-group guard (jobs/plan/guard.py)."""

    NAME: ClassVar[str] = "execution"

    # More buckets than groups only adds empty tasks.
    buckets: int = integer(
        0,
        0,
        100_000,
        "0 = 16 x the default parallelism, at least 1,000 and at most 20,000 members a bucket",
    )
    # part files per table: more than a few thousand only makes small files
    output_files: int = integer(2, 1, 10_000)
    # the guard: a day per (group, strategy) at most; up to 1 TiB per bucket's child
    group_timeout_s: int = integer(60, 0, 86_400, "0 = no limit")
    group_memory_mb: int = integer(2048, 0, 1_048_576, "0 = no limit")


@dataclass(frozen=True)
class OutputSection(Section):
    """`[output]`: the output lock."""

    NAME: ClassVar[str] = "output"

    # seconds a run's lock may go unrenewed before another run may take it
    lock_lease_s: int = integer(300, 30, 86_400)


@dataclass(frozen=True)
class CapacitySection(Section):
    """`[capacity]`: whether the `capacity` table is planned, and the target of
    `members_for_target` (docs/capacity.md)."""

    NAME: ClassVar[str] = "capacity"
    FLAT_PREFIX: ClassVar[str] = "capacity_"

    # false: no `capacity` rows (an empty table) and no capacity.json feed
    enabled: bool = boolean(True)
    target: str | None = capacity_target()


@dataclass(frozen=True)
class ChangesSection(Section):
    """`[changes]`: what counts as a change against `--previous` (docs/changes.md)."""

    NAME: ClassVar[str] = "changes"

    # LAG_GREW / LAG_SHRANK also need the lag to move by this many messages: a group going
    # from 3 to 7 messages behind doubled, and nobody should be told
    min_lag_change: int = integer(1_000, 0, 10**15, "0 = any doubling or halving")


def library_patterns() -> Any:
    """`[clients] library_by_group`: a table of group-id glob pattern -> client library, kept
    as (pattern, library) pairs in file order (the first match wins)."""

    def check(value: Any) -> tuple[tuple[str, str], ...]:
        pairs = value.items() if isinstance(value, dict) else value
        if not isinstance(value, dict | list | tuple):
            pairs = None
        try:
            out = tuple((k, v) for k, v in pairs)
        except (TypeError, ValueError):
            raise ValueError(
                f"must be a table of group-id pattern = client library, got {value!r}"
            ) from None
        for pattern, library in out:
            if not isinstance(pattern, str) or not pattern.strip():
                raise ValueError(f"has an empty group-id pattern: {pattern!r}")
            if not isinstance(library, str) or not library.strip():
                raise ValueError(
                    f"{pattern!r} must name a client library (java, librdkafka, kafka-python or"
                    f" another name), got {library!r}"
                )
        return tuple((k, v.strip()) for k, v in out)

    return _spec((), check)


@dataclass(frozen=True)
class ClientsSection(Section):
    """`[clients]`: which client library leads which groups, over `subscriptions
    .client_library` (docs/live.md)."""

    NAME: ClassVar[str] = "clients"

    library_by_group: tuple[tuple[str, str], ...] = library_patterns()


@dataclass(frozen=True)
class MigrationSection(Section):
    """`[migration]`: the broker configs the move to the consumer protocol depends on, with
    Kafka's defaults, and where each strategy lands (docs/migration.md)."""

    NAME: ClassVar[str] = "migration"
    FLAT_PREFIX: ClassVar[str] = "migration_"

    # the broker's group.consumer.migration.policy
    policy: str = migration_policy()
    # the broker's group.consumer.max.size
    consumer_max_size: int = integer(DEFAULT_CONSUMER_MAX_SIZE, 1, 2**31 - 1)
    # strategy -> the server assignor its groups land on ("*": every other strategy)
    landing: tuple[tuple[str, str], ...] = landing_pairs()


# The sections a config may have besides `[spark]` (any Spark property), in file order.
SECTIONS: tuple[type[Section], ...] = (
    PlannerSection,
    ExecutionSection,
    OutputSection,
    CapacitySection,
    ChangesSection,
    ClientsSection,
    MigrationSection,
)
SPARK = "spark"
KNOWN_KEYS: dict[str, tuple[str, ...]] = {
    **{s.NAME: tuple(name for name, _ in specs(s)) for s in SECTIONS},
    SPARK: (),
}
# (section, key) -> the range of every integer setting.
RANGES: dict[tuple[str, str], Range] = {
    (s.NAME, name): spec.range for s in SECTIONS for name, spec in specs(s) if spec.range
}
# What jobs.output's lock takes when a caller names no lease.
DEFAULT_LEASE_S: int = OutputSection.lock_lease_s
