"""Emptying brokers before their removal: every replica leaves, largest first, leadership handed to
a follower that stays before the replica moves (so no leader is copied if a follower can lead).

Each replica goes to the staying broker where it adds the least violation (rack rule, capacity
limits and budget permitting); a replica with no such broker stays, and the plan says so.
"""

from __future__ import annotations

import numpy as np

from kafka_placement.replicas.loads.model import DISK, LEADERS
from kafka_placement.replicas.loads.state import PlanState


def drain_brokers(state: PlanState, removed: list[int]) -> list[str]:
    """Move every replica off the ``removed`` broker indices; the problems left, one line each."""
    problems: list[str] = []
    model = state.model
    staying = np.flatnonzero(~state.bands.removed)
    for a in removed:
        held = sorted(state.hosted[a], key=lambda p: (-model.size[p], p))
        stuck = 0
        for p in held:
            if state.replicas[p, 0] == a:
                followers = [
                    int(f) for f in state.replicas[p, 1 : int(model.rf[p])] if not state.bands.removed[f]
                ]
                if followers:
                    gains = [
                        float(
                            state.evaluate(np.array([a]), np.array([f]), state.leadership(np.array([p])))[0][
                                0
                            ]
                        )
                        for f in followers
                    ]
                    best = min(range(len(followers)), key=lambda i: (gains[i], followers[i]))
                    state.transfer_leadership(p, followers[best], LEADERS, a, True)
            n = len(staying)
            parts = np.full(n, p, dtype=np.int64)
            source = np.full(n, a, dtype=np.int64)
            leading = state.replicas[p, 0] == a
            change = state.deltas(parts, np.full(n, leading))
            gain, _ = state.evaluate(source, staying, change)
            within = (
                (state.loads[staying] + change <= state.bands.limit[staying] * (1 + 1e-12)) | (change <= 0)
            ).all(axis=1)
            ok = within & state.placement_ok(parts, source, staying)
            cost = state.copy_cost(parts, source, staying)
            affordable = ok & state.affordable(cost)
            if ok.any() and not affordable.any():
                state.budget_hit = True
            if not affordable.any():
                stuck += 1
                continue
            chosen = np.flatnonzero(affordable)
            best_i = chosen[np.lexsort((staying[chosen], gain[chosen]))[0]]
            state.move_replica(p, a, int(staying[best_i]), "drain", DISK, a, True)
        if stuck:
            why = "the budget" if state.budget_hit else "the rack rule or capacity limits"
            problems.append(
                f"broker {int(model.broker_ids[a])} keeps {stuck} replicas ({why} left no destination)"
            )
    return problems
