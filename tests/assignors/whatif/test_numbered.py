"""What-if rebalances on partition numbers (`assignors.whatif.numbered`) against the full
replay and against the assignors themselves.

Rack-free groups take the numbered path (member leave and join, partition growth, rolling
restart) under sticky and cooperative-sticky, and with equal subscriptions under uniform and
balanced too; it must give exactly what `shortcuts=False` gives (every figure, the group and
assignment it ends in), and each numbered rebalance exactly what the assignor's own
`rebalance` gives the same group named (any disjoint ownership, balanced or not). Names
include characters that sort differently in Java and in Python.
"""

from __future__ import annotations

import random

import pytest
from helpers.groups import random_lags

from assignors.catalog.registry import resolve
from assignors.model import GroupSpec, Member, TopicMetadata
from assignors.strategies.balanced import BalancedAssignor
from assignors.strategies.sticky.assignor import StickyAssignor
from assignors.whatif.numbered import NumberedGroup
from assignors.whatif.simulation import SCENARIOS, group_scenario_costs, run_scenarios

NUMBERED = ("sticky", "cooperative-sticky", "uniform", "balanced")
ANY_SUBSCRIPTIONS = ("sticky", "cooperative-sticky")
# U+FFFD sorts after U+1F600 in Java (UTF-16 surrogates) and before it in Python.
ODD = ("\ufffd", "\U0001f600", "")


def numbered_group(rng: random.Random, alike: bool) -> GroupSpec:
    odd = rng.random() < 0.3
    names = [f"t{i}{rng.choice(ODD) if odd else ''}" for i in range(rng.randint(1, 3))]
    topics = {t: TopicMetadata(t, rng.randint(1, 24)) for t in names}
    # Sometimes a subscribed topic does not exist: no assignor sees it.
    subs = frozenset(names + (["missing"] if rng.random() < 0.2 else []))
    static_share = rng.choice((0.0, 0.3, 1.0))
    members = []
    for i in range(rng.randint(1, 16)):
        suffix = rng.choice(ODD) if odd else ""
        static = f"i{rng.randint(0, 99):02d}-{i}" if rng.random() < static_share else None
        mine = subs if alike else frozenset(t for t in subs if rng.random() < 0.6) or subs
        members.append(Member(f"m{rng.randint(0, 99):02d}{suffix}-{i}", mine, static))
    return GroupSpec("g", tuple(members), topics)


@pytest.mark.parametrize("seed", range(150))
@pytest.mark.parametrize("alike", [True, False])
def test_the_numbered_restart_gives_the_full_replay(seed: int, alike: bool) -> None:
    rng = random.Random(seed)
    spec = numbered_group(rng, alike)
    strategies = NUMBERED if alike else ANY_SUBSCRIPTIONS
    lags = random_lags(rng, spec)
    for strategy in strategies:
        factory = resolve(strategy)[1]
        planned = factory().rebalance(spec).assignment
        # Equal subscriptions always take the numbered path; see below for unequal ones.
        assert NumberedGroup.of(spec, factory(), planned) is not None or not alike
        fast, _ = run_scenarios(spec, strategy, factory, planned, scenarios=SCENARIOS, lags=lags)
        full, _ = run_scenarios(
            spec, strategy, factory, planned, scenarios=SCENARIOS, lags=lags, shortcuts=False
        )
        assert [c.scenario for c in fast] == [c.scenario for c in full]
        assert "rolling_restart" in [c.scenario for c in fast]
        figures = ("rebalances", "rounds", "moved", "paused", "revoked", "lag_moved")
        for a, b in zip(fast, full, strict=True):
            why = (strategy, a.scenario)
            assert [getattr(a, f) for f in figures] == [getattr(b, f) for f in figures], why
            assert a.assignment == b.assignment, why
            assert [(m.member_id, m.topics) for m in a.members] == [
                (m.member_id, m.topics) for m in b.members
            ], why
            assert a.topics == b.topics


