"""Replica swaps: partition p's replica goes from broker a to broker d and partition q's from d to a.

A swap moves a resource between two brokers while keeping another nearly where it was (a replica
with much traffic for one of similar size with little), which no single move can do when both
brokers sit at the edge of a band. Only the replicas that carry the most (from the giver) and the
least (from the taker) of the violated resource are paired, so a swap search stays small.
"""

from __future__ import annotations

import numpy as np

from kafka_placement.replicas.loads.state import EPSILON, PlanState

#: Replicas per side paired in a swap search.
SIDE = 24


def _side(state: PlanState, holder: int, other: int) -> tuple[np.ndarray, np.ndarray]:
    """The :data:`SIDE` replicas of ``holder`` (not on ``other``) whose move to ``other`` alone
    would reduce the violation most (acceptable or not): the halves a good swap is made of."""
    held = state.hosted_array(holder)
    rows = state.replicas[held]
    apart = ~(rows == other).any(axis=1)
    held = held[apart]
    if len(held) == 0:
        return held, np.zeros((0, state.loads.shape[1]))
    change = state.deltas(held, rows[apart, 0] == holder)
    gain, _ = state.evaluate(holder, other, change)
    order = np.lexsort((held, gain))[:SIDE]
    return held[order], change[order]


def try_swap(state: PlanState, b: int, r: int, above: bool, partners: list[int], floor: float) -> bool:
    """Take the best acceptable swap between ``b`` and one of ``partners`` that reduces the total
    violation; ``False`` if there is none."""
    best: tuple[float, int, int, int, int] | None = None
    for other in partners:
        giver, taker = (b, other) if above else (other, b)
        p_side, p_change = _side(state, giver, taker)
        q_side, q_change = _side(state, taker, giver)
        if len(p_side) == 0 or len(q_side) == 0:
            continue
        pairs_p = np.repeat(np.arange(len(p_side)), len(q_side))
        pairs_q = np.tile(np.arange(len(q_side)), len(p_side))
        change = p_change[pairs_p] - q_change[pairs_q]
        gain, ok = state.evaluate(giver, taker, change)
        if state.placement:  # a placement goal judges the two moves together
            allowed = state.swap_ok(p_side[pairs_p], q_side[pairs_q], giver, taker)
        else:
            allowed = (
                state.placement_ok(p_side, giver, taker)[pairs_p]
                & state.placement_ok(q_side, taker, giver)[pairs_q]
            )
        cost = state.copy_cost(p_side, giver, taker)[pairs_p] + state.copy_cost(q_side, taker, giver)[pairs_q]
        ok &= allowed & (gain < -EPSILON)
        affordable = ok & state.affordable(cost)
        if ok.any() and not affordable.any():
            state.budget_hit = True
        if not affordable.any():
            continue
        efficiency = np.where(affordable, -gain / np.maximum(cost, floor), -np.inf)
        i = int(np.argmax(efficiency))
        candidate = (float(efficiency[i]), giver, taker, int(p_side[pairs_p[i]]), int(q_side[pairs_q[i]]))
        if best is None or candidate[0] > best[0]:
            best = candidate
    if best is None:
        return False
    _, giver, taker, p, q = best
    state.move_replica(p, giver, taker, "swap", r, b, above)
    state.move_replica(q, taker, giver, "swap", r, b, above)
    return True
