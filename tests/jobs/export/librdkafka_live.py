"""Groups of real confluent-kafka consumers on librdkafka's mock cluster (in process,
127.0.0.1), settled and read back as specs to plan: the machinery of the live librdkafka tests
(`test_librdkafka_assignors.py`, `test_librdkafka_sticky_stories.py`).

librdkafka's leader runs `range`, `roundrobin` and `cooperative-sticky` client-side; the mock
coordinator only elects the leader (the first member to join) and relays its assignment.
A case mostly waits (the coordinator's join windows, the settle windows), and no two cases
share a group.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest

from assignors.catalog.registry import get_assignor
from assignors.model import GroupSpec, Member, TopicMetadata, TopicPartition
from tests.jobs.export.mock_cluster import MockCluster

ck = pytest.importorskip("confluent_kafka")

# an assignment unchanged this long (every partition held once) has settled; a cooperative
# group's second round can come several seconds after the first (a static member's rejoin)
SETTLE_S = {"cooperative-sticky": 8.0}
SETTLE_EAGER_S = 2.0
JOIN_TIMEOUT_S = 40.0
CLOSE_TIMEOUT_S = 10.0
TOPICS = {"ta": 5, "tb": 3, "tc": 4}
# cases run at once, each its own group. A member of a fresh group can miss the coordinator's
# first join window when the machine is busy, and the group then forms in two rounds: `_run`
# then tries a new group. `make test` runs this module in a lane of its own at a higher
# priority than the CPU-bound suites beside it.
CONCURRENT_CASES = 2
# the mock coordinator's wait for more members of an empty group before its first round
# (librdkafka's default 3 s): margin for a busy machine, where a member's join can be late
INITIAL_REBALANCE_DELAY_MS = 5000
# attempts at a group that settles, and a fresh one in one round (`_run`)
FRESH_TRIES = 3
_groups = itertools.count()


class AssignorRuns(logging.Handler):
    """A group's last assignor run, read from librdkafka's `assignor` debug log: its members
    in the order its leader passed them to the assignor (the JoinGroup response's order) and
    the assignment it computed.

    That order decides `range` and `roundrobin` where static and dynamic members mix, and the
    order in which consumers start does not fix it: a later consumer's JoinGroup can arrive
    first on a busy machine. The assignment tells a settled group from one whose members still
    hold the previous round's partitions while the next round is under way."""

    _RUN = re.compile(r"running \S+ assignor for (\d+) member")
    _MEMBER = re.compile(r' Member "([^"]+)"(?: \(me\))? with \d+ owned partition')
    _ASSIGNED = re.compile(r' Member "([^"]+)"(?: \(me\))? assigned \d+ partition')
    _PARTITION = re.compile(r"\]:   (\S+) \[(\d+)\]$")

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self._lock = threading.Lock()
        self._expected = 0
        self._running: list[str] = []
        self._assigning: dict[str, list[TopicPartition]] = {}
        self._to: list[TopicPartition] | None = None
        self.last: list[str] = []
        self.count = 0  # runs so far: a group formed in one round has had exactly one

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        with self._lock:
            if run := self._RUN.search(message):
                # a run under way: nothing is settled until its assignment is logged
                self._expected, self._running = int(run.group(1)), []
                self.count += 1
                self._assigning, self._to = {}, None
            elif (member := self._MEMBER.search(message)) and len(self._running) < self._expected:
                self._running.append(member.group(1))
                if len(self._running) == self._expected:
                    self.last = self._running
            elif assigned := self._ASSIGNED.search(message):
                self._to = self._assigning.setdefault(assigned.group(1), [])
            elif self._to is not None and (tp := self._PARTITION.search(message)):
                self._to.append((tp.group(1), int(tp.group(2))))

    def holds_last_run(self, held: dict[str, list[TopicPartition]]) -> bool:
        """Every member took part in the last run and holds what it assigned them."""
        with self._lock:
            if sorted(self.last) != sorted(held):
                return False
            return all(sorted(self._assigning.get(m, [])) == tps for m, tps in held.items())

    def logger(self, group: str) -> logging.Logger:
        """A logger for a consumer of `group` to pass as confluent-kafka's `logger`."""
        logger = logging.getLogger(f"librdkafka_live.{group}")
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
        logger.handlers = [self]
        return logger

    def ordered(self, members: Sequence[Member]) -> tuple[Member, ...]:
        order = {m: i for i, m in enumerate(self.last)}
        missing = [m.member_id for m in members if m.member_id not in order]
        assert not missing, (missing, self.last)  # a settled group's members all took part
        return tuple(sorted(members, key=lambda m: order[m.member_id]))


@dataclass(frozen=True)
class Spec:
    """One member to start: its subscription, for a static member its instance id, and its
    `client.rack` if it sets one."""

    topics: tuple[str, ...]
    instance: str | None = None
    rack: str | None = None


Steps = list[tuple[GroupSpec, dict[str, list[TopicPartition]]]]
# (strategy, case, one_by_one): what a test of this module runs
Case = tuple[str, str, bool]


def mock_cluster() -> Iterator[MockCluster]:
    """The mock cluster the cases share (a test module's `cluster` fixture)."""
    mock = MockCluster(3)
    mock.set_group_initial_rebalance_delay(INITIAL_REBALANCE_DELAY_MS)
    for topic, n in TOPICS.items():
        mock.create_topic(topic, n, 1)
    yield mock
    mock.close()


def _consumer(
    mock: MockCluster,
    group: str,
    strategy: str,
    spec: Spec,
    revoked: list[object],
    runs: AssignorRuns,
) -> Any:
    conf = {
        "bootstrap.servers": mock.bootstrap,
        "group.id": group,
        "partition.assignment.strategy": strategy,
        "enable.auto.commit": False,
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
        "topic.metadata.refresh.interval.ms": 1000,
        "debug": "assignor",
        "logger": runs.logger(group),
    }
    if spec.instance is not None:
        conf["group.instance.id"] = spec.instance
    if spec.rack is not None:
        conf["client.rack"] = spec.rack
    c = ck.Consumer(conf)

    def on_revoke(_: Any, partitions: list[Any]) -> None:
        if partitions:  # a later round took partitions back: the group did not form at once
            revoked.append(partitions)

    c.subscribe(list(spec.topics), on_revoke=on_revoke)
    return c


def _held(consumers: Sequence[Any]) -> list[list[TopicPartition]]:
    return [sorted((tp.topic, tp.partition) for tp in c.assignment()) for c in consumers]


def _settle(
    consumers: Sequence[Any], wanted: set[TopicPartition], settle_s: float, runs: AssignorRuns
) -> list[list[TopicPartition]]:
    """Poll everyone until each partition of `wanted` is held exactly once, by the members of
    the leader's last assignor run as it assigned them, unchanged for `settle_s`."""
    deadline = time.monotonic() + JOIN_TIMEOUT_S
    last: list[list[TopicPartition]] | None = None
    since = time.monotonic()
    while time.monotonic() < deadline:
        for c in consumers:
            c.poll(0.05)
        held = _held(consumers)
        flat = [tp for tps in held for tp in tps]
        # a member that has not joined yet has no id (None), so it cannot be in a run
        ids = [c.memberid() for c in consumers]
        complete = (
            sorted(flat) == sorted(wanted)
            and all(ids)
            and runs.holds_last_run(dict(zip(ids, held, strict=True)))
        )
        if held != last:
            last, since = held, time.monotonic()
        elif complete and time.monotonic() - since >= settle_s:
            return held
    pytest.fail(f"the group did not settle in {JOIN_TIMEOUT_S}s: {last}")


def _spec(
    consumers: Sequence[Any],
    specs: Sequence[Spec],
    owned: Sequence[list[TopicPartition]] | None,
    runs: AssignorRuns,
) -> GroupSpec:
    members = []
    for i, (c, s) in enumerate(zip(consumers, specs, strict=True)):
        mine = tuple(owned[i]) if owned is not None and i < len(owned) else ()
        members.append(
            Member(
                c.memberid(),
                frozenset(s.topics),
                s.instance,
                owned=mine,
                generation=1 if mine else None,
            )
        )
    topics = {t: TopicMetadata(t, n) for t, n in TOPICS.items()}
    return GroupSpec("g", runs.ordered(members), topics)


def _run(mock: MockCluster, strategy: str, specs: Sequence[Spec], one_by_one: bool) -> Steps:
    """`_formed` until the case's group settles, and a fresh group in one round: on a busy
    machine a member can miss the coordinator's first join window, and the group then forms in
    two rounds, the second from owned partitions, which is not the case a fresh-group test
    checks; and the mock coordinator can leave a rebalance unfinished past `JOIN_TIMEOUT_S`
    (then a new group tries again). What a settled attempt holds is never a reason to retry:
    the test compares it with the plan."""
    unsettled: list[str] = []
    for _ in range(FRESH_TRIES - 1):
        try:
            steps, rounds = _formed(mock, strategy, specs, one_by_one)
        except pytest.fail.Exception as exc:
            unsettled.append(str(exc))
            continue
        if one_by_one or rounds == 1:
            return steps
    try:
        return _formed(mock, strategy, specs, one_by_one)[0]
    except pytest.fail.Exception as exc:
        pytest.fail("; ".join([*unsettled, str(exc)]))


def _formed(
    mock: MockCluster, strategy: str, specs: Sequence[Spec], one_by_one: bool
) -> tuple[Steps, int]:
    """The group's settled assignment after all members joined at once, or after each join
    (then each step's spec holds what the earlier members owned); and 1 when the leader ran its
    assignor once and no member had partitions taken back (more: the group formed in rounds,
    and a later round may have started from what members owned)."""
    group = f"g{next(_groups)}-{strategy}"
    consumers: list[Any] = []
    steps = []
    revoked: list[object] = []
    runs = AssignorRuns()
    try:
        waves = [[s] for s in specs] if one_by_one else [list(specs)]
        owned: list[list[TopicPartition]] | None = None
        for wave in waves:
            consumers.extend(_consumer(mock, group, strategy, s, revoked, runs) for s in wave)
            joined = specs[: len(consumers)]
            wanted = {(t, p) for s in joined for t in s.topics for p in range(TOPICS[t])}
            held = _settle(consumers, wanted, SETTLE_S.get(strategy, SETTLE_EAGER_S), runs)
            spec = _spec(consumers, joined, owned, runs)
            steps.append((spec, {c.memberid(): h for c, h in zip(consumers, held, strict=True)}))
            owned = held
        # read before close(), which revokes everything
        rounds = max(runs.count, 1 + len(revoked))
    finally:
        _close(consumers)
    return steps, rounds


def _close(consumers: Sequence[Any]) -> None:
    """Close every consumer, but wait at most CLOSE_TIMEOUT_S in all: a consumer of a group
    caught mid-rebalance can block in close(), and the test must stay bounded."""
    threads = [threading.Thread(target=c.close, daemon=True) for c in consumers]
    for t in threads:
        t.start()
    deadline = time.monotonic() + CLOSE_TIMEOUT_S
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))