def test_most_groups_with_unequal_subscriptions_take_the_numbered_path() -> None:
    """A guard on the generator: the comparison above covers the general path."""
    taken = 0
    for seed in range(150):
        spec = numbered_group(random.Random(seed), alike=False)
        planned = StickyAssignor().assign(spec)
        found = NumberedGroup.of(spec, StickyAssignor(), planned)
        taken += found is not None and found.restartable()
    assert taken > 75


def test_a_topic_that_would_lose_its_last_subscriber_keeps_the_full_replay() -> None:
    """While c1 is away nobody subscribes to u: its partitions leave the assignment, which
    the numbered path does not model (the full replay does). A static subscriber does not
    restart, but it may still be the member that leaves in `member_leave`."""
    topics = {"t": TopicMetadata("t", 4), "u": TopicMetadata("u", 3)}
    alone = (Member("c0", frozenset({"t"})), Member("c1", frozenset({"u"})))
    static = (alone[0], Member("c1", frozenset({"u"}), "static-1"), Member("c2", frozenset("t")))
    for members, restartable, leaves in [
        (alone, False, [False, False]),
        ((*alone, Member("c2", frozenset({"t"}))), False, [True, False, True]),
        (static, True, [True, False, True]),
        ((*alone, Member("c2", frozenset("tu"))), True, [True, True, True]),
    ]:
        spec = GroupSpec("g", members, topics)
        found = NumberedGroup.of(spec, StickyAssignor(), StickyAssignor().assign(spec))
        assert found is not None
        assert found.restartable() == restartable
        assert [found.can_leave(found.rank(m.member_id)) for m in members] == leaves


def _owned(rng: random.Random, group: NumberedGroup) -> list[list[int]]:
    """Disjoint ownership of subscribed partitions, often unbalanced, some unowned."""
    n = len(group.members)
    owned: list[list[int]] = [[] for _ in range(n)]
    skew = rng.random() < 0.5
    for g in rng.sample(range(len(group.table)), len(group.table)):
        topic = group.table[g][0]
        takers = [r for r, m in enumerate(group.members) if topic in m.topics]
        if takers and rng.random() < 0.8:
            pick = rng.randrange(len(takers))
            if skew:
                pick = min(pick, rng.randrange(len(takers)))
            owned[takers[pick]].append(g)
    return owned


@pytest.mark.parametrize("seed", range(150))
@pytest.mark.parametrize(
    ("strategy", "alike"),
    [(s, True) for s in NUMBERED] + [(s, False) for s in ANY_SUBSCRIPTIONS],
)
def test_a_numbered_rebalance_is_the_assignors_own(seed: int, strategy: str, alike: bool) -> None:
    rng = random.Random(seed)
    spec = numbered_group(rng, alike)
    factory = resolve(strategy)[1]
    group = NumberedGroup.of(spec, factory(), factory().assign(spec))
    if group is None:  # a topic with one dynamic subscriber (tested above)
        assert not alike
        return
    n = len(group.members)
    owned = _owned(rng, group)
    fresh = {r for r in range(n) if not owned[r] and rng.random() < 0.5}
    named = [
        m.owning(tuple(group.table[g] for g in owned[r]), None if r in fresh else 3)
        for r, m in enumerate(group.members)
    ]
    rng.shuffle(named)
    expected = factory().rebalance(GroupSpec("g", tuple(named), spec.topics))
    lists, rounds = group.rebalance(group.members, owned)
    assert group.named(lists) == expected.assignment
    assert rounds == expected.rounds


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda ms: (*ms, Member("x", frozenset({"t"}), None, "r1")), "a rack"),
        (lambda ms: (*ms, ms[0]), "a repeated member id"),
    ],
)
def test_groups_off_the_numbered_path(change, why: str) -> None:  # type: ignore[no-untyped-def]
    topics = {"t": TopicMetadata("t", 6), "u": TopicMetadata("u", 2)}
    members = tuple(Member(f"c{i}", frozenset({"t"})) for i in range(3))
    spec = GroupSpec("g", change(members), topics)
    assert NumberedGroup.of(spec, StickyAssignor(), {}) is None, why


