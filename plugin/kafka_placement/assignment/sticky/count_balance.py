"""Balancing a members x topics count matrix: direct moves (Java's way, until KIP-54 balanced) and
chains of moves along augmenting paths (franz-go's way). Only counts move here; which partitions a
member keeps is chosen later (``general``).
"""

from __future__ import annotations

import numpy as np

from kafka_placement.assignment.sticky.problem import BoolArray, IntArray, Problem


def _direct_moves(
    c: IntArray,
    o: IntArray,
    loads: IntArray,
    sub: BoolArray,
    sources: BoolArray,
    active: BoolArray,
    hi: int,
    *,
    free_only: bool,
) -> bool:
    """Bulk single-hop moves: each member with load <= hi - 2 takes one partition from each of up to
    ``hi - 1 - load`` most loaded members holding a topic it subscribes to. True when anything moved.

    The search tree of :func:`balance_chains` gives a sink one path per round; a member joining a large
    group needs hundreds of partitions, which this hands over in one round.
    """
    src = np.flatnonzero(sources)
    spare = c[src] - o[src] if free_only else c[src]
    free = c[src] - o[src] > 0
    left = np.ones(src.size, dtype=np.bool_)
    sinks = np.flatnonzero(active & (loads <= hi - 2))
    moved = False
    for y in sinks[np.lexsort((sinks, loads[sinks]))].tolist():
        if not left.any():
            break
        cols = sub[y]
        cap = hi - 1 - int(loads[y])
        able = left & (spare[:, cols] > 0).any(axis=1)
        for k in np.flatnonzero(able)[:cap].tolist():
            row = (spare[k] > 0) & cols
            preferred = row & free[k]
            t = int(np.argmax(preferred if preferred.any() else row))
            x = int(src[k])
            c[x, t] -= 1
            c[y, t] += 1
            loads[x] -= 1
            loads[y] += 1
            left[k] = False
            moved = True
    return moved


def balance_direct(problem: Problem, c: IntArray, o: IntArray, *, broad_first: bool) -> None:
    """Direct moves only, until KIP-54 balanced: no member holds a partition of a topic that another
    subscriber with two or more fewer partitions could take (in place on ``c``).

    Each move here may cost a partition of stickiness, so this stops as soon as KIP-54's condition
    holds — as Java does — instead of buying a better balance score with chains of moves. Like
    Java's reassignment loop, topics with the fewest subscribers go first (their partitions have the
    fewest places to go) and a partition goes from its most loaded holder (one it did not own before
    if it can) to the topic's least loaded subscriber; passes repeat until nothing moves.
    """
    sub = problem.subscribed
    loads = c.sum(axis=1)
    subscribers = sub.sum(axis=0)
    order = np.lexsort((np.arange(subscribers.size), subscribers)).tolist()
    # ties between equally loaded holders: with ``broad_first`` the one subscribing to more topics
    # gives first (it can take load back through its other topics), else the one subscribing to
    # fewer (the other can shed load through its other topics); between sinks: member order
    breadth = sub.sum(axis=1)
    src_rank = np.empty(breadth.size, dtype=np.int64)
    src_rank[np.lexsort((np.arange(breadth.size), -breadth if broad_first else breadth))] = np.arange(
        breadth.size
    )
    who = [np.flatnonzero(sub[:, t]) for t in order]
    changed = True
    while changed:
        changed = False
        for t, members in zip(order, who, strict=True):
            if members.size < 2:
                continue
            while True:
                mine = c[members, t]
                ml = loads[members]
                held = mine > 0
                if not held.any():
                    break
                top = int(ml[held].max())
                low = int(ml.argmin())
                if top - int(ml[low]) < 2:
                    break
                cands = held & (ml == top)
                free = cands & (mine > o[members, t])
                pick = np.flatnonzero(free if free.any() else cands)
                k = int(pick[np.argmin(src_rank[members[pick]])])
                x, y = int(members[k]), int(members[low])
                c[x, t] -= 1
                c[y, t] += 1
                loads[x] -= 1
                loads[y] += 1
                changed = True


