"""The run's manifest (`_manifest.json`): what was read, planned and written, typed.

The pipeline builds it, the console summary, the report and the CLI read it; `to_json` is the
file's content (the console figures `summary` and `whatif` are not written).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assignors.problems import Reason

MANIFEST_FILE = "_manifest.json"
INTERNAL_ERROR = Reason.INTERNAL_ERROR.value


@dataclass(frozen=True)
class GroupCounts:
    """Input groups = planned + rejected (a group-level error)."""

    input: int
    planned: int
    rejected: int


@dataclass
class Manifest:
    version: str
    ds: str | None
    input: str
    output: str
    strategies: list[str]
    config: dict[str, Any]
    input_rows: dict[str, int | None]
    output_rows: dict[str, int]
    topics: int
    groups: GroupCounts
    planned_by_strategy: dict[str, int]
    rejected_by_reason: dict[str, int]
    spark_version: str
    duration_seconds: float
    report: str | None = None
    # capacity.json's name when the run wrote it (None: capacity left out)
    capacity_feed: str | None = None
    # where the time went: "wall" seconds of the driver's phases (read, plan, write, summary,
    # report), "planning" seconds of the buckets' phases summed over the workers, and
    # "memory": the peak resident MiB of a process that planned a bucket, "core": the planned
    # buckets per core that planned them ({"compiled": N, "pure": M})
    phases: dict[str, dict[str, float]] = field(default_factory=dict)
    # console figures, not written: per strategy (`jobs.plan.summary`)
    summary: list[dict[str, Any]] = field(default_factory=list)
    whatif: list[dict[str, Any]] = field(default_factory=list)
    # `--previous`: the previous output's path and ds (and version), or why it was not
    # compared (`unusable`); None for a run without one (the key is then not written)
    previous: dict[str, Any] | None = None
    # `live_check` rows per verdict (docs/live.md), verdicts with none left out
    live_verdicts: dict[str, int] = field(default_factory=dict)
    # `migrations` per path (docs/migration.md): groups, ready, and rows per blocker and
    # warning; paths with no rows left out
    migration_paths: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "ds": self.ds,
            "input": self.input,
            "output": self.output,
            "strategies": self.strategies,
            "config": self.config,
            "input_rows": self.input_rows,
            "output_rows": self.output_rows,
            "topics": self.topics,
            "groups": {
                "input": self.groups.input,
                "planned": self.groups.planned,
                "rejected": self.groups.rejected,
            },
            "planned_by_strategy": self.planned_by_strategy,
            "rejected_by_reason": self.rejected_by_reason,
            "spark_version": self.spark_version,
            "duration_seconds": self.duration_seconds,
            "report": self.report,
            "capacity_feed": self.capacity_feed,
            "phases": self.phases,
            "live_verdicts": self.live_verdicts,
            "migration_paths": self.migration_paths,
        } | ({} if self.previous is None else {"previous": self.previous})

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        """A manifest read back from `_manifest.json` (keys a newer run adds are ignored)."""
        return cls(
            version=str(data.get("version", "")),
            ds=data.get("ds"),
            input=str(data.get("input", "")),
            output=str(data.get("output", "")),
            strategies=list(data.get("strategies") or []),
            config=dict(data.get("config") or {}),
            input_rows=dict(data.get("input_rows") or {}),
            output_rows=dict(data.get("output_rows") or {}),
            topics=int(data.get("topics") or 0),
            groups=GroupCounts(**(data.get("groups") or {"input": 0, "planned": 0, "rejected": 0})),
            planned_by_strategy=dict(data.get("planned_by_strategy") or {}),
            rejected_by_reason=dict(data.get("rejected_by_reason") or {}),
            spark_version=str(data.get("spark_version", "")),
            duration_seconds=float(data.get("duration_seconds") or 0.0),
            report=data.get("report"),
            capacity_feed=data.get("capacity_feed"),
            phases=dict(data.get("phases") or {}),
            previous=data.get("previous") if isinstance(data.get("previous"), dict) else None,
            live_verdicts=dict(data.get("live_verdicts") or {}),
            migration_paths=dict(data.get("migration_paths") or {}),
        )

    def phase_line(self) -> str:
        """One line: where the run's time went (driver wall seconds; the planning phase split
        by what the workers spent on it, summed over them), how many buckets the compiled core
        planned, and the workers' peak memory."""
        wall, planning = self.phases.get("wall", {}), self.phases.get("planning", {})
        parts = []
        for phase, seconds in wall.items():
            part = f"{phase} {seconds:.1f} s"
            if phase == "plan" and any(planning.values()):
                inner = ", ".join(f"{p} {s:.1f}" for p, s in planning.items() if s)
                part += f" (worker seconds: {inner})"
            parts.append(part)
        line = f"phases: {'; '.join(parts)}; total {self.duration_seconds:.1f} s"
        cores = self.phases.get("core", {})
        if any(cores.values()):
            line += f"; core compiled {cores.get('compiled', 0):g}/{sum(cores.values()):g}"
        peak = self.phases.get("memory", {}).get("peak_bucket_rss_mib", 0.0)
        return f"{line}; peak worker memory {peak / 1024:.2f} GiB" if peak else line

    def needs_attention(self) -> list[str]:
        """Why a completed run needs a person (exit 3): nothing planned, or internal errors."""
        reasons = []
        planned = self.planned_by_strategy
        if self.groups.planned == 0 or (planned and not any(planned.values())):
            reasons.append(
                f"nothing was planned: 0 (group, strategy) units from {self.groups.input}"
                " input groups; see the rejected table"
            )
        internal = sum(
            n for key, n in self.rejected_by_reason.items() if key.endswith(f":{INTERNAL_ERROR}")
        )
        if internal:
            reasons.append(
                f"{internal} {INTERNAL_ERROR} rows: a built-in assignor failed (a bug; see the log)"
            )
        return reasons
