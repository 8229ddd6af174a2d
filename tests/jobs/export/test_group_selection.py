"""Which groups the exporter reads: every group, or those `--group` names (repeatable, as
kafka-consumer-groups.sh takes it), narrowed by `--groups` / `--exclude-groups`."""

from __future__ import annotations

import pytest

from jobs.export.snapshot import NothingSelected, Options, collect
from tests.jobs.export.test_consumer_groups_export import FakeClient, answer


def described(client: FakeClient) -> set[str]:
    return {g for call in client.cgd_calls for gs in call.values() for g in gs}


def test_named_groups_only() -> None:
    client = FakeClient([answer()])
    snap = collect(client, Options(group_ids=("payments",)))  # type: ignore[arg-type]
    assert described(client) == {"payments"}
    assert {r["group_id"] for r in snap.subscriptions} == {"payments"}
    assert snap.skipped == {}


def test_a_named_group_the_cluster_does_not_list_is_skipped() -> None:
    client = FakeClient([answer()])
    snap = collect(client, Options(group_ids=("payments", "nosuch")))  # type: ignore[arg-type]
    assert described(client) == {"payments"}
    assert snap.skipped == {"nosuch": "the cluster lists no such consumer group"}


def test_no_named_group_listed_is_nothing_selected() -> None:
    with pytest.raises(NothingSelected, match="--group 'nosuch'"):
        collect(FakeClient([answer()]), Options(group_ids=("nosuch",)))  # type: ignore[arg-type]


def test_the_regexes_narrow_the_named_groups() -> None:
    opts = Options(group_ids=("payments", "gone"), exclude_groups="gone")
    client = FakeClient([answer()])
    collect(client, opts)  # type: ignore[arg-type]
    assert described(client) == {"payments"}
    with pytest.raises(NothingSelected):
        collect(FakeClient([answer()]), Options(groups="gone", group_ids=("payments",)))  # type: ignore[arg-type]
