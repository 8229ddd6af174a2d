"""Planner configuration: conf/planner.toml, overridden by CLI flags.

A typo never passes silently: an unknown section or key is a ConfigError naming it and the
known ones. Every problem of a config is found in one reading, and one ConfigError names them
all (unknown keys, wrong types, values out of range), so a config is fixed in one round.

A custom config's `[spark]` table is merged over the shipped defaults; nested tables
(`[spark.sql]`) are flattened to dotted property names; the common typed Spark properties
(memory sizes, counts, booleans) are checked here, before a JVM is started with a value it
would refuse.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from assignors.catalog.election import KAFKA_DEFAULT_SERVER_ASSIGNORS, KAFKA_DEFAULT_STRATEGIES
from assignors.planner import BALANCE_BY
from assignors.whatif.group import DEFAULT_MAX_PARTITIONS
from assignors.whatif.recommend import DEFAULT_RECOMMEND_FROM
from assignors.whatif.simulation import DEFAULT_MAX_MEMBERS, SCENARIOS, check_scenarios
from jobs.settings import limits
from jobs.settings.limits import DEFAULT_LEASE_S

DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "conf" / "planner.toml"

# The known keys of each section. A feature with a new setting adds its key here.
KNOWN_KEYS: dict[str, tuple[str, ...]] = {
    "planner": (
        "strategies",
        "default_assignment_strategies",
        "balance_by",
        # what-if rebalances and recommendations (docs/whatif.md)
        "scenarios",
        "scenario_max_members",
        "scenario_max_partitions",
        "recommend_from",
        # KIP-848: the broker's `group.consumer.assignors` (the first is the default)
        "group_consumer_assignors",
    ),
    "execution": ("buckets", "output_files", "group_timeout_s", "group_memory_mb"),
    "output": ("lock_lease_s",),
    "spark": (),  # any Spark property
}


class ConfigError(ValueError):
    """An unreadable or invalid configuration; the job stops before planning."""


T = TypeVar("T")


class _Problems:
    """The problems of one config, gathered as it is read: each failed check records its
    message and reading goes on with the setting's default."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.found: list[str] = []

    def add(self, message: str) -> None:
        self.found.append(message)

    def check(self, read: Callable[[], T], fallback: T) -> T:
        try:
            return read()
        except ConfigError as exc:
            self.add(str(exc))
            return fallback

    def raise_any(self) -> None:
        """One ConfigError naming every problem (a single one keeps its own message)."""
        if len(self.found) == 1:
            raise ConfigError(self.found[0])
        if self.found:
            prefix = f"{self.src}: "
            listed = "; ".join(
                f"({i}) {m.removeprefix(prefix)}" for i, m in enumerate(self.found, 1)
            )
            raise ConfigError(f"{self.src}: {len(self.found)} problems: {listed}")


@dataclass(frozen=True)
class PlannerConfig:
    # The defaults are conf/planner.toml's values (a test keeps them equal): what a run gets
    # for a key its config leaves out, and what a config-less caller gets.
    strategies: tuple[str, ...] = (
        "range",
        "roundrobin",
        "sticky",
        "cooperative-sticky",
        "uniform",
        "balanced",
        "elected",
    )
    default_assignment_strategies: tuple[str, ...] = KAFKA_DEFAULT_STRATEGIES
    buckets: int = 0
    output_files: int = 2
    spark: dict[str, str] = field(default_factory=dict)
    source: str = "<defaults>"
    # what the `balanced` strategy balances: "count" | "weight" | "lag"
    balance_by: str = "count"
    # what-if rebalances and recommendations (docs/whatif.md)
    scenarios: tuple[str, ...] = SCENARIOS
    scenario_max_members: int = DEFAULT_MAX_MEMBERS
    scenario_max_partitions: int = DEFAULT_MAX_PARTITIONS
    recommend_from: tuple[str, ...] = DEFAULT_RECOMMEND_FROM
    # the per-group guard of the executors (jobs/plan/guard.py); 0 turns a limit off
    group_timeout_s: float = 60.0
    group_memory_mb: int = 2048
    # KIP-848: the broker's `group.consumer.assignors`; names are checked with the strategies
    group_consumer_assignors: tuple[str, ...] = KAFKA_DEFAULT_SERVER_ASSIGNORS
    # seconds a run's output lock may go unrenewed before another run may take it
    lock_lease_s: int = DEFAULT_LEASE_S

    def as_dict(self) -> dict[str, Any]:
        return {
            "strategies": list(self.strategies),
            "default_assignment_strategies": list(self.default_assignment_strategies),
            "buckets": self.buckets,
            "output_files": self.output_files,
            "spark": dict(self.spark),
            "source": self.source,
            "balance_by": self.balance_by,
            "scenarios": list(self.scenarios),
            "scenario_max_members": self.scenario_max_members,
            "scenario_max_partitions": self.scenario_max_partitions,
            "recommend_from": list(self.recommend_from),
            "group_timeout_s": self.group_timeout_s,
            "group_memory_mb": self.group_memory_mb,
            "group_consumer_assignors": list(self.group_consumer_assignors),
            "lock_lease_s": self.lock_lease_s,
        }


