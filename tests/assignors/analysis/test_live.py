"""The live check: which library leads a group, the strategy `elected` plans with, and the
verdict of a group's current (or KIP-848 target) assignment against that plan, each verdict
and their precedence."""

from __future__ import annotations

from assignors.analysis.live import (
    MATCHES_ELECTED,
    REBALANCING,
    SAME_SIZES,
    STALE_OWNERS,
    UNEXPLAINED,
    group_library,
    library_variant,
    live_check,
)
from assignors.catalog.catalog import StrategyCatalog
from assignors.model import CONSUMER, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.planner import plan_group
from assignors.problems import Reason

T = "orders"


def tps(*numbers: int) -> tuple[TopicPartition, ...]:
    return tuple((T, n) for n in numbers)


def group(
    owned: dict[str, tuple[TopicPartition, ...]],
    departed: dict[str, tuple[TopicPartition, ...]] | None = None,
    generations: dict[str, int] | None = None,
    protocol: str = "classic",
    partitions: int = 4,
) -> GroupSpec:
    members = tuple(
        Member(m, frozenset({T}), owned=held, generation=(generations or {}).get(m, 7))
        for m, held in owned.items()
    )
    return GroupSpec("g", members, {T: TopicMetadata(T, partitions)}, departed, protocol)


PLAN = {"a": list(tps(0, 1)), "b": list(tps(2, 3))}


def verdict(spec: GroupSpec, **kw: object) -> dict[str, object]:
    row = live_check(spec, kw.pop("plan", PLAN), "range", "java", **kw)  # type: ignore[arg-type]
    assert row is not None
    return row


# ---- which library ------------------------------------------------------------------------


def test_a_pattern_wins_over_the_column_and_the_first_matching_pattern_wins() -> None:
    patterns = [("pay-*", "kafka-python"), ("pay-eu-*", "librdkafka")]
    assert group_library("pay-eu-1", ["librdkafka"], patterns) == ("kafka-python", [])
    assert group_library("PAY-1", ["librdkafka"], patterns) == ("librdkafka", [])  # case counts


def test_null_blank_and_java_are_java_and_names_are_normalised() -> None:
    assert group_library("g", [None, "", " Java "]) == ("java", [])
    assert group_library("g", ["LIBRDKAFKA", "librdkafka"]) == ("librdkafka", [])
    assert group_library("g", ["sarama"]) == ("sarama", [])


def test_a_null_is_no_evidence_against_the_library_other_members_name() -> None:
    assert group_library("g", ["kafka-python", None, ""]) == ("kafka-python", [])


def test_members_naming_different_libraries_are_planned_as_java_with_a_warning() -> None:
    library, problems = group_library("g", ["kafka-python", "java"])
    assert library == "java"
    assert [(p.reason, p.severity) for p in problems] == [(Reason.MIXED_CLIENT_LIBRARY, "warning")]
    assert "java, kafka-python" in problems[0].detail


def test_the_variant_is_the_librarys_where_it_has_one_else_javas() -> None:
    assert library_variant("range", "kafka-python") == "range@kafka-python"
    assert library_variant("roundrobin", "librdkafka") == "roundrobin@librdkafka"
    assert (
        library_variant("cooperative-sticky", "kafka-python") == "cooperative-sticky@kafka-python"
    )
    assert library_variant("sticky", "librdkafka") == "sticky"
    assert library_variant("range", "sarama") == "range"
    assert library_variant("pkg.mod:Custom", "kafka-python") == "pkg.mod:Custom"


def test_elected_plans_the_leaders_library_and_says_which() -> None:
    # interleaved static members: kafka-python's range gives the first nothing
    members = (
        Member("a", frozenset({T}), "z"),
        Member("b", frozenset({T})),
        Member("c", frozenset({T}), "y"),
    )
    spec = GroupSpec("g", members, {T: TopicMetadata(T, 5)})
    catalog = StrategyCatalog.build(["range", "elected"])
    java = plan_group(spec, catalog, False)
    python = plan_group(spec, catalog, False, client_library="kafka-python")
    assert (java.client_library, java.elected_with) == ("java", "range")
    assert (python.client_library, python.elected_with) == ("kafka-python", "range@kafka-python")
    elected = {p.strategy: p for p in python.plans}["elected"]
    assert elected.assignment["a"] == []
    assert elected.metrics["elected_strategy"] == "range@kafka-python"
    assert {p.strategy: p for p in java.plans}["elected"].assignment["a"] == list(tps(2, 3))
    # the plain strategy stays Java's
    assert {p.strategy: p for p in python.plans}["range"].assignment["a"] == list(tps(2, 3))


def test_a_consumer_groups_library_does_not_matter() -> None:
    spec = group({"a": (), "b": ()}, protocol=CONSUMER)
    catalog = StrategyCatalog.build(["uniform", "elected"])
    plan = plan_group(spec, catalog, False, client_library="kafka-python")
    assert plan.client_library is None
    assert plan.elected_with == "uniform"


# ---- each verdict -------------------------------------------------------------------------


def test_matches_elected() -> None:
    row = verdict(group({"a": tps(0, 1), "b": tps(2, 3)}))
    assert row["verdict"] == MATCHES_ELECTED
    assert row["differing_partition_count"] == 0
    assert row["elected_strategy"] == "range"
    assert row["client_library"] == "java"
    assert "4 partition(s) over 2 member(s)" in str(row["detail"])


