"""What crosses a process boundary round-trips through pickle, whichever core pickles it and
whichever unpickles it.

The boundaries of the core: the strategy catalog, the topic catalog and the what-if settings
go from the driver to every executor; the look-alike shapes a bucket's planning child learned
go back to its worker with their warnings, and so do its migration bounce costs
(`jobs.plan.guard`). The objects here are the ones the planner really sends, built by its own
code; every class found inside them is checked, so a class added to them later is checked too.
`make test-main` runs this on the compiled core and `make test-pure` on the pure one; the last
tests pickle on one and unpickle on the other.
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
import subprocess
import sys
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest

import assignors
from assignors.catalog.catalog import StrategyCatalog
from assignors.inputs.validation import TopicStatus
from assignors.migration.conditions import MigrationSettings
from assignors.migration.paths import group_migrations
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.planner import plan_group
from assignors.problems import ERROR, WARNING, Problem, Reason
from assignors.whatif import lookalike
from assignors.whatif.capacity import CapacitySettings, CapacityTarget
from assignors.whatif.group import WhatIfSettings, group_whatif
from assignors.whatif.lookalike import BounceMemo, process_memo
from tools.build_core import compiled_modules

PLUGIN = "assignors.catalog.examples.random_assignor:RandomAssignor"


def _group(group_id: str, prefix: str, static: bool) -> GroupSpec:
    """Three members on two topics; `m0` alone on the second (unequal subscriptions)."""
    members = tuple(
        Member(
            f"{prefix}-{i}",
            frozenset({"orders", "audit"} if i == 0 else {"orders"}),
            f"{prefix}-instance-{i}" if static else None,
            None,
        )
        for i in range(3)
    )
    topics = {"orders": TopicMetadata("orders", 6), "audit": TopicMetadata("audit", 2)}
    return GroupSpec(group_id, members, topics)


def learned_shapes() -> list[tuple[tuple[object, ...], Any]]:
    """What a planning child hands its worker: the shapes it memoised, with their warnings
    (SCENARIO_NOT_APPLICABLE is kept with a shape: subscription_change has nobody to widen
    when subscriptions differ only by a topic that does not exist)."""
    catalog = StrategyCatalog.build(["range", "roundrobin", "sticky", "cooperative-sticky"])
    specs = [_group(f"g-{n}", f"c{n}", static=n % 2 == 1) for n in range(4)]
    equal = tuple(Member(f"e-{i}", frozenset({"orders"}), None, None) for i in range(3))
    # subscriptions that differ only by a topic that does not exist: nobody is narrowest
    gone = tuple(
        Member(f"x-{i}", frozenset({"orders", "gone"} if i else {"orders"}), None, None)
        for i in range(3)
    )
    for gid, members in (("g-equal", equal), ("g-gone", gone), ("g-gone-2", gone)):
        specs.append(GroupSpec(gid, members, {"orders": TopicMetadata("orders", 6)}))
    # a memo of its own: shapes another test memoised first would not be learned again
    before, lookalike._process_memo = lookalike._process_memo, None
    try:
        memo = process_memo()
        mark = memo.mark()
        for spec in specs:
            group_whatif(spec, plan_group(spec, catalog, False), catalog, WhatIfSettings())
        kept = memo.since(mark)
    finally:
        lookalike._process_memo = before
    assert kept, "no shape was memoised: the test plans nothing that crosses"
    assert any(problems for _, (_, problems) in kept), "no memoised shape carries a warning"
    return kept


def learned_bounces() -> list[tuple[tuple[object, ...], tuple[int, ...]]]:
    """What a planning child hands its worker beside the shapes: the bounce costs of its
    classic groups' migration paths (`assignors.migration.paths`)."""
    catalog = StrategyCatalog.build(["range", "roundrobin", "sticky", "cooperative-sticky"])
    memo = BounceMemo()
    for n in range(4):
        spec = _group(f"g-{n}", f"c{n}", static=n % 2 == 1)
        group_migrations(
            spec, plan_group(spec, catalog, False), catalog, MigrationSettings(), memo=memo
        )
    kept = memo.since(0)
    assert {key[0] for key, _ in kept} == {"classic_to_consumer", "eager_to_cooperative"}
    return kept


