"""The general path's balancing loop ends on every group, and keeps Kafka's result wherever
Kafka's own loop ends.

Kafka's `performReassignments` repeats passes until one moves nothing. On some groups with
different subscriptions its movement bookkeeping sends a partition back and forth between two
members in every pass, so Kafka's loop never ends (found in a what-if rolling-restart replay of
a 10-member group). The planner stops at the first repeated pass state and finishes with moves
that each balance (see `assignors.strategies.sticky.general._GeneralBuilder.perform`).
"""

from __future__ import annotations

import importlib.machinery
import random
from collections.abc import Sequence

import pytest
from helpers.sticky import check_balance, check_valid, naive_general

from assignors.model import GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.strategies.sticky import assignor as sticky_module
from assignors.strategies.sticky.assignor import CooperativeStickyAssignor, StickyAssignor
from assignors.strategies.sticky.general import _GeneralBuilder


def _owned(topic: str, *partitions: int) -> tuple[TopicPartition, ...]:
    return tuple((topic, p) for p in partitions)


# A member rejoined empty (m1) next to members that own all of topics a and b. Topic a's
# subscribers are m1, m2, m5, m8; b's are m1 and the six b-only members.
CYCLING_GROUP = GroupSpec(
    "orders-enricher",
    (
        Member("m0", frozenset("b"), owned=_owned("b", 0, 1, 2, 3, 5, 6, 4, 12), generation=7),
        Member("m1", frozenset("ab"), owned=(), generation=7),
        Member("m2", frozenset("ac"), owned=_owned("a", 6, 11), generation=7),
        Member(
            "m3", frozenset("b"), owned=_owned("b", 7, 14, 21, 28, 35, 42, 19, 13), generation=7
        ),
        Member(
            "m4", frozenset("b"), owned=_owned("b", 8, 15, 22, 29, 36, 43, 26, 20), generation=7
        ),
        Member("m5", frozenset("a"), owned=_owned("a", 2, 7, 8, 1, 0), generation=7),
        Member(
            "m6", frozenset("b"), owned=_owned("b", 9, 16, 23, 30, 37, 44, 33, 27), generation=7
        ),
        Member(
            "m7", frozenset("b"), owned=_owned("b", 10, 17, 24, 31, 38, 45, 40, 34), generation=7
        ),
        Member("m8", frozenset("a"), owned=_owned("a", 4, 9, 3, 10, 5), generation=7),
        Member(
            "m9", frozenset("b"), owned=_owned("b", 11, 18, 25, 32, 39, 46, 47, 41), generation=7
        ),
    ),
    {"a": TopicMetadata("a", 12), "b": TopicMetadata("b", 48), "c": TopicMetadata("c", 4)},
)


class _Budgeted(_GeneralBuilder):
    """The builder with its moves checked as they happen.

    Per pass at most one move per reassignable partition (each is looked at once). Once the
    loop has cycled, every move lowers sum(size^2) by at least 2, so at most half that sum
    more moves. Before that the loop is Kafka's own; `budget` turns a regression into a test
    failure instead of a hang.
    """

    budget = 0

    def move(self, g: int, dst: int) -> None:
        assert self.moves < self.budget, f"more than {self.budget} moves"
        before = sum(s * s for s in self.size)
        super().move(g, dst)
        if self.cycled:
            assert sum(s * s for s in self.size) <= before - 2, "a move after the cycle balances"


builders: list[_Budgeted] = []

# Compiled (`make core`), the assignor calls the builder natively: nothing can be routed
# through `_Budgeted`. `make test-pure` runs these tests on the uncompiled core.
COMPILED = (sticky_module.__file__ or "").endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def _route(monkeypatch: pytest.MonkeyPatch) -> list[_Budgeted]:
    builders.clear()

    def assign_general(
        total: int,
        topic_sizes: Sequence[int],
        subs: Sequence[Sequence[int]],
        owned: Sequence[Sequence[int]],
        prev_owner: dict[int, int],
        revocation_required: bool,
        racks: object = None,
    ) -> list[list[int]]:
        b = _Budgeted(total, topic_sizes, subs, owned, prev_owner, revocation_required, None)
        b.budget = move_budget(total)
        builders.append(b)
        return b.build()

    monkeypatch.setattr(sticky_module, "assign_general", assign_general)
    return builders


@pytest.fixture
def budgeted(monkeypatch: pytest.MonkeyPatch) -> list[_Budgeted]:
    """Route the sticky assignors' general path through `_Budgeted`; collect the builders."""
    if COMPILED:
        pytest.skip("instruments the uncompiled builder: `make test-pure` runs it")
    return _route(monkeypatch)


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> list[_Budgeted] | None:
    """`budgeted` where the builder can be instrumented, else None (results still checked)."""
    return None if COMPILED else _route(monkeypatch)


