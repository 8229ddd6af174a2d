"""The per-group guard (jobs/plan/guard.py): a strategy that kills, hangs or exhausts its worker
fails only the (group, strategy) it touched, with a rejected row naming it."""

from __future__ import annotations

import dataclasses
import errno
import gc
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers.oracle import split_tables

from assignors.inputs.validation import TopicStatus
from jobs.plan.guard import GuardSettings, guarded
from jobs.plan.udf import (
    INPUT_COLUMNS,
    KIND_MEMBER,
    PlanContext,
    bucket_function,
    plan_bucket,
)
from jobs.settings.run import RunSettings

TOPICS = {"t": TopicStatus(6)}
GUARD = GuardSettings(30, 0)
PLUGINS = "helpers.killer_plugins:"


def bucket() -> pd.DataFrame:
    """Three groups; the members of `g-bad` are named so that the killer plugins fail."""
    rows: list[dict[str, Any]] = []
    for gid, prefix in (("g-a", "m"), ("g-bad", "bad"), ("g-c", "m")):
        for i in range(3):
            rows.append(
                {"kind": KIND_MEMBER, "group_id": gid, "member_id": f"{prefix}{i}", "topics": ["t"]}
            )
    return pd.DataFrame(rows).reindex(columns=list(INPUT_COLUMNS))


def plan(plugin: str, guard: GuardSettings) -> dict[str, pd.DataFrame]:
    ctx = PlanContext(
        RunSettings.of(
            strategies=("range", PLUGINS + plugin, "sticky"),
            has_current_assignment=False,
            plan_elected=False,
            guard=guard,
        )
    )
    return split_tables(bucket_function(lambda: TOPICS, ctx)((0,), bucket()))


@pytest.mark.parametrize(
    ("plugin", "guard", "cause"),
    [
        ("Exits", GuardSettings(30, 0), "ended its worker with exit code 3"),
        ("Segfaults", GuardSettings(30, 0), "killed its worker with signal SIGSEGV"),
        ("Hangs", GuardSettings(1, 0), "did not finish within 1 s"),
        ("Hogs", GuardSettings(60, 512), "used more than 512 MB of memory"),
    ],
)
def test_a_plugin_that_takes_its_worker_down_fails_only_its_group(
    plugin: str, guard: GuardSettings, cause: str
) -> None:
    tables = plan(plugin, guard)
    planned = tables["balance_metrics"][["group_id", "strategy"]]
    units = sorted(map(tuple, planned.itertuples(index=False)))
    name = plugin.lower()
    assert units == sorted(
        [(g, s) for g in ("g-a", "g-bad", "g-c") for s in ("range", "sticky")]
        + [("g-a", name), ("g-c", name)]
    )
    rejected = tables["rejected"]
    (row,) = rejected.to_dict("records")
    assert (row["group_id"], row["strategy"], row["severity"]) == ("g-bad", name, "error")
    assert row["reason"] == "ASSIGNOR_FAILED"
    assert f"the assignor plugin {name!r} {cause} (plan of group 'g-bad')" in row["detail"]


def test_without_a_failure_the_guarded_bucket_equals_the_unguarded_one() -> None:
    ctx = PlanContext(
        RunSettings.of(
            strategies=("range", "sticky", "cooperative-sticky", "balanced"),
            has_current_assignment=False,
            plan_elected=True,
            guard=GuardSettings(30, 4096),
        )
    )

    def rows(frame: pd.DataFrame) -> dict[str, list[str]]:
        return {
            name: sorted(json.dumps(r, sort_keys=True, default=str) for r in t.to_dict("records"))
            for name, t in split_tables(frame).items()
        }

    guarded = bucket_function(lambda: TOPICS, ctx)((0,), bucket())
    assert rows(guarded) == rows(plan_bucket(bucket(), TOPICS, ctx))


