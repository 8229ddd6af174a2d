"""Planner configuration: conf/planner.toml, overridden by CLI flags.

The settings are declared in `jobs.settings.model`; this module reads a file into them. A
typo never passes silently: an unknown section or key is a ConfigError naming it and the
known ones. Every problem of a config is found in one reading, and one ConfigError names them
all (unknown keys, wrong types, values out of range), each by its key, so a config is fixed
in one round. What the strategies resolve to (plugins, `recommend_from`) is checked with
them, in `jobs.settings.run`.

A custom config's `[spark]` table is merged over the shipped defaults; nested tables
(`[spark.sql]`) are flattened to dotted property names; the common typed Spark properties
(memory sizes, counts, booleans) are checked here, before a JVM is started with a value it
would refuse.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from jobs.settings.model import (
    KNOWN_KEYS,
    SECTIONS,
    SPARK,
    CapacitySection,
    ChangesSection,
    ClientsSection,
    ExecutionSection,
    MigrationSection,
    OutputSection,
    PlannerSection,
    Section,
    SettingsError,
    specs,
)

DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "conf" / "planner.toml"

__all__ = ["DEFAULT_CONFIG", "KNOWN_KEYS", "ConfigError", "PlannerConfig", "load_config"]


S = TypeVar("S", bound=Section)


class ConfigError(ValueError):
    """An unreadable or invalid configuration; the job stops before planning."""


class Problems:
    """The problems of one config, gathered as it is read: each failed check records its
    message and reading goes on with the setting's default."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.found: list[str] = []

    def add(self, message: str) -> None:
        self.found.append(message)

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


# Which section declares each key (the keys are unique across sections).
_SECTION_OF: dict[str, str] = {key: section for section, keys in KNOWN_KEYS.items() for key in keys}
assert len(_SECTION_OF) == sum(len(k) for k in KNOWN_KEYS.values()), "a key in two sections"


@dataclass(frozen=True)
class PlannerConfig:
    """A config as read: one checked object per section (`jobs.settings.model`), the
    `[spark]` properties and the file it came from. Without arguments: the declared
    defaults, which the shipped conf/planner.toml repeats (a test keeps them equal)."""

    planner: PlannerSection = field(default_factory=PlannerSection)
    execution: ExecutionSection = field(default_factory=ExecutionSection)
    output: OutputSection = field(default_factory=OutputSection)
    capacity: CapacitySection = field(default_factory=CapacitySection)
    changes: ChangesSection = field(default_factory=ChangesSection)
    clients: ClientsSection = field(default_factory=ClientsSection)
    migration: MigrationSection = field(default_factory=MigrationSection)
    spark: dict[str, str] = field(default_factory=dict)
    source: str = "<defaults>"

    def replace(self, **changes: Any) -> PlannerConfig:
        """This config with settings changed by key (`strategies=...`, `buckets=...`, also
        `spark` and `source`), each in the section that declares it, checked again."""
        by_section: dict[str, dict[str, Any]] = {}
        top: dict[str, Any] = {}
        for key, value in changes.items():
            if key in ("spark", "source"):
                top[key] = value
            elif key in _SECTION_OF:
                by_section.setdefault(_SECTION_OF[key], {})[key] = value
            else:
                raise TypeError(f"no setting {key!r}; known: {', '.join(_SECTION_OF)}")
        for name, values in by_section.items():
            top[name] = dataclasses.replace(getattr(self, name), **values)
        return dataclasses.replace(self, **top)

    def as_dict(self) -> dict[str, Any]:
        """Every setting under its key (a flat mapping: the manifest's `config`), lists as
        lists, then `spark` and `source`."""
        out: dict[str, Any] = {}
        for section in SECTIONS:
            values = getattr(self, section.NAME)
            for key, _ in specs(section):
                value = getattr(values, key)
                out[section.FLAT_PREFIX + key] = _plain(value)
        return {**out, "spark": dict(self.spark), "source": self.source}


def _plain(value: Any) -> Any:
    """A setting as the manifest's JSON holds it: a tuple as a list, a pair (`[migration]
    landing`) as the `"strategy=assignor"` entry the config file writes."""
    if not isinstance(value, tuple):
        return value
    return [f"{v[0]}={v[1]}" if isinstance(v, tuple) else v for v in value]


