"""How the core's objects cross a process boundary (a leaf: imports nothing of the planner).

Objects of the core travel by pickle: the strategy catalog and the what-if settings from the
driver to every executor, and the look-alike memo's shapes with their warnings from a bucket's
planning child back to its worker (`jobs.plan.guard`). A class compiled by mypyc (`make core`)
whose `__init__` takes arguments cannot be unpickled the default way: mypyc's `__new__` calls
`__init__`, which pickle calls with none. Such a class that crosses a boundary pickles
through `by_fields`; tests/assignors/test_pickled.py finds the classes that cross and round-trips
each on the compiled and the pure core.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any


def by_fields(obj: Any) -> tuple[Callable[..., object], tuple[object, ...]]:
    """`__reduce__` of a frozen dataclass: its class and its init fields in order. Listing
    the fields here, not by hand, means a field added later still crosses with the rest."""
    return type(obj), tuple(getattr(obj, f.name) for f in fields(obj) if f.init)