def test_a_built_in_assignor_that_hangs_is_an_internal_error(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import time

    from assignors.strategies.sticky.assignor import StickyAssignor

    real = StickyAssignor.assign

    def slow(self, spec):  # type: ignore[no-untyped-def]
        if spec.group_id == "g-bad":
            time.sleep(3600)
        return real(self, spec)

    monkeypatch.setattr(StickyAssignor, "assign", slow)
    tables = plan("Exits", GuardSettings(1, 0))
    reasons = {(r["group_id"], r["strategy"]): r for r in tables["rejected"].to_dict("records")}
    hung = reasons[("g-bad", "sticky")]
    assert hung["reason"] == "INTERNAL_ERROR"
    assert "the built-in assignor 'sticky' did not finish within 1 s" in hung["detail"]
    assert reasons[("g-bad", "exits")]["reason"] == "ASSIGNOR_FAILED"
    planned = set(
        map(tuple, tables["balance_metrics"][["group_id", "strategy"]].itertuples(index=False))
    )
    assert ("g-bad", "range") in planned
    assert ("g-a", "sticky") in planned


def test_what_a_bucket_learned_about_look_alike_groups_outlives_its_child(tmp_path: Path) -> None:
    """The child that plans a bucket hands its look-alike shapes to the worker, so the next
    child starts with them; a child that failed hands back nothing."""
    import os

    from assignors.whatif.lookalike import process_memo
    from jobs.plan.guard import guarded

    memo = process_memo()
    first, lost, again = (("guard-test", name, os.getpid()) for name in ("first", "lost", "again"))

    def learns(key: tuple[object, ...], fails: bool = False) -> pd.DataFrame:
        memo.put(key, (), [])
        if fails:
            os._exit(3)
        return pd.DataFrame({"x": [1]})

    frame, problems = guarded(lambda _: learns(first), GuardSettings(30, 0), bool)
    assert list(frame["x"]) == [1]
    assert problems == []
    assert memo.entries.get(first) == ((), ())
    # The bucket's first child fails after learning `lost`; the guard plans it again.
    failed_once = tmp_path / "failed"

    def first_fails(_: object) -> pd.DataFrame:
        if failed_once.exists():
            return learns(again)
        failed_once.touch()
        return learns(lost, fails=True)

    _, problems = guarded(first_fails, GuardSettings(30, 0), bool)
    assert len(problems) == 1
    assert lost not in memo.entries
    assert memo.entries.get(again) == ((), ())


def test_what_a_bucket_learned_about_migration_bounces_outlives_its_child(
    tmp_path: Path,
) -> None:
    """The bounce costs of look-alike groups (`BounceMemo`) go back with the what-if shapes:
    the next child starts with both; a child that failed hands back neither."""
    import os

    from assignors.whatif.lookalike import process_bounce_memo, process_memo
    from jobs.plan.guard import guarded

    shapes, bounces = process_memo(), process_bounce_memo()
    first, lost, again = (
        ("guard-bounce", name, os.getpid()) for name in ("first", "lost", "again")
    )

    def learns(key: tuple[object, ...], fails: bool = False) -> pd.DataFrame:
        shapes.put(key, (), [])
        bounces.put(key, (1, 2, 3, 4))
        if fails:
            os._exit(3)
        return pd.DataFrame({"x": [1]})

    frame, problems = guarded(lambda _: learns(first), GuardSettings(30, 0), bool)
    assert (list(frame["x"]), problems) == ([1], [])
    assert bounces.entries.get(first) == (1, 2, 3, 4)
    assert shapes.entries.get(first) == ((), ())
    failed_once = tmp_path / "failed"

    def first_fails(_: object) -> pd.DataFrame:
        if failed_once.exists():
            return learns(again)
        failed_once.touch()
        return learns(lost, fails=True)

    _, problems = guarded(first_fails, GuardSettings(30, 0), bool)
    assert len(problems) == 1
    assert lost not in bounces.entries
    assert bounces.entries.get(again) == (1, 2, 3, 4)


def test_a_guarded_bucket_hands_the_bounce_costs_of_its_groups_to_its_worker() -> None:
    """Planned for real in the child (`jobs.plan.one_group` fills the process's memo): its
    classic groups' bounce costs are the worker's when the child is done, for the next
    bucket's child to start with."""
    from assignors.whatif import lookalike

    ctx = PlanContext(
        RunSettings.of(strategies=("range", "sticky"), has_current_assignment=False, guard=GUARD)
    )
    before, lookalike._process_bounce_memo = lookalike._process_bounce_memo, None
    try:
        memo = lookalike.process_bounce_memo()
        first = bucket_function(lambda: TOPICS, ctx)((0,), bucket())
        # g-a, g-bad and g-c are alike (three members on t, under range): one entry per path
        learned = dict(memo.since(0))
        assert sorted(key[0] for key in learned) == ["classic_to_consumer", "eager_to_cooperative"]
        assert (memo.hits, memo.misses) == (0, 0)  # counted in the child, not here
        again = bucket_function(lambda: TOPICS, ctx)((0,), bucket())
        assert memo.since(0) == list(learned.items())  # it started with them: none new
        assert split_tables(again)["migrations"].equals(split_tables(first)["migrations"])
    finally:
        lookalike._process_bounce_memo = before


def test_shapes_that_cannot_be_pickled_stay_behind_and_the_frame_comes_back() -> None:
    from assignors.whatif.lookalike import process_memo
    from jobs.plan.guard import guarded

    memo = process_memo()
    key = ("guard-test", lambda: None)  # a lambda does not pickle

    def learns(_: object) -> pd.DataFrame:
        memo.put(key, (), [])
        return pd.DataFrame({"x": [2]})

    frame, problems = guarded(learns, GuardSettings(30, 0), bool)
    assert list(frame["x"]) == [2]
    assert problems == []
    assert key not in memo.entries


class _Unpicklable:
    """Pickles, but raises when unpickled (as a compiled class without `__reduce__` did)."""

    def __reduce__(self) -> tuple[object, tuple[()]]:
        return (_refuse, ())


def _refuse() -> None:
    raise TypeError("__init__() missing required argument 'group_id' (pos 1)")


def test_shapes_that_cannot_be_unpickled_stay_behind_and_the_frame_comes_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from assignors.whatif.lookalike import process_memo
    from jobs.plan.guard import guarded

    memo = process_memo()
    key = ("guard-test", "unpicklable")

    def learns(_: object) -> pd.DataFrame:
        memo.put(key, ((_Unpicklable(),),), [])
        return pd.DataFrame({"x": [3]})

    with caplog.at_level("WARNING", logger="jobs.guard"):
        frame, problems = guarded(learns, GuardSettings(30, 0), bool)
    assert list(frame["x"]) == [3]
    assert problems == []
    assert key not in memo.entries
    assert "look-alike shapes of a bucket were dropped: TypeError" in caplog.text


def test_the_child_plans_without_the_cyclic_collector_and_the_parent_keeps_it() -> None:
    """The child ends with its bucket: no collection walks what the bucket made."""
    enabled = gc.isenabled()
    frame, problems = guarded(
        lambda _: pd.DataFrame({"gc": [gc.isenabled()]}), GuardSettings(30, 0), bool
    )
    assert (frame["gc"].tolist(), problems) == ([False], [])
    assert gc.isenabled() is enabled


def test_a_plugin_that_hangs_in_the_capacity_search_fails_only_its_group() -> None:
    """The guard covers the capacity phase as it covers the plan and the what-if (no
    scenario runs here, so only the capacity search plans the grown group)."""
    settings = RunSettings.of(
        strategies=("range", PLUGINS + "HangsWhenGrown"),
        has_current_assignment=False,
        plan_elected=False,
        guard=GuardSettings(1, 0),
    )
    assert settings.whatif is not None
    settings = dataclasses.replace(
        settings, whatif=dataclasses.replace(settings.whatif, scenarios=())
    )
    tables = split_tables(bucket_function(lambda: TOPICS, PlanContext(settings))((0,), bucket()))
    (row,) = tables["rejected"].to_dict("records")
    assert (row["group_id"], row["strategy"], row["reason"]) == (
        "g-bad",
        "hangswhengrown",
        "ASSIGNOR_FAILED",
    )
    assert "did not finish within 1 s (capacity of group 'g-bad')" in row["detail"]
    capacity = set(map(tuple, tables["capacity"][["group_id", "strategy"]].itertuples(index=False)))
    assert capacity == {
        ("g-a", "range"),
        ("g-a", "hangswhengrown"),
        ("g-bad", "range"),
        ("g-c", "range"),
        ("g-c", "hangswhengrown"),
    }


def test_an_exception_out_of_the_bucket_is_raised_not_pinned_on_its_last_unit() -> None:
    # A full disk under the assignment rows fails after the last group was planned: the last
    # unit the child posted did nothing wrong.
    def plan(_: object) -> pd.DataFrame:
        from assignors import progress

        progress.starting("g-last", "range", "migration")
        raise OSError(errno.ENOSPC, "No space left on device", "/data/.out.__tmp-1/_rows/0")

    with pytest.raises(OSError, match="No space left on device") as raised:
        guarded(plan, GuardSettings(30, 0), lambda _: True)
    assert raised.value.errno == errno.ENOSPC
    assert raised.value.filename == "/data/.out.__tmp-1/_rows/0"
    assert "raised in the bucket's guarded child process" in "".join(raised.value.__notes__)


def test_an_exception_that_does_not_pickle_is_raised_by_name() -> None:
    class Local(Exception):  # a class pickle cannot find by name
        pass

    def plan(_: object) -> pd.DataFrame:
        raise Local("lost in transit")

    with pytest.raises(RuntimeError, match=r"^Local: lost in transit$"):
        guarded(plan, GuardSettings(30, 0), lambda _: True)
