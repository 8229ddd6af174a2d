"""One group's what-if rebalances and recommendation, from its plans (docs/whatif.md).

The planner (`assignors.planner.plan_group`) gives each planned strategy's assignment and
`balance_metrics` row; this module runs the configured scenarios from each of those plans
(`assignors.whatif.simulation.group_scenario_costs`) and ranks the strategies
(`assignors.whatif.recommend.recommend`). The Spark layer calls `group_whatif` once per planned
group, next to `plan_group`.

* The `elected` pseudo-strategy repeats one of the planned strategies, so it gets no rows of
  its own. When the elected strategy was planned only as `elected` (it is not in
  `strategies`), its plan stands for that strategy: the `rebalance_costs` rows and the
  candidate of `recommendations` carry the real name (what `current_strategy` says).
* Groups with more members than `max_members` (Kafka's own limit, `group.max.size`, defaults
  to unlimited; the simulation replays a rebalance per member and scenario) or more
  partitions than `max_partitions` get one SCENARIO_SKIPPED warning and no cost rows; their
  recommendation compares balance only.
* `subscription_change` when every member subscribes alike and `member_leave` in a group of
  one member are skipped without a warning (nothing to simulate); a scenario the group cannot
  run otherwise (no existing subscribed topic for `partition_growth`) gets the core's
  SCENARIO_NOT_APPLICABLE warning.
* `balance_gap_after` uses the exact bound of `assignors.analysis.bounds.best_balance`.
* Load decides balance (`load_aware`) when the metrics rows carry a lag or weight imbalance
  (an `offsets` table or `topic_partitions.weight` was given).
* A KIP-848 (`consumer`) group also competes under the broker-side assignors the broker runs
  (`group_consumer_assignors`) that were planned, and they win a tie on every figure (no
  change of protocol). A client-side recommendation says that it means going back to the
  classic protocol; a different broker-side one names the `group.remote.assignor` to set.

Worked example: one topic of 6 partitions, dynamic members c0, c1, c2, planned
under range and cooperative-sticky, range elected. A member joining moves 1 partition under
both, but range pauses all 6 while cooperative-sticky pauses only the 1 it revokes. Over a
rolling restart (6 rebalances) range pauses 6 x 6 = 36; cooperative-sticky pauses the 2
partitions of each leaving member and the 2 revoked for its return, 12:

>>> from assignors.catalog.catalog import StrategyCatalog
>>> from assignors.model import GroupSpec, Member, TopicMetadata
>>> from assignors.planner import plan_group
>>> spec = GroupSpec("g", tuple(Member(c, frozenset({"t"}), assignment_strategies=("range",))
...                             for c in ("c0", "c1", "c2")), {"t": TopicMetadata("t", 6)})
>>> catalog = StrategyCatalog.build(["range", "cooperative-sticky"])
>>> plan = plan_group(spec, catalog, has_current_assignment=False)
>>> out = group_whatif(spec, plan, catalog, WhatIfSettings(scenarios=("member_join",
...                                                                   "rolling_restart")))
>>> [(r["strategy"], r["scenario"], r["moved_partition_count"], r["paused_partition_count"])
...  for r in out.costs]  # doctest: +NORMALIZE_WHITESPACE
[('range', 'member_join', 1, 6), ('range', 'rolling_restart', 16, 36),
 ('cooperative-sticky', 'member_join', 1, 1), ('cooperative-sticky', 'rolling_restart', 12, 12)]
>>> out.recommendation["current_strategy"], out.recommendation["recommended_strategy"]
('range', 'cooperative-sticky')
>>> out.recommendation["reason"]
'cooperative-sticky: a rolling restart pauses 12 partitions instead of 36'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from assignors.analysis.bounds import best_balance
from assignors.analysis.metrics import ELECTED_STRATEGY
from assignors.catalog.catalog import ELECTED, StrategyCatalog
from assignors.catalog.registry import SERVER_SIDE, Assignor
from assignors.model import CONSUMER, Assignment, GroupSpec, TopicPartition
from assignors.pickled import by_fields
from assignors.planner import GroupPlan
from assignors.problems import WARNING, Problem, Reason
from assignors.strategies.server_range import ServerRangeAssignor
from assignors.whatif.lookalike import process_memo
from assignors.whatif.recommend import DEFAULT_RECOMMEND_FROM, RecommendationRow, recommend
from assignors.whatif.simulation import (
    DEFAULT_MAX_MEMBERS,
    SCENARIOS,
    CostRow,
    check_scenarios,
    group_scenario_costs,
)

__all__ = [
    "DEFAULT_MAX_PARTITIONS",
    "GroupWhatIf",
    "WhatIfSettings",
    "group_whatif",
    "strategy_plans",
]

DEFAULT_MAX_PARTITIONS: Final = 10_000
"""Default `scenario_max_partitions`: a rolling restart of a large group replays two
rebalances per member; above this many partitions the group gets SCENARIO_SKIPPED."""

LOAD_COLUMNS: Final = ("lag_imbalance", "weight_imbalance")
"""The metrics columns whose presence makes load decide balance (`recommend.figures`)."""


@dataclass(frozen=True, slots=True)
class WhatIfSettings:
    """The `[planner]` settings of the what-if rebalances, checked (protocol names)."""

    scenarios: tuple[str, ...] = SCENARIOS
    max_members: int = DEFAULT_MAX_MEMBERS
    max_partitions: int = DEFAULT_MAX_PARTITIONS
    recommend_from: tuple[str, ...] = DEFAULT_RECOMMEND_FROM

    def __post_init__(self) -> None:
        object.__setattr__(self, "scenarios", check_scenarios(self.scenarios))

    def __reduce__(self) -> tuple[Callable[..., object], tuple[object, ...]]:
        return by_fields(self)  # it travels to the executors in the plan context


@dataclass(slots=True, init=False)
class GroupWhatIf:
    """One group's `rebalance_costs` rows, its `recommendations` row and the warnings."""

    costs: list[CostRow] = field(default_factory=list)
    recommendation: RecommendationRow = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def __init__(
        self,
        costs: list[CostRow] | None = None,
        recommendation: RecommendationRow | None = None,
        problems: list[Problem] | None = None,
    ) -> None:
        self.costs = [] if costs is None else costs
        self.recommendation = {} if recommendation is None else recommendation
        self.problems = [] if problems is None else problems