# Kafka's loop, where it ends, took at most 7 passes (both `perform` calls together) on every
# group of a 10,000-group synthetic estate with all its what-if replays, and each pass moves
# each partition at most once; 16 passes is twice that. After a cycle, sum(size^2) <= total^2
# and every move lowers it by 2: at most total^2 / 2 more moves.
PASSES = 16


def move_budget(total: int) -> int:
    return PASSES * (total + 1) + total * total // 2


def test_cycling_group_cycles_kafkas_loop(budgeted: list[_Budgeted]) -> None:
    StickyAssignor().assign(CYCLING_GROUP)
    (builder,) = budgeted
    assert builder.cycled, "the fixture is a group on which Kafka's loop never ends"


def test_cycling_group_ends_valid_and_balanced(watched: list[_Budgeted] | None) -> None:
    target = StickyAssignor().assign(CYCLING_GROUP)
    check_valid(CYCLING_GROUP, target)
    check_balance(target)
    assert {m: len(v) for m, v in target.items()} == {
        "m0": 7,
        "m1": 6,
        "m2": 6,
        "m3": 7,
        "m4": 7,
        "m5": 5,
        "m6": 7,
        "m7": 7,
        "m8": 5,
        "m9": 7,
    }
    # Nothing of c (m2's alone) moved, and a's owners kept all but what balance took.
    assert set(_owned("c", 0, 1, 2, 3)) <= set(target["m2"])


def test_cycling_group_in_cooperative_rounds(watched: list[_Budgeted] | None) -> None:
    result = CooperativeStickyAssignor().rebalance(CYCLING_GROUP)
    check_valid(CYCLING_GROUP, result.assignment)
    check_balance(result.assignment)
    assert result.rounds <= 5


def test_cycling_group_is_deterministic(watched: list[_Budgeted] | None) -> None:
    assert StickyAssignor().assign(CYCLING_GROUP) == StickyAssignor().assign(CYCLING_GROUP)


# ------------------------------------------------------------------ generated groups


def restart_chain(seed: int) -> list[GroupSpec]:
    """A rolling restart of a random group with different subscriptions: each member in turn
    leaves (the rest report what they own, one generation up) and rejoins without partitions
    or generation, every round owning the previous round's sticky result."""
    rng = random.Random(seed)
    sizes = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48]
    topics = {f"t{i}": TopicMetadata(f"t{i}", rng.choice(sizes)) for i in range(rng.randint(2, 3))}
    names = sorted(topics)
    subs = {
        f"m{i:02d}": frozenset(t for t in names if rng.random() < 0.6) or frozenset(names[:1])
        for i in range(rng.randint(3, 12))
    }
    current = StickyAssignor().assign(
        GroupSpec("g", tuple(Member(m, s) for m, s in subs.items()), topics)
    )
    specs: list[GroupSpec] = []
    generation = 1
    for leaving in sorted(subs):
        generation += 1
        spec = GroupSpec(
            "g",
            tuple(
                Member(m, s, owned=tuple(current[m]), generation=generation)
                for m, s in subs.items()
                if m != leaving
            ),
            topics,
        )
        specs.append(spec)
        current = {**StickyAssignor().assign(spec), leaving: []}
        generation += 1
        spec = GroupSpec(
            "g",
            tuple(
                Member(
                    m, s, owned=tuple(current[m]), generation=None if m == leaving else generation
                )
                for m, s in subs.items()
            ),
            topics,
        )
        specs.append(spec)
        current = StickyAssignor().assign(spec)
    return specs


# The chains of the first 2,000 seeds that reach a group on which Kafka's loop cycles.
CYCLING_SEEDS = (129, 1435, 1578)
SEEDS = tuple(dict.fromkeys((*range(150), *CYCLING_SEEDS)))


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_groups_end_valid_balanced_and_as_kafka(
    seed: int, watched: list[_Budgeted] | None
) -> None:
    cycles = 0
    for spec in restart_chain(seed):
        if watched is not None:
            watched.clear()
        target = StickyAssignor().assign(spec)
        check_valid(spec, target)
        check_balance(target)
        if watched is None:
            continue  # compiled: the results are checked, the builder cannot be watched
        if any(b.cycled for b in watched):
            cycles += 1
        elif watched:  # the general path ran and Kafka's loop ended: Kafka's result
            assert target == naive_general(spec)
    if seed in CYCLING_SEEDS and watched is not None:
        assert cycles, "the chain still reaches a group on which Kafka's loop never ends"
