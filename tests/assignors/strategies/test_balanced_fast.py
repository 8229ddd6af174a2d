"""The exact flow of `balanced` (greedy start, negative cycles cancelled) against the
previous solver, successive shortest paths one unit at a time, kept here as a slow
reference: the same objective triple (sorted loads, rack mismatches, kept partitions) on
seeded groups with racks, owners and unequal subscriptions, small and medium."""

from __future__ import annotations

import random
from collections import deque

import pytest
from helpers.balanced import brute_force, check_valid, objective, random_group

from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.strategies.balanced import BalancedAssignor, _ExactFlow, _Problem


class ReferenceFlow(_ExactFlow):
    """Successive shortest paths (SPFA from every kind with supply), as `balanced` solved
    the flow before: exact, one augmenting path per unit (or per level of a shared node)."""

    def solve(self) -> list[list[TopicPartition]]:
        while any(self.supply):
            self._augment()
        return self._realise()

    def _shortest(self) -> tuple[list[int], list[float], list[int]]:
        inf = float("inf")
        nk = len(self.kinds)
        kdist: list[float] = [0 if s else inf for s in self.supply]
        kparent = [-1] * nk
        ndist: list[float] = [inf] * len(self.nodes)
        nparent = [-1] * len(self.nodes)
        queue = deque(k for k in range(nk) if self.supply[k])
        queued = [bool(s) for s in self.supply]
        while queue:
            k = queue.popleft()
            queued[k] = False
            for j, c in self.cost[k].items():
                d = kdist[k] + c
                if d < ndist[j]:
                    ndist[j], nparent[j] = d, k
                    for k2, units in self.held[j].items():  # reverse arcs j -> k2
                        if units and d - self.cost[k2][j] < kdist[k2]:
                            kdist[k2], kparent[k2] = d - self.cost[k2][j], j
                            if not queued[k2]:
                                queued[k2] = True
                                queue.append(k2)
        return kparent, ndist, nparent

    def _augment(self) -> None:
        kparent, ndist, nparent = self._shortest()
        end = min(
            (j for j in range(len(self.nodes)) if nparent[j] >= 0),
            key=lambda j: (ndist[j] + self._next_cost(j), j),
        )
        path: list[tuple[int, int, int]] = []
        j = end
        while True:
            k = nparent[j]
            path.append((k, j, 1))
            if kparent[k] < 0:
                break
            path.append((k, kparent[k], -1))
            j = kparent[k]
        size = len(self.nodes[end])
        amount = min(size - self.load[end] % size, self.supply[k])
        for pk, pj, sign in path:
            if sign < 0:
                amount = min(amount, self.held[pj][pk])
        for pk, pj, sign in path:
            self._move(pk, pj, sign * amount)
        self.supply[k] -= amount
        self.load[end] += amount


def medium_group(rng: random.Random) -> GroupSpec:
    """Up to ~120 partitions and 12 members: racks on some members and partitions, owners
    (some stale or contested), unequal subscriptions, members sharing a node."""
    racks = ["a", "b", "c", "d"][: rng.randint(1, 4)]
    topics = {}
    for i in range(rng.randint(1, 5)):
        n = rng.randint(1, 24)
        replicas = tuple(frozenset(rng.sample(racks, rng.randint(0, len(racks)))) for _ in range(n))
        topics[f"t{i}"] = TopicMetadata(f"t{i}", n, replicas if rng.random() < 0.8 else ())
    names = list(topics)
    members = []
    for _ in range(rng.randint(1, 12)):
        subs = frozenset(t for t in names if rng.random() < 0.6) or frozenset(names[:1])
        owned = tuple(
            (t, p) for t in names for p in range(topics[t].partition_count) if rng.random() < 0.15
        )
        members.append(
            Member(
                f"m{rng.randint(0, 999):03d}",
                subs,
                rack=rng.choice([None, *racks]),
                owned=owned,
                generation=rng.choice([1, 2, 3]) if owned else None,
            )
        )
    unique = {m.member_id: m for m in members}
    return GroupSpec("g", tuple(unique.values()), topics)


def solve_both(spec: GroupSpec) -> tuple[Assignment, Assignment]:
    fast = _Problem(spec).decode(_ExactFlow(_Problem(spec)).solve())
    slow = _Problem(spec).decode(ReferenceFlow(_Problem(spec)).solve())
    return fast, slow


@pytest.mark.parametrize("chunk", range(10))
def test_same_objective_as_shortest_paths_on_tiny_groups(chunk: int) -> None:
    for seed in range(chunk * 100, (chunk + 1) * 100):
        spec = random_group(random.Random(10_000 + seed))
        fast, slow = solve_both(spec)
        check_valid(spec, fast)
        assert objective(spec, fast) == objective(spec, slow) == brute_force(spec), seed


@pytest.mark.parametrize("chunk", range(10))
def test_same_objective_as_shortest_paths_on_medium_groups(chunk: int) -> None:
    for seed in range(chunk * 30, (chunk + 1) * 30):
        spec = medium_group(random.Random(seed))
        fast, slow = solve_both(spec)
        check_valid(spec, fast)
        assert objective(spec, fast) == objective(spec, slow), seed


def test_the_reference_is_the_previous_solver_on_the_issue_example() -> None:
    """The reference must itself be exact: the issue's worked example, 2/2/2 moving two."""
    topics = {"a": TopicMetadata("a", 3), "b": TopicMetadata("b", 3)}
    owned = {"X": (("a", 0),), "Y": (("a", 1), ("a", 2)), "Z": (("b", 0), ("b", 1), ("b", 2))}
    spec = GroupSpec(
        "g",
        tuple(
            Member(m, frozenset(s), owned=owned[m], generation=1)
            for m, s in {"X": "a", "Y": "ab", "Z": "b"}.items()
        ),
        topics,
    )
    fast, slow = solve_both(spec)
    assert objective(spec, fast) == objective(spec, slow) == ((2, 2, 2), 0, -4)
    assert fast == BalancedAssignor().target(spec)


class CountingFlow(_ExactFlow):
    cancelled = 0

    def _cancel(self, cycle: list[int]) -> None:
        CountingFlow.cancelled += 1
        super()._cancel(cycle)


def test_cycle_cancelling_is_exercised_and_exact() -> None:
    """The greedy start is not always optimal: on most medium groups negative cycles are
    cancelled, and the result then has the reference's objective."""
    CountingFlow.cancelled = 0
    for seed in range(40):
        spec = medium_group(random.Random(seed))
        fast = _Problem(spec).decode(CountingFlow(_Problem(spec)).solve())
        slow = _Problem(spec).decode(ReferenceFlow(_Problem(spec)).solve())
        assert objective(spec, fast) == objective(spec, slow), seed
    assert CountingFlow.cancelled > 0