def _shipped_tables(cfg_path: Path) -> dict[str, Any]:
    """The shipped conf/planner.toml's tables, under a custom config's: a key the custom
    config leaves out keeps the shipped value."""
    if cfg_path.resolve() == DEFAULT_CONFIG.resolve() or not DEFAULT_CONFIG.is_file():
        return {}
    try:
        return tomllib.loads(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}  # only a broken installation: the declared defaults (the same values) apply


def _did_you_mean(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_keys(data: dict[str, Any], src: str) -> None:
    """Refuse unknown sections and keys: a misspelt setting would otherwise be ignored."""
    problems = Problems(src)
    _check_keys(data, problems)
    problems.raise_any()


def _check_keys(data: dict[str, Any], problems: Problems) -> dict[str, dict[str, Any]]:
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
        if name == SPARK:
            continue
        for key in value:
            if key not in known:
                problems.add(
                    f"{src}: unknown key {key!r} in [{name}]{_did_you_mean(key, known)};"
                    f" known keys: {', '.join(known)}"
                )
    return tables


def flatten_spark(
    table: dict[str, Any], src: str, prefix: str = "", problems: Problems | None = None
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


def _spark_properties(
    spark: dict[str, Any], shipped: dict[str, Any], problems: Problems
) -> dict[str, str]:
    """The shipped defaults' [spark] with this config's over them, each value checked."""
    src = problems.src
    merged = flatten_spark(shipped.get(SPARK, {}), str(DEFAULT_CONFIG))
    merged.update(flatten_spark(spark, src, problems=problems))
    for name, value in merged.items():
        wanted = spark_property_problem(name, value)
        if wanted is not None:
            problems.add(f"{src}: [spark] {name} = {value!r} is invalid: expected {wanted}")
    return merged


def load_config(path: str | Path | None = None, strategies: str | None = None) -> PlannerConfig:
    """Read the TOML config (the repo's conf/planner.toml by default) and apply CLI overrides
    (`--strategies`); one ConfigError names every problem."""
    config, problems = read_config(path, strategies)
    problems.raise_any()
    return config


def read_config(
    path: str | Path | None = None, strategies: str | None = None
) -> tuple[PlannerConfig, Problems]:
    """The config (a bad value replaced by its default) and its problems, for a caller that
    checks more before it reports them all; ConfigError when the file cannot be read."""
    cfg_path = Path(path) if path is not None else DEFAULT_CONFIG
    src = str(cfg_path)
    try:
        data = tomllib.loads(cfg_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read config {src}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {src} is not valid TOML: {exc}") from exc
    problems = Problems(src)
    tables = _check_keys(data, problems)
    shipped = _shipped_tables(cfg_path)
    merged = {s.NAME: {**shipped.get(s.NAME, {}), **tables.get(s.NAME, {})} for s in SECTIONS}
    if strategies is not None:
        chosen = [s.strip() for s in strategies.split(",") if s.strip()]
        if chosen:
            merged[PlannerSection.NAME]["strategies"] = chosen
        else:
            problems.add("--strategies names no strategy")
    config = PlannerConfig(
        planner=_section(PlannerSection, merged, problems),
        execution=_section(ExecutionSection, merged, problems),
        output=_section(OutputSection, merged, problems),
        capacity=_section(CapacitySection, merged, problems),
        changes=_section(ChangesSection, merged, problems),
        clients=_section(ClientsSection, merged, problems),
        migration=_section(MigrationSection, merged, problems),
        spark=_spark_properties(tables.get(SPARK, {}), shipped, problems),
        source=src,
    )
    return config, problems


def _section(section: type[S], tables: dict[str, dict[str, Any]], problems: Problems) -> S:
    """The section built from its table (unknown keys already recorded); every bad value is
    recorded, and the section keeps its default for it."""
    known = KNOWN_KEYS[section.NAME]
    given = {k: v for k, v in tables[section.NAME].items() if k in known}
    try:
        return section(**given)
    except SettingsError as exc:
        for message in exc.problems.values():
            problems.add(f"{problems.src}: {message}")
        return section(**{k: v for k, v in given.items() if k not in exc.problems})


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
