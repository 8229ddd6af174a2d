"""`buckets = 0`: enough buckets for every core, and more as the estate grows, so that one
bucket (one worker's memory) holds at most MEMBERS_PER_BUCKET members whatever the estate."""

from __future__ import annotations

import pytest

from jobs.plan.pipeline import BUCKETS_PER_CORE, MEMBERS_PER_BUCKET, default_buckets


@pytest.mark.parametrize("members", [0, 1, 54_740, 550_579, 640_000])
def test_small_estates_get_sixteen_buckets_a_core(members: int) -> None:
    assert default_buckets(members, 2) == 2 * BUCKETS_PER_CORE


@pytest.mark.parametrize("members", [640_001, 5_505_790, 55_057_900])
def test_large_estates_get_more_buckets_not_larger_ones(members: int) -> None:
    buckets = default_buckets(members, 2)
    assert buckets > 2 * BUCKETS_PER_CORE
    assert members / buckets <= MEMBERS_PER_BUCKET
    assert members / (buckets - 1) > MEMBERS_PER_BUCKET  # no more than needed


def test_more_cores_more_buckets() -> None:
    assert default_buckets(550_579, 8) == 8 * BUCKETS_PER_CORE
