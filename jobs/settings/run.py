"""The run's settings: what planning a group reads, resolved once from the config.

`RunSettings.from_config` builds the strategy catalog (the one place the strategies are
resolved: unknown names, plugins, default and broker-side assignors) and the core's settings
objects from the checked config, and reports every problem of them in one ConfigError. The
driver builds it once per run, before Spark starts; the job ships it to the executors inside
its plan context, and `python -m jobs.plan_group` plans a group with the same object.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assignors.catalog.catalog import StrategyCatalog, server_assignor_list
from assignors.catalog.election import KAFKA_DEFAULT_SERVER_ASSIGNORS, KAFKA_DEFAULT_STRATEGIES
from assignors.catalog.registry import (
    ELECTED,
    UnknownStrategyError,
    canonical_name,
    resolve,
    server_protocol_name,
)
from assignors.migration.conditions import OTHER_STRATEGIES, MigrationSettings
from assignors.whatif.capacity import CapacitySettings, parse_target
from assignors.whatif.group import WhatIfSettings
from jobs.settings.config import PlannerConfig, Problems, read_config
from jobs.settings.model import ExecutionSection, MigrationSection, PlannerSection


@dataclass(frozen=True)
class GuardSettings:
    """`[execution] group_timeout_s` and `group_memory_mb` (jobs/plan/guard.py); 0 turns a
    limit off."""

    timeout_s: float = ExecutionSection.group_timeout_s
    memory_mb: int = ExecutionSection.group_memory_mb

    @property
    def enabled(self) -> bool:
        return hasattr(os, "fork") and (self.timeout_s > 0 or self.memory_mb > 0)


DEFAULT_WHATIF = WhatIfSettings()  # immutable: shared by every RunSettings
DEFAULT_GUARD = GuardSettings()
DEFAULT_CAPACITY = CapacitySettings()
DEFAULT_MIGRATION = MigrationSettings()


@dataclass(frozen=True)
class RunSettings:
    """What planning a group reads of a run. `catalog` holds the strategies, resolved (with
    `elected` where configured); the `has_*` flags say which inputs the run has."""

    catalog: StrategyCatalog
    # what-if rebalances and recommendations; None: neither table
    whatif: WhatIfSettings | None = DEFAULT_WHATIF
    # the per-group time and memory guard of the executors (`jobs.plan.guard`)
    guard: GuardSettings = DEFAULT_GUARD
    # what the `balanced` strategy balances
    balance_by: str = PlannerSection.balance_by
    # the `capacity` target and its searches' limits; None: no `capacity` rows
    capacity: CapacitySettings | None = DEFAULT_CAPACITY
    # the `migrations` table's broker configs and landing assignors; None: no rows
    migration: MigrationSettings | None = DEFAULT_MIGRATION
    # inputs: current_assignment (stickiness, movement), offsets (else every lag is null),
    # weights (else every weight column is null)
    has_current_assignment: bool = False
    has_offsets: bool = False
    has_weights: bool = False
    # `[clients] library_by_group`: (group-id pattern, client library), the first match wins
    library_by_group: tuple[tuple[str, str], ...] = ()
    # the input has a `target_assignment` table (KIP-848 groups' broker targets)
    has_target_assignment: bool = False

    @classmethod
    def of(
        cls,
        strategies: Sequence[str],
        has_current_assignment: bool = False,
        *,
        plan_elected: bool = False,
        default_strategies: Sequence[str] = KAFKA_DEFAULT_STRATEGIES,
        server_assignors: Sequence[str] = KAFKA_DEFAULT_SERVER_ASSIGNORS,
        **rest: Any,
    ) -> RunSettings:
        """Settings around the catalog of `strategies` (names as configured; `elected` last
        with `plan_elected`), the other fields as given: for callers without a config."""
        names = (*strategies, *((ELECTED,) if plan_elected else ()))
        catalog = StrategyCatalog.build(names, default_strategies, server_assignors)
        return cls(catalog, has_current_assignment=has_current_assignment, **rest)

    @classmethod
    def from_config(cls, config: PlannerConfig) -> RunSettings:
        """The run's settings; one ConfigError names every problem: a strategy that is unknown
        or cannot load, a default or broker-side assignor that is not one, a `recommend_from`
        entry the run cannot plan."""
        problems = Problems(config.source)
        settings = cls._resolved(config, problems)
        problems.raise_any()
        assert settings is not None  # invariant: no problem, so the catalog was built
        return settings

    @classmethod
    def _resolved(cls, config: PlannerConfig, problems: Problems) -> RunSettings | None:
        """The settings, each problem recorded in `problems`; None when the catalog cannot be
        built."""
        planner = config.planner
        try:
            server = server_assignor_list(planner.group_consumer_assignors)
        except UnknownStrategyError as exc:
            problems.add(_named(exc))
            server = KAFKA_DEFAULT_SERVER_ASSIGNORS
        catalog = None
        try:
            catalog = StrategyCatalog.build(
                planner.strategies, planner.default_assignment_strategies, server
            )
        except UnknownStrategyError as exc:
            problems.add(_named(exc))
        recommend_from, unknown = _recommend_from(planner, catalog)
        for message in unknown:
            problems.add(message)
        landing, bad_landing = _landing(config.migration)
        for message in bad_landing:
            problems.add(message)
        if catalog is None:
            return None
        return cls(
            catalog,
            whatif=WhatIfSettings(
                scenarios=planner.scenarios,
                max_members=planner.scenario_max_members,
                max_partitions=planner.scenario_max_partitions,
                recommend_from=recommend_from,
            ),
            guard=GuardSettings(config.execution.group_timeout_s, config.execution.group_memory_mb),
            balance_by=planner.balance_by,
            capacity=CapacitySettings(
                parse_target(config.capacity.target),
                planner.scenario_max_members,
                planner.scenario_max_partitions,
            )
            if config.capacity.enabled
            else None,
            library_by_group=config.clients.library_by_group,
            migration=MigrationSettings(
                config.migration.policy, config.migration.consumer_max_size, landing
            ),
        )

    def for_inputs(
        self,
        *,
        has_current_assignment: bool,
        has_offsets: bool,
        has_weights: bool,
        has_target_assignment: bool = False,
    ) -> RunSettings:
        """These settings for a run whose inputs are known (the catalog as it is)."""
        return dataclasses.replace(
            self,
            has_current_assignment=has_current_assignment,
            has_offsets=has_offsets,
            has_weights=has_weights,
            has_target_assignment=has_target_assignment,
        )

    def without(self, left_out: frozenset[str]) -> RunSettings:
        """These settings without the strategies `left_out` (protocol names, `elected`): the
        guard's, for a group where they failed."""
        catalog = self.catalog
        names = [s.name for s in catalog.strategies if s.protocol not in left_out]
        if catalog.plan_elected and ELECTED not in left_out:
            names.append(ELECTED)
        fewer = StrategyCatalog.build(names, catalog.default_strategies, catalog.server_assignors)
        return dataclasses.replace(self, catalog=fewer)

    def is_builtin(self, label: str) -> bool:
        """Whether the strategy planned under `label` is the planner's own (not a plugin)."""
        return all(s.builtin for s in self.catalog.strategies if s.protocol == label)


