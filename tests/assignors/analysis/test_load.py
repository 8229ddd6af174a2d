"""Load inputs and metrics: offsets -> lag, weights -> units, load metrics, the lower bound."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Mapping
from fractions import Fraction

import pytest

from assignors.analysis.load import (
    _ENUMERATE_UP_TO,
    LOAD_METRIC_COLUMNS,
    UNIT,
    WEIGHT_SCALE,
    ClassGraph,
    FlowNetwork,
    OffsetRow,
    balance_loads,
    class_graph,
    fractional_bound_enumerated,
    fractional_bound_flow,
    group_partitions,
    lag_loads,
    load_metrics,
    offsets_unknown_group_problem,
    partition_lags,
    partition_weights,
    weight_loads,
    weight_lower_bound,
    weight_units,
)
from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.problems import WARNING, Problem, Reason


def group(topics: Mapping[str, int], subs: Mapping[str, Iterable[str]]) -> GroupSpec:
    return GroupSpec(
        "g",
        tuple(Member(m, frozenset(ts)) for m, ts in subs.items()),
        {t: TopicMetadata(t, n) for t, n in topics.items()},
    )


def reasons(problems: list[Problem]) -> list[tuple[str, str | None]]:
    return [(p.reason, p.topic) for p in problems]


# ----------------------------------------------------------------------------- offsets


def test_lag_is_log_end_minus_committed_and_every_partition_has_a_key() -> None:
    lags, problems = partition_lags(
        [OffsetRow("t", 0, 100, 250), OffsetRow("u", 1, 5, 5)], {"t": 2, "u": 2}, "g"
    )
    assert lags == {("t", 0): 150, ("t", 1): None, ("u", 0): None, ("u", 1): 0}
    assert problems == []


def test_null_committed_offset_is_unknown_without_a_warning() -> None:
    lags, problems = partition_lags([OffsetRow("t", 0, None, 900)], {"t": 1})
    assert lags == {("t", 0): None}
    assert problems == []


@pytest.mark.parametrize(
    ("row", "lag", "reason"),
    [
        (OffsetRow("t", 0, 120, 100), 0, Reason.COMMITTED_PAST_LOG_END),
        (OffsetRow("t", 0, -1, 100), None, Reason.NEGATIVE_OFFSET),
        (OffsetRow("t", 0, 10, -5), None, Reason.NEGATIVE_OFFSET),
        (OffsetRow("t", 0, None, -5), None, Reason.NEGATIVE_OFFSET),
        (OffsetRow("t", 0, 10, None), None, Reason.NULL_LOG_END_OFFSET),
    ],
)
def test_bad_offsets_of_a_partition(row: OffsetRow, lag: int | None, reason: str) -> None:
    lags, problems = partition_lags([row], {"t": 1}, "g")
    assert lags == {("t", 0): lag}
    assert reasons(problems) == [(reason, "t")]
    assert problems[0].group_id == "g"
    assert problems[0].severity == WARNING


@pytest.mark.parametrize(
    ("row", "reason", "topic"),
    [
        (OffsetRow("gone", 0, 1, 2), Reason.OFFSETS_UNKNOWN_TOPIC, "gone"),
        (OffsetRow("t", 3, 1, 2), Reason.OFFSETS_UNKNOWN_PARTITION, "t"),
        (OffsetRow("t", -1, 1, 2), Reason.OFFSETS_UNKNOWN_PARTITION, "t"),
        (OffsetRow(None, 0, 1, 2), Reason.OFFSETS_NULL_KEY, None),
        (OffsetRow("t", None, 1, 2), Reason.OFFSETS_NULL_KEY, None),
    ],
)
def test_offsets_of_unknown_partitions_are_ignored(
    row: OffsetRow, reason: str, topic: str | None
) -> None:
    lags, problems = partition_lags([row, OffsetRow("t", 0, 1, 4)], {"t": 3}, "g")
    assert lags == {("t", 0): 3, ("t", 1): None, ("t", 2): None}
    assert reasons(problems) == [(reason, topic)]


def test_identical_duplicates_count_once_with_one_warning() -> None:
    rows = [OffsetRow("t", 0, 1, 9)] * 3 + [OffsetRow("t", 1, 2, 3)] * 2
    lags, problems = partition_lags(rows, {"t": 2}, "g")
    assert lags == {("t", 0): 8, ("t", 1): 1}
    assert reasons(problems) == [(Reason.DUPLICATE_OFFSETS, "t")]
    assert "2 partition(s) [0, 1]" in problems[0].detail


def test_conflicting_duplicates_make_the_lag_unknown() -> None:
    rows = [OffsetRow("t", 0, 1, 9), OffsetRow("t", 0, 2, 9), OffsetRow("t", 1, 2, 3)]
    lags, problems = partition_lags(rows, {"t": 2}, "g")
    assert lags == {("t", 0): None, ("t", 1): 1}
    assert reasons(problems) == [(Reason.CONFLICTING_OFFSETS, "t")]


def test_problems_are_aggregated_per_reason_and_topic_and_name_the_partitions() -> None:
    rows = [OffsetRow("t", p, 50, 10) for p in range(15)] + [OffsetRow("u", 0, 50, 10)]
    _, problems = partition_lags(rows, {"t": 15, "u": 1}, "g")
    assert reasons(problems) == [
        (Reason.COMMITTED_PAST_LOG_END, "t"),
        (Reason.COMMITTED_PAST_LOG_END, "u"),
    ]
    assert "15 partition(s) [0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 5 more]" in problems[0].detail


def test_partition_lags_do_not_depend_on_row_order() -> None:
    rng = random.Random(7)
    rows = [
        OffsetRow(
            rng.choice(["t", "u", "x", None]),
            rng.choice([-1, 0, 1, 2, 3, 9]),
            rng.choice([None, -1, 0, 5, 50]),
            rng.choice([None, -2, 0, 7, 60]),
        )
        for _ in range(60)
    ]
    expected = partition_lags(rows, {"t": 4, "u": 2}, "g")
    for _ in range(10):
        rng.shuffle(rows)
        assert partition_lags(rows, {"u": 2, "t": 4}, "g") == expected


def test_unknown_group_problems() -> None:
    p = offsets_unknown_group_problem("ghost", 4)
    assert (p.group_id, p.severity, p.reason) == ("ghost", WARNING, Reason.OFFSETS_UNKNOWN_GROUP)
    assert "4 offsets row(s)" in p.detail
    q = offsets_unknown_group_problem(None, 2)
    assert (q.group_id, q.reason) == (None, Reason.OFFSETS_NULL_KEY)


def test_lag_loads_count_unknown_as_zero() -> None:
    assert lag_loads({("t", 0): 5, ("t", 1): None}) == {("t", 0): 5, ("t", 1): 0}


# ----------------------------------------------------------------------------- weights


def test_weight_units_are_micro_units() -> None:
    assert WEIGHT_SCALE == UNIT == 1_000_000
    assert weight_units(None) == UNIT
    assert weight_units(0.25) == 250_000
    assert weight_units(1e9) == 10**15
    assert weight_units(0.0000004) == 0


@pytest.mark.parametrize("bad", [-0.5, math.nan, math.inf, -math.inf])
def test_invalid_weights_count_as_one_with_one_warning_per_topic(bad: float) -> None:
    rows = [("t", 0, bad), ("t", 1, 3.0), ("t", 2, bad), ("u", 0, None)]
    units, problems = partition_weights(rows)
    assert units == {("t", 0): UNIT, ("t", 1): 3 * UNIT, ("t", 2): UNIT, ("u", 0): UNIT}
    assert reasons(problems) == [(Reason.INVALID_WEIGHT, "t")]
    assert problems[0].group_id is None
    assert "2 partition(s) [0, 2]" in problems[0].detail


def test_duplicate_weight_rows_take_the_larger_whatever_the_order() -> None:
    rows = [("t", 0, 2.0), ("t", 0, 5.0), ("t", 0, None)]
    for perm in itertools.permutations(rows):
        assert partition_weights(perm)[0] == {("t", 0): 5 * UNIT}


def test_weight_loads_fill_every_partition_of_the_group() -> None:
    spec = group({"t": 2, "u": 1, "other": 3}, {"a": ["t", "u"]})
    assert weight_loads(spec, {("t", 1): 7}) == {("t", 0): UNIT, ("t", 1): 7, ("u", 0): UNIT}


# ----------------------------------------------------------------------------- metrics

SPEC = group({"t": 4, "u": 2}, {"a": ["t", "u"], "b": ["t"], "c": ["u"], "idle": []})
ASSIGNMENT: Assignment = {
    "a": [("t", 0), ("t", 1), ("u", 0)],
    "b": [("t", 2), ("t", 3)],
    "c": [("u", 1)],
    "idle": [],
}


def test_metric_names_and_types() -> None:
    row = load_metrics(SPEC, ASSIGNMENT, {}, {}, {})
    assert list(row) == [name for name, _ in LOAD_METRIC_COLUMNS]
    for name, typ in LOAD_METRIC_COLUMNS:
        assert row[name] is None or isinstance(row[name], typ), name


def test_absent_inputs_give_null_columns_never_zeros() -> None:
    row = load_metrics(SPEC, ASSIGNMENT, None, None, {("t", 0): "b"})
    assert all(v is None for v in row.values())
    lag_only = load_metrics(SPEC, ASSIGNMENT, {("t", 0): 3}, None, None)
    assert lag_only["total_lag"] == 3
    assert lag_only["lag_moved"] is None  # no current_assignment
    assert all(lag_only[name] is None for name, _ in LOAD_METRIC_COLUMNS if "weight" in name)
    weight_only = load_metrics(SPEC, ASSIGNMENT, None, {}, None)
    assert weight_only["total_weight"] == 6.0
    assert all(weight_only[name] is None for name, _ in LOAD_METRIC_COLUMNS if "lag" in name)


def test_all_lags_unknown_gives_null_lag_columns_but_counts_them() -> None:
    lags, _ = partition_lags([], group_partitions(SPEC), "g")
    row = load_metrics(SPEC, ASSIGNMENT, lags, None, {})
    assert row["unknown_lag_partition_count"] == 6
    assert [row[c] for c in ("total_lag", "max_partition_lag", "max_member_lag")] == [None] * 3
    assert row["lag_imbalance"] is None
    assert row["lag_moved"] is None


def test_zero_mean_gives_null_imbalance() -> None:
    lags = {tp: 0 for tps in ASSIGNMENT.values() for tp in tps}
    weights = dict.fromkeys(lags, 0)
    row = load_metrics(SPEC, ASSIGNMENT, lags, weights, None)
    assert (row["total_lag"], row["max_member_lag"], row["lag_imbalance"]) == (0, 0, None)
    assert (row["total_weight"], row["weight_imbalance"], row["weight_lower_bound"]) == (
        0.0,
        None,
        0.0,
    )


def test_hand_computed_row() -> None:
    lags = {("t", 0): 100, ("t", 1): None, ("t", 2): 40, ("t", 3): 0, ("u", 0): 10, ("u", 1): 7}
    weights = {("t", 0): 3 * UNIT, ("u", 1): UNIT // 2}
    previous = {("t", 0): "b", ("t", 2): "b", ("u", 1): "a"}
    row = load_metrics(SPEC, ASSIGNMENT, lags, weights, previous)
    assert row == {
        "total_lag": 157,
        "max_partition_lag": 100,
        "max_member_lag": 110,  # a: 100 + unknown + 10
        "lag_imbalance": 110 * 4 / 157,  # idle member in the mean
        "unknown_lag_partition_count": 1,
        "lag_moved": 107,  # (t,0) b -> a and (u,1) a -> c
        "total_weight": 7.5,
        "max_member_weight": 5.0,
        "min_member_weight": 0.0,  # the idle member
        "weight_imbalance": 5.0 * 4 / 7.5,
        # t alone (3 + 1 + 1 + 1, only a and b can take it): 6 / 2 = 3, above the whole
        # group (7.5 / 3) and u alone (1.5 / 2); the heaviest partition also weighs 3
        "weight_lower_bound": 3.0,
    }


def _recompute(
    spec: GroupSpec,
    assignment: Assignment,
    lags: Mapping[TopicPartition, int | None],
    weights: Mapping[TopicPartition, int],
    previous: Mapping[TopicPartition, str],
) -> dict[str, object]:
    """The metrics the slow, obvious way (Fractions, no shared helpers)."""
    parts = [(t, p) for t, n in spec.topics.items() for p in range(n.partition_count)]
    parts = [tp for tp in parts if any(tp[0] in m.topics for m in spec.members)]
    known = [lags[tp] for tp in parts if lags.get(tp) is not None]
    member_lag = {m.member_id: 0 for m in spec.members}
    member_w = {m.member_id: Fraction(0) for m in spec.members}
    moved = 0
    for member, tps in assignment.items():
        for tp in tps:
            lag = lags.get(tp)
            member_lag[member] += lag or 0
            member_w[member] += Fraction(weights.get(tp, UNIT), UNIT)
            if previous.get(tp, member) != member:
                moved += lag or 0
    n = len(spec.members)
    total_w = sum((Fraction(weights.get(tp, UNIT), UNIT) for tp in parts), Fraction(0))
    return {
        "total_lag": sum(known) if known else None,
        "max_partition_lag": max(known) if known else None,
        "max_member_lag": max(member_lag.values()) if known else None,
        "lag_imbalance": (
            Fraction(max(member_lag.values()) * n, sum(known)) if known and sum(known) else None
        ),
        "unknown_lag_partition_count": len(parts) - len(known),
        "lag_moved": moved if known else None,
        "total_weight": total_w,
        "max_member_weight": max(member_w.values()),
        "min_member_weight": min(member_w.values()),
        "weight_imbalance": max(member_w.values()) * n / total_w if total_w else None,
    }


def _random_group(rng: random.Random) -> tuple[GroupSpec, Assignment]:
    topics = {f"t{i}": rng.randint(1, 12) for i in range(rng.randint(1, 3))}
    members = {f"m{i}": [t for t in topics if rng.random() < 0.7] for i in range(rng.randint(1, 5))}
    spec = group(topics, members)
    assignment: Assignment = {m: [] for m in members}
    for topic, subs in spec.subscribers().items():
        for p in range(topics[topic]):
            assignment[rng.choice(subs).member_id].append((topic, p))
    return spec, assignment


@pytest.mark.parametrize("seed", range(40))
def test_metrics_match_a_plain_recomputation(seed: int) -> None:
    rng = random.Random(seed)
    spec, assignment = _random_group(rng)
    rows = [
        OffsetRow(t, p, rng.choice([None, 0, 10, 500]), rng.choice([0, 10, 700, 10**12]))
        for t in spec.subscribed_topics()
        for p in range(spec.partition_count(t))
        if rng.random() < 0.8
    ]
    lags, _ = partition_lags(rows, group_partitions(spec), "g")
    weights, _ = partition_weights(
        (t, p, rng.choice([None, 0.0, 0.5, 2.25, 1e6, -1.0]))
        for t in spec.subscribed_topics()
        for p in range(spec.partition_count(t))
    )
    previous = {tp: rng.choice(spec.member_ids) for tp in lags if rng.random() < 0.5}
    row = load_metrics(spec, assignment, lags, weights, previous)
    expected = _recompute(spec, assignment, lags, weights, previous)
    for name, want in expected.items():
        got = row[name]
        if isinstance(want, Fraction):
            assert got == pytest.approx(float(want), rel=1e-12), name
        else:
            assert got == want, name
    assert row["weight_lower_bound"] == weight_lower_bound(spec, weight_loads(spec, weights)) / UNIT


# ------------------------------------------------------------------------- lower bound


def test_bound_is_the_heaviest_partition_or_the_fractional_bound() -> None:
    spec = group({"t": 2, "u": 3}, {"a": ["t", "u"], "b": ["u"]})
    heavy = {("t", 0): 9, ("u", 0): 1, ("u", 1): 1, ("u", 2): 1}
    assert weight_lower_bound(spec, heavy) == 9  # (a): one partition of 9
    split = {("t", 0): 4, ("t", 1): 5, ("u", 0): 1, ("u", 1): 1, ("u", 2): 1}
    assert weight_lower_bound(spec, split) == 9  # (b): only a can take t (4 + 5)
    even = dict.fromkeys(split, 1)
    assert weight_lower_bound(spec, even) == 3  # ceil(5 / 2)


def test_bound_of_an_empty_group_is_zero() -> None:
    assert weight_lower_bound(group({"t": 2}, {"a": []}), {}) == 0
    assert weight_lower_bound(group({"t": 2}, {}), {}) == 0


def test_class_graph_merges_topics_and_members_with_the_same_subscriptions() -> None:
    spec = group({"t": 1, "u": 2, "v": 1}, {"a": ["t", "u"], "b": ["t", "u"], "c": ["v"]})
    graph = class_graph(spec, {("t", 0): 1, ("u", 0): 2, ("u", 1): 3, ("v", 0): 4})
    assert sorted(graph.topic_loads) == [4, 6]
    assert sorted(size for size, _ in graph.member_classes) == [1, 2]


def _random_graph(rng: random.Random, k: int, members: int) -> ClassGraph:
    masks = set()
    while len(masks) < k:
        masks.add(rng.randrange(1, 1 << members))
    subscribers = tuple(sorted(masks))
    classes: dict[frozenset[int], int] = {}
    for i in range(members):
        key = frozenset(c for c, mask in enumerate(subscribers) if mask >> i & 1)
        if key:
            classes[key] = classes.get(key, 0) + 1
    return ClassGraph(
        tuple(rng.choice([0, 1, 5, rng.randint(0, 10**9)]) for _ in range(k)),
        subscribers,
        tuple((size, key) for key, size in classes.items()),
    )


@pytest.mark.parametrize("seed", range(60))
def test_flow_bound_equals_the_enumerated_bound(seed: int) -> None:
    rng = random.Random(seed)
    graph = _random_graph(rng, rng.randint(1, 9), rng.randint(4, 10))
    assert fractional_bound_flow(graph) == fractional_bound_enumerated(graph)


@pytest.mark.parametrize("seed", range(30))
def test_max_flow_equals_the_min_cut_by_enumeration(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 7)
    edges = [(u, v, rng.randint(0, 9)) for u in range(n) for v in range(n) if u != v]
    edges = [e for e in edges if rng.random() < 0.5]
    net = FlowNetwork(n)
    for u, v, cap in edges:
        net.add_edge(u, v, cap)
    flow = net.max_flow(0, n - 1)
    cuts = [
        sum(cap for u, v, cap in edges if u in side and v not in side)
        for bits in range(1 << (n - 2))
        for side in [{0} | {i + 1 for i in range(n - 2) if bits >> i & 1}]
    ]
    assert flow == min(cuts)
    side = net.reachable(0)
    assert n - 1 not in side
    assert sum(cap for u, v, cap in edges if u in side and v not in side) == flow


def test_bound_with_many_topic_classes_uses_the_flow_and_agrees() -> None:
    # 10 topics, each with its own non-empty set of subscribers among 4 members (bitmask k+1)
    rng = random.Random(3)
    members = {f"m{i}": [f"t{k}" for k in range(10) if (k + 1) >> i & 1] for i in range(4)}
    spec = group({f"t{k}": 2 for k in range(10)}, members)
    graph = class_graph(spec, {})
    assert len(graph.topic_loads) > _ENUMERATE_UP_TO
    for _ in range(20):
        loads = {tp: rng.choice([0, 1, 7, 10**6]) for tp in weight_loads(spec, {})}
        graph = class_graph(spec, loads)
        heaviest = max(loads.values())
        assert weight_lower_bound(spec, loads) == max(heaviest, fractional_bound_enumerated(graph))


def test_balance_loads() -> None:
    spec = group({"t": 2, "u": 1}, {"a": ["t"], "b": ["u"]})
    assert balance_loads(spec, "lag", None, None) == {("t", 0): 0, ("t", 1): 0, ("u", 0): 0}
    assert balance_loads(spec, "lag", {("t", 1): 4, ("u", 0): None}, None) == {
        ("t", 0): 0,
        ("t", 1): 4,
        ("u", 0): 0,
    }
    assert balance_loads(spec, "weight", None, None) == dict.fromkeys(weight_loads(spec, {}), UNIT)
    with pytest.raises(ValueError, match="count"):
        balance_loads(spec, "count", None, None)
