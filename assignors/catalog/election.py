"""Strategy election in the classic group protocol, as the group coordinator does it.

Kafka's `ClassicGroup.selectProtocol()` (formerly `GroupMetadata.selectProtocol`, in the broker's
group coordinator).

Every member sends its `partition.assignment.strategy` list in preference order. The
coordinator takes as candidates the protocols that *every* member supports, lets each member
vote for the first candidate in its own list, and elects the protocol with the most votes.
With no common protocol, JoinGroup fails with `INCONSISTENT_GROUP_PROTOCOL`.

Planner specifics:

* A member without a list (None) uses `default`, Kafka's `[range, cooperative-sticky]`
  (`KAFKA_DEFAULT_STRATEGIES`, the one home of that list).
* Protocol names and Kafka class names are interchangeable: `known` (the caller's resolver,
  e.g. `StrategyCatalog.vote`) maps both to the canonical protocol name. A name `known` does
  not recognise cannot be planned, so it cannot be voted for: it is left out of that
  member's list and reported in `unknown_names` (the caller turns those into `rejected`
  warnings). When the members do share a name but only
  unknown ones, the error is `UNKNOWN_COMMON_STRATEGY` rather than Kafka's
  `INCONSISTENT_GROUP_PROTOCOL`: Kafka would accept that group, we just cannot plan it.
* Ties: Kafka breaks them by hash-map iteration order (arbitrary). We break them by the
  group's overall preference, which does not depend on the order members are listed in: the
  candidate with the smaller sum of positions in the members' candidate lists wins (ranked
  higher by the group as a whole); if that is equal too, the name first in Java string order.
  `candidate_strategies` is listed in that same ranking order, so it starts with the winner.
* An empty group elects nothing and reports no error (Kafka never elects for an empty group;
  an Empty classic group accepts any protocol from its first joiner).

>>> classes = {"org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin"}
>>> def known(name):
...     return name if name in ("range", "roundrobin") else classes.get(name)
>>> e = elect([["range", "roundrobin"], ["roundrobin", "range"], ["roundrobin", "range"]], known)
>>> e.elected, e.candidate_strategies, e.error
('roundrobin', ['roundrobin', 'range'], None)
>>> elect([["range"], ["roundrobin"]], known).error
'INCONSISTENT_GROUP_PROTOCOL'
>>> elect([["org.apache.kafka.clients.consumer.RoundRobinAssignor", "foo"], ["roundrobin"]], known)
Election(elected='roundrobin', candidate_strategies=['roundrobin'], error=None, \
unknown_names=[(0, 'foo')])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from assignors.model import java_key
from assignors.problems import WARNING, Problem, Reason

KAFKA_DEFAULT_STRATEGIES: tuple[str, ...] = ("range", "cooperative-sticky")
"""Kafka's classic default `partition.assignment.strategy` (`ConsumerConfig`, Kafka 3.x/4.x)."""

INCONSISTENT_GROUP_PROTOCOL = Reason.INCONSISTENT_GROUP_PROTOCOL.value
"""No strategy is supported by every member (Kafka error 23)."""

UNKNOWN_COMMON_STRATEGY = Reason.UNKNOWN_COMMON_STRATEGY.value
"""Every member supports some strategy, but none the planner knows."""


@dataclass(frozen=True, slots=True, init=False)
class Election:
    """The outcome of one group's election.

    `elected` is a canonical protocol name or None; `candidate_strategies` are the known
    strategies every member supports, best first; `unknown_names` are (member index, name as
    given) pairs for names that could not be resolved. `basis` says why, for a KIP-848
    group's broker-side choice (`elect_server_assignor`); None for a classic election.
    """

    elected: str | None
    candidate_strategies: list[str] = field(default_factory=list)
    error: str | None = None
    unknown_names: list[tuple[int, str]] = field(default_factory=list)
    basis: str | None = field(default=None, repr=False)

    def __init__(
        self,
        elected: str | None,
        candidate_strategies: list[str] | None = None,
        error: str | None = None,
        unknown_names: list[tuple[int, str]] | None = None,
        basis: str | None = None,
    ) -> None:
        object.__setattr__(self, "elected", elected)
        object.__setattr__(
            self,
            "candidate_strategies",
            [] if candidate_strategies is None else candidate_strategies,
        )
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "unknown_names", [] if unknown_names is None else unknown_names)
        object.__setattr__(self, "basis", basis)


