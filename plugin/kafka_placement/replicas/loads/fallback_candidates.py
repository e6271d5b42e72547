"""The wide search for one violation the usual partners cannot fix: replicas carrying about the
amount the broker is off its band, scored against every broker at once.

The usual search (:mod:`.moves`) scores a broker's most promising replicas against a few partner
brokers. Near the end of a plan the brokers with room are often not among those few, and the replicas
that fit are neither the largest nor the densest. Here the candidates are the replicas whose load of
the violated resource is nearest the amount needed: for a broker above its band, its own
:data:`NEAREST` such replicas against every staying broker; for one below, the cluster's
:data:`WIDE` such partitions, each from the brokers holding (or, for a leader resource, leading) it.
Bounded: at most ``NEAREST × brokers + WIDE × rf`` candidates, one vectorised scoring.
"""

from __future__ import annotations

import numpy as np

from kafka_placement.replicas.loads.load_goals import LOAD_GOALS
from kafka_placement.replicas.loads.state import PlanState

#: Replicas of a broker above its band scored against every other broker.
NEAREST = 32
#: Partitions of the cluster scored for a broker below its band.
WIDE = 2048


def _nearest(amount: np.ndarray, need: float, count: int) -> np.ndarray:
    """Indices of the ``count`` positive amounts nearest ``need`` (ties: the lower index first)."""
    positive = np.flatnonzero(amount > 0)
    distance = np.abs(amount[positive] - need)
    if len(positive) > count:
        # the cut keeps every amount tied with the last one kept, then a stable sort decides
        cut = np.partition(distance, count - 1)[count - 1]
        keep = distance <= cut
        positive, distance = positive[keep], distance[keep]
    order = np.argsort(distance, kind="stable")[:count]
    result: np.ndarray = positive[order]
    return result


def wide_candidates(
    state: PlanState, b: int, r: int, above: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(partition, source, destination) of the wide search for broker ``b``'s violation of ``r``."""
    bands = state.bands
    load = float(state.loads[b, r])
    staying = np.flatnonzero(~bands.removed)
    staying = staying[staying != b]
    empty = np.zeros(0, dtype=np.int64)
    if len(staying) == 0:
        return empty, empty, empty
    if above:
        need = load - min(float(bands.upper[b, r]), float(bands.limit[b, r]))
        held = state.hosted_array(b)
        amount = state.amount_of(held, b, r)
        picked = held[_nearest(amount, need, NEAREST)]
        partitions = np.repeat(picked, len(staying))
        return partitions, np.full(len(partitions), b, dtype=np.int64), np.tile(staying, len(picked))
    need = float(bands.lower[b, r]) - load
    if not LOAD_GOALS[r].leader_only:
        amount = state.follower_loads[:, r]
        picked = _nearest(amount, need, WIDE)
        rows = state.replicas[picked]
        holders = rows >= 0
        partitions = np.broadcast_to(picked[:, None], rows.shape)[holders].astype(np.int64)
        source = rows[holders].astype(np.int64)
    else:
        amount = state.leader_loads[:, r]
        partitions = _nearest(amount, need, WIDE).astype(np.int64)
        source = state.replicas[partitions, 0].astype(np.int64)
    keep = source != b
    partitions, source = partitions[keep], source[keep]
    return partitions, source, np.full(len(partitions), b, dtype=np.int64)
