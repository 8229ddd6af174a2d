"""Where planning is: listeners told of each (group, strategy, phase) unit as it starts.

The core calls `starting` before it runs a strategy's plan, computes its metrics and bounds,
replays its what-if rebalances, searches its capacity or costs its migration paths. Nothing
listens by default (one call and a test per unit).
The job listens twice: its per-group guard, so that a unit which hangs, exhausts memory or
kills its process is named (the group, the strategy and the phase, never just "a worker
died"); and its phase clock, which adds up where a run's planning time goes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

Listener = Callable[[str, str, str], None]
PLAN = "plan"
METRICS = "metrics and bounds"
WHATIF = "what-if"
CAPACITY = "capacity"
MIGRATION = "migration"

_listeners: list[Listener] = []


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """`listener` is told of every unit started inside the block."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)


def starting(group_id: str, strategy: str, phase: str) -> None:
    for listener in _listeners:
        listener(group_id, strategy, phase)