def _str_list(
    table: dict[str, Any], key: str, default: tuple[str, ...], src: str
) -> tuple[str, ...]:
    value = table.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{src}: {key} must be a list of non-empty strings, got {value!r}")
    return tuple(v.strip() for v in value)


def _ranged(table: dict[str, Any], section: str, key: str, default: int, src: str) -> int:
    """A numeric setting within its documented range (jobs/settings/limits.py)."""
    try:
        return limits.checked(table, section, key, default, src)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _shipped_tables(cfg_path: Path) -> dict[str, Any]:
    """The shipped conf/planner.toml's tables, under a custom config's: a key the custom
    config leaves out keeps the shipped value (one home for the defaults)."""
    if cfg_path.resolve() == DEFAULT_CONFIG.resolve() or not DEFAULT_CONFIG.is_file():
        return {}
    try:
        return tomllib.loads(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}  # only a broken installation: the dataclass defaults (the same values) apply


def _balance_by(table: dict[str, Any], src: str) -> str:
    value = table.get("balance_by", "count")
    if value not in BALANCE_BY:
        choices = ", ".join(repr(b) for b in BALANCE_BY)
        raise ConfigError(f"{src}: planner.balance_by must be one of {choices}, got {value!r}")
    return str(value)


def _did_you_mean(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_keys(data: dict[str, Any], src: str) -> None:
    """Refuse unknown sections and keys: a misspelt setting would otherwise be ignored."""
    problems = _Problems(src)
    _check_keys(data, problems)
    problems.raise_any()


def _check_keys(data: dict[str, Any], problems: _Problems) -> dict[str, dict[str, Any]]:
    """Record every unknown section and key; the known sections that are tables."""
    src, sections = problems.src, list(KNOWN_KEYS)
    tables: dict[str, dict[str, Any]] = {}
    for name, value in data.items():
        if name not in KNOWN_KEYS:
            kind = "section" if isinstance(value, dict) else "top-level key"
            problems.add(
                f"{src}: unknown {kind} {name!r}{_did_you_mean(name, sections)}; known sections:"
                f" {', '.join(f'[{s}]' for s in sections)}"
            )
            continue
        if not isinstance(value, dict):
            problems.add(f"{src}: [{name}] must be a table, got {value!r}")
            continue
        tables[name] = value
        known = list(KNOWN_KEYS[name])
        if name == "spark":
            continue
        for key in value:
            if key not in known:
                problems.add(
                    f"{src}: unknown key {key!r} in [{name}]{_did_you_mean(key, known)};"
                    f" known keys: {', '.join(known)}"
                )
    return tables


def flatten_spark(
    table: dict[str, Any], src: str, prefix: str = "", problems: _Problems | None = None
) -> dict[str, str]:
    """`[spark]` as Spark property names and string values: nested tables (`[spark.sql]`, or
    dotted keys) become dotted names, and every name starts with `spark.`. With `problems`,
    a value of the wrong type is recorded there and left out, not raised."""
    out: dict[str, str] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten_spark(value, src, f"{name}.", problems))
            continue
        if not name.startswith("spark."):
            name = f"spark.{name}"
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, int | float | str):
            out[name] = str(value)
        else:
            message = (
                f"{src}: Spark property {name} must be a string, number or boolean, got {value!r}"
            )
            if problems is None:
                raise ConfigError(message)
            problems.add(message)
    return out


