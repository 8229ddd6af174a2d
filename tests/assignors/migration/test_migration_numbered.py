"""The migration's rolling bounces on partition numbers (`assignors.migration.numbered`)
against the full replay (`group_migrations(..., shortcuts=False)`).

Over seeded random groups (classic and mixed, eager and cooperative strategies, static
members, racks, previous owners, look-alike and random subscriptions) and larger groups of
one shape, the rows are the full replay's; the numbered path is taken by most rack-free
groups, never by one with a rack; a STATELESS assignor runs once per set of members present.
"""

from __future__ import annotations

import random

import pytest
from helpers.lookalike import random_group
from test_migration_memo import CATALOG, migration_group

from assignors.migration.conditions import MigrationSettings
from assignors.migration.numbered import NumberedBounce
from assignors.migration.paths import MigrationRow, group_migrations, start_assignment
from assignors.model import GroupSpec, Member, Rebalance, TopicMetadata
from assignors.planner import plan_group
from assignors.strategies.range import RangeAssignor
from assignors.strategies.server_range import ServerRangeAssignor
from assignors.strategies.sticky.assignor import CooperativeStickyAssignor
from assignors.strategies.uniform import UniformAssignor


def rows(spec: GroupSpec, shortcuts: bool) -> list[MigrationRow]:
    plan = plan_group(spec, CATALOG, any(m.owned for m in spec.members))
    return group_migrations(spec, plan, CATALOG, MigrationSettings(), shortcuts=shortcuts)


def rack_free(spec: GroupSpec) -> GroupSpec:
    members = tuple(
        Member(
            m.member_id,
            m.topics,
            m.group_instance_id,
            None,
            m.owned,
            m.generation,
            m.assignment_strategies,
        )
        for m in spec.members
    )
    return GroupSpec(
        spec.group_id,
        members,
        {t: TopicMetadata(t, meta.partition_count) for t, meta in spec.topics.items()},
        group_protocol=spec.group_protocol,
        classic_members=spec.classic_members,
    )


@pytest.mark.parametrize("seed", range(300))
def test_numbered_bounces_give_the_rows_of_the_full_replay(seed: int) -> None:
    rng = random.Random(seed)
    spec = migration_group(rng)
    if seed % 2:
        spec = rack_free(spec)  # the numbered path's groups, half the time
    assert rows(spec, True) == rows(spec, False)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize(
    "strategies", [("range",), ("roundrobin",), ("sticky",), None, ("cooperative-sticky",)]
)
def test_larger_groups_of_one_shape_give_the_rows_of_the_full_replay(
    seed: int, strategies: tuple[str, ...] | None
) -> None:
    """Ten to forty members on a few topics, all alike, owning the partitions (dealt at
    random) or not: uniform's and both sticky assignors' numbered paths over many steps."""
    rng = random.Random(seed)
    topics = {f"t{k}": TopicMetadata(f"t{k}", rng.randint(1, 60)) for k in range(rng.randint(1, 4))}
    n = rng.randint(10, 40)
    ids = [f"consumer-{rng.randint(0, 999):03d}-{i}" for i in range(n)]
    owned: dict[str, list[tuple[str, int]]] = {i: [] for i in ids}
    if rng.random() < 0.5:
        for t, meta in topics.items():
            for p in range(meta.partition_count):
                owned[rng.choice(ids)].append((t, p))
    members = tuple(
        Member(
            i,
            frozenset(topics),
            f"static-{k}" if rng.random() < 0.2 else None,
            None,
            tuple(owned[i]),
            3 if owned[i] else None,
            strategies,
        )
        for k, i in enumerate(ids)
    )
    spec = GroupSpec("g", members, topics)
    assert rows(spec, True) == rows(spec, False)


def test_most_rack_free_groups_take_the_numbered_path_and_none_with_a_rack() -> None:
    taken = racked = 0
    for seed in range(200):
        spec = random_group(random.Random(seed))
        plan = plan_group(spec, CATALOG, any(m.owned for m in spec.members))
        start = start_assignment(spec, plan, "range")
        ids = [m.member_id for m in spec.members]
        steps = [(UniformAssignor(), True), (RangeAssignor(), False)]
        bounce = NumberedBounce.of(spec, start, steps, ids)
        if any(m.rack is not None for m in spec.members):
            racked += 1
            assert bounce is None
        elif bounce is not None:
            taken += 1
    assert taken >= (200 - racked) // 3  # the others own partitions of topics they left


class Counting:
    """A STATELESS assignor that counts its runs."""

    stateless = True

    def __init__(self, inner: ServerRangeAssignor) -> None:
        self.inner = inner
        self.runs = 0

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        self.runs += 1
        return self.inner.rebalance(spec)


def test_a_stateless_assignor_runs_once_per_set_of_members() -> None:
    """Ten dynamic members bounced under server-range: the whole group after every rejoin
    (and at the conversion) is one run, each leave one more: 11 runs, not 21."""
    topics = {"t": TopicMetadata("t", 30)}
    members = tuple(Member(f"c{i:02d}", frozenset({"t"})) for i in range(10))
    spec = GroupSpec("g", members, topics)
    start = {m.member_id: [] for m in members}
    landing = Counting(ServerRangeAssignor())
    bounce = NumberedBounce.of(spec, start, [(landing, True)], [m.member_id for m in members])  # type: ignore[list-item]
    assert bounce is not None
    bounce.converted(0)
    costs = [bounce.restart(m.member_id, 0, 0) for m in members]
    assert landing.runs == 11
    assert [c.rebalances for c in costs] == [2] * 10


def test_a_cooperative_sticky_bounce_from_start_again_is_the_same() -> None:
    topics = {"t": TopicMetadata("t", 12)}
    members = tuple(Member(f"c{i}", frozenset({"t"})) for i in range(4))
    spec = GroupSpec("g", members, topics)
    start = {"c0": [("t", p) for p in range(12)], "c1": [], "c2": [], "c3": []}
    steps = [(CooperativeStickyAssignor(), True)]
    bounce = NumberedBounce.of(spec, start, steps, ["c0", "c1", "c2", "c3"])
    assert bounce is not None
    first = [(c.moved, c.paused) for c in (bounce.restart(m, 0, 0) for m in ("c0", "c1"))]
    again = bounce.again()
    assert [(c.moved, c.paused) for c in (again.restart(m, 0, 0) for m in ("c0", "c1"))] == first