def _outcome(mock: MockCluster, case: Case) -> Steps | BaseException:
    strategy, name, one_by_one = case
    try:
        return _run(mock, strategy, CASES[name], one_by_one)
    except BaseException as exc:  # pytest.fail's Failed too: re-raised by the case's test
        return exc


def run_cases(
    cluster: MockCluster, request: pytest.FixtureRequest
) -> dict[Case, Steps | BaseException]:
    """Every case the session selected from the requesting module, a few at a time on the
    cluster (a test module's `outcomes` fixture)."""
    one_by_one = {"test_fresh_group": False, "test_joins_from_owned_partitions": True}
    cases = sorted(
        {
            (item.callspec.params["strategy"], item.callspec.params["case"], one_by_one[name])
            for item in request.session.items
            if isinstance(item, pytest.Function)
            and item.module is request.module
            and (name := item.originalname) in one_by_one
        }
    )
    with ThreadPoolExecutor(max_workers=CONCURRENT_CASES) as pool:
        done = list(pool.map(lambda case: _outcome(cluster, case), cases))
    return dict(zip(cases, done, strict=True))


def _steps(outcomes: dict[Case, Steps | BaseException], case: Case) -> Steps:
    got = outcomes[case]
    if isinstance(got, BaseException):
        raise got
    return got