# Spark's own byte-size syntax (JavaUtils.byteStringAs): digits and an optional unit.
_SIZE = re.compile(r"^\s*\d+\s*(b|k|kb|m|mb|g|gb|t|tb|p|pb)?\s*$", re.IGNORECASE)
_SIZE_SUFFIXES = (".memory", ".memoryOverhead", ".maxResultSize", ".offHeap.size")
# Integer properties and their smallest legal value.
_INTEGERS = {
    "spark.sql.shuffle.partitions": 1,
    "spark.default.parallelism": 1,
    "spark.driver.cores": 1,
    "spark.executor.cores": 1,
    "spark.executor.instances": 0,
    "spark.task.cpus": 1,
    "spark.task.maxFailures": 1,
}
_BOOLEANS = {"spark.sql.caseSensitive", "spark.ui.showConsoleProgress"}


def spark_property_problem(name: str, value: str) -> str | None:
    """Why Spark would refuse `value` for `name` (a common typed property), else None."""
    if name.endswith(_SIZE_SUFFIXES):
        if not _SIZE.match(value):
            return "a size such as 4g, 512m or 1024 (MiB) without fractions"
    elif name in _INTEGERS:
        lowest = _INTEGERS[name]
        if not re.fullmatch(r"\s*-?\d+\s*", value) or int(value) < lowest:
            return f"an integer >= {lowest}"
    elif (name.endswith(".enabled") or name in _BOOLEANS) and value.strip().lower() not in (
        "true",
        "false",
    ):
        return "true or false"
    return None


