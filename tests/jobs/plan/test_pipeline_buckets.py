"""`buckets = 0`: enough buckets for every core, and more as the estate grows, so that one
bucket (one worker's memory) holds at most MEMBERS_PER_BUCKET members whatever the estate;
a small estate gets fewer, each of at least MIN_MEMBERS_PER_BUCKET members."""

from __future__ import annotations

import pytest

from jobs.plan.pipeline import (
    BUCKETS_PER_CORE,
    MEMBERS_PER_BUCKET,
    MIN_MEMBERS_PER_BUCKET,
    default_buckets,
)


@pytest.mark.parametrize("members", [32_000, 54_740, 550_579, 640_000])
def test_small_estates_get_sixteen_buckets_a_core(members: int) -> None:
    assert default_buckets(members, 2) == 2 * BUCKETS_PER_CORE


@pytest.mark.parametrize("members", [640_001, 5_505_790, 55_057_900])
def test_large_estates_get_more_buckets_not_larger_ones(members: int) -> None:
    buckets = default_buckets(members, 2)
    assert buckets > 2 * BUCKETS_PER_CORE
    assert members / buckets <= MEMBERS_PER_BUCKET
    assert members / (buckets - 1) > MEMBERS_PER_BUCKET  # no more than needed


@pytest.mark.parametrize(
    ("members", "buckets"), [(0, 2), (1, 2), (60, 2), (2_000, 2), (2_001, 3), (30_999, 31)]
)
def test_small_estates_get_a_bucket_a_core_or_one_per_thousand_members(
    members: int, buckets: int
) -> None:
    assert MIN_MEMBERS_PER_BUCKET == 1_000
    assert default_buckets(members, 2) == buckets


def test_tiny_estates_use_every_core() -> None:
    assert default_buckets(10, 8) == 8


def test_more_cores_more_buckets() -> None:
    assert default_buckets(550_579, 8) == 8 * BUCKETS_PER_CORE