Plans = list[tuple[str, Callable[[], Assignor], Assignment]]


def strategy_plans(
    plan: GroupPlan, catalog: StrategyCatalog
) -> tuple[Plans, dict[str, Mapping[str, object]]]:
    """(strategy, assignor factory, planned assignment) per real strategy, and its metrics.

    The factory is the one the planner used (`StrategyPlan.factory`: `balanced` balancing
    by weight or lag keeps the group's loads; partitions a scenario adds have none, load 0),
    else the catalog's.

    The `elected` plan only stands for its strategy when that strategy has no plan of its own
    (a failed strategy is not run again through `elected`: the planner gives it no plan).
    """
    plans: Plans = []
    metrics: dict[str, Mapping[str, object]] = {}
    factories = {s.protocol: s.factory for s in catalog.strategies}
    for sp in plan.plans:
        if sp.strategy != ELECTED:
            plans.append((sp.strategy, sp.factory or factories[sp.strategy], sp.assignment))
            metrics[sp.strategy] = sp.metrics
    for sp in plan.plans:
        chosen = sp.metrics.get(ELECTED_STRATEGY)
        if sp.strategy == ELECTED and isinstance(chosen, str) and chosen not in metrics:
            factory = sp.factory or catalog.elected_strategy(chosen).factory
            plans.append((chosen, factory, sp.assignment))
            metrics[chosen] = {**sp.metrics, ELECTED_STRATEGY: None}
    return plans, metrics


def _best_max(spec: GroupSpec) -> int:
    return best_balance(spec).best_max


