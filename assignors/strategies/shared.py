"""Results strategies share inside one scope: a group's what-if rebalances.

The what-if replays run each strategy's scenarios one strategy after the other on the same
group, and two strategies may compute the same derived result from the same input (`sticky`
and the first round of `cooperative-sticky` compute the same sticky target). Inside
`sharing()`, a strategy may keep such a result under a key that says everything the result
depends on, and another strategy finds it there.

Nothing is shared outside the scope: a plain `assign` or `rebalance` call (the planner, a
test) computes everything itself, and what was kept is dropped when the scope ends. `budget`
bounds what a scope keeps (in the size units its users give, partitions): a large group
stops keeping results, it does not grow without bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT_BUDGET = 400_000
"""Partitions' worth of results one scope keeps at most."""


class SharedResults:
    """Results by key; `left` is the budget not yet used (a result too large is not kept)."""

    def __init__(self, budget: int) -> None:
        self.entries: dict[object, object] = {}
        self.left = budget

    def get(self, key: object) -> object | None:
        return self.entries.get(key)

    def put(self, key: object, value: object, size: int) -> None:
        if self.reserve(size):
            self.entries[key] = value

    def reserve(self, size: int) -> bool:
        """Take `size` from the budget for a result kept by other means (one added to a
        list already kept); False, taking nothing, when the budget is short."""
        if size > self.left:
            return False
        self.left -= size
        return True


_scopes: list[SharedResults] = []


@contextmanager
def sharing(budget: int = DEFAULT_BUDGET) -> Iterator[SharedResults]:
    """Strategies called inside the block share results (the innermost scope)."""
    scope = SharedResults(budget)
    _scopes.append(scope)
    try:
        yield scope
    finally:
        _scopes.pop()


def current() -> SharedResults | None:
    """The innermost open scope, None outside every scope."""
    return _scopes[-1] if _scopes else None
