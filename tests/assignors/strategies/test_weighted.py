"""The load-balancing heuristic (`balanced` by weight or lag) against brute force and LPT."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

import pytest
from helpers.baselines import lpt

from assignors.analysis.load import (
    class_graph,
    fractional_bound_flow,
    load_gap,
    max_member_load,
    weight_lower_bound,
)
from assignors.analysis.metrics import is_valid
from assignors.model import Assignment, GroupSpec, Member, TopicMetadata, TopicPartition
from assignors.strategies.weighted import assign_by_load

Loads = dict[TopicPartition, int]


def tiny_group(rng: random.Random, racks: bool = False) -> tuple[GroupSpec, Loads]:
    """2-4 members, 1-3 topics, at most 7 partitions, random subscriptions and loads."""
    topics = [f"t{i}" for i in range(rng.randint(1, 3))]
    counts = dict.fromkeys(topics, 1)
    for _ in range(rng.randint(0, 7 - len(topics))):
        counts[rng.choice(topics)] += 1
    rack_names = ["r0", "r1", "r2"]
    members = tuple(
        Member(
            f"m{i}",
            frozenset(t for t in topics if rng.random() < 0.6) or frozenset({rng.choice(topics)}),
            rack=rng.choice([*rack_names, None]) if racks else None,
        )
        for i in range(rng.randint(2, 4))
    )
    meta = {
        t: TopicMetadata(
            t,
            n,
            tuple(frozenset(rng.sample(rack_names, 2)) for _ in range(n)) if racks else (),
        )
        for t, n in counts.items()
    }
    loads = {
        (t, p): rng.choice([0, 1, 2, 3, 5, 8, 13, rng.randint(0, 10**6)])
        for t in topics
        for p in range(counts[t])
    }
    return GroupSpec("g", members, meta), loads


def brute_force_optimum(spec: GroupSpec, loads: Mapping[TopicPartition, int]) -> int:
    """The smallest max member load over every valid assignment (branch and bound)."""
    subs = spec.subscribers()
    tps = sorted((tp for tp in loads if tp[0] in subs), key=lambda tp: -loads[tp])
    load = {m.member_id: 0 for m in spec.members}
    best = sum(loads.values())

    def search(k: int, peak: int) -> None:
        nonlocal best
        if peak >= best and k > 0:
            return
        if k == len(tps):
            best = peak
            return
        tp = tps[k]
        for m in subs[tp[0]]:
            load[m.member_id] += loads[tp]
            search(k + 1, max(peak, load[m.member_id]))
            load[m.member_id] -= loads[tp]

    search(0, 0)
    return best


def plain_lpt_max(spec: GroupSpec, loads: Mapping[TopicPartition, int]) -> int:
    """Textbook LPT, written out independently: heaviest first to the least-loaded
    subscriber, ties by fewest partitions, then member id."""
    subs = spec.subscribers()
    load = {m.member_id: 0 for m in spec.members}
    count = dict.fromkeys(load, 0)
    for tp in sorted((tp for tp in loads if tp[0] in subs), key=lambda tp: (-loads[tp], tp)):
        m = min((s.member_id for s in subs[tp[0]]), key=lambda m: (load[m], count[m], m))
        load[m] += loads[tp]
        count[m] += 1
    return max(load.values())


def mismatches(spec: GroupSpec, assignment: Assignment) -> int:
    racks = {m.member_id: m.rack for m in spec.members}
    out = 0
    for member, tps in assignment.items():
        for t, p in tps:
            replicas = spec.topics[t].replica_racks
            rr = replicas[p] if p < len(replicas) else frozenset()
            out += bool(rr and racks[member] and racks[member] not in rr)
    return out


SEEDS = range(400)


def test_heuristic_against_brute_force_bound_and_lpt() -> None:
    optimal = improved = 0
    for seed in SEEDS:
        rng = random.Random(seed)
        spec, loads = tiny_group(rng, racks=seed % 2 == 1)
        result = assign_by_load(spec, loads, {})
        assert is_valid(spec, result), seed
        got = max_member_load(spec, result, loads)
        best = brute_force_optimum(spec, loads)
        bound = weight_lower_bound(spec, loads)
        assert bound <= best <= got, seed  # the bound is proven; nothing beats the optimum
        assert fractional_bound_flow(class_graph(spec, loads)) <= best, seed
        lpt_max = plain_lpt_max(spec, loads)
        assert got <= lpt_max, seed
        improved += got < lpt_max
        assert load_gap(spec, result, loads) == got - bound >= 0
        optimal += got == best
    assert optimal >= 0.9 * len(SEEDS)
    assert improved > 0  # the local search does something LPT alone does not


def test_lpt_helper_is_textbook_lpt() -> None:
    for seed in range(100):
        spec, loads = tiny_group(random.Random(seed))
        assert max_member_load(spec, lpt(spec, loads), loads) == plain_lpt_max(spec, loads)


def test_swap_reaches_the_optimum_lpt_misses() -> None:
    spec = GroupSpec(
        "g",
        (Member("a", frozenset({"t"})), Member("b", frozenset({"t"}))),
        {"t": TopicMetadata("t", 5)},
    )
    loads = dict(zip([("t", p) for p in range(5)], [3, 3, 2, 2, 2], strict=True))
    assert max_member_load(spec, lpt(spec, loads), loads) == 7
    result = assign_by_load(spec, loads, {})
    assert max_member_load(spec, result, loads) == 6 == weight_lower_bound(spec, loads)


def shuffled_spec(spec: GroupSpec, rng: random.Random) -> GroupSpec:
    members = list(spec.members)
    rng.shuffle(members)
    topics = list(spec.topics.items())
    rng.shuffle(topics)
    return GroupSpec(spec.group_id, tuple(members), dict(topics))


def shuffled(mapping: Mapping[TopicPartition, object], rng: random.Random) -> dict:  # type: ignore[type-arg]
    items = list(mapping.items())
    rng.shuffle(items)
    return dict(items)


@pytest.mark.parametrize("seed", range(60))
def test_deterministic_under_shuffled_input(seed: int) -> None:
    rng = random.Random(seed)
    spec, loads = tiny_group(rng, racks=True)
    previous = {tp: rng.choice(spec.member_ids) for tp in loads if rng.random() < 0.6}
    expected = assign_by_load(spec, loads, previous)
    for _ in range(5):
        got = assign_by_load(
            shuffled_spec(spec, rng), shuffled(loads, rng), shuffled(previous, rng)
        )
        assert got == expected


def one_topic(
    members: Iterable[Member], partitions: int, racks: tuple[frozenset[str], ...] = ()
) -> GroupSpec:
    return GroupSpec("g", tuple(members), {"t": TopicMetadata("t", partitions, racks)})


def test_zero_load_partitions_spread_by_count() -> None:
    spec = one_topic([Member(m, frozenset({"t"})) for m in "abcd"], 13)
    loads = {("t", 0): 100} | {("t", p): 0 for p in range(1, 13)}
    result = assign_by_load(spec, loads, {})
    sizes = sorted(len(tps) for tps in result.values())
    assert sizes[-1] - sizes[0] <= 1
    all_zero = assign_by_load(spec, dict.fromkeys(loads, 0), {})
    assert sorted(len(tps) for tps in all_zero.values()) == [3, 3, 3, 4]


def test_zero_load_partitions_do_not_pile_up_on_their_previous_owner() -> None:
    spec = one_topic([Member(m, frozenset({"t"})) for m in "abc"], 9)
    loads = {("t", p): 0 for p in range(9)}
    result = assign_by_load(spec, loads, dict.fromkeys(loads, "a"))
    assert sorted(len(tps) for tps in result.values()) == [3, 3, 3]
    assert len(result["a"]) == 3


def test_racks_matched_when_the_max_allows() -> None:
    members = [Member("a", frozenset({"t"}), rack="r1"), Member("b", frozenset({"t"}), rack="r2")]
    racks = (frozenset({"r2"}), frozenset({"r2"}), frozenset({"r1"}), frozenset({"r1"}))
    spec = one_topic(members, 4, racks)
    loads = {("t", p): 5 for p in range(4)}
    result = assign_by_load(spec, loads, {})
    assert result == {"a": [("t", 2), ("t", 3)], "b": [("t", 0), ("t", 1)]}
    # racks never cost balance: all replicas on r1, so b mismatches on whatever it takes
    spec = one_topic(members, 4, (frozenset({"r1"}),) * 4)
    result = assign_by_load(spec, loads, {})
    assert max_member_load(spec, result, loads) == 10
    assert mismatches(spec, result) == 2


def test_racks_before_stickiness() -> None:
    members = [Member("a", frozenset({"t"}), rack="r1"), Member("b", frozenset({"t"}), rack="r2")]
    spec = one_topic(members, 2, (frozenset({"r1"}), frozenset({"r2"})))
    loads = {("t", 0): 4, ("t", 1): 4}
    result = assign_by_load(spec, loads, {("t", 0): "b", ("t", 1): "a"})
    assert result == {"a": [("t", 0)], "b": [("t", 1)]}


def test_sticky_when_balance_and_racks_allow() -> None:
    spec = one_topic([Member(m, frozenset({"t"})) for m in "abc"], 6)
    loads = {("t", p): w for p, w in enumerate([9, 1, 5, 5, 4, 6])}
    previous = {("t", 0): "c", ("t", 1): "c", ("t", 2): "a", ("t", 4): "b"}
    result = assign_by_load(spec, loads, previous)
    assert max_member_load(spec, result, loads) == 10 == weight_lower_bound(spec, loads)
    owner = {tp: m for m, tps in result.items() for tp in tps}
    assert all(owner[tp] == m for tp, m in previous.items())


@pytest.mark.parametrize("seed", range(80))
def test_own_result_as_previous_is_kept(seed: int) -> None:
    rng = random.Random(seed)
    spec, loads = tiny_group(rng, racks=seed % 2 == 1)
    loads = {tp: w + 1 for tp, w in loads.items()}  # positive loads: counts do not interfere
    first = assign_by_load(spec, loads, {})
    previous = {tp: m for m, tps in first.items() for tp in tps}
    again = assign_by_load(spec, loads, previous)
    peak = max_member_load(spec, again, loads)
    assert peak <= max_member_load(spec, first, loads)
    if peak == max_member_load(spec, first, loads) and mismatches(spec, again) == mismatches(
        spec, first
    ):
        assert again == first


@pytest.mark.parametrize("seed", range(80))
def test_no_single_move_fixes_a_rack_mismatch_or_a_move_within_the_max(seed: int) -> None:
    rng = random.Random(seed)
    spec, loads = tiny_group(rng, racks=True)
    loads = {tp: w + 1 for tp, w in loads.items()}
    previous = {tp: rng.choice(spec.member_ids) for tp in loads if rng.random() < 0.5}
    result = assign_by_load(spec, loads, previous)
    peak = max_member_load(spec, result, loads)
    load = {m: sum(loads[tp] for tp in tps) for m, tps in result.items()}
    subs = spec.subscribers()
    racks = {m.member_id: m.rack for m in spec.members}

    def cost(tp: TopicPartition, m: str) -> tuple[bool, bool]:
        rr = spec.topics[tp[0]].replica_racks[tp[1]]
        return (bool(racks[m]) and racks[m] not in rr, previous.get(tp, m) != m)

    for owner, tps in result.items():
        for tp in tps:
            for other in subs[tp[0]]:
                m = other.member_id
                if m != owner and load[m] + loads[tp] <= peak:
                    assert cost(tp, m) >= cost(tp, owner), (seed, tp, m)


def test_members_without_partitions_are_in_the_result() -> None:
    spec = GroupSpec(
        "g",
        (Member("a", frozenset({"t"})), Member("idle", frozenset())),
        {"t": TopicMetadata("t", 2)},
    )
    assert assign_by_load(spec, {}, {}) == {"a": [("t", 0), ("t", 1)], "idle": []}
    assert assign_by_load(GroupSpec("g", ()), {}, {}) == {}


def test_previous_owners_that_cannot_keep_a_partition_are_ignored() -> None:
    spec = GroupSpec(
        "g",
        (Member("", frozenset({"t"})), Member("a", frozenset({"t"})), Member("c", frozenset())),
        {"t": TopicMetadata("t", 3)},
    )
    loads = {("t", 0): 4, ("t", 1): 2, ("t", 2): 2}
    expected = assign_by_load(spec, loads, {})
    assert assign_by_load(spec, loads, dict.fromkeys(loads, "ghost")) == expected
    assert assign_by_load(spec, loads, dict.fromkeys(loads, "c")) == expected
    # the empty member id is a real member: it keeps what fits
    kept = assign_by_load(spec, loads, {("t", 1): "", ("t", 2): ""})
    assert kept[""] == [("t", 1), ("t", 2)]
