"""Leadership changes: reorder a partition's replicas so another replica leads (no data moves).

Only the leader carries the leader-only load goals (bytes out, leader bytes in, the leader count),
so these are balanced first by moving leadership, at no cost in bytes. A change is taken only if no
violation of either broker grows; among those, the one that reduces the total violation most.

Not the same thing as :mod:`kafka_placement.replicas.leaders` (the count planner's exact matching of
leader counts): here counts are one band among the leader-only loads, all scored together.
"""

from __future__ import annotations

import numpy as np

from kafka_placement.replicas.loads.load_goals import LEADER_COLUMNS
from kafka_placement.replicas.loads.state import EPSILON, PlanState
from kafka_placement.replicas.loads.worklist import BATCH, Worklist

#: Brokers (those with the most room) a leadership trade is looked for with.
SWAP_PARTNERS = 6


def _candidates(state: PlanState, b: int, above: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(partition, current leader, new leader) of every leadership change that involves ``b``."""
    removed = state.bands.removed
    if above:
        led = np.array(sorted(state.led[b]), dtype=np.int64)
        rows = state.replicas[led]
        parts, news = [], []
        for j in range(1, rows.shape[1]):
            follower = rows[:, j]
            keep = follower >= 0
            keep[keep] &= ~removed[follower[keep]]
            parts.append(led[keep])
            news.append(follower[keep])
        partitions = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        new = np.concatenate(news).astype(np.int64) if news else np.zeros(0, dtype=np.int64)
        return partitions, np.full(len(partitions), b, dtype=np.int64), new
    following = np.array(sorted(state.hosted[b] - state.led[b]), dtype=np.int64)
    return (
        following,
        state.replicas[following, 0].astype(np.int64),
        np.full(len(following), b, dtype=np.int64),
    )


def balance_leadership(state: PlanState) -> None:
    """Move leadership until no leader-side violation can be reduced by it."""
    work = Worklist(state, LEADER_COLUMNS)
    rounds = 0
    limit = 8 * state.model.num_partitions + 1000
    while rounds < limit:
        rounds += 1
        pick = work.worst()
        if pick is None:
            return
        b, r = pick
        above = work.above(b, r)
        partitions, old, new = _candidates(state, b, above)
        if len(partitions) == 0:
            work.mark_stuck(b, r)
            continue
        change = state.leadership(partitions)
        gain, ok = state.evaluate(old, new, change)
        chosen = np.flatnonzero(ok & (gain < -EPSILON))
        order = chosen[np.lexsort((new[chosen], partitions[chosen], gain[chosen]))]
        accepted: set[int] = set()
        brokers: set[int] = set()
        for i in order.tolist():
            p = int(partitions[i])
            if p in accepted or state.replicas[p, 0] != old[i]:
                continue
            g = state.evaluate_one(int(old[i]), int(new[i]), state.leadership_of(p))
            if g is None or g >= -EPSILON:
                continue
            state.transfer_leadership(p, int(new[i]), r, b, above)
            accepted.add(p)
            brokers.update((int(old[i]), int(new[i])))
            if state.terms[b, r] <= EPSILON or len(accepted) >= BATCH:
                break
        if accepted:
            work.touched(sorted(brokers))
        elif swap_leadership(state, b, r, above):
            work.touched([b])
        else:
            work.mark_stuck(b, r)


def swap_leadership(state: PlanState, b: int, r: int, above: bool) -> bool:
    """Two brokers trade leaderships: ``b`` hands one partition's leadership to a follower ``f`` and
    takes another's from ``f`` — the leader count stays, bytes out and leader bytes in shift (what a
    broker that leads few heavy partitions needs). The best acceptable trade, if any."""
    best: tuple[float, int, int, int, int] | None = None
    mine = state.led[b]
    partners: dict[int, None] = {}
    for p in sorted(mine)[:4096]:
        for f in state.replicas[p, 1 : int(state.model.rf[p])].tolist():
            if not state.bands.removed[f]:
                partners[f] = None
    room = (
        (state.bands.upper[:, r] - state.loads[:, r])
        if above
        else (state.loads[:, r] - state.bands.lower[:, r])
    )
    for f in sorted(partners, key=lambda x: (-room[x], x))[:SWAP_PARTNERS]:
        give = np.array(sorted(mine & state.hosted[f]), dtype=np.int64)
        take = np.array(sorted(state.led[f] & state.hosted[b]), dtype=np.int64)
        if len(give) == 0 or len(take) == 0:
            continue
        give_change = state.leadership(give)
        take_change = state.leadership(take)
        key = -give_change[:, r] if above else give_change[:, r]
        give, give_change = (
            give[np.argsort(key, kind="stable")[:32]],
            give_change[np.argsort(key, kind="stable")[:32]],
        )
        key = take_change[:, r] if above else -take_change[:, r]
        take, take_change = (
            take[np.argsort(key, kind="stable")[:32]],
            take_change[np.argsort(key, kind="stable")[:32]],
        )
        i = np.repeat(np.arange(len(give)), len(take))
        j = np.tile(np.arange(len(take)), len(give))
        change = give_change[i] - take_change[j]
        gain, ok = state.evaluate(np.full(len(i), b), np.full(len(i), f), change)
        ok &= gain < -EPSILON
        if not ok.any():
            continue
        k = int(np.argmin(np.where(ok, gain, np.inf)))
        candidate = (float(gain[k]), f, int(give[i[k]]), int(take[j[k]]), b)
        if best is None or candidate[0] < best[0]:
            best = candidate
    if best is None:
        return False
    _, f, p, q, _ = best
    state.transfer_leadership(p, f, r, b, above)
    state.transfer_leadership(q, b, r, b, above)
    return True
