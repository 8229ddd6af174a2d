"""The plan context travels to every executor in the UDF's closure, pickled by Spark's own
cloudpickle: it arrives equal, with its catalog (the core's side:
tests/assignors/test_pickled.py)."""

from __future__ import annotations

import pickle

from pyspark import cloudpickle

from assignors.whatif.group import WhatIfSettings
from jobs.plan.guard import GuardSettings
from jobs.plan.udf import PlanContext
from jobs.settings.run import RunSettings

PLUGIN = "assignors.catalog.examples.random_assignor:RandomAssignor"


def test_the_plan_context_arrives_equal_with_its_catalog() -> None:
    ctx = PlanContext(
        RunSettings.of(
            strategies=("range", "sticky", "uniform", "balanced", PLUGIN),
            has_current_assignment=True,
            plan_elected=True,
            has_offsets=True,
            whatif=WhatIfSettings(("member_join", "rolling_restart"), 50, 500),
            guard=GuardSettings(12.5, 1024),
        ),
        rows_dir="/tmp/rows",
        output_files=4,
    )
    back = pickle.loads(cloudpickle.dumps(ctx))
    assert back == ctx
    assert back.settings.catalog == ctx.settings.catalog
    names = [type(s.factory()).__qualname__ for s in ctx.settings.catalog.strategies]
    assert [type(s.factory()).__qualname__ for s in back.settings.catalog.strategies] == names
