"""The rolling bounces of the `migrations` table on groups small enough to check by hand:
two or three members, one topic, every rebalance written out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assignors import progress
from assignors.catalog.catalog import StrategyCatalog
from assignors.inputs.validation import MemberRow, OwnedRow, TopicStatus, build_group
from assignors.migration.conditions import (
    CUSTOM_ASSIGNOR,
    INCONSISTENT_GROUP_PROTOCOL,
    RACK_AWARENESS_LOST,
    MigrationSettings,
)
from assignors.migration.paths import (
    CLASSIC_TO_CONSUMER,
    EAGER_TO_COOPERATIVE,
    EAGER_TO_COOPERATIVE_DIRECT,
    MIGRATION_COLUMNS,
    MigrationRow,
    group_migrations,
)
from assignors.model import CONSUMER
from assignors.planner import plan_group

CATALOG = StrategyCatalog.build(
    ["range", "roundrobin", "sticky", "cooperative-sticky", "uniform", "server-range", "balanced"]
)


def paths(
    strategies: Sequence[Sequence[str] | None],
    owned: Mapping[str, Sequence[int]],
    *,
    partitions: int = 4,
    protocols: Sequence[str | None] | None = None,
    racks: Sequence[str | None] | None = None,
    topic: TopicStatus | None = None,
    max_members: int | None = None,
) -> dict[str, MigrationRow]:
    n = len(strategies)
    rows = [
        MemberRow(
            f"c{i}",
            topics=["t"],
            assignment_strategies=strategies[i],
            group_protocol=(protocols or [None] * n)[i],
            client_rack=(racks or [None] * n)[i],
        )
        for i in range(n)
    ]
    current = [OwnedRow(m, "t", p) for m, ps in owned.items() for p in ps]
    topics = {"t": topic or TopicStatus(partitions)}
    spec, problems = build_group("g", rows, current, topics, CATALOG.is_known)
    assert spec is not None, problems
    plan = plan_group(spec, CATALOG, True)
    out = group_migrations(spec, plan, CATALOG, MigrationSettings(), max_members=max_members)
    for row in out:
        assert set(row) == {n for n, _, _ in MIGRATION_COLUMNS}
    return {str(r["path"]): r for r in out}


TWO = {"c0": [0, 1], "c1": [2, 3]}  # range's plan of t (4) over c0, c1


def test_classic_range_group_to_the_consumer_protocol() -> None:
    row = paths([["range"], ["range"]], TWO)[CLASSIC_TO_CONSUMER]
    assert (row["ready"], row["landing_assignor"], row["steps"]) == (True, "server-range", 2)
    # server-range's target from c0: 0,1 / c1: 2,3 is the same assignment
    assert row["moved_at_conversion"] == 0
    # c0 leaves, under range (eager): c1 takes t0-t3; 2 moved, all 4 paused
    # c0 rejoins on the consumer protocol, server-range: c0 0,1 / c1 2,3; 2 moved, 2 revoked
    # c1 leaves (a consumer group now): c0 takes t2,t3; 2 moved, 2 paused (c1's, lost)
    # c1 rejoins: back to c0 0,1 / c1 2,3; 2 moved, 2 revoked from c0
    assert (row["bounce_moved"], row["bounce_paused"]) == (8, 10)


def test_three_members_over_six_partitions() -> None:
    owned = {"c0": [0, 1], "c1": [2, 3], "c2": [4, 5]}
    row = paths([["range"]] * 3, owned, partitions=6)[CLASSIC_TO_CONSUMER]
    # c0 leaves (eager range: c1 0-2, c2 3-5): 3 moved, 6 paused; it rejoins (server-range:
    # back to 0,1 / 2,3 / 4,5): 3 moved, 3 revoked. c1 leaves (c0 0-2, c2 3-5): 2 moved,
    # 2 paused; rejoins: 2 and 2. c2 leaves (c0 0-2, c1 3-5): 3 moved, 3 paused; rejoins:
    # 3 and 3.
    assert (row["bounce_moved"], row["bounce_paused"]) == (16, 19)


def test_a_cooperative_group_pauses_only_what_moves() -> None:
    row = paths([["cooperative-sticky"], ["cooperative-sticky"]], TWO)[CLASSIC_TO_CONSUMER]
    assert row["landing_assignor"] == "uniform"
    # every step moves 2 partitions and pauses the same 2 (no stop-the-world pause)
    assert (row["bounce_moved"], row["bounce_paused"]) == (8, 8)
    assert EAGER_TO_COOPERATIVE not in paths([["cooperative-sticky"]] * 2, TWO)


def test_static_members_keep_their_partitions_over_the_bounce() -> None:
    rows = [
        MemberRow(f"c{i}", f"i{i}", topics=["t"], assignment_strategies=["range"]) for i in range(2)
    ]
    current = [OwnedRow(m, "t", p) for m, ps in TWO.items() for p in ps]
    spec, _ = build_group("g", rows, current, {"t": TopicStatus(4)}, CATALOG.is_known)
    assert spec is not None
    plan = plan_group(spec, CATALOG, True)
    row = group_migrations(spec, plan, CATALOG, MigrationSettings())[0]
    assert row["path"] == CLASSIC_TO_CONSUMER
    # a static member is back within its session timeout and replaces itself: no leave, and
    # the landing assignor's target from what the members own moves nothing
    assert (row["bounce_moved"], row["bounce_paused"]) == (0, 0)


def test_two_bounce_upgrade_from_eager_range() -> None:
    out = paths([["range"], ["range"]], TWO)
    two = out[EAGER_TO_COOPERATIVE]
    assert (two["ready"], two["landing_assignor"], two["steps"]) == (True, "cooperative-sticky", 4)
    # bounce 1, range elected throughout (eager): c0 leaves 2 moved, 4 paused; rejoins 2, 4;
    # c1 leaves 2, 4; its rejoin elects cooperative-sticky (c0 keeps 2): 2 moved, 2 revoked
    assert (two["first_bounce_moved"], two["first_bounce_paused"]) == (8, 14)
    # bounce 2, cooperative-sticky: four steps of 2 moved, 2 paused
    assert (two["bounce_moved"], two["bounce_paused"]) == (16, 22)
    # one bounce to [cooperative-sticky] alone: c0 comes back sharing nothing with c1
    direct = out[EAGER_TO_COOPERATIVE_DIRECT]
    assert (direct["ready"], direct["blockers"]) == (False, [INCONSISTENT_GROUP_PROTOCOL])
    assert direct["bounce_moved"] is None


def test_one_bounce_is_safe_when_every_member_lists_cooperative_sticky() -> None:
    # Kafka's default list [range, cooperative-sticky]: one bounce that drops range
    out = paths([["range", "cooperative-sticky"]] * 2, TWO)
    direct = out[EAGER_TO_COOPERATIVE_DIRECT]
    assert (direct["ready"], direct["blockers"], direct["steps"]) == (True, [], 2)
    # c0 leaves under range: 2 moved, 4 paused; then three cooperative steps of 2 and 2
    assert (direct["bounce_moved"], direct["bounce_paused"]) == (8, 10)
    # null assignment_strategies: the client default, which lists both too
    assert paths([None, None], TWO)[EAGER_TO_COOPERATIVE_DIRECT]["ready"] is True


def test_mixed_group_restarts_only_its_classic_members() -> None:
    out = paths([["uniform"], ["range"]], TWO, protocols=[CONSUMER, None])
    row = out[CLASSIC_TO_CONSUMER]
    assert list(out) == [CLASSIC_TO_CONSUMER]  # no eager path: the broker assigns everyone
    assert (row["from_strategy"], row["landing_assignor"], row["steps"]) == (None, "uniform", 1)
    # c1 leaves (uniform): c0 takes t2,t3, 2 moved and paused; rejoins: 2 and 2
    assert (row["bounce_moved"], row["bounce_paused"]) == (4, 4)
    assert str(row["detail"]).startswith("mixed group: 1 of 2 members still on the classic")


def test_consumer_groups_have_no_rows() -> None:
    assert paths([["uniform"], ["uniform"]], TWO, protocols=[CONSUMER, CONSUMER]) == {}


def test_custom_assignor_warning() -> None:
    row = paths([["balanced"], ["balanced"]], TWO)[CLASSIC_TO_CONSUMER]
    assert (row["from_strategy"], row["warnings"], row["ready"]) == (
        "balanced",
        [CUSTOM_ASSIGNOR],
        True,
    )


def test_rack_awareness_lost() -> None:
    racks = tuple(frozenset({r}) for r in ("a", "b", "a", "b"))
    topic = TopicStatus(4, replica_racks=racks)
    row = paths([["range"]] * 2, TWO, racks=["a", "b"], topic=topic)[CLASSIC_TO_CONSUMER]
    assert row["warnings"] == [RACK_AWARENESS_LOST]
    # no consumer racks: nothing to lose
    assert paths([["range"]] * 2, TWO, topic=topic)[CLASSIC_TO_CONSUMER]["warnings"] == []


def test_bounce_not_costed_above_max_members() -> None:
    row = paths([["range"]] * 2, TWO, max_members=1)[CLASSIC_TO_CONSUMER]
    assert (row["bounce_moved"], row["bounce_paused"], row["moved_at_conversion"]) == (
        None,
        None,
        None,
    )
    assert "not costed" in str(row["detail"])


def test_the_phase_is_announced_once_per_classic_or_mixed_group() -> None:
    units: list[tuple[str, str, str]] = []
    with progress.listening(lambda *unit: units.append(unit)):
        paths([["range"], ["range"]], TWO)
        paths([["uniform"], ["range"]], TWO, protocols=[CONSUMER, None])
        paths([["uniform"], ["uniform"]], TWO, protocols=[CONSUMER, CONSUMER])
    # the phase clock and the per-group guard name it: the elected strategy, or `elected`
    # for a mixed group, whose classic members the broker's assignor serves already
    assert [u for u in units if u[2] == progress.MIGRATION] == [
        ("g", "range", progress.MIGRATION),
        ("g", "elected", progress.MIGRATION),
    ]
