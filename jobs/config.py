"""Planner configuration: conf/planner.toml, overridden by CLI flags."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "conf" / "planner.toml"


class ConfigError(ValueError):
    """An unreadable or invalid configuration; the job stops before planning."""


@dataclass(frozen=True)
class PlannerConfig:
    strategies: tuple[str, ...] = ("range", "roundrobin")
    default_assignment_strategies: tuple[str, ...] = ("range", "cooperative-sticky")
    buckets: int = 0
    output_files: int = 2
    spark: dict[str, str] = field(default_factory=dict)
    source: str = "<defaults>"

    def as_dict(self) -> dict[str, Any]:
        return {
            "strategies": list(self.strategies),
            "default_assignment_strategies": list(self.default_assignment_strategies),
            "buckets": self.buckets,
            "output_files": self.output_files,
            "spark": dict(self.spark),
            "source": self.source,
        }


def _str_list(
    table: dict[str, Any], key: str, default: tuple[str, ...], src: str
) -> tuple[str, ...]:
    value = table.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{src}: {key} must be a list of non-empty strings, got {value!r}")
    return tuple(v.strip() for v in value)


def _positive_int(table: dict[str, Any], key: str, default: int, src: str, minimum: int) -> int:
    value = table.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(f"{src}: execution.{key} must be an integer >= {minimum}, got {value!r}")
    return value


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
    planner = data.get("planner", {})
    execution = data.get("execution", {})
    spark = data.get("spark", {})
    if not all(isinstance(t, dict) for t in (planner, execution, spark)):
        raise ConfigError(f"{src}: [planner], [execution] and [spark] must be tables")
    chosen = _str_list(planner, "strategies", PlannerConfig.strategies, src)
    if strategies is not None:
        chosen = tuple(s.strip() for s in strategies.split(",") if s.strip())
        if not chosen:
            raise ConfigError("--strategies names no strategy")
    if len(set(chosen)) != len(chosen):
        raise ConfigError(f"strategies are listed twice: {', '.join(chosen)}")
    return PlannerConfig(
        strategies=chosen,
        default_assignment_strategies=_str_list(
            planner,
            "default_assignment_strategies",
            PlannerConfig.default_assignment_strategies,
            src,
        ),
        buckets=_positive_int(execution, "buckets", 0, src, 0),
        output_files=_positive_int(execution, "output_files", 2, src, 1),
        spark={str(k): str(v) for k, v in spark.items()},
        source=src,
    )
