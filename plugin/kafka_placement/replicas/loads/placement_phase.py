"""The phase that reduces a placement goal's violations (:mod:`.placement_goal`): for its worst
violation, the moves the goal proposes, scored at once, taken best first.

A move is taken only if it reduces the goal's violation and is acceptable to everything else: the
rack rule and every placement goal (:meth:`.PlanState.placement_ok`), the capacity limits, the load
bands (no broker's band violation grows beyond :meth:`.PlanState.allowance`: a cluster whose bands
are all held keeps them all held) and the budget. Among those: the largest reduction, then the fewest
bytes copied, then the best for the load bands (ids on ties).
"""

from __future__ import annotations

import numpy as np

from kafka_placement.replicas.loads.placement_goal import BoundPlacementGoal
from kafka_placement.replicas.loads.state import EPSILON, PlanState
from kafka_placement.replicas.loads.worklist import BATCH


def balance_placement(state: PlanState, goal: BoundPlacementGoal) -> None:
    """Move replicas until no violation of ``goal`` can be reduced that way."""
    stuck: set[tuple[int, int]] = set()
    limit = 8 * state.model.num_partitions + 1000
    for _ in range(limit):
        pick = goal.worst(stuck)
        if pick is None:
            return
        key, broker, above, amount, reason = pick
        partitions, source, destination = goal.candidates(state, key, broker, above)
        touched = _take(state, goal, (partitions, source, destination), reason, broker, above, amount)
        if touched:  # what was stuck on these brokers may move now
            stuck = {(k, b) for k, b in stuck if b not in touched}
        else:
            stuck.add((key, broker))


def _take(
    state: PlanState,
    goal: BoundPlacementGoal,
    candidates: tuple[np.ndarray, np.ndarray, np.ndarray],
    reason: str,
    broker: int,
    above: bool,
    amount: int,
) -> set[int]:
    """Take the acceptable moves that reduce the goal's violation, each rechecked against the state
    as it is by then, until ``amount`` (the violation picked is gone) or :data:`BATCH` are taken; the
    brokers changed."""
    partitions, source, destination = candidates
    if len(partitions) == 0:
        return set()
    reduction = goal.gain(partitions, source, destination)
    change = state.deltas(partitions, state.replicas[partitions, 0] == source)
    gain, ok = state.evaluate(source, destination, change)
    cost = state.copy_cost(partitions, source, destination)
    useful = ok & (gain <= EPSILON) & (reduction < 0) & state.placement_ok(partitions, source, destination)
    affordable = useful & state.affordable(cost)
    if useful.any() and not affordable.all(where=useful):
        state.budget_hit = True
    chosen = np.flatnonzero(affordable)
    order = chosen[
        np.lexsort((destination[chosen], partitions[chosen], gain[chosen], cost[chosen], reduction[chosen]))
    ]
    taken: set[int] = set()
    count = 0
    for i in order.tolist():
        p, s, d = int(partitions[i]), int(source[i]), int(destination[i])
        if goal.gain_one(p, s, d) >= 0:
            continue
        if not state.move_allowed(p, s, d) or not state.affordable(state.cost_of(p, s, d)):
            continue
        g = state.evaluate_one(s, d, state.change_of(p, int(state.replicas[p, 0]) == s))
        if g is None or g > EPSILON:
            continue
        state.move_replica(p, s, d, "replica", reason, broker, above)
        taken.update((s, d))
        count += 1
        if count >= min(amount, BATCH):
            break
    return taken
