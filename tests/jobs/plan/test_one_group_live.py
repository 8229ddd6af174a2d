"""`plan_one`'s live check: the group's library from its members and the `[clients]`
patterns, the elected plan planned for the check in a run without `elected`, never again
when the guard left strategies out; KIP-848 target rows read, unusable ones counted."""

from __future__ import annotations

import dataclasses

from assignors.inputs.validation import MemberRow, OwnedRow, TopicStatus
from assignors.problems import Reason
from jobs.plan.one_group import plan_one, table_rows
from jobs.settings.run import RunSettings

CATALOG = {"t": TopicStatus(4)}
OWNED = [
    OwnedRow("c0", "t", 0),
    OwnedRow("c0", "t", 1),
    OwnedRow("c1", "t", 2),
    OwnedRow("c1", "t", 3),
]


def members(library: str | None = None, protocol: str | None = None) -> list[MemberRow]:
    return [
        MemberRow(m, topics=["t"], generation=2, group_protocol=protocol, client_library=library)
        for m in ("c0", "c1")
    ]


def settings(*strategies: str, **kw: object) -> RunSettings:
    base = RunSettings.of(strategies, has_current_assignment=True, whatif=None, capacity=None)
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def test_a_run_without_elected_still_checks_against_the_elected_strategy() -> None:
    result = plan_one("g", members(), OWNED, [], CATALOG, settings("roundrobin"))
    assert result.live is not None
    assert (result.live["verdict"], result.live["elected_strategy"]) == ("MATCHES_ELECTED", "range")
    rows = table_rows(result)
    assert rows["live_check"] == [result.live]
    assert rows["elections"][0]["client_library"] == "java"


def test_the_guard_left_out_strategy_is_not_run_again() -> None:
    run = settings("range", "elected")
    fewer = run.without(frozenset({"range", "elected"})).catalog
    result = plan_one("g", members(), OWNED, [], CATALOG, run, planned=fewer)
    assert result.live is not None
    assert result.live["verdict"] == "UNEXPLAINED"
    assert "left out for this group by the per-group guard" in str(result.live["detail"])


def test_a_pattern_names_the_library_and_mixed_members_are_warned_about() -> None:
    run = settings("range", "elected", library_by_group=(("g*", "kafka-python"),))
    result = plan_one("g", members("librdkafka"), OWNED, [], CATALOG, run)
    assert result.live is not None
    assert result.live["elected_strategy"] == "range@kafka-python"
    mixed = [*members("kafka-python")[:1], *members("java")[1:]]
    result = plan_one("h", mixed, OWNED, [], CATALOG, settings("range", "elected"))
    assert [p.reason for p in result.problems] == [Reason.MIXED_CLIENT_LIBRARY]
    assert result.live is not None
    assert result.live["client_library"] == "java"


def test_target_rows_of_a_consumer_group_and_the_unusable_ones() -> None:
    targets = [*OWNED, OwnedRow("c0", "t", 9), OwnedRow(None, "t", 0)]
    result = plan_one(
        "g", members(protocol="consumer"), OWNED, [], CATALOG, settings("uniform", "elected"),
        targets=targets,
    )  # fmt: skip
    assert result.live is not None
    assert result.live["verdict"] == "MATCHES_ELECTED"
    assert result.live["client_library"] is None
    assert "2 target_assignment row(s) ignored" in str(result.live["detail"])
    moved = [OwnedRow("c0", "t", p) for p in range(4)]
    result = plan_one(
        "g", members(protocol="consumer"), OWNED, [], CATALOG, settings("uniform", "elected"),
        targets=moved,
    )  # fmt: skip
    assert result.live is not None
    assert result.live["verdict"] == "REBALANCING"
