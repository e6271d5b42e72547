"""The load-aware planner's driver: validate, empty the brokers being removed, balance leadership
(free), reduce the placement goals' violations, move and swap replicas (bytes), the placement goals
again, balance leadership again.

Every phase takes a change only if it keeps the hard goals (rack rule, capacity limits), lets no
broker's violation grow and fits the budget, so the worst band violation never grows, a cluster
already within its bands gets an empty plan, and the same input always gives the same plan.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from kafka_placement.errors import InvalidArgumentError, InvalidBrokerError
from kafka_placement.replicas.loads.bound import disk_lower_bound
from kafka_placement.replicas.loads.drain import drain_brokers
from kafka_placement.replicas.loads.goals import Goals, make_bands
from kafka_placement.replicas.loads.leadership import balance_leadership
from kafka_placement.replicas.loads.model import BrokerSpec, LoadModel, broker_loads, with_brokers
from kafka_placement.replicas.loads.moves import balance_replicas
from kafka_placement.replicas.loads.placement_phase import balance_placement
from kafka_placement.replicas.loads.result import RebalancePlan
from kafka_placement.replicas.loads.state import PlanState


def plan_rebalance(
    model: LoadModel,
    goals: Goals | None = None,
    *,
    max_bytes_moved: float | None = None,
    remove_brokers: Iterable[int] = (),
    add_brokers: Sequence[BrokerSpec] = (),
) -> RebalancePlan:
    """Plan the fewest bytes copied that bring the brokers into their bands.

    ``remove_brokers``: broker ids to empty (their band is zero); ``add_brokers``: new empty brokers
    to fill; ``max_bytes_moved``: the most bytes the plan may copy (the best plan within it, and
    what stays unmet, is returned)."""
    goals = goals or Goals()
    if max_bytes_moved is not None and (
        isinstance(max_bytes_moved, bool)
        or not isinstance(max_bytes_moved, int | float)
        or not math.isfinite(max_bytes_moved)
        or max_bytes_moved < 0
    ):
        raise InvalidArgumentError(
            f"max_bytes_moved must be a number >= 0 (bytes), got {max_bytes_moved!r:.40}"
        )
    if add_brokers:
        model = with_brokers(model, list(add_brokers))
    index = model.broker_index()
    removed = np.zeros(model.num_brokers, dtype=bool)
    for ident in remove_brokers:
        if ident not in index:
            raise InvalidBrokerError(
                f"cannot remove broker {ident!r:.40}: not among the brokers {sorted(index)[:20]}"
            )
        removed[index[ident]] = True
    if removed.all():
        raise InvalidBrokerError("every broker would be removed; at least one must stay")
    widest = int(model.rf.max()) if model.num_partitions else 0
    if widest > int((~removed).sum()):
        raise InvalidArgumentError(
            f"replication factor {widest} is larger than the {int((~removed).sum())} brokers that stay"
        )
    before = broker_loads(model)
    bands = make_bands(before, model.capacity, removed, goals)
    budget = math.inf if max_bytes_moved is None else float(max_bytes_moved)
    placement = [goal.bind(model, removed) for goal in goals.placement_goals()]
    state = PlanState(model, bands, before, budget, placement)
    problems = drain_brokers(state, np.flatnonzero(removed).tolist())
    balance_leadership(state)
    for goal in placement:
        balance_placement(state, goal)
    balance_replicas(state)
    for goal in placement:
        balance_placement(state, goal)
    balance_leadership(state)
    return RebalancePlan(
        model=model,
        goals=goals,
        bands=bands,
        before=before,
        after=broker_loads(model, state.replicas),
        replicas=state.replicas,
        moves=tuple(state.log),
        lower_bound=disk_lower_bound(before, bands, "disk" in goals.soft),
        problems=tuple(problems),
        budget_hit=state.budget_hit,
        max_bytes_moved=max_bytes_moved,
    )
