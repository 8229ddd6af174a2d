"""The documented range of every numeric setting of conf/planner.toml.

Checked when the config is read, before Spark starts: a value outside its range is a
configuration error (exit 2) naming the setting and its range. The ranges are generous for any
real estate; their upper ends stop values that would only exhaust the driver or the JVM (a
hundred million buckets is a hundred million shuffle partitions) or hang a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The output lock's lease, seconds: a lock not renewed for this long is a gone run's.
DEFAULT_LEASE_S = 300


@dataclass(frozen=True)
class Range:
    low: int
    high: int
    note: str = ""  # what the low end means, when it is special (0 = automatic)

    def describe(self) -> str:
        text = f"an integer >= {self.low:_} and <= {self.high:_}".replace("_", ",")
        return f"{text} ({self.note})" if self.note else text


# (section, key) -> its range. A new numeric setting adds its line here.
RANGES: dict[tuple[str, str], Range] = {
    # 0 = automatic. More buckets than groups only adds empty tasks.
    ("execution", "buckets"): Range(
        0, 100_000, "0 = 16 x the default parallelism, at most 20,000 members a bucket"
    ),
    # part files per table: more than a few thousand only makes small files
    ("execution", "output_files"): Range(1, 10_000),
    # what-if replays: a rolling restart replays two rebalances per member
    ("planner", "scenario_max_members"): Range(0, 10_000, "0 = no what-if rows"),
    ("planner", "scenario_max_partitions"): Range(0, 1_000_000, "0 = no what-if rows"),
    # how long a lock may go unrenewed before another run may take it
    ("output", "lock_lease_s"): Range(30, 86_400),
    # the per-group guard: a day per (group, strategy) at most; up to 1 TiB per bucket's child
    ("execution", "group_timeout_s"): Range(0, 86_400, "0 = no limit"),
    ("execution", "group_memory_mb"): Range(0, 1_048_576, "0 = no limit"),
}


def checked(section: dict[str, Any], name: str, key: str, default: int, src: str) -> int:
    """`section[key]` (or `default`); ValueError naming the setting and its range unless it is
    an integer within that range."""
    value = section.get(key, default)
    rng = RANGES[(name, key)]
    ok = isinstance(value, int) and not isinstance(value, bool) and rng.low <= value <= rng.high
    if not ok:
        raise ValueError(f"{src}: {name}.{key} must be {rng.describe()}, got {value!r}")
    return int(value)