def test_uniform_and_balanced_need_equal_subscriptions() -> None:
    topics = {"t": TopicMetadata("t", 6), "u": TopicMetadata("u", 2)}
    members = (Member("c0", frozenset({"t"})), *(Member(c, frozenset("tu")) for c in ("c1", "c2")))
    spec = GroupSpec("g", members, topics)
    for strategy in NUMBERED:
        factory = resolve(strategy)[1]
        found = NumberedGroup.of(spec, factory(), factory().assign(spec))
        assert (found is not None) == (strategy in ANY_SUBSCRIPTIONS), strategy


def test_assignors_off_the_numbered_path() -> None:
    spec = GroupSpec("g", (Member("c0", frozenset({"t"})),), {"t": TopicMetadata("t", 4)})

    class Mine(StickyAssignor):  # a subclass may decide otherwise
        pass

    for assignor in (resolve("range")[1](), Mine(), BalancedAssignor({("t", 0): 5})):
        assert NumberedGroup.of(spec, assignor, {}) is None
    nothing = GroupSpec("g", spec.members, {"t": TopicMetadata("t", 0)})
    assert NumberedGroup.of(nothing, StickyAssignor(), {}) is None
    # A plan that names a partition the group does not have, or gives one to a member that
    # does not subscribe to its topic, is not a plan of this group.
    assert NumberedGroup.of(spec, StickyAssignor(), {"c0": [("t", 9)]}) is None
    two = GroupSpec("g", spec.members, {**spec.topics, "u": TopicMetadata("u", 1)})
    two = GroupSpec("g", (*two.members, Member("c1", frozenset({"u"}))), two.topics)
    assert NumberedGroup.of(two, StickyAssignor(), {"c0": [("u", 0)]}) is None
    assert NumberedGroup.of(spec, StickyAssignor(), {"c0": [("t", 0)]}) is not None


@pytest.mark.parametrize("seed", range(60))
def test_sticky_and_cooperative_sticky_share_targets_and_rows(seed: int) -> None:
    """One group's strategies side by side, as the job runs them: cooperative-sticky finds
    the targets sticky kept while their restarts stay alike, and every row is the full
    replay's."""
    rng = random.Random(seed)
    spec = numbered_group(rng, alike=seed % 2 == 0)
    plans = []
    for strategy in ("sticky", "cooperative-sticky"):
        factory = resolve(strategy)[1]
        plans.append((strategy, factory, factory().rebalance(spec).assignment))
    fast = group_scenario_costs(spec, plans)
    full = group_scenario_costs(spec, plans, shortcuts=False)
    assert fast == full


def test_a_joiner_off_the_numbered_path() -> None:
    """`member_join`'s new member is ranked last: its id must sort after every other, it has
    no rack, and uniform and balanced keep their path only with equal subscriptions."""
    topics = {"t": TopicMetadata("t", 6), "u": TopicMetadata("u", 2)}
    members = tuple(Member(f"c{i}", frozenset("tu")) for i in range(3))
    spec = GroupSpec("g", members, topics)
    for strategy in NUMBERED:
        factory = resolve(strategy)[1]
        group = NumberedGroup.of(spec, factory(), factory().assign(spec))
        assert group is not None
        assert group.joined(Member("c2-joined", frozenset("tu"))) is not None
        assert group.joined(Member("c0-joined", frozenset("tu"))) is None  # sorts before c1
        assert group.joined(Member("c2-joined", frozenset("tu"), None, "r1")) is None
        narrower = group.joined(Member("c2-joined", frozenset("t")))
        assert (narrower is not None) == (strategy in ANY_SUBSCRIPTIONS)
