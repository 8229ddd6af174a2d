"""Which output columns are 64-bit, and how a sum that outgrows 64 bits is kept.

The other integer columns count things of one group (members, partitions, rounds, moves) and
are Spark `int`: a group holds far fewer than 2^31 of anything, since each is a row of the
input. Offsets are Kafka longs, so a lag and any sum of lags needs a `bigint`; a sum of more
than one lag can still pass 2^63-1, and then saturates (with a LAG_SATURATED warning).
Weights are doubles.
"""

from __future__ import annotations

from typing import Final

from assignors.problems import INT64_MAX

BIGINT_COLUMNS: Final = frozenset(
    {
        # balance_metrics
        "total_lag",
        "max_partition_lag",
        "max_member_lag",
        "lag_moved",  # also rebalance_costs
        # assignments
        "lag",
    }
)
"""Output columns written as Spark `bigint`: a partition's lag, and sums of lags."""


def saturated(value: int) -> int:
    """`value` capped at 2^63-1, the largest `bigint` (callers warn when it was capped).

    >>> saturated(3), saturated(2**64) == INT64_MAX
    (3, True)
    """
    return min(value, INT64_MAX)
