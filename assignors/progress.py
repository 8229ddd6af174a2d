"""Where planning is: a listener told of each (group, strategy, phase) unit as it starts.

The core calls `starting` before it runs a strategy's plan or its what-if replays. Nothing
listens by default (one call and a test per unit); the job's per-group guard listens, so that
a unit which hangs, exhausts memory or kills its process is named: the group, the strategy
and the phase, never just "a worker died".
"""

from __future__ import annotations

from collections.abc import Callable

Listener = Callable[[str, str, str], None]
PLAN = "plan"
WHATIF = "what-if"

_listener: list[Listener] = []  # at most one; a list so that mypyc keeps it mutable


def listen(listener: Listener | None) -> None:
    """Install `listener` (None: stop listening)."""
    _listener.clear()
    if listener is not None:
        _listener.append(listener)


def starting(group_id: str, strategy: str, phase: str) -> None:
    if _listener:
        _listener[0](group_id, strategy, phase)