def _plan(strategy: str, spec: GroupSpec) -> dict[str, list[TopicPartition]]:
    result = get_assignor(strategy).rebalance(spec).assignment
    return {m: sorted(tps) for m, tps in result.items()}


def _expected(strategy: str, spec: GroupSpec) -> dict[str, list[TopicPartition]]:
    """The librdkafka variant's plan. Without a mix of static and dynamic members the range
    and roundrobin variants plan as Java does; in a fresh group the cooperative-sticky
    variant does (from owned partitions it often does not)."""
    variant = _plan(f"{strategy}@librdkafka", spec)
    if strategy == "cooperative-sticky":
        if not any(m.owned for m in spec.members):
            assert variant == _plan(strategy, spec)
    elif len({m.is_static for m in spec.members}) == 1:
        assert variant == _plan(strategy, spec)
    return variant


EQUAL = ("ta", "tb", "tc")
CASES = {
    "dynamic-equal": [Spec(EQUAL)] * 3,
    "dynamic-unequal": [Spec(("ta",)), Spec(("ta", "tb")), Spec(("ta", "tb", "tc"))],
    "static-equal": [Spec(EQUAL, "i3"), Spec(EQUAL, "i1"), Spec(EQUAL, "i2")],
    "static-unequal": [Spec(("ta", "tc"), "i2"), Spec(("tb",), "i1"), Spec(EQUAL, "i0")],
    "mixed-equal": [Spec(EQUAL, "z"), Spec(EQUAL), Spec(EQUAL, "a"), Spec(EQUAL)],
    "mixed-unequal": [Spec(("ta",), "z"), Spec(("ta", "tb")), Spec(EQUAL, "a")],
}