def _too_many_partitions(spec: GroupSpec, limit: int) -> Problem | None:
    partitions = sum(spec.partition_count(t) for t in spec.subscribed_topics())
    if partitions <= limit:
        return None
    detail = (
        f"what-if rebalances skipped: {partitions} partitions is more than"
        f" scenario_max_partitions ({limit})"
    )
    return Problem(spec.group_id, None, None, WARNING, Reason.SCENARIO_SKIPPED, detail)


def _scenarios_for(spec: GroupSpec, scenarios: tuple[str, ...]) -> tuple[str, ...]:
    """The scenarios the group can run or must be warned about.

    Two triggers have nothing to simulate in ordinary groups and are skipped silently, not
    with a warning on most groups of an estate (the `rejected` table is for problems):
    `subscription_change` when every member subscribes alike (the widened
    subscription is the one it has), and `member_leave` in a group of one member (the group
    is then empty: nobody is left to rebalance).
    """
    drop = set()
    if len({m.topics for m in spec.members}) <= 1:
        drop.add("subscription_change")
    if len(spec.members) == 1:
        drop.add("member_leave")
    return tuple(s for s in scenarios if s not in drop) if drop else scenarios


def _load_aware(metrics: Mapping[str, Mapping[str, object]]) -> bool:
    return any(m.get(c) is not None for m in metrics.values() for c in LOAD_COLUMNS)


def group_whatif(
    spec: GroupSpec,
    plan: GroupPlan,
    catalog: StrategyCatalog,
    settings: WhatIfSettings,
    *,
    lags: Mapping[TopicPartition, int | None] | None = None,
    load_aware: bool | None = None,
    shortcuts: bool = True,
) -> GroupWhatIf:
    """The what-if rows of one planned group (see the module docstring).

    `plan` is `plan_group(spec, catalog, ...)`; `lags` (partition -> lag, None or absent when
    unknown; None without offsets) fills `lag_moved`; `load_aware` defaults to whether the
    metrics rows carry a lag or weight imbalance. `shortcuts=False` replays every simulated
    rebalance in full (the same rows, slower; `assignors.whatif.simulation.run_scenarios`).
    """
    plans, metrics = strategy_plans(plan, catalog)
    out = GroupWhatIf()
    skipped = _too_many_partitions(spec, settings.max_partitions)
    if skipped is not None and len(spec.members) <= settings.max_members:
        out.problems.append(skipped)
    elif (scenarios := _scenarios_for(spec, settings.scenarios)) and plans:
        known = None if lags is None else {tp: v for tp, v in lags.items() if v is not None}
        out.costs, out.problems = group_scenario_costs(
            spec,
            plans,
            scenarios=scenarios,
            lags=known,
            max_members=settings.max_members,
            best_max=_best_max,
            shortcuts=shortcuts,
            # Look-alike groups share their figures (reference runs, without shortcuts, don't).
            memo=process_memo() if shortcuts else None,
        )
    by_strategy: dict[str, list[CostRow]] = {}
    for row in out.costs:
        by_strategy.setdefault(str(row["strategy"]), []).append(row)
    elected = plan.election.elected if plan.election is not None else None
    candidates = settings.recommend_from
    kip848 = spec.group_protocol == CONSUMER
    if kip848:
        candidates = (*candidates, *(s for s in catalog.server_assignors if s not in candidates))
    out.recommendation = recommend(
        spec.group_id,
        elected,
        candidates,
        metrics,
        by_strategy,
        load_aware=_load_aware(metrics) if load_aware is None else load_aware,
        prefer=catalog.server_assignors if kip848 else (),
    )
    if kip848:
        _say_protocol(out.recommendation, elected)
    return out


def _say_protocol(row: RecommendationRow, elected: str | None) -> None:
    """What following a KIP-848 group's recommendation takes, appended to its reason."""
    best = row.get("recommended_strategy")
    if not isinstance(best, str) or best == elected:
        return
    if best in SERVER_SIDE:
        name = ServerRangeAssignor.kafka_name if best == ServerRangeAssignor.name else best
        row["reason"] = f"{row['reason']} (broker-side: set group.remote.assignor={name})"
    else:
        row["reason"] = (
            f"{row['reason']} (client-side: the group would go back to the classic protocol,"
            " group.protocol=classic)"
        )