def _recommend_from(
    planner: PlannerSection, catalog: StrategyCatalog | None
) -> tuple[tuple[str, ...], list[str]]:
    """`recommend_from` as protocol names, and a problem per entry that is neither a built-in
    strategy (protocol or Kafka class name, `balanced` included) nor a plugin configured in
    `strategies` (by class path or protocol name). A candidate the run does not plan is never
    recommended."""
    plugins: dict[str, str] = {}
    if catalog is not None:
        for s in catalog.strategies:
            if not s.builtin:
                plugins[s.name] = plugins[s.protocol] = s.protocol
    else:  # the catalog's own problem is reported: judge the entries by what does load
        for name in planner.strategies:
            if name != ELECTED and canonical_name(name) is None:
                try:
                    protocol = resolve(name)[0]
                except UnknownStrategyError:
                    plugins[name] = name  # not a second problem: the run stops on the first
                    continue
                plugins[name] = plugins[protocol] = protocol
    found: list[str] = []
    problems: list[str] = []
    for name in planner.recommend_from:
        known = canonical_name(name) or plugins.get(name)
        if known is None:
            problems.append(
                f"planner.recommend_from: {name!r} is neither a built-in strategy nor a plugin"
                " configured in strategies"
            )
        else:
            found.append(known)
    return tuple(dict.fromkeys(found)), problems


def _landing(section: MigrationSection) -> tuple[tuple[tuple[str, str], ...], list[str]]:
    """`[migration] landing` as (protocol name, broker-side assignor) pairs, and a problem per
    entry whose strategy is not a built-in or whose assignor is not a broker-side one."""
    out: list[tuple[str, str]] = []
    problems: list[str] = []
    for strategy, assignor in section.landing:
        key = strategy if strategy == OTHER_STRATEGIES else canonical_name(strategy)
        server = server_protocol_name(assignor)
        if key is None:
            problems.append(f"migration.landing: {strategy!r} is not a built-in strategy")
        elif server is None:
            problems.append(
                f"migration.landing: {assignor!r} is not a broker-side assignor (uniform,"
                " range or server-range)"
            )
        else:
            out.append((key, server))
    return tuple(out), problems


def _named(exc: UnknownStrategyError) -> str:
    """The catalog's message, after the key it is about (`planner.strategies` unless the
    message starts with another key of [planner])."""
    text = str(exc)
    if text.startswith(("default_assignment_strategies", "group_consumer_assignors")):
        return f"{PlannerSection.NAME}.{text}"
    return f"{PlannerSection.NAME}.strategies: {text}"


def load_settings(
    path: str | Path | None = None, strategies: str | None = None
) -> tuple[PlannerConfig, RunSettings]:
    """The config file read (`jobs.settings.config.read_config`) and the run's settings built
    from it: one ConfigError names every problem of both."""
    config, problems = read_config(path, strategies)
    settings = RunSettings._resolved(config, problems)
    problems.raise_any()
    assert settings is not None  # invariant: no problem, so the catalog was built
    return config, settings