# --- stories ---------------------------------------------------------
# A story is a sequence of joins (a Spec) and leaves (the index, in join order, of a member
# that closes); after each, the group settles and that step's spec holds what the members
# that stay owned before it.

Story = list[Spec | int]


def _told(mock: MockCluster, story: Story, topics: dict[str, TopicMetadata]) -> Steps:
    """Each step of `story`: the group's spec before it settles, and what it settled on; told
    again by a new group when a step does not settle (as `_run` does)."""
    unsettled: list[str] = []
    for _ in range(FRESH_TRIES):
        try:
            return _tell(mock, story, topics)
        except pytest.fail.Exception as exc:
            unsettled.append(str(exc))
    pytest.fail("; ".join(unsettled))


def _tell(mock: MockCluster, story: Story, topics: dict[str, TopicMetadata]) -> Steps:
    group = f"g{next(_groups)}-story"
    strategy = "cooperative-sticky"
    joined: list[tuple[Any, Spec]] = []
    held: dict[str, list[TopicPartition]] = {}
    steps: Steps = []
    revoked: list[object] = []
    runs = AssignorRuns()
    try:
        for action in story:
            if isinstance(action, int):
                gone = joined.pop(action)
                _close([gone[0]])
            else:
                joined.append((_consumer(mock, group, strategy, action, revoked, runs), action))
            consumers = [c for c, _ in joined]
            wanted = {
                (t, p)
                for _, s in joined
                for t in s.topics
                for p in range(topics[t].partition_count)
            }
            now = _settle(consumers, wanted, SETTLE_S[strategy], runs)
            members = []
            for c, s in joined:
                mine = tuple(held.get(c.memberid(), ()))
                members.append(
                    Member(
                        c.memberid(),
                        frozenset(s.topics),
                        s.instance,
                        s.rack,
                        owned=mine,
                        generation=1 if mine else None,
                    )
                )
            steps.append(
                (
                    GroupSpec("g", runs.ordered(members), topics),
                    dict(zip([c.memberid() for c in consumers], now, strict=True)),
                )
            )
            held = {c.memberid(): h for c, h in zip(consumers, now, strict=True)}
    finally:
        _close([c for c, _ in joined])
    return steps


def _story_differs(steps: Steps) -> list[tuple[GroupSpec, dict[str, list[TopicPartition]]]]:
    return [
        (spec, live) for spec, live in steps if live != _plan("cooperative-sticky@librdkafka", spec)
    ]
