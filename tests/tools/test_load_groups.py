"""The exporter's load generator on a real broker (noida-db, 127.0.0.1): the groups it forms
are Stable classic consumer groups, each member holding the leader's assignment, which is the
`range` assignment its protocol names."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from assignors.catalog.registry import get_assignor
from assignors.model import GroupSpec, Member, TopicMetadata
from tests.jobs.export.brokers import have, noida, run_module
from tools.load_groups import Shape, build

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not (have("confluent_kafka") and have("kafka")),
        reason="confluent-kafka and kafka-python are needed (pip install -e '.[dev,export]')",
    ),
]


def test_formed_groups_export_as_stable_groups_holding_every_partition_once(
    tmp_path: Path,
) -> None:
    shape = Shape(members=3, topics=4, partitions=4, topics_per_group=2, prefix="lg")
    with noida(tmp_path) as broker:
        build(broker.bootstrap, 5, shape, lanes=2)
        snap = tmp_path / "snap"
        result = run_module(
            "jobs.export_snapshot", "--bootstrap-servers", broker.bootstrap, "--output", str(snap)
        )
    assert result.returncode == 0, result.stderr
    meta = json.loads((snap / "_snapshot.json").read_text())
    groups = dict(shape.group(i) for i in range(5))
    assert meta["groups_exported"] == sorted(groups)
    subs = pd.read_parquet(snap / "subscriptions")
    owned = pd.read_parquet(snap / "current_assignment")
    for gid, topics in groups.items():
        members = subs[subs.group_id == gid]
        assert len(members) == shape.members, gid
        assert set(members.group_state) == {"Stable"}
        assert all(sorted(t) == topics for t in members.topics)
        assert set(members.assignment_strategies.map(tuple)) == {("range",)}
        held = owned[owned.group_id == gid]
        assert set(held.member_id) == set(members.member_id)
        parts = Counter(zip(held.topic, held.partition, strict=True))
        assert parts == Counter((t, p) for t in topics for p in range(shape.partitions)), gid
        spec = GroupSpec(
            gid,
            tuple(Member(m, frozenset(topics)) for m in sorted(members.member_id)),
            {t: TopicMetadata(t, shape.partitions) for t in topics},
        )
        planned = get_assignor("range").rebalance(spec).assignment
        for m, tps in planned.items():
            mine = held[held.member_id == m]
            assert sorted(zip(mine.topic, mine.partition, strict=True)) == sorted(tps), gid
