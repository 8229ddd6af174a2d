"""librdkafka's own assignors, run by real confluent-kafka consumers on librdkafka's mock
cluster (`librdkafka_live`), against this project's plans: `range@librdkafka` and
`roundrobin@librdkafka` (Java's algorithms over librdkafka's member order) and
`cooperative-sticky@librdkafka` (librdkafka's own sticky assignor).

Each case starts a fresh group, waits until every member holds a settled assignment, and
compares it with the plan of the same group: member ids and instance ids as the consumers
report them, in the JoinGroup order the leader passed to its assignor (its debug log says).
Where a case has an owned-partitions step, members join one after another: each rebalance
starts from what the earlier members own. The module runs the selected cases
one at a time (`outcomes`), and each test checks its case's outcome; the cooperative-sticky
stories are `test_librdkafka_sticky_stories.py`, which another worker runs meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.jobs.export.librdkafka_live import (
    CASES,
    Case,
    Steps,
    _expected,
    _steps,
    mock_cluster,
    run_cases,
)
from tests.jobs.export.mock_cluster import MockCluster

pytestmark = [pytest.mark.live, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster() -> Iterator[MockCluster]:
    yield from mock_cluster()


@pytest.fixture(scope="module")
def outcomes(
    cluster: MockCluster, request: pytest.FixtureRequest
) -> dict[Case, Steps | BaseException]:
    return run_cases(cluster, request)


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "cooperative-sticky"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_fresh_group(outcomes: dict[Case, Steps | BaseException], strategy: str, case: str) -> None:
    [(spec, live)] = _steps(outcomes, (strategy, case, False))
    assert live == _expected(strategy, spec), spec


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "cooperative-sticky"])
@pytest.mark.parametrize("case", ["dynamic-equal", "dynamic-unequal", "mixed-equal"])
def test_joins_from_owned_partitions(
    outcomes: dict[Case, Steps | BaseException], strategy: str, case: str
) -> None:
    steps = _steps(outcomes, (strategy, case, True))
    differs = [spec for spec, live in steps if live != _expected(strategy, spec)]
    assert not differs, differs
