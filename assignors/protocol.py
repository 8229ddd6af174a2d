"""The assignor interface: what every strategy, built in or plugin, declares and implements.

Kafka's `ConsumerPartitionAssignor` declares `supportedProtocols()` (EAGER, COOPERATIVE) next
to `name()` and `assign()`; the consumer runs the highest protocol every configured assignor
supports. Here the same declaration drives the planner and the what-if simulation: an
assignor that runs COOPERATIVE revokes only what moves, and reaches its target in rounds
(`rebalance`); an EAGER one revokes everything at each rebalance and assigns in one round.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

from assignors.model import Assignment, GroupSpec, Rebalance


class RebalanceProtocol(StrEnum):
    """Kafka's `ConsumerPartitionAssignor.RebalanceProtocol`, in Kafka's order."""

    EAGER = "EAGER"
    COOPERATIVE = "COOPERATIVE"


EAGER_ONLY: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)
COOPERATIVE_ONLY: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.COOPERATIVE,)
# Kafka's CooperativeStickyAssignor: either, and cooperative wherever every member allows it.
EAGER_AND_COOPERATIVE: tuple[RebalanceProtocol, ...] = (
    RebalanceProtocol.EAGER,
    RebalanceProtocol.COOPERATIVE,
)


class Assignor(Protocol):
    """What every strategy implements: a pure function of the group, and how it rebalances.

    - `name`: the protocol name members vote for (`range`).
    - `supported_protocols`: as Kafka's `supportedProtocols()`; the last is the one it runs.
    - `stateless`: the assignment depends only on subscriptions and topics, never on what
      members own (range, roundrobin): the simulator may reuse a plan for an equal group.
    - `balances_load`: the class takes per-partition loads as its one constructor argument
      and balances them (`balanced` with `balance_by = "weight" | "lag"`).
    - `assign`: one JoinGroup round.
    - `rebalance`: the whole rebalance, every round until the assignment settles.
    """

    @property
    def name(self) -> str: ...

    @property
    def supported_protocols(self) -> tuple[RebalanceProtocol, ...]: ...

    @property
    def stateless(self) -> bool: ...

    @property
    def balances_load(self) -> bool: ...

    def assign(self, spec: GroupSpec) -> Assignment: ...

    def rebalance(self, spec: GroupSpec) -> Rebalance: ...


def is_cooperative(assignor: Assignor) -> bool:
    """True when the assignor runs Kafka's cooperative protocol (its highest supported one)."""
    return assignor.supported_protocols[-1] is RebalanceProtocol.COOPERATIVE