def _spark_properties(spark: dict[str, Any], problems: _Problems, path: Path) -> dict[str, str]:
    """The shipped defaults' [spark] with this config's over them, each value checked."""
    src = problems.src
    merged: dict[str, str] = {}
    if path.resolve() != DEFAULT_CONFIG.resolve() and DEFAULT_CONFIG.is_file():
        try:
            defaults = tomllib.loads(DEFAULT_CONFIG.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            defaults = {}  # only a broken installation: the custom config still applies
        merged.update(flatten_spark(defaults.get("spark", {}), str(DEFAULT_CONFIG)))
    merged.update(flatten_spark(spark, src, problems=problems))
    for name, value in merged.items():
        wanted = spark_property_problem(name, value)
        if wanted is not None:
            problems.add(f"{src}: [spark] {name} = {value!r} is invalid: expected {wanted}")
    return merged


def load_config(path: str | Path | None = None, strategies: str | None = None) -> PlannerConfig:
    """Read the TOML config (the repo's conf/planner.toml by default) and apply CLI overrides."""
    cfg_path = Path(path) if path is not None else DEFAULT_CONFIG
    src = str(cfg_path)
    try:
        data = tomllib.loads(cfg_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config {src}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {src} is not valid TOML: {exc}") from exc
    problems = _Problems(src)
    tables = _check_keys(data, problems)
    shipped = _shipped_tables(cfg_path)
    planner = {**shipped.get("planner", {}), **tables.get("planner", {})}
    execution = {**shipped.get("execution", {}), **tables.get("execution", {})}
    output = {**shipped.get("output", {}), **tables.get("output", {})}
    chosen = _strategies(planner, strategies, problems)
    ranged = _ranges(problems, execution=execution, output=output, planner=planner)
    config = PlannerConfig(
        strategies=chosen,
        default_assignment_strategies=problems.check(
            lambda: _str_list(
                planner,
                "default_assignment_strategies",
                PlannerConfig.default_assignment_strategies,
                src,
            ),
            PlannerConfig.default_assignment_strategies,
        ),
        buckets=ranged("execution", "buckets", PlannerConfig.buckets),
        output_files=ranged("execution", "output_files", PlannerConfig.output_files),
        spark=_spark_properties(tables.get("spark", {}), problems, cfg_path),
        source=src,
        balance_by=problems.check(lambda: _balance_by(planner, src), PlannerConfig.balance_by),
        group_consumer_assignors=problems.check(
            lambda: _str_list(
                planner, "group_consumer_assignors", KAFKA_DEFAULT_SERVER_ASSIGNORS, src
            ),
            KAFKA_DEFAULT_SERVER_ASSIGNORS,
        ),
        lock_lease_s=ranged("output", "lock_lease_s", PlannerConfig.lock_lease_s),
        **_whatif_settings(planner, problems, ranged),
        **_guard_settings(ranged),
    )
    problems.raise_any()
    return config


def _strategies(
    planner: dict[str, Any], override: str | None, problems: _Problems
) -> tuple[str, ...]:
    """`planner.strategies`, or `--strategies` when given."""
    src = problems.src
    chosen = problems.check(
        lambda: _str_list(planner, "strategies", PlannerConfig.strategies, src),
        PlannerConfig.strategies,
    )
    if not chosen and override is None:
        problems.add(f"{src}: planner.strategies is empty: name at least one strategy")
        return PlannerConfig.strategies
    if override is not None:
        chosen = tuple(s.strip() for s in override.split(",") if s.strip())
        if not chosen:
            problems.add("--strategies names no strategy")
            return PlannerConfig.strategies
    if len(set(chosen)) != len(chosen):
        problems.add(f"strategies are listed twice: {', '.join(chosen)}")
    return chosen


def _ranges(problems: _Problems, **sections: dict[str, Any]) -> Callable[[str, str, int], int]:
    """Reads a numeric setting of one of `sections`, recording a value out of its range."""

    def ranged(section: str, key: str, default: int) -> int:
        return problems.check(
            lambda: _ranged(sections[section], section, key, default, problems.src), default
        )

    return ranged


def _guard_settings(ranged: Callable[[str, str, int], int]) -> dict[str, Any]:
    """The per-group guard's limits (jobs/plan/guard.py)."""
    return {
        "group_timeout_s": float(ranged("execution", "group_timeout_s", 60)),
        "group_memory_mb": ranged("execution", "group_memory_mb", 2048),
    }


def _whatif_settings(
    planner: dict[str, Any], problems: _Problems, ranged: Callable[[str, str, int], int]
) -> dict[str, Any]:
    """The what-if keys of [planner]: scenario names are checked here, before Spark starts;
    `recommend_from` names are resolved with the strategies
    (`jobs.plan.one_group.whatif_settings`)."""
    src = problems.src
    recommend_from: tuple[str, ...] = DEFAULT_RECOMMEND_FROM
    value = planner.get("scenarios", list(SCENARIOS))
    scenarios: tuple[str, ...] = PlannerConfig.scenarios
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.add(f"{src}: scenarios must be a list of scenario names, got {value!r}")
    else:
        try:
            scenarios = check_scenarios(v.strip() for v in value)
        except ValueError as exc:
            problems.add(f"{src}: scenarios: {exc}")
    return {
        "scenarios": scenarios,
        "scenario_max_members": ranged("planner", "scenario_max_members", DEFAULT_MAX_MEMBERS),
        "scenario_max_partitions": ranged(
            "planner", "scenario_max_partitions", DEFAULT_MAX_PARTITIONS
        ),
        "recommend_from": tuple(
            dict.fromkeys(
                problems.check(
                    lambda: _str_list(planner, "recommend_from", DEFAULT_RECOMMEND_FROM, src),
                    recommend_from,
                )
            )
        ),
    }


_DS = re.compile(r"\d{4}-\d{2}-\d{2}")


def valid_ds(value: str) -> bool:
    """`--ds` is a calendar date written YYYY-MM-DD, nothing else (fromisoformat alone also
    takes 20261105 and week dates)."""
    if not _DS.fullmatch(value):
        return False
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def session_error(exc: BaseException, config: PlannerConfig) -> str:
    """The message for a Spark session that failed to start (or refused a property): names the
    [spark] property Spark complained about, or all of them when it did not say."""
    text = str(exc)
    named = sorted(k for k in config.spark if k in text)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    detail = next(
        (line for line in reversed(lines) if any(k in line for k in named)),
        lines[0] if lines else type(exc).__name__,
    )
    if named:
        culprits = ", ".join(f"{k} = {config.spark[k]!r}" for k in named)
        return f"Spark refused the [spark] property {culprits} of {config.source}: {detail}"
    props = ", ".join(f"{k} = {v!r}" for k, v in sorted(config.spark.items())) or "none"
    return (
        f"Spark did not start; check the [spark] properties of {config.source} ({props}): {detail}"
    )