def elect(
    member_strategies: Sequence[Sequence[str] | None],
    known: Callable[[str], str | None],
    default: Sequence[str] = KAFKA_DEFAULT_STRATEGIES,
) -> Election:
    """Elect the group's strategy from each member's preference list (see the module doc).

    `known` resolves a name as given to the protocol it votes for (None: cannot be planned).

    >>> def known(name):
    ...     return name if name in ("range", "roundrobin") else None
    >>> elect([["range", "roundrobin"], ["roundrobin", "foo"]], known).elected  # testSelectProtocol
    'roundrobin'
    >>> elect([["range", "roundrobin"], ["roundrobin", "range"]], known).elected  # tie: name order
    'range'
    >>> elect([], known).elected is None
    True
    """
    if not member_strategies:
        return Election(None)
    unknown: list[tuple[int, str]] = []
    resolved: list[list[str]] = []
    any_raw_common: set[str] | None = None
    for index, names in enumerate(member_strategies):
        prefs: list[str] = []
        raw: set[str] = set()
        for name in default if names is None else names:
            canonical = known(name)
            if canonical is None:
                unknown.append((index, name))
                raw.add(name.strip())
            else:
                raw.add(canonical)
                if canonical not in prefs:
                    prefs.append(canonical)
        resolved.append(prefs)
        any_raw_common = raw if any_raw_common is None else any_raw_common & raw

    common = set(resolved[0]).intersection(*resolved[1:])
    if not common:
        error = UNKNOWN_COMMON_STRATEGY if any_raw_common else INCONSISTENT_GROUP_PROTOCOL
        return Election(None, [], error, unknown)

    votes: dict[str, int] = dict.fromkeys(common, 0)
    rank_sum: dict[str, int] = dict.fromkeys(common, 0)
    for prefs in resolved:
        candidates = [name for name in prefs if name in common]
        votes[candidates[0]] += 1
        for position, name in enumerate(candidates):
            rank_sum[name] += position
    ranking = sorted(common, key=lambda name: (-votes[name], rank_sum[name], java_key(name)))
    return Election(ranking[0], ranking, None, unknown)


# ----------------------------------------------------------- KIP-848: the broker's choice

KAFKA_DEFAULT_SERVER_ASSIGNORS: tuple[str, ...] = ("uniform", "server-range")
"""Kafka's default `group.consumer.assignors` (UniformAssignor, then the broker-side
RangeAssignor), as this package names them; the first is the broker default."""


