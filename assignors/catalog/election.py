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
from assignors.problems import Reason

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
    given) pairs for names that could not be resolved.
    """

    elected: str | None
    candidate_strategies: list[str] = field(default_factory=list)
    error: str | None = None
    unknown_names: list[tuple[int, str]] = field(default_factory=list)

    def __init__(
        self,
        elected: str | None,
        candidate_strategies: list[str] | None = None,
        error: str | None = None,
        unknown_names: list[tuple[int, str]] | None = None,
    ) -> None:
        object.__setattr__(self, "elected", elected)
        object.__setattr__(
            self,
            "candidate_strategies",
            [] if candidate_strategies is None else candidate_strategies,
        )
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "unknown_names", [] if unknown_names is None else unknown_names)


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
