"""Packed integer heap keys order exactly as the tuples they stand for, and unpack back."""

from __future__ import annotations

import itertools
import random

import pytest

from assignors.strategies import balanced
from assignors.strategies.sticky import general

SEEDS = range(50)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("module", [balanced, general], ids=["balanced", "sticky-general"])
def test_pack_key_orders_as_the_tuple(seed: int, module: object) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    pairs = [(rng.randint(-50, 10_000), rng.randrange(n)) for _ in range(200)]
    pack, unpack = module._pack_key, module._unpack_key  # type: ignore[attr-defined]
    keys = {pair: pack(*pair, n) for pair in pairs}
    assert sorted(pairs) == sorted(pairs, key=keys.__getitem__)
    for (a, x), (b, y) in itertools.pairwise(pairs):
        assert ((a, x) < (b, y)) == (keys[a, x] < keys[b, y])
    assert all(unpack(key, n) == pair for pair, key in keys.items())


def pref_tuple(cost: int, owner: int, node: int, kind: int) -> tuple[int, int, int, int]:
    """The order `_pack_pref` stands for."""
    if owner in (-1, node):
        return cost, 0, 0, kind
    return cost, 1, -owner, -kind


@pytest.mark.parametrize("seed", SEEDS)
def test_pack_pref_orders_as_the_tuple(seed: int) -> None:
    rng = random.Random(seed)
    nodes, kinds = rng.randint(1, 12), rng.randint(1, 30)
    node = rng.randrange(nodes)
    rows = [
        (rng.randint(-1, 200), rng.choice([-1, node, rng.randrange(nodes)]), rng.randrange(kinds))
        for _ in range(200)
    ]
    packed = {r: balanced._pack_pref(r[0], r[1], node, r[2], nodes, kinds) for r in rows}
    as_tuple = {r: pref_tuple(r[0], r[1], node, r[2]) for r in rows}
    for a in rows[:20]:
        for b in rows:
            assert (as_tuple[a] < as_tuple[b]) == (packed[a] < packed[b]), (a, b)
    assert all(balanced._unpack_pref(packed[r], nodes, kinds) == (r[0], r[2]) for r in rows)


def test_the_properties_can_fail() -> None:
    # Without room for the node digit, integer order and tuple order part ways.
    assert balanced._pack_key(0, 5, 3) > balanced._pack_key(1, 0, 3)
    assert (0, 5) < (1, 0)