def elect_server_assignor(
    group_id: str,
    member_names: Sequence[tuple[str, Sequence[str] | None]],
    broker_assignors: Sequence[str],
    resolve: Callable[[str], str | None],
) -> tuple[Election, list[Problem]]:
    """The assignor the group coordinator runs for a KIP-848 (`consumer`) group, and the
    warnings of the choice.

    Kafka's `ConsumerGroup.computePreferredServerAssignor`: every member may name one broker
    assignor (`group.remote.assignor`, here its `assignment_strategies`); the assignor named
    by the most members wins; when no member names one, the broker default runs, the first
    of `group.consumer.assignors` (`broker_assignors`, canonical names).

    * `member_names`: (member id, `assignment_strategies`) per member. A member votes for the
      first name of its list that `resolve` maps to one of `broker_assignors` (`range` and the
      broker-side class name mean `server-range`); a null list names nothing.
    * A name the broker does not run is an UNKNOWN_SERVER_ASSIGNOR warning and does not count
      (the broker refuses such a member's heartbeat with UNSUPPORTED_ASSIGNOR).
    * Ties: Kafka takes the first maximum in hash-map iteration order. Here the tied assignor
      listed first in `broker_assignors` wins, which is also what Kafka's hash order gives
      for its two built-in names (`uniform` before `range`) with the default list.
    * Members naming different assignors: one CONFLICTING_SERVER_ASSIGNORS warning naming
      the others; the group is planned with the winner.

    `candidate_strategies` lists the assignors named, winner first (else the default alone);
    `basis` is the sentence the `elections` table shows.

    >>> def resolve(name):
    ...     return {"uniform": "uniform", "range": "server-range"}.get(name)
    >>> broker = ("uniform", "server-range")
    >>> e, problems = elect_server_assignor(
    ...     "g", [("a", ["range"]), ("b", ["range"]), ("c", ["uniform"])], broker, resolve)
    >>> e.elected, e.candidate_strategies, [p.reason for p in problems]
    ('server-range', ['server-range', 'uniform'], ['CONFLICTING_SERVER_ASSIGNORS'])
    >>> e.basis
    '2 of 3 members name server-range (group.remote.assignor); 1 names uniform'
    >>> print(elect_server_assignor("g", [("a", None)], broker, resolve)[0].basis)
    ... # doctest: +NORMALIZE_WHITESPACE
    no member names a broker assignor: the broker default, uniform
    (first of group.consumer.assignors)
    >>> e, _ = elect_server_assignor("g", [("a", ["range"]), ("b", ["uniform"])], broker, resolve)
    >>> print(e.elected, "|", e.basis)  # doctest: +NORMALIZE_WHITESPACE
    uniform | tie: 1 of 2 members name uniform and 1 server-range;
    uniform is listed first in group.consumer.assignors
    """
    order = {name: i for i, name in enumerate(broker_assignors)}
    votes: dict[str, int] = {}
    unknown: list[tuple[int, str]] = []
    problems: list[Problem] = []
    for index, (member_id, names) in enumerate(member_names):
        voted = False
        for name in names or ():
            found = resolve(name)
            if found is not None and found in order:
                if not voted:
                    votes[found] = votes.get(found, 0) + 1
                    voted = True
                continue
            unknown.append((index, name))
            problems.append(
                Problem(
                    group_id,
                    member_id,
                    None,
                    WARNING,
                    Reason.UNKNOWN_SERVER_ASSIGNOR,
                    f"{name[:200]!r} is not an assignor the broker runs for consumer-protocol"
                    f" groups (group.consumer.assignors: {', '.join(broker_assignors)});"
                    " it does not count",
                )
            )
    default = broker_assignors[0]
    if not votes:
        basis = (
            f"no member names a broker assignor: the broker default, {default}"
            " (first of group.consumer.assignors)"
        )
        return Election(default, [default], None, unknown, basis), problems
    ranking = sorted(votes, key=lambda name: (-votes[name], order[name]))
    winner, n, total = ranking[0], votes[ranking[0]], len(member_names)
    tied = [name for name in ranking[1:] if votes[name] == n]
    if tied:
        basis = (
            f"tie: {n} of {total} members name {winner} and {n} {', '.join(tied)};"
            f" {winner} is listed first in group.consumer.assignors"
        )
    else:
        basis = f"{n} of {total} members name {winner} (group.remote.assignor)"
        others = [f"{votes[name]} {_names(votes[name])} {name}" for name in ranking[1:]]
        if others:
            basis += "; " + ", ".join(others)
    if len(ranking) > 1:
        listed = ", ".join(f"{name} ({votes[name]})" for name in ranking[1:])
        problems.append(
            Problem(
                group_id,
                None,
                None,
                WARNING,
                Reason.CONFLICTING_SERVER_ASSIGNORS,
                f"members name different broker assignors; the broker runs {winner}"
                f" ({n} of {total} members), not {listed}",
            )
        )
    return Election(winner, ranking, None, unknown, basis), problems


def _names(n: int) -> str:
    return "names" if n == 1 else "name"  # "1 names uniform", "2 name uniform"
