"""Recommendations (`assignors.whatif.recommend`): the rule, its sentence, properties."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import pytest

from assignors.analysis.metrics import balance_metrics
from assignors.catalog.registry import resolve
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.whatif.recommend import (
    DEFAULT_RECOMMEND_FROM,
    RECOMMENDATION_COLUMNS,
    figures,
    rank,
    recommend,
)
from assignors.whatif.simulation import scenario_costs

COLUMNS = [name for name, _, _ in RECOMMENDATION_COLUMNS]
Rows = Mapping[str, Sequence[Mapping[str, object]]]


def metrics(max_ppm: int, gap: int | None = None, **extra: object) -> dict[str, object]:
    out: dict[str, object] = {"max_partitions_per_member": max_ppm, **extra}
    if gap is not None:
        out["balance_gap"] = gap
    return out


def cost_rows(paused: int | None, moved: int | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    if paused is not None:
        rows.append({"scenario": "rolling_restart", "paused_partition_count": paused})
    if moved is not None:
        rows.append({"scenario": "member_join", "moved_partition_count": moved})
    return rows


def test_issue_example_sentence() -> None:
    m = {"range": metrics(4, 1), "cooperative-sticky": metrics(3, 0)}
    c = {"range": cost_rows(480, 10), "cooperative-sticky": cost_rows(36, 10)}
    row = recommend("g", "range", DEFAULT_RECOMMEND_FROM, m, c, load_aware=False)
    assert list(row) == COLUMNS
    assert row["recommended_strategy"] == "cooperative-sticky"
    assert row["reason"] == (
        "cooperative-sticky: max 4 → 3 partitions per member;"
        " a rolling restart pauses 36 partitions instead of 480"
    )
    assert (
        row["current_max_partitions_per_member"],
        row["recommended_max_partitions_per_member"],
    ) == (4, 3)
    assert (row["current_balance_gap"], row["recommended_balance_gap"]) == (1, 0)
    assert (row["current_restart_paused"], row["recommended_restart_paused"]) == (480, 36)
    assert (row["current_join_moved"], row["recommended_join_moved"]) == (10, 10)
    assert row["current_load_imbalance"] is None


def test_balance_beats_pauses() -> None:
    m = {"range": metrics(3, 0), "cooperative-sticky": metrics(4, 1)}
    c = {"range": cost_rows(480, 1), "cooperative-sticky": cost_rows(36, 1)}
    row = recommend("g", "cooperative-sticky", DEFAULT_RECOMMEND_FROM, m, c, load_aware=False)
    assert row["recommended_strategy"] == "range"
    # The worse figure is stated too: the operator sees the trade.
    assert row["reason"] == (
        "range: max 4 → 3 partitions per member;"
        " a rolling restart pauses 480 partitions instead of 36"
    )


def test_elected_already_best_says_so() -> None:
    m = {s: metrics(2, 0) for s in DEFAULT_RECOMMEND_FROM}
    c = {s: cost_rows(12 if s == "cooperative-sticky" else 36, 1) for s in DEFAULT_RECOMMEND_FROM}
    row = recommend("g", "cooperative-sticky", DEFAULT_RECOMMEND_FROM, m, c, load_aware=False)
    assert row["recommended_strategy"] == "cooperative-sticky"
    assert str(row["reason"]).startswith("cooperative-sticky is already the best of 4 candidates:")
    assert "a rolling restart pauses 12 partitions" in str(row["reason"])
    assert row["current_restart_paused"] == row["recommended_restart_paused"] == 12


def test_full_tie_keeps_the_current_strategy_then_kafka_order() -> None:
    m = {s: metrics(2, 0) for s in ("range", "sticky", "uniform", "balanced")}
    c = {s: cost_rows(36, 1) for s in m}
    cands = ["uniform", "balanced", "sticky", "range"]
    assert (
        recommend("g", "sticky", cands, m, c, load_aware=False)["recommended_strategy"] == "sticky"
    )
    assert (
        recommend("g", "plugin", cands, m, c, load_aware=False)["recommended_strategy"] == "range"
    )
    ranked = rank([figures(s, m[s], c[s], load_aware=False) for s in cands], None)
    assert [f.strategy for f in ranked] == ["range", "sticky", "balanced", "uniform"]


def test_fewest_moved_on_join_decides_after_pauses() -> None:
    m = {s: metrics(2) for s in ("range", "roundrobin")}
    c = {"range": cost_rows(36, 3), "roundrobin": cost_rows(36, 1)}
    row = recommend("g", "range", ["range", "roundrobin"], m, c, load_aware=False)
    assert row["recommended_strategy"] == "roundrobin"
    assert row["reason"] == "roundrobin: a member join moves 1 partition instead of 3"


def test_load_replaces_balance_when_lag_is_given() -> None:
    m = {
        "range": metrics(2, 0, lag_imbalance=1.9, weight_imbalance=1.0),
        "sticky": metrics(3, 1, lag_imbalance=1.2, weight_imbalance=1.5),
    }
    c = {s: cost_rows(36, 1) for s in m}
    row = recommend("g", "range", ["range", "sticky"], m, c, load_aware=True)
    assert row["recommended_strategy"] == "sticky"
    assert (row["current_load_imbalance"], row["recommended_load_imbalance"]) == (1.9, 1.2)
    assert str(row["reason"]).startswith("sticky: load imbalance 1.90 → 1.20")
    # Without lag, weight_imbalance decides; without load_aware, balance does.
    m2 = {s: {k: v for k, v in v.items() if k != "lag_imbalance"} for s, v in m.items()}
    assert (
        recommend("g", None, ["range", "sticky"], m2, c, load_aware=True)["recommended_strategy"]
        == "range"
    )
    assert (
        recommend("g", None, ["range", "sticky"], m, c, load_aware=False)["recommended_strategy"]
        == "range"
    )


def test_float_noise_in_load_still_ties() -> None:
    m = {"sticky": metrics(2, lag_imbalance=0.1 + 0.2), "range": metrics(2, lag_imbalance=0.3)}
    c = {"sticky": cost_rows(10, 1), "range": cost_rows(36, 1)}
    assert (
        recommend("g", None, ["range", "sticky"], m, c, load_aware=True)["recommended_strategy"]
        == "sticky"
    )


def test_missing_figures_rank_last_and_unplanned_candidates_do_not_compete() -> None:
    m = {"range": metrics(2, 0), "sticky": metrics(2, 0)}
    c = {"range": cost_rows(None, 1), "sticky": cost_rows(36, 1)}
    row = recommend("g", "range", ["roundrobin", "range", "sticky"], m, c, load_aware=False)
    assert row["recommended_strategy"] == "sticky"
    assert row["current_restart_paused"] is None


def test_no_election_and_no_candidate() -> None:
    m = {"range": metrics(2, 0)}
    row = recommend("g", None, ["range"], m, {"range": cost_rows(36, 1)}, load_aware=False)
    assert row["recommended_strategy"] == "range"
    assert str(row["reason"]).startswith("range: no strategy is elected")
    assert row["current_max_partitions_per_member"] is None
    empty = recommend("g", "range", ["sticky"], m, {}, load_aware=False)
    assert empty["recommended_strategy"] is None
    assert empty["reason"] == "no candidate strategy (sticky) was planned for this group"
    assert empty["current_max_partitions_per_member"] == 2


def test_current_outside_the_candidates_with_the_same_figures() -> None:
    m = {"plug": metrics(2, 0), "range": metrics(2, 0)}
    c = {s: cost_rows(36, 1) for s in m}
    row = recommend("g", "plug", ["range"], m, c, load_aware=False)
    assert row["recommended_strategy"] == "range"
    assert "the same figures as plug" in str(row["reason"])


# ------------------------------------------------------------------------ properties


@pytest.mark.parametrize("seed", range(200))
def test_recommendation_has_the_best_first_criterion(seed: int) -> None:
    rng = random.Random(seed)
    pool = [
        "range",
        "roundrobin",
        "sticky",
        "cooperative-sticky",
        "uniform",
        "balanced",
        "my.Plugin",
    ]
    planned = rng.sample(pool, rng.randint(1, len(pool)))
    load_aware = rng.random() < 0.3
    m = {
        s: metrics(rng.randint(2, 5), rng.randint(0, 3), lag_imbalance=rng.choice([1.0, 1.5, 2.0]))
        for s in planned
    }
    c = {s: cost_rows(rng.choice([None, 12, 36]), rng.choice([None, 1, 2])) for s in planned}
    candidates = rng.sample(pool, rng.randint(1, len(pool)))
    elected = rng.choice([None, *pool])
    row = recommend("g", elected, candidates, m, c, load_aware=load_aware)
    competing = [s for s in candidates if s in m]
    if not competing:
        assert row["recommended_strategy"] is None
        return
    best = row["recommended_strategy"]
    assert best in competing
    key = "lag_imbalance" if load_aware else "balance_gap"
    assert m[str(best)][key] == min(m[s][key] for s in competing)  # type: ignore[type-var]
    assert isinstance(row["reason"], str)
    assert row["reason"]


def _group(rng: random.Random) -> GroupSpec:
    names = [f"t{i}" for i in range(rng.randint(1, 3))]
    topics = {t: TopicMetadata(t, rng.randint(1, 16)) for t in names}
    same = rng.random() < 0.5
    members = tuple(
        Member(
            f"c{i}",
            frozenset(names) if same else frozenset(t for t in names if rng.random() < 0.7),
        )
        for i in range(rng.randint(2, 5))
    )
    return GroupSpec("g", members, topics)


@pytest.mark.parametrize("seed", range(40))
def test_recommendation_over_real_plans(seed: int) -> None:
    spec = _group(random.Random(seed))
    m: dict[str, dict[str, object]] = {}
    c: dict[str, list[dict[str, object]]] = {}
    for s in DEFAULT_RECOMMEND_FROM:
        factory = resolve(s)[1]
        planned = factory().rebalance(spec).assignment
        m[s] = dict(balance_metrics(spec, planned, None))
        rows, _ = scenario_costs(spec, s, factory, planned)
        c[s] = [dict(r) for r in rows]
    row = recommend("g", "range", DEFAULT_RECOMMEND_FROM, m, c, load_aware=False)
    best = str(row["recommended_strategy"])
    assert m[best]["max_partitions_per_member"] == min(
        m[s]["max_partitions_per_member"]  # type: ignore[type-var]
        for s in DEFAULT_RECOMMEND_FROM
    )
    # Cooperative-sticky pauses no more than sticky over a restart, so eager sticky can only
    # win when the restart costs the same.
    if best == "sticky":
        restart = {
            s: next(r["paused_partition_count"] for r in c[s] if r["scenario"] == "rolling_restart")
            for s in ("sticky", "cooperative-sticky")
        }
        assert restart["sticky"] == restart["cooperative-sticky"]
