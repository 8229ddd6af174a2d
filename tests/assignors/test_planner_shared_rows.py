"""A strategy whose rows equal the strategy's before it shares that strategy's metrics row
and columns (`assignors.planner._Runner._rows`): the plan is the one it gets planned alone."""

from __future__ import annotations

from assignors.catalog.catalog import StrategyCatalog
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.planner import plan_group


def test_shared_rows_keep_each_strategys_rounds() -> None:
    # a owns both partitions; b joins: sticky moves t-1 at once, cooperative-sticky revokes it
    # first and gives it to b in round 2 (same final rows, other rounds)
    spec = GroupSpec(
        "g",
        (
            Member("a", frozenset({"t"}), owned=(("t", 0), ("t", 1)), generation=1),
            Member("b", frozenset({"t"}), generation=1),
        ),
        {"t": TopicMetadata("t", 2)},
    )
    names = ("sticky", "cooperative-sticky", "range", "roundrobin")
    together = plan_group(spec, StrategyCatalog.build(names), True)
    assert [p.strategy for p in together.plans] == list(names)
    sticky, cooperative = together.plans[:2]
    assert sticky.assignment == cooperative.assignment
    assert {r[5] for r in cooperative.rows} == {1, 2}
    assert cooperative.metrics["rebalance_rounds"] == 2
    for plan in together.plans:
        alone = plan_group(spec, StrategyCatalog.build((plan.strategy,)), True).plans[0]
        assert plan.rows == alone.rows
        assert plan.metrics == alone.metrics


def test_assignments_with_the_same_counts_keep_their_own_metrics() -> None:
    # range gives a t-0, t-1 and b t-2; roundrobin a t-0, t-2 and b t-1: the same partition
    # count per member, other partitions, so other movement (b owned t-0, a owned t-1)
    spec = GroupSpec(
        "g",
        (
            Member("a", frozenset({"t"}), owned=(("t", 1),), generation=1),
            Member("b", frozenset({"t"}), owned=(("t", 0),), generation=1),
        ),
        {"t": TopicMetadata("t", 3)},
    )
    names = ("range", "roundrobin", "sticky", "balanced", "uniform")
    together = plan_group(spec, StrategyCatalog.build(names), True)
    by_name = {p.strategy: p for p in together.plans}
    assert by_name["range"].assignment == {"a": [("t", 0), ("t", 1)], "b": [("t", 2)]}
    assert by_name["roundrobin"].assignment == {"a": [("t", 0), ("t", 2)], "b": [("t", 1)]}
    assert by_name["range"].metrics["moved_partition_count"] == 1
    assert by_name["roundrobin"].metrics["moved_partition_count"] == 2
    for plan in together.plans:
        alone = plan_group(spec, StrategyCatalog.build((plan.strategy,)), True).plans[0]
        assert plan.metrics == alone.metrics
        assert plan.rows == alone.rows