def balance_chains(
    problem: Problem, c: IntArray, o: IntArray, *, free_only: bool, limit: int | None = None
) -> None:
    """Shift partition counts along augmenting paths until balanced (in place on ``c``).

    With ``free_only`` a hop may only pass on a partition its holder did not own before (``c > o``):
    balancing that costs no stickiness; the second pass may pass on any partition. With ``limit``
    the paths together take at most that many owned partitions from their owners (paths that
    would exceed it are skipped; the search ends when a round applies none).
    """
    sub = problem.subscribed
    loads = c.sum(axis=1)
    active: BoolArray = np.array(sub.any(axis=1), dtype=np.bool_)
    m, t_count = c.shape
    parent_topic = np.full(m, -1, dtype=np.int64)
    parent_member = np.full(t_count, -1, dtype=np.int64)
    while True:
        if not active.any():
            return
        act_loads = loads[active]
        hi = int(act_loads.max())
        if hi - int(act_loads.min()) <= 1:
            return
        sources = active & (loads == hi)
        if limit is None and _direct_moves(c, o, loads, sub, sources, active, hi, free_only=free_only):
            continue
        visited_m = sources.copy()
        visited_t = np.zeros(t_count, dtype=np.bool_)
        frontier = np.flatnonzero(sources)
        parent_topic[frontier] = -1
        while frontier.size:
            cf = c[frontier]
            held = (cf - o[frontier] > 0) if free_only else cf > 0
            new_t = np.flatnonzero(held.any(axis=0) & ~visited_t)
            if new_t.size == 0:
                break
            # the holder each topic is taken from: prefer a unit the holder did not own before
            score = held[:, new_t].astype(np.int64) + (cf[:, new_t] > o[frontier][:, new_t])
            parent_member[new_t] = frontier[score.argmax(axis=0)]
            visited_t[new_t] = True
            reach = sub[:, new_t] & (active & ~visited_m)[:, None]
            new_m = np.flatnonzero(reach.any(axis=1))
            if new_m.size == 0:
                break
            # reach each member through a topic whose holder can pass on a partition it did not own
            pm = parent_member[new_t]
            free_hop = c[pm, new_t] > o[pm, new_t]
            parent_topic[new_m] = new_t[(reach[new_m] * (1 + free_hop)).argmax(axis=1)]
            visited_m[new_m] = True
            frontier = new_m
        reached = np.flatnonzero(visited_m & ~sources)
        sinks = reached[loads[reached] <= hi - 2]
        if sinks.size == 0:
            active &= ~visited_m
            continue
        # One augmenting path per sink of the search tree, lowest loads first; a path is used only
        # while its source is still at the top and every hop still has a partition to pass on.
        applied = False
        for y0 in sinks[np.lexsort((sinks, loads[sinks]))].tolist():
            hops: list[tuple[int, int, int]] = []
            y = y0
            while True:
                t = int(parent_topic[y])
                x = int(parent_member[t])
                hops.append((x, t, y))
                if parent_topic[x] < 0:
                    break
                y = x
            source = hops[-1][0]
            if loads[source] != hi or loads[y0] > hi - 2:
                continue
            if any(c[x, t] - (o[x, t] if free_only else 0) <= 0 for x, t, _ in hops):
                continue
            if limit is not None:
                # owned partitions this path takes from their owners, net of ones it gives back
                cost = sum(int(c[x, t] <= o[x, t]) - int(c[y, t] < o[y, t]) for x, t, y in hops)
                if cost > limit:
                    continue
                limit -= cost
                applied = True
            for x, t, y in hops:
                c[x, t] -= 1
                c[y, t] += 1
            loads[source] -= 1
            loads[y0] += 1
        if limit is not None and not applied:
            return
