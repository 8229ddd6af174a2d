"""Balance metrics on small cases whose values are computed by hand."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping

import pytest

from assignors.analysis.load import LOAD_METRIC_COLUMNS
from assignors.analysis.metrics import (
    METRIC_COLUMNS,
    balance_metrics,
    is_valid,
    max_topic_spread,
    mean_and_stddev,
    scan_assignment,
)
from assignors.catalog.plugins import InvalidAssignmentError, validate_assignment
from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.ownership import previous_owners
from assignors.strategies.range import RangeAssignor
from assignors.strategies.roundrobin import RoundRobinAssignor


def mem(
    member_id: str,
    topics: Iterable[str],
    owned: Iterable[TopicPartition] = (),
    generation: int | None = None,
) -> Member:
    return Member(member_id, frozenset(topics), owned=tuple(owned), generation=generation)


def group(
    topics: Mapping[str, int],
    members: Iterable[Member],
    departed: Mapping[str, tuple[TopicPartition, ...]] | None = None,
) -> GroupSpec:
    return GroupSpec(
        "g",
        tuple(members),
        {t: TopicMetadata(t, n) for t, n in topics.items()},
        dict(departed or {}),
    )


# A group with an idle member and heterogeneous subscriptions:
#   t (5 partitions): a, b;  u (2): a, c;  d subscribes nothing; "ghost" has no metadata.
MIXED = group(
    {"t": 5, "u": 2, "other": 9},
    [mem("a", ["t", "u"]), mem("b", ["t", "ghost"]), mem("c", ["u"]), mem("d", [])],
)
MIXED_ASSIGNMENT: Assignment = {
    "a": [("t", 0), ("t", 1), ("t", 2), ("u", 0)],
    "b": [("t", 3), ("t", 4)],
    "c": [("u", 1)],
    "d": [],
}


def test_metric_columns_match_the_row() -> None:
    row = balance_metrics(MIXED, MIXED_ASSIGNMENT, None)
    # the load columns are merged into the row by assignors.planner
    load = [name for name, _ in LOAD_METRIC_COLUMNS]
    assert [name for name, _ in METRIC_COLUMNS] == list(row) + load
    assert [name for name, _ in METRIC_COLUMNS] == [
        "member_count",
        "topic_count",
        "partition_count",
        "assigned_partition_count",
        "unassigned_partition_count",
        "min_partitions_per_member",
        "max_partitions_per_member",
        "avg_partitions_per_member",
        "stddev_partitions_per_member",
        "partition_spread",
        "is_fully_balanced",
        "idle_member_count",
        "max_topic_spread",
        "moved_partition_count",
        "is_valid",
        "rebalance_rounds",
        "revoked_partition_count",
        "elected_strategy",
        "rack_mismatch_count",
        "best_max_partitions_per_member",
        "balance_gap",
        "bottleneck_topics",
        *load,
    ]
    for name, typ in METRIC_COLUMNS:
        if row.get(name) is not None:
            assert type(row[name]) is typ, name


def test_mixed_group_hand_computed() -> None:
    row = balance_metrics(MIXED, MIXED_ASSIGNMENT, None)
    # sizes 4, 2, 1, 0; mean 7/4; squared deviations 5.0625 + 0.0625 + 0.5625 + 3.0625 = 8.75
    assert row == {
        "member_count": 4,
        "topic_count": 2,  # t and u: "ghost" has no metadata, "other" has no subscriber
        "partition_count": 7,
        "assigned_partition_count": 7,
        "unassigned_partition_count": 0,
        "min_partitions_per_member": 0,
        "max_partitions_per_member": 4,
        "avg_partitions_per_member": pytest.approx(1.75),
        "stddev_partitions_per_member": pytest.approx(math.sqrt(8.75 / 4)),
        "partition_spread": 4,
        "is_fully_balanced": False,
        "idle_member_count": 1,
        "max_topic_spread": 1,  # t: a 3 vs b 2; u: a 1 vs c 1
        "moved_partition_count": None,
        "is_valid": True,
        "rebalance_rounds": 1,
        "revoked_partition_count": None,
        "elected_strategy": None,
        # t's 5 partitions have 2 subscribers: nobody can do better than 3 (plain average 2)
        "rack_mismatch_count": None,
        "best_max_partitions_per_member": 3,
        "balance_gap": 1,
        "bottleneck_topics": ["t"],
    }


def test_balanced_group() -> None:
    spec = group({"t": 5}, [mem("a", ["t"]), mem("b", ["t"])])
    row = balance_metrics(
        spec, {"a": [("t", 0), ("t", 1), ("t", 2)], "b": [("t", 3), ("t", 4)]}, None
    )
    assert row["partition_spread"] == 1
    assert row["is_fully_balanced"] is True
    assert row["stddev_partitions_per_member"] == pytest.approx(0.5)
    assert row["avg_partitions_per_member"] == pytest.approx(2.5)
    assert row["idle_member_count"] == 0
    assert row["max_topic_spread"] == 1


def test_idle_members_and_member_missing_from_assignment() -> None:
    spec = group({"t": 2}, [mem("a", ["t"]), mem("b", ["t"]), mem("c", ["t"])])
    row = balance_metrics(spec, {"a": [("t", 0)], "b": [("t", 1)]}, None)
    assert row["member_count"] == 3
    assert row["idle_member_count"] == 1
    assert row["min_partitions_per_member"] == 0
    assert row["is_fully_balanced"] is True  # 1, 1, 0


def test_no_topics_every_member_idle() -> None:
    spec = group({}, [mem("a", ["ghost"]), mem("b", [])])
    row = balance_metrics(spec, {"a": [], "b": []}, None)
    assert row["topic_count"] == 0
    assert row["partition_count"] == 0
    assert row["idle_member_count"] == 2
    assert row["partition_spread"] == 0
    assert row["stddev_partitions_per_member"] == 0.0
    assert row["max_topic_spread"] == 0
    assert row["is_valid"] is True


def test_max_topic_spread_exposes_count_balanced_but_topic_skewed() -> None:
    # Both members hold 4 partitions, but each holds one whole topic.
    spec = group({"x": 4, "y": 4}, [mem("a", ["x", "y"]), mem("b", ["x", "y"])])
    assignment: Assignment = {
        "a": [("x", p) for p in range(4)],
        "b": [("y", p) for p in range(4)],
    }
    row = balance_metrics(spec, assignment, None)
    assert row["partition_spread"] == 0
    assert row["is_fully_balanced"] is True
    assert row["max_topic_spread"] == 4
    assert max_topic_spread(spec, assignment) == 4


def test_max_topic_spread_only_over_each_topics_subscribers() -> None:
    # c does not subscribe x, so its 0 partitions of x do not count.
    spec = group({"x": 2, "y": 3}, [mem("a", ["x", "y"]), mem("b", ["x"]), mem("c", ["y"])])
    assignment: Assignment = {
        "a": [("x", 0), ("y", 0)],
        "b": [("x", 1)],
        "c": [("y", 1), ("y", 2)],
    }
    assert max_topic_spread(spec, assignment) == 1


# --------------------------------------------------------------------------- moved


def test_moved_partition_count_with_previous() -> None:
    spec = group({"t": 4}, [mem("a", ["t"]), mem("b", ["t"])])
    assignment: Assignment = {"a": [("t", 0), ("t", 1)], "b": [("t", 2), ("t", 3)]}
    previous = {("t", 0): "a", ("t", 1): "b", ("t", 3): "departed"}
    # t-0 stays with a; t-1 moves b -> a; t-2 had no owner; t-3 moves departed -> b.
    assert balance_metrics(spec, assignment, previous)["moved_partition_count"] == 2


def test_moved_partition_count_empty_previous_is_zero_not_null() -> None:
    spec = group({"t": 2}, [mem("a", ["t"])])
    row = balance_metrics(spec, {"a": [("t", 0), ("t", 1)]}, {})
    assert row["moved_partition_count"] == 0


def test_moved_partition_count_without_previous_is_null() -> None:
    spec = group({"t": 2}, [mem("a", ["t"], owned=[("t", 1)], generation=1)])
    row = balance_metrics(spec, {"a": [("t", 0), ("t", 1)]}, None)
    assert row["moved_partition_count"] is None


def test_moved_with_previous_owners_and_stale_double_claim() -> None:
    # t-0: a and b claim it in generation 2 -> invalidated, nobody's, so never "moved".
    # t-1: c (gen 3) beats a (gen 2) -> previous owner c.
    # t-2: only the departed "gone" owned it -> previous owner gone.
    # t-3: a owned it alone.
    spec = group(
        {"t": 4},
        [
            mem("a", ["t"], owned=[("t", 0), ("t", 1), ("t", 3)], generation=2),
            mem("b", ["t"], owned=[("t", 0)], generation=2),
            mem("c", ["t"], owned=[("t", 1)], generation=3),
        ],
        departed={"gone": (("t", 2),)},
    )
    prev = previous_owners(spec)
    assert prev == {("t", 1): "c", ("t", 2): "gone", ("t", 3): "a"}
    assignment: Assignment = {
        "a": [("t", 0), ("t", 1)],  # t-0: no previous owner; t-1: c -> a, moved
        "b": [("t", 2)],  # gone -> b, moved
        "c": [("t", 3)],  # a -> c, moved
    }
    assert balance_metrics(spec, assignment, prev)["moved_partition_count"] == 3
    kept: Assignment = {"a": [("t", 0), ("t", 3)], "b": [("t", 2)], "c": [("t", 1)]}
    assert balance_metrics(spec, kept, prev)["moved_partition_count"] == 1  # only t-2


# ------------------------------------------------------------------------------ is_valid

VALID_SPEC = group({"t": 3, "u": 1, "other": 2}, [mem("a", ["t", "u"]), mem("b", ["t"])])
VALID: Assignment = {"a": [("t", 0), ("u", 0)], "b": [("t", 1), ("t", 2)]}


def test_is_valid_true() -> None:
    assert is_valid(VALID_SPEC, VALID) is True
    assert balance_metrics(VALID_SPEC, VALID, None)["is_valid"] is True


@pytest.mark.parametrize(
    "assignment",
    [
        pytest.param(
            {"a": [("t", 0), ("u", 0), ("t", 1)], "b": [("t", 1), ("t", 2)]},
            id="duplicate-across-members",
        ),
        pytest.param(
            {"a": [("t", 0), ("u", 0), ("t", 0)], "b": [("t", 1), ("t", 2)]},
            id="duplicate-within-member",
        ),
        pytest.param(
            {"a": [("t", 0), ("u", 0)], "b": [("t", 1), ("t", 2), ("u", 0)]},
            id="unsubscribed-topic-duplicate",
        ),
        pytest.param(
            {"a": [("t", 0)], "b": [("t", 1), ("t", 2), ("u", 0)]},
            id="unsubscribed-topic",
        ),
        pytest.param(
            {"a": [("t", 0), ("u", 0), ("other", 0)], "b": [("t", 1), ("t", 2)]},
            id="existing-topic-nobody-subscribes",
        ),
        pytest.param(
            {"a": [("t", 0), ("u", 0), ("t", 3)], "b": [("t", 1), ("t", 2)]},
            id="out-of-range-partition",
        ),
        pytest.param(
            {"a": [("t", 0), ("u", 0), ("t", -1)], "b": [("t", 1), ("t", 2)]},
            id="negative-partition",
        ),
        pytest.param(
            {"a": [("t", 0), ("u", 0)], "b": [("t", 1)]},
            id="missing-partition",
        ),
        pytest.param(
            {"a": [("t", 0), ("u", 0)], "b": [("t", 1), ("t", 2)], "zz": []},
            id="unknown-member",
        ),
        pytest.param(
            {"a": [("t", 0), ("u", 0), ("ghost", 0)], "b": [("t", 1), ("t", 2)]},
            id="topic-without-metadata",
        ),
    ],
)
def test_is_valid_false(assignment: Assignment) -> None:
    assert is_valid(VALID_SPEC, assignment) is False
    assert balance_metrics(VALID_SPEC, assignment, None)["is_valid"] is False


def test_is_valid_with_subscribed_ghost_topic() -> None:
    spec = group({"t": 1}, [mem("a", ["t", "ghost"])])
    assert is_valid(spec, {"a": [("t", 0)]}) is True
    assert is_valid(spec, {"a": [("t", 0), ("ghost", 0)]}) is False


def test_counts_on_invalid_assignments_stay_within_the_partitions() -> None:
    """assigned counts distinct existing subscribed partitions; unassigned is never negative."""
    row = balance_metrics(
        VALID_SPEC,
        {"a": [("t", 0), ("t", 7), ("ghost", 0), ("other", 1)], "b": [("t", 0), ("t", 2)]},
        None,
    )
    # Existing subscribed partitions: t-0, t-1, t-2, u-0. Assigned among them: t-0, t-2.
    assert row["partition_count"] == 4
    assert row["assigned_partition_count"] == 2
    assert row["unassigned_partition_count"] == 2
    assert row["is_valid"] is False
    # Sizes still count what each member was handed.
    assert (row["max_partitions_per_member"], row["min_partitions_per_member"]) == (4, 2)


def test_missing_partition_counts_as_unassigned() -> None:
    row = balance_metrics(VALID_SPEC, {"a": [("t", 0), ("u", 0)], "b": [("t", 1)]}, None)
    assert row["assigned_partition_count"] == 3
    assert row["unassigned_partition_count"] == 1
    assert row["is_valid"] is False


# ------------------------------------------------------------------- seeded properties


def _random_group(rng: random.Random) -> GroupSpec:
    names = [f"t{i}" for i in range(rng.randint(1, 5))]
    topics = {t: rng.randint(0, 10) for t in names if rng.random() < 0.85}
    members = [
        Member(
            f"m{i}",
            frozenset(t for t in names if rng.random() < 0.6),
            group_instance_id=f"i{i}" if rng.random() < 0.3 else None,
        )
        for i in range(rng.randint(1, 7))
    ]
    return group(topics, members)


@pytest.mark.parametrize("seed", range(50))
def test_property_metrics_of_kafka_assignments(seed: int) -> None:
    spec = _random_group(random.Random(seed))
    expected_partitions = sum(
        meta.partition_count
        for t, meta in spec.topics.items()
        if any(t in m.topics for m in spec.members)
    )
    for assignor in (RangeAssignor(), RoundRobinAssignor()):
        assignment = assignor.assign(spec)
        row = balance_metrics(spec, assignment, {})
        sizes = [len(assignment[m.member_id]) for m in spec.members]
        assert row["is_valid"] is True
        assert row["partition_count"] == expected_partitions
        assert row["assigned_partition_count"] == expected_partitions
        assert row["unassigned_partition_count"] == 0
        assert row["moved_partition_count"] == 0
        assert row["partition_spread"] == max(sizes) - min(sizes)
        assert row["idle_member_count"] == sizes.count(0)
        if assignor.name == "range":
            assert row["max_topic_spread"] in (0, 1)  # q or q+1 per topic, as RangeAssignor deals
        # Dropping one assigned partition always makes the assignment invalid.
        holder = next((m for m, tps in assignment.items() if tps), None)
        if holder is not None:
            broken = {**assignment, holder: assignment[holder][1:]}
            assert is_valid(spec, broken) is False


def test_revoked_counts_what_live_owners_give_up() -> None:
    spec = group(
        {"t": 4},
        [
            mem("a", ["t"], owned=[("t", 0), ("t", 1), ("t", 9)]),
            mem("b", ["t"], owned=[("t", 1)]),
        ],
    )
    # a gives up t-1 (claimed by b too: counted once) and keeps t-0; t-9 does not exist.
    row = balance_metrics(spec, {"a": [("t", 0), ("t", 2)], "b": [("t", 3)]}, {})
    assert row["revoked_partition_count"] == 1
    assert balance_metrics(spec, {"a": [], "b": []}, None)["revoked_partition_count"] is None


# --- reruns give identical floats; one validity rule -----------------------------------------


def test_mean_and_stddev_do_not_depend_on_order() -> None:
    rng = random.Random(3)
    for _ in range(200):
        sizes = [rng.choice([0, 1, 7, 10**6, 3]) for _ in range(rng.randint(1, 40))]
        expected = mean_and_stddev(sizes)
        shuffled = sizes[:]
        rng.shuffle(shuffled)
        assert mean_and_stddev(shuffled) == expected
        mean = sum(sizes) / len(sizes)
        naive = math.sqrt(sum((s - mean) ** 2 for s in sizes) / len(sizes))
        assert expected[1] == pytest.approx(naive, rel=1e-12, abs=1e-12)


def test_metrics_do_not_depend_on_member_order() -> None:
    topics = {f"t{i}": TopicMetadata(f"t{i}", 7 + i) for i in range(5)}
    members = [Member(f"m{i}", frozenset(topics)) for i in range(9)]
    rng = random.Random(5)
    spec = GroupSpec("g", tuple(members), topics)
    assignment = {m.member_id: [] for m in members}
    for t, meta in topics.items():
        for p in range(meta.partition_count):
            assignment[rng.choice(members).member_id].append((t, p))
    expected = balance_metrics(spec, assignment, None)
    for _ in range(20):
        rng.shuffle(members)
        shuffled = GroupSpec("g", tuple(members), topics)
        assert balance_metrics(shuffled, dict(reversed(assignment.items())), None) == expected


def test_scan_is_the_rule_plugins_are_validated_with() -> None:
    spec = GroupSpec(
        "g",
        (Member("a", frozenset({"t"})), Member("b", frozenset({"t", "u"}))),
        {"t": TopicMetadata("t", 2), "u": TopicMetadata("u", 1), "x": TopicMetadata("x", 1)},
    )
    rng = random.Random(11)
    pool = [("t", 0), ("t", 1), ("t", 2), ("u", 0), ("x", 0), ("nope", 0)]
    for _ in range(300):
        candidate: dict[str, list[tuple[str, int]]] = {
            m: rng.sample(pool, rng.randint(0, 3)) for m in ("a", "b")
        }
        scan = scan_assignment(spec, candidate)
        assert scan.valid == is_valid(spec, candidate)
        if scan.valid:
            assert validate_assignment(spec, candidate) == candidate
        else:
            with pytest.raises(InvalidAssignmentError) as info:
                validate_assignment(spec, candidate)
            assert str(info.value) == f"plugin: {scan.violation}"
