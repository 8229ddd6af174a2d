"""Test doubles of the assignor interface (`assignors.protocol.Assignor`)."""

from __future__ import annotations

from typing import ClassVar

from assignors.catalog.registry import resolve
from assignors.model import Assignment, GroupSpec, Rebalance
from assignors.protocol import EAGER_ONLY, RebalanceProtocol


class EagerAssignor:
    """An eager, stateful assignor that balances counts: subclasses implement `assign`."""

    name: ClassVar[str] = "eager"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = EAGER_ONLY
    stateless: ClassVar[bool] = False
    balances_load: ClassVar[bool] = False

    def assign(self, spec: GroupSpec) -> Assignment:
        raise NotImplementedError

    def rebalance(self, spec: GroupSpec) -> Rebalance:
        return Rebalance(self.assign(spec))


class Flaky(EagerAssignor):
    """Plans a 3-member group with range; fails on any other membership."""

    name = "flaky"

    def assign(self, spec: GroupSpec) -> Assignment:
        if len(spec.members) != 3:
            raise RuntimeError("boom")
        return resolve("range")[1]().assign(spec)
