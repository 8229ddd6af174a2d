"""Look-alike groups share their migration bounce costs (`assignors.migration.paths`, memo
`assignors.whatif.lookalike.BounceMemo`).

The memo rests on the what-if memo's claim (a group renamed so that every order is kept has
the same figures under the built-in assignors), here for the rolling bounces: over seeded
random groups (classic and mixed, eager and cooperative strategies, static members, racks,
previous owners), a renamed copy has the same costs and is found in the memo, and rows with
the memo are the rows without it whatever the memo holds; groups that differ in something a
bounce reads never share an entry.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from helpers.lookalike import random_group, renamed

from assignors.catalog.catalog import StrategyCatalog
from assignors.migration import paths
from assignors.migration.conditions import MigrationSettings
from assignors.migration.paths import (
    CLASSIC_TO_CONSUMER,
    EAGER_TO_COOPERATIVE,
    MigrationRow,
    group_migrations,
)
from assignors.model import CONSUMER, GroupSpec, Member, TopicMetadata, member_order
from assignors.planner import plan_group
from assignors.whatif.lookalike import BounceMemo

RANDOM_PLUGIN = "assignors.catalog.examples.random_assignor:RandomAssignor"
CATALOG = StrategyCatalog.build(
    [
        "range",
        "roundrobin",
        "sticky",
        "cooperative-sticky",
        "uniform",
        "server-range",
        "balanced",
        RANDOM_PLUGIN,
    ]
)
LISTS: tuple[tuple[str, ...] | None, ...] = (
    ("range",),
    ("roundrobin",),
    ("sticky",),
    ("range", "cooperative-sticky"),
    ("sticky", "cooperative-sticky"),
    None,  # the client default, [range, cooperative-sticky]
    ("cooperative-sticky",),
    ("balanced",),
)
COSTS = ("moved_at_conversion", "bounce_moved", "bounce_paused")
COSTS += ("first_bounce_moved", "first_bounce_paused")


def migration_group(rng: random.Random, gid: str = "g") -> GroupSpec:
    """`helpers.lookalike.random_group` with strategy lists: mostly alike, else a mix around
    one eager strategy (the one-bounce upgrade then unsafe); a mixed group one time in four,
    its consumer members voting for a server assignor or for none."""
    spec = random_group(rng, gid)
    mixed = rng.random() < 0.25
    if rng.random() < 0.7:
        lists = [rng.choice(LISTS)] * len(spec.members)
    else:
        base = rng.choice(("range", "roundrobin", "sticky"))
        both = [(base,), (base, "cooperative-sticky"), ("cooperative-sticky", base)]
        lists = [rng.choice(both) for _ in spec.members]
    members = []
    for m, names in zip(spec.members, lists, strict=True):
        if mixed:
            names = rng.choice((None, ("uniform",), ("range",)))
        members.append(
            Member(m.member_id, m.topics, m.group_instance_id, m.rack, m.owned, m.generation, names)
        )
    if not mixed:
        return GroupSpec(gid, tuple(members), spec.topics)
    ordered = [m.member_id for m in member_order(members)]
    classic = tuple(i for i in ordered if rng.random() < 0.5) or (ordered[-1],)
    return GroupSpec(
        gid, tuple(members), spec.topics, group_protocol=CONSUMER, classic_members=classic
    )


def migrate(
    spec: GroupSpec,
    memo: BounceMemo | None,
    settings: MigrationSettings | None = None,
    catalog: StrategyCatalog = CATALOG,
) -> list[MigrationRow]:
    plan = plan_group(spec, catalog, any(m.owned for m in spec.members))
    return group_migrations(
        spec, plan, catalog, settings or MigrationSettings(), max_members=6, memo=memo
    )


def costs(rows: Sequence[MigrationRow]) -> list[tuple[object, ...]]:
    return [(r["path"], *(r[c] for c in COSTS)) for r in rows]


def _renamed(spec: GroupSpec, gid: str, rng: random.Random, scheme: int) -> GroupSpec:
    return renamed(spec, gid, scheme, rng.randint(0, 40), reverse=False)


@pytest.mark.parametrize("seed", range(200))
def test_a_renamed_group_has_the_same_rows_and_is_found_in_the_memo(seed: int) -> None:
    rng = random.Random(seed)
    spec = migration_group(rng, "orders")
    copy = _renamed(spec, "payments", rng, seed % 3)
    alone = migrate(spec, None)
    # The claim the memo rests on, checked without it: the same costs under other names.
    assert costs(migrate(copy, None)) == costs(alone)
    # The memo filled by the renamed look-alike first, then the group: found, the same rows.
    memo = BounceMemo()
    assert migrate(copy, memo) == migrate(copy, None)
    looked = memo.misses
    assert memo.hits == 0
    assert migrate(spec, memo) == alone
    assert (memo.hits, memo.misses) == (looked, looked)


def test_the_memo_hits_for_renamed_look_alike_groups() -> None:
    """Three members on `orders` (6), then the same group as consumer-0.. on `pay`: both
    paths of the second are found (the two-bounce upgrade and the one bounce are one entry)."""
    owned = ([0, 1, 2], [3, 4], [5])

    def group(gid: str, prefix: str, topic: str) -> GroupSpec:
        members = tuple(
            Member(f"{prefix}-{i}", frozenset({topic}), owned=tuple((topic, p) for p in ps))
            for i, ps in enumerate(owned)
        )
        return GroupSpec(gid, members, {topic: TopicMetadata(topic, 6)})

    memo = BounceMemo()
    first = migrate(group("orders", "c", "orders"), memo)
    assert (memo.hits, memo.misses, len(memo.entries)) == (0, 2, 2)
    second = migrate(group("payments", "consumer", "pay"), memo)
    assert (memo.hits, memo.misses, len(memo.entries)) == (2, 2, 2)
    assert second == [{**row, "group_id": "payments"} for row in first]
    assert [r["bounce_moved"] for r in second] == [18, 29, 15]


def test_most_random_groups_are_costed_through_the_memo() -> None:
    """The property tests above are not vacuous: most of their groups have a key."""
    looked = 0
    for seed in range(200):
        rng = random.Random(seed)
        memo = BounceMemo()
        migrate(migration_group(rng, "g"), memo)
        looked += memo.misses
    assert looked > 150


@pytest.mark.parametrize("seed", range(40))
def test_rows_with_the_memo_are_the_rows_without_it(seed: int) -> None:
    """One memo for an estate of groups drawn from a narrow space, so that shapes repeat
    under other names (listed in the same order or in reverse) and some look alike without
    being alike, as a worker sees them."""
    rng = random.Random(1000 + seed)
    memo = BounceMemo()
    for k in range(12):
        spec = migration_group(rng, f"g{k}")
        if rng.random() < 0.5:
            spec = renamed(spec, f"g{k}", rng.randint(0, 2), rng.randint(0, 9), reverse=k % 2 == 0)
        assert migrate(spec, memo) == migrate(spec, None)


def _group(
    owned: Sequence[Sequence[int]] = ([0, 1, 2], [3, 4], [5]),
    *,
    statics: Sequence[int] = (),
    strategies: tuple[str, ...] = ("range",),
    classic: Sequence[int] = (),
    reverse: bool = False,
) -> GroupSpec:
    """c0, c1, c2 on t (6), owning `owned`; `statics` and `classic` by index."""
    members = [
        Member(
            f"c{i}",
            frozenset({"t"}),
            f"i{i}" if i in statics else None,
            owned=tuple(("t", p) for p in ps),
            generation=3,
            assignment_strategies=strategies,
        )
        for i, ps in enumerate(owned)
    ]
    listed = tuple(reversed(members) if reverse else members)
    topics = {"t": TopicMetadata("t", 6)}
    if not classic:
        return GroupSpec("g", listed, topics)
    ids = tuple(f"c{i}" for i in classic)
    return GroupSpec("g", listed, topics, group_protocol=CONSUMER, classic_members=ids)


ELSEWHERE = MigrationSettings(landing=(("*", "uniform"),))
_BOTH = ("range", "cooperative-sticky")
UNLIKE = {
    # case: (a group, another one, the other's settings, the entries they may share)
    "a static member": (_group(), _group(statics=[1]), None, 0),
    "another start assignment": (_group(), _group([[0, 1], [2, 3], [4, 5]]), None, 0),
    "another classic member": (_group(classic=[0]), _group(classic=[2]), None, 0),
    "another strategy": (_group(), _group(strategies=("roundrobin",)), None, 0),
    # the one bounce is costed only when safe: the unsafe group's entry has no such costs
    # (classic_to_consumer does not read it: shared)
    "one bounce unsafe, then safe": (_group(), _group(strategies=_BOTH), None, 1),
    # the upgrade to cooperative-sticky does not read the landing assignor: shared
    "another landing assignor": (_group(), _group(), ELSEWHERE, 1),
}


@pytest.mark.parametrize("case", list(UNLIKE))
def test_groups_that_differ_in_what_a_bounce_reads_share_no_entry(case: str) -> None:
    first, second, settings, shared = UNLIKE[case]
    # one memo entry per path: classic_to_consumer's row, the upgrade's two rows
    one, other = migrate(first, None), migrate(second, None, settings)
    entries = [(costs(one[:1]), costs(other[:1])), (costs(one[1:]), costs(other[1:]))]
    differ = sum(mine != theirs for mine, theirs in entries if theirs)
    assert differ == sum(1 for _, theirs in entries if theirs) - shared
    memo = BounceMemo()
    migrate(first, memo)
    assert migrate(second, memo, settings) == migrate(second, None, settings)
    assert memo.hits == shared


def test_members_listed_in_another_order_share_no_entry() -> None:
    """The simulation hands the members to the assignors in the order they are listed: the
    key says that order, whether or not an assignor reads it (the planner lists members by
    member id, so look-alike groups list them alike)."""
    memo = BounceMemo()
    migrate(_group(), memo)
    reversed_group = _group(reverse=True)
    assert migrate(reversed_group, memo) == migrate(reversed_group, None)
    assert memo.hits == 0


def test_static_members_restart_in_member_id_order() -> None:
    """Static members are ordered by `group.instance.id`, the bounce by member id: a group
    with a static member and its member ids shuffled restarts in another order, and its rows
    are its own (most such shuffles cost otherwise: the test would see a shared entry)."""
    rng = random.Random(700)
    differ = 0
    for _ in range(30):
        owned = [[p for p in range(6) if p % 3 == k] for k in range(3)]
        owned[rng.randrange(3)].append(owned[rng.randrange(3)].pop())
        first = _group(owned, statics=[1])
        ids = [m.member_id for m in first.members]
        rng.shuffle(ids)
        shuffled = tuple(
            Member(
                i,
                m.topics,
                m.group_instance_id,
                owned=m.owned,
                generation=m.generation,
                assignment_strategies=m.assignment_strategies,
            )
            for i, m in zip(ids, first.members, strict=True)
        )
        second = GroupSpec("g", shuffled, first.topics)
        memo = BounceMemo()
        migrate(first, memo)
        alone = migrate(second, None)
        assert migrate(second, memo) == alone
        differ += costs(alone) != costs(migrate(first, None))
    assert differ > 0


def test_names_that_sort_differently_in_java_are_never_memoised() -> None:
    # U+FF21 sorts after U+1F600 in Java (UTF-16 code units), before it in Python.
    topics = {"t": TopicMetadata("t", 4)}
    members = (Member("\uff21", frozenset({"t"})), Member("\U0001f600", frozenset({"t"})))
    spec = GroupSpec("g", members, topics)
    memo = BounceMemo()
    assert migrate(spec, memo) == migrate(spec, None)
    assert (memo.hits, memo.misses, memo.entries) == (0, 0, {})


def test_a_plugins_bounce_is_never_memoised() -> None:
    """The random assignor seeds itself from member ids: a renamed group is not alike."""
    spec = _group(strategies=(RANDOM_PLUGIN,))
    memo = BounceMemo()
    rows = migrate(spec, memo)
    assert rows[0]["bounce_moved"] is not None  # costed, with the plugin's first leave
    assert rows == migrate(spec, None)
    assert (memo.hits, memo.misses, memo.entries) == (0, 0, {})


def test_a_group_over_the_limits_costs_no_key() -> None:
    members = tuple(Member(f"c{i}", frozenset({"t"})) for i in range(7))  # max_members=6
    spec = GroupSpec("g", members, {"t": TopicMetadata("t", 8)})
    memo = BounceMemo()
    assert migrate(spec, memo) == migrate(spec, None)
    assert (memo.hits, memo.misses, memo.entries) == (0, 0, {})


def test_a_full_memo_keeps_nothing_more_and_the_rows_stay_right() -> None:
    memo = BounceMemo(max_entries=1)
    migrate(_group(), memo)
    assert [key[0] for key in memo.entries] == [CLASSIC_TO_CONSUMER]
    other = _group([[0, 1], [2, 3], [4, 5]])
    assert migrate(other, memo) == migrate(other, None)
    assert len(memo.entries) == 1


@pytest.mark.skipif(
    not paths.__file__.endswith(".py"),
    reason="a compiled module calls its own functions directly: nothing to patch",
)
def test_a_bounce_that_raised_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: object) -> tuple[int, ...]:
        raise RuntimeError("boom")

    memo = BounceMemo()
    monkeypatch.setattr(paths, "_cooperative_bounces", boom)
    with pytest.raises(RuntimeError, match="boom"):
        migrate(_group(), memo)
    # classic_to_consumer was costed before the upgrade raised; the upgrade kept nothing
    assert [key[0] for key in memo.entries] == [CLASSIC_TO_CONSUMER]
    monkeypatch.setattr(paths, "_classic_bounce", boom)
    with pytest.raises(RuntimeError, match="boom"):
        migrate(_group([[0, 1], [2, 3], [4, 5]]), memo)
    assert len(memo.entries) == 1
    monkeypatch.undo()
    assert migrate(_group(), memo) == migrate(_group(), None)
    assert EAGER_TO_COOPERATIVE in {key[0] for key in memo.entries}