def sent_to_executors() -> list[object]:
    """The catalogs and settings the driver ships to every executor."""
    catalog = StrategyCatalog.build(
        ["range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "balanced", PLUGIN]
    )
    topics = {
        "orders": TopicStatus(6),
        "racked": TopicStatus(3, replica_racks=(frozenset({"a"}), frozenset(), frozenset({"b"}))),
        "bad": TopicStatus(2, "NON_CONTIGUOUS_PARTITIONS", "partitions 0 and 2 only"),
        "weighted": TopicStatus(3, weights=(1, 2, 3)),
    }
    capacity = CapacitySettings(CapacityTarget.parse("max_member_weight:2.5"), 7, 99)
    return [
        catalog,
        topics,
        WhatIfSettings(),
        WhatIfSettings(("member_join",), 7, 99),
        CapacitySettings(),
        capacity,
    ]


def problems() -> list[Problem]:
    return [
        Problem("g", None, None, ERROR, Reason.INTERNAL_ERROR, "d"),
        Problem("g", "m", "t", WARNING, "DUPLICATE_PARTITION", "d", "sticky"),
        Problem(None, None, "t", ERROR, Reason.NON_CONTIGUOUS_PARTITIONS, "d"),
    ]


def crossing() -> list[object]:
    return [learned_shapes(), learned_bounces(), *sent_to_executors(), problems()]


class _Recorder(pickle.Pickler):
    """Records the class of every object it pickles (builtins' exact types aside)."""

    def __init__(self, file: BytesIO) -> None:
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.seen: set[type] = set()

    def reducer_override(self, obj: object) -> object:
        self.seen.add(type(obj))
        return NotImplemented


def classes_inside(value: object) -> set[type]:
    recorder = _Recorder(BytesIO())
    recorder.dump(value)
    return {c for c in recorder.seen if c.__module__.split(".")[0] == "assignors"}


def test_the_objects_that_cross_hold_the_classes_they_should() -> None:
    found = set().union(*(classes_inside(v) for v in crossing()))
    names = {c.__qualname__ for c in found}
    # not a complete list: the point is that these are found, so each is checked below
    assert {"Problem", "StrategyCatalog", "Strategy", "TopicStatus", "WhatIfSettings"} <= names
    assert {"CapacitySettings", "CapacityTarget"} <= names


@pytest.mark.parametrize("value", crossing(), ids=lambda v: type(v).__name__)
def test_each_object_that_crosses_round_trips(value: object) -> None:
    back = pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
    assert back == value
    assert repr(back) == repr(value)


@pytest.mark.parametrize("cls", sorted({c for v in crossing() for c in classes_inside(v)}, key=str))
def test_every_class_inside_them_round_trips_alone(cls: type) -> None:
    instances = [o for v in crossing() for o in _walk(v) if type(o) is cls]
    assert instances
    for obj in instances:
        assert pickle.loads(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)) == obj


def _walk(value: object) -> list[object]:
    """Every object reachable through containers and dataclass fields."""
    out: list[object] = []
    stack = [value]
    while stack:
        obj = stack.pop()
        out.append(obj)
        if isinstance(obj, dict):
            stack.extend([*obj.keys(), *obj.values()])
        elif isinstance(obj, list | tuple | set | frozenset):
            stack.extend(obj)
        elif hasattr(obj, "__dataclass_fields__"):
            stack.extend(getattr(obj, f) for f in obj.__dataclass_fields__)
    return out


def test_a_problem_round_trips_with_its_reason_as_text() -> None:
    p = Problem("g", None, None, ERROR, Reason.INTERNAL_ERROR, "d")
    back = pickle.loads(pickle.dumps(p))
    assert back == p
    assert type(back.reason) is str


# --- across cores: pickled by the compiled core, unpickled by the pure one, and back -------

_ROUND = """
import pickle, sys
import assignors.problems
compiled = assignors.problems.__file__.endswith(".so")
values = pickle.load(open(sys.argv[1], "rb"))
with open(sys.argv[2], "wb") as out:
    pickle.dump((compiled, [repr(v) for v in values], values), out)
"""


def _shown(value: object) -> str:
    """A repr to compare across cores: a function in a memo key shows its address, and shows
    as a built-in function where it is compiled."""
    text = value if isinstance(value, str) else repr(value)
    return re.sub(r" at 0x[0-9a-f]+", "", text).replace("<built-in function ", "<function ")


def _compiled() -> bool:
    return str(assignors.problems.__file__).endswith(".so")


@pytest.fixture
def pure_core(tmp_path: Path) -> Path:
    """A copy of the package without its compiled modules: what an executor runs from a
    `--py-files` zip."""
    if not (_compiled() and compiled_modules()):
        pytest.skip("the compiled core is not built: nothing to cross to")
    root = tmp_path / "pure"
    shutil.copytree(
        Path(assignors.__file__).parent,
        root / "assignors",
        ignore=shutil.ignore_patterns("*.so", "__pycache__"),
    )
    return root


def _other_core(root: Path, sent: Path, back: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(root)}
    subprocess.run(
        [sys.executable, "-c", _ROUND, str(sent), str(back)], env=env, check=True, cwd=root
    )


def test_what_one_core_pickles_the_other_unpickles(pure_core: Path, tmp_path: Path) -> None:
    """Compiled to pure (a compiled driver, executors from a zip), then what the pure core
    pickles again back to the compiled one."""
    values = crossing()
    sent, back = tmp_path / "sent.pkl", tmp_path / "back.pkl"
    sent.write_bytes(pickle.dumps(values, pickle.HIGHEST_PROTOCOL))
    _other_core(pure_core, sent, back)
    with back.open("rb") as f:
        other_compiled, reprs, returned = pickle.load(f)
    assert other_compiled is False
    assert [_shown(r) for r in reprs] == [_shown(v) for v in values]
    assert returned == values
