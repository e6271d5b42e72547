"""Replica moves: a replica goes from one broker to another (its bytes are copied).

For the worst violation, every replica of the broker (or of the brokers that can give to it) is
scored against a few partner brokers at once: the reduction of the total violation per byte copied.
A move is taken only if it keeps the rack rule, crosses no capacity limit, lets no violation of
either broker grow and fits the remaining budget; moving a copy this plan made costs nothing more,
moving a replica back where it was gives its bytes back. When no single move helps, a swap
(:mod:`.swaps`) is tried.
"""

from __future__ import annotations

import numpy as np

from kafka_placement.replicas.loads.fallback_candidates import wide_candidates
from kafka_placement.replicas.loads.model import RESOURCES
from kafka_placement.replicas.loads.state import EPSILON, PlanState
from kafka_placement.replicas.loads.swaps import try_swap
from kafka_placement.replicas.loads.worklist import BATCH, Worklist

#: Partner brokers scored per pick (the ones with the most room, or the most to give).
PARTNERS = 8
#: Replicas of a giving broker scored per pick.
SHORTLIST = 1024


def partners(state: PlanState, b: int, r: int, above: bool, count: int = PARTNERS) -> list[int]:
    """Brokers to trade with: half with the most room for ``r`` (or the most of it to give), half
    whose loads lean the other way from ``b``'s over all resources (what ``b`` has too much of they
    lack, and the reverse: a move between them fixes several violations at once)."""
    bands = state.bands
    staying = ~bands.removed
    staying[b] = False
    if above:
        room = np.minimum(bands.upper[:, r], bands.limit[:, r]) - state.loads[:, r]
    else:
        room = state.loads[:, r] - bands.lower[:, r]
    candidates = np.flatnonzero(staying)
    if len(candidates) == 0:
        return []
    offset = (state.loads[candidates] - bands.mean) / bands.scale * bands.weight
    mine = (state.loads[b] - bands.mean) / bands.scale * bands.weight
    opposite = -(offset @ mine)
    by_room = candidates[np.lexsort((candidates, -room[candidates]))][: (count + 1) // 2]
    by_opposite = candidates[np.lexsort((candidates, -opposite))]
    chosen = dict.fromkeys(by_room.tolist())
    for d in by_opposite.tolist():
        if len(chosen) >= count:
            break
        chosen[d] = None
    return list(chosen)


def score_moves(
    state: PlanState,
    partitions: np.ndarray,
    source: np.ndarray | int,
    destination: np.ndarray | int,
    change: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gain, cost, acceptable) of moving each partition's replica from source to destination
    (arrays, or one broker each: then the broker's rows broadcast instead of being gathered);
    ``change``: the loads the replicas carry, if already known (one giver, several takers)."""
    if change is None:
        change = state.deltas(partitions, state.replicas[partitions, 0] == source)
    gain, ok = state.evaluate(source, destination, change)
    cost = state.copy_cost(partitions, source, destination)
    ok &= state.placement_ok(partitions, source, destination)
    return gain, cost, ok


def _promising(state: PlanState, giver: int, r: int) -> np.ndarray:
    """The giver's replicas worth scoring for resource ``r``: the :data:`SHORTLIST` that carry the
    most of ``r`` per byte copied (all of them on a small broker)."""
    held = state.hosted_array(giver)
    if len(held) <= SHORTLIST:
        return held
    change = state.amount_of(held, giver, r)
    per_byte = change / np.maximum(state.model.size[held], 1.0)
    # half by resource per byte (cheap fixes), half by amount (big fixes: disk, or big leaders)
    by_rate = held[_largest(per_byte, SHORTLIST // 2)]
    by_amount = held[_largest(change, SHORTLIST // 2)]
    picked: np.ndarray = np.unique(np.concatenate([by_rate, by_amount]))
    return picked


def _largest(values: np.ndarray, count: int) -> np.ndarray:
    """Indices of the ``count`` largest values, ties to the lower index: what
    ``np.lexsort((index, -values))[:count]`` gives, without sorting everything."""
    if len(values) <= count:
        return np.lexsort((np.arange(len(values)), -values))
    cut = np.partition(values, len(values) - count)[len(values) - count]
    candidates = np.flatnonzero(values >= cut)
    order = np.lexsort((candidates, -values[candidates]))[:count]
    result: np.ndarray = candidates[order]
    return result


def balance_replicas(state: PlanState) -> None:
    """Move replicas (and swap them) until no violation can be reduced that way."""
    work = Worklist(state, range(len(RESOURCES)))
    size = state.model.size
    floor = max(1.0, float(size.mean()) * 1e-6) if len(size) else 1.0
    rounds = 0
    limit = 8 * state.model.num_partitions + 1000
    while rounds < limit:
        rounds += 1
        pick = work.worst()
        if pick is None:
            return
        b, r = pick
        above = work.above(b, r)
        parts, sources, destinations, scores = [], [], [], []
        shortlists: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for other in partners(state, b, r, above):
            giver = b if above else other
            if giver not in shortlists:
                promising = _promising(state, giver, r)
                shortlists[giver] = (
                    promising,
                    state.deltas(promising, state.replicas[promising, 0] == giver),
                )
            held, change = shortlists[giver]
            taker = other if above else b
            parts.append(held)
            sources.append(np.full(len(held), giver, dtype=np.int64))
            destinations.append(np.full(len(held), taker, dtype=np.int64))
            scores.append(score_moves(state, held, giver, taker, change))
        if not parts:
            work.mark_stuck(b, r)
            continue
        partitions = np.concatenate(parts)
        source = np.concatenate(sources)
        destination = np.concatenate(destinations)
        gain, cost, ok = (np.concatenate(column) for column in zip(*scores, strict=True))
        brokers = _take(state, partitions, source, destination, (gain, cost, ok), b, r, above, floor)
        if not brokers:
            wide = wide_candidates(state, b, r, above)
            brokers = _take(state, *wide, score_moves(state, *wide), b, r, above, floor)
        if brokers:
            work.touched(sorted(brokers))
        elif try_swap(state, b, r, above, partners(state, b, r, above, 6), floor):
            work.touched([b])
        else:
            work.mark_stuck(b, r)


def _take(
    state: PlanState,
    partitions: np.ndarray,
    source: np.ndarray,
    destination: np.ndarray,
    scored: tuple[np.ndarray, np.ndarray, np.ndarray],
    b: int,
    r: int,
    above: bool,
    floor: float,
) -> set[int]:
    """Take the scored moves, best violation removed per byte first (largest replica, then ids, on
    ties), each rechecked exactly against the state as it is by then, until ``b``'s violation of
    ``r`` is gone or :data:`BATCH` are taken; the brokers changed."""
    gain, cost, ok = scored
    size = state.model.size
    useful = ok & (gain < -EPSILON)
    affordable = useful & state.affordable(cost)
    if useful.any() and not affordable.all(where=useful):
        state.budget_hit = True
    chosen = np.flatnonzero(affordable)
    efficiency = -gain[chosen] / np.maximum(cost[chosen], floor)
    order = chosen[
        np.lexsort((destination[chosen], partitions[chosen], -size[partitions[chosen]], -efficiency))
    ]
    accepted: set[int] = set()
    brokers: set[int] = set()
    for i in order.tolist():
        p, s, d = int(partitions[i]), int(source[i]), int(destination[i])
        if p in accepted:
            continue
        if not state.move_allowed(p, s, d):
            continue
        if not state.affordable(state.cost_of(p, s, d)):
            continue
        g = state.evaluate_one(s, d, state.change_of(p, int(state.replicas[p, 0]) == s))
        if g is None or g >= -EPSILON:
            continue
        state.move_replica(p, s, d, "replica", r, b, above)
        accepted.add(p)
        brokers.update((s, d))
        if state.terms[b, r] <= EPSILON or len(accepted) >= BATCH:
            break
    return brokers