def test_same_sizes_counts_the_swapped_partitions() -> None:
    row = verdict(group({"a": tps(0, 2), "b": tps(1, 3)}))
    assert row["verdict"] == SAME_SIZES
    assert row["differing_partition_count"] == 2
    assert "orders-1 on b (plan: a)" in str(row["detail"])


def test_rebalancing_by_state_by_generations() -> None:
    settled = group({"a": tps(0, 1), "b": tps(2, 3)})
    row = verdict(settled, states=["PreparingRebalance", "PreparingRebalance"])
    assert row["verdict"] == REBALANCING
    assert "group state PreparingRebalance" in str(row["detail"])
    assert "exactly the range plan" in str(row["detail"])
    split = group({"a": tps(0, 1), "b": ()}, generations={"a": 8, "b": 7})
    row = verdict(split, states=[None, None])  # no group state: the generations decide
    assert row["verdict"] == REBALANCING
    assert "a at 8; b at 7" in str(row["detail"])
    assert row["differing_partition_count"] == 2
    # A coordinator that calls the group Stable wins: members joined in different rounds
    # report different generations (live kafka-python groups do).
    assert verdict(split, states=["Stable", "Stable"])["verdict"] != REBALANCING


def test_stale_owners_departed_members_and_partitions_nobody_holds() -> None:
    row = verdict(group({"a": tps(0, 1), "b": tps(2)}, departed={"gone": tps(3)}))
    assert row["verdict"] == STALE_OWNERS
    assert "1 partition(s) held by 1 departed member(s): gone (1)" in str(row["detail"])
    assert row["differing_partition_count"] == 1
    row = verdict(group({"a": tps(0, 1), "b": tps(2)}))
    assert row["verdict"] == STALE_OWNERS
    assert "1 subscribed partition(s) held by nobody: orders-3" in str(row["detail"])


def test_unexplained() -> None:
    row = verdict(group({"a": tps(0, 1, 2), "b": tps(3)}))
    assert row["verdict"] == UNEXPLAINED
    assert row["differing_partition_count"] == 1
    assert "a holds 3 (plan 2)" in str(row["detail"])
    assert "custom assignor" in str(row["detail"])


def test_an_unplanned_elected_is_unexplained_with_its_reason() -> None:
    row = live_check(
        group({"a": tps(0, 1), "b": tps(2, 3)}), None, None, "java", (), None, "NO_COMMON"
    )
    assert row is not None
    assert (row["verdict"], row["differing_partition_count"]) == (UNEXPLAINED, 0)
    assert "NO_COMMON" in str(row["detail"])


def test_no_current_assignment_no_row() -> None:
    assert live_check(group({"a": (), "b": ()}), PLAN, "range", "java") is None


# ---- precedence ---------------------------------------------------------------------------


def test_rebalancing_comes_before_stale_owners_and_sizes() -> None:
    spec = group({"a": tps(0, 2), "b": tps(1)}, departed={"gone": tps(3)})
    assert verdict(spec)["verdict"] == STALE_OWNERS
    assert verdict(spec, states=["CompletingRebalance"])["verdict"] == REBALANCING
    swapped = group({"a": tps(0, 2), "b": tps(1, 3)})
    assert verdict(swapped, states=["Stable"])["verdict"] == SAME_SIZES
    assert verdict(swapped, states=["Assigning"])["verdict"] == REBALANCING


def test_a_plan_that_leaves_partitions_unassigned_and_is_held_matches() -> None:
    # a library that leaves a partition unassigned: the group holds its leader's plan
    spec = group({"a": tps(0, 1), "b": tps(2)})
    plan = {"a": list(tps(0, 1)), "b": list(tps(2))}
    assert verdict(spec, plan=plan)["verdict"] == MATCHES_ELECTED


# ---- KIP-848 target -----------------------------------------------------------------------


def test_kip848_the_target_is_compared_and_reconciling_members_are_rebalancing() -> None:
    reconciled = group({"a": tps(0, 1), "b": tps(2, 3)}, protocol=CONSUMER)
    target = {"a": list(tps(0, 1)), "b": list(tps(2, 3))}
    assert verdict(reconciled, target=target)["verdict"] == MATCHES_ELECTED
    behind = group({"a": tps(0, 1, 2), "b": tps(3)}, protocol=CONSUMER)
    row = verdict(behind, target=target, states=["Stable"])
    assert row["verdict"] == REBALANCING
    assert "2 member(s) still reconcile towards the target" in str(row["detail"])
    assert "the target assignment is exactly the range plan" in str(row["detail"])
    assert row["differing_partition_count"] == 0  # the target is the plan


def test_kip848_a_target_the_plan_does_not_explain() -> None:
    other = {"a": list(tps(0, 1, 2)), "b": list(tps(3))}
    spec = group({"a": tps(0, 1, 2), "b": tps(3)}, protocol=CONSUMER)
    row = verdict(spec, target=other)
    assert row["verdict"] == UNEXPLAINED
    assert row["differing_partition_count"] == 1
    # a group nobody holds anything in yet, with a target: still a row
    fresh = group({"a": (), "b": ()}, protocol=CONSUMER)
    assert verdict(fresh, target=dict(PLAN))["verdict"] == REBALANCING


def test_a_classic_groups_target_is_ignored() -> None:
    spec = group({"a": tps(0, 1), "b": tps(2, 3)})
    assert verdict(spec, target={"a": list(tps(0, 1, 2, 3))})["verdict"] == MATCHES_ELECTED
