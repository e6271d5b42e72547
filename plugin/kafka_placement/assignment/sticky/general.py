"""Sticky assignment for unequal subscriptions (the general case).

Balance only depends on *how many* partitions of each topic a member holds — partitions of one topic
are interchangeable for it — so the balancing runs on a members × topics count matrix ``c`` and the
partitions themselves are only chosen at the end:

1. ``c`` starts from the previous owners' valid claims (KIP-341 resolved).
2. Unowned partitions are water-filled topic by topic (topics with the fewest subscribers first, as
   Java sorts partitions by their number of potential consumers) onto the least loaded subscribers.
3. Balancing: from the most loaded members a breadth-first search over "member holds a partition of
   topic t" → "another member subscribes to t" looks for a member with at least two fewer partitions;
   one partition per hop is shifted along the path found (a chain of moves, like franz-go's; Java only
   makes direct moves). When nothing is reachable from the most loaded members, every member they
   reach is final (no later move can touch that closed set) and the search goes on with the rest.
   A first pass only passes on partitions their holder did not own before (free for stickiness);
   a bulk pass makes single-hop moves to many sinks at once (a joining member is filled in one
   round). Then the owned partitions: two candidates are computed — (a) direct moves only, until
   KIP-54 balanced (no partition can move to a potential consumer with 2+ fewer partitions), topics
   with the fewest subscribers first, as Java's reassignment loop; (b) the chain search above on
   any partition (no chain of moves can improve it). The one that moves fewer owned partitions
   wins, at equal cost the better balanced one; with racks, (b) may spend as many moves as Java's
   rack-aware builder spends anyway revoking owned partitions without a local replica. This keeps
   the moves at or below Java's where Java stops at KIP-54 balance. If the counts of a fresh run
   would keep more owned partitions, they win (never less sticky than a fresh assignment).
4. Per topic every member keeps ``min(c, previously owned)`` of its own partitions (rack-local ones
   first) and the remaining counts are filled from the other partitions of the topic (the most
   rack-local way first, then round robin in member order), so the number of partitions kept is
   the most ``c`` allows.
"""

from __future__ import annotations

import numpy as np

from kafka_placement.assignment.sticky.problem import BoolArray, IntArray, Problem, RackView, round_robin_deal
from kafka_placement.assignment.sticky.rack_awareness import rack_deal


def _water_fill(loads: IntArray, units: int) -> IntArray:
    """How many of ``units`` each of these members gets so the lowest loads rise evenly.

    Ties (and the one-off remainder) go to the earlier members of the array.
    """
    s = loads.size
    if s and int(loads.min()) == int(loads.max()):  # all level (a fresh group): an even split, the
        # remainder to the first members
        give_even = np.full(s, units // s, dtype=np.int64)
        give_even[: units % s] += 1
        return give_even
    order = np.lexsort((np.arange(s), loads))
    sorted_loads = loads[order]
    # cost[j] = units needed to lift the first j+1 members to sorted_loads[j]
    cost = np.arange(1, s + 1, dtype=np.int64) * sorted_loads - np.cumsum(sorted_loads)
    j = int(np.searchsorted(cost, units, side="right"))  # members 0..j-1 reach level sorted_loads[j-1]
    rem = units - int(cost[j - 1])
    level = int(sorted_loads[j - 1]) + rem // j
    extra = rem % j
    give_sorted = np.zeros(s, dtype=np.int64)
    give_sorted[:j] = level - sorted_loads[:j]
    if extra:
        # the `extra` lowest member numbers among the first j get one more
        first_j = order[:j]
        lucky = np.argsort(first_j, kind="stable")[:extra]
        give_sorted[lucky] += 1
    give = np.empty(s, dtype=np.int64)
    give[order] = give_sorted
    return give


_RUN_BLOCK = 16  # topics filled per block of a run (a block x members temporary)
#: the two shortcuts below; off, the topic-by-topic forms they are tested against run instead
_FILL_RUNS = True
_REUSE_DEALT_ORDER = True


def _fill_run(c_by_topic: IntArray, loads: IntArray, who: IntArray, run: IntArray, unowned: IntArray) -> bool:
    """Water-fill the topics ``run`` (in this order, all subscribed by exactly ``who``) at once, when
    the loads of ``who`` are level except one higher by one on a prefix; False (nothing done) otherwise.

    From such loads each topic's :func:`_water_fill` lifts the lower members first, in member order,
    and splits the rest evenly with the remainder to the first members: a round-robin deal over
    ``who`` that goes on where the previous topic stopped (the prefix is where the last one stopped).
    So topic ``t``'s units are the deal's positions ``[start_t, start_t + units_t)`` counted from the
    prefix's end, and position ``i`` of ``who`` gets every ``s``-th of them: closed form, no loop.
    """
    s = who.size
    mine = loads[who]
    low, high = int(mine.min()), int(mine.max())
    if high == low:
        prefix = 0
    elif high == low + 1:
        prefix = int(np.count_nonzero(mine == high))
        if int(mine[:prefix].min()) != high:
            return False
    else:
        return False
    units = unowned[run]
    ends = prefix + np.cumsum(units)
    even, extra = units // s, units % s
    first = (ends - units) % s  # where each topic's remainder starts
    position = np.arange(s, dtype=np.int64)
    # the usual subscribers are a range of member numbers, the usual run a range of topics: slices
    # instead of fancy indexing (a scatter into topics x members costs more than the fill itself)
    in_range = int(who[-1] - who[0]) + 1 == s
    columns: slice | IntArray = slice(int(who[0]), int(who[-1]) + 1) if in_range else who
    for b in range(0, run.size, _RUN_BLOCK):
        block, part = run[b : b + _RUN_BLOCK], slice(b, b + _RUN_BLOCK)
        give = np.repeat(even[part, None], s, axis=1)
        if extra[part].any():  # one more on the window [first, first + extra) of the circle
            start, stop = first[part, None], first[part, None] + extra[part, None]
            give += ((position >= start) & (position < stop)) | (position < stop - s)
        if int(block[-1] - block[0]) + 1 == block.size and bool((np.diff(block) == 1).all()):
            c_by_topic[int(block[0]) : int(block[-1]) + 1, columns] += give
        else:
            c_by_topic[block[:, None], who] += give
    total = int(ends[-1])  # deal positions [prefix, total): position i gets those congruent to i mod s
    loads[who] += (total - position + (s - 1)) // s - (prefix - position + (s - 1)) // s
    return True


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

    The search tree of :func:`_balance` gives a sink one path per round; a member joining a large
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


def _balance_direct(problem: Problem, c: IntArray, o: IntArray, *, broad_first: bool) -> None:
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


def _balance(
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


def _subscriber_sets(subscribed: BoolArray) -> tuple[list[IntArray], list[int]]:
    """(the distinct sets of subscribers as ascending member numbers, each topic's set among them).

    Members share a handful of subscriptions, so topics share a handful of subscriber sets: found on
    the distinct subscription rows instead of reading every topic's column of the members x topics
    matrix."""
    if subscribed.size == 0:
        return [], [0] * subscribed.shape[1]
    rows, row_of_member = _distinct_rows(subscribed)
    sets, set_of_topic = _distinct_rows(np.ascontiguousarray(rows.T))
    return [np.flatnonzero(s[row_of_member]) for s in sets], set_of_topic.tolist()


def _distinct_rows(matrix: BoolArray) -> tuple[BoolArray, IntArray]:
    """(the distinct rows of a 2-d bool matrix, each row's number among them); each row compared as
    one block of bytes (``np.unique(axis=0)`` compares element by element, ~100x slower)."""
    matrix = np.ascontiguousarray(matrix)
    width = matrix.shape[1]
    blocks = matrix.view(np.dtype((np.void, width))).reshape(-1)
    distinct, inverse = np.unique(blocks, return_inverse=True)
    return distinct.view(np.bool_).reshape(-1, width), inverse.reshape(-1).astype(np.int64)


def _counts(problem: Problem, o: IntArray, *, fewest_moves: bool = True, budget: int = 0) -> IntArray:
    """Balanced members x topics partition counts, starting from the owned counts ``o``."""
    t_count = len(problem.topics)
    m = problem.n_members
    owned_any = bool(o.any())
    # topics x members while filling topic by topic: a topic's row is contiguous (a members x topics
    # column is one cache line per member); a copy: with one topic or member, o.T is contiguous
    c_by_topic = o.T.copy() if owned_any else np.zeros((t_count, m), dtype=np.int64)
    subscribers_of, set_of_topic = _subscriber_sets(problem.subscribed)
    loads = o.sum(axis=1)
    unowned = problem.counts - o.sum(axis=0)
    subscribers = problem.subscribed.sum(axis=0)
    order = np.lexsort((np.arange(t_count), subscribers)).tolist()
    start = 0
    while start < len(order):
        # a run of topics in a row with the same subscribers: filled at once while their loads allow it
        which = set_of_topic[order[start]]
        end = start + 1
        while end < len(order) and set_of_topic[order[end]] == which:
            end += 1
        run, who = order[start:end], subscribers_of[which]
        start = end
        if who.size == 0:
            continue
        in_bulk = len(run) > 1 and _FILL_RUNS
        if in_bulk and _fill_run(c_by_topic, loads, who, np.asarray(run, dtype=np.int64), unowned):
            continue
        for t in run:
            units = int(unowned[t])
            if units == 0:
                continue
            give = _water_fill(loads[who], units)
            c_by_topic[t, who] += give
            loads[who] += give
    c = np.ascontiguousarray(c_by_topic.T)
    _balance(problem, c, o, free_only=True)
    if not o.any():
        # nothing owned: every move above was free, so the pass reached what chains of moves reach —
        # the candidates below (direct moves, chains) would all return these counts unchanged
        return c
    if not fewest_moves:
        _balance(problem, c, o, free_only=False)
        return c
    # Two ways on from here: direct moves until KIP-54 balanced (as Java stops), or chains of moves
    # for the best balance. Take the one that moves fewer owned partitions; at equal cost the better
    # balanced one (chains only win when they cost no more). A ``budget`` of moves that are spent
    # anyway (see general_assign) lets the better balanced one win within it.
    direct = c.copy()
    _balance_direct(problem, direct, o, broad_first=True)
    narrow = c.copy()  # the other tie-break between equally loaded holders: keep the better balanced
    _balance_direct(problem, narrow, o, broad_first=False)
    if (_score(narrow), _moved(narrow, o)) < (_score(direct), _moved(direct, o)):
        direct = narrow
    chained = c.copy()
    _balance(problem, chained, o, free_only=False)
    d_moved = _moved(direct, o)
    if _score(chained) < _score(direct) and d_moved * c.size <= _LIMITED_CHAIN_WORK:
        # chains of moves within the moves the direct way spends: taken when better balanced (one
        # search per path, so only while moves x members x topics stays small)
        _balance(problem, c, o, free_only=False, limit=d_moved)
        _balance_direct(problem, c, o, broad_first=True)  # the budget may stop it short of KIP-54
        if _score(c) < _score(direct) and _moved(c, o) <= d_moved:
            direct = c
    c = chained
    d_moved, c_moved = _moved(direct, o), _moved(c, o)
    if c_moved <= max(d_moved, budget) and _score(c) < _score(direct):
        return c
    if (d_moved, _score(direct)) <= (c_moved, _score(c)):
        return direct
    return c


_LIMITED_CHAIN_WORK = 20_000_000


def _moved(c: IntArray, o: IntArray) -> int:
    """Owned partitions that counts ``c`` take away from their owners (``o``)."""
    return int(np.maximum(o - c, 0).sum())


def _score(c: IntArray) -> int:
    """KIP-54 balance score of counts ``c``: the sum over member pairs of their size difference."""
    sizes = np.sort(c.sum(axis=1))
    n = sizes.size
    return int((sizes * (2 * np.arange(n, dtype=np.int64) - n + 1)).sum())


def general_assign(
    problem: Problem, kept: IntArray, racks: RackView | None, *, fewest_moves: bool = True
) -> IntArray:
    """The sticky owner array for any subscriptions, from the resolved previous owners ``kept``.

    ``fewest_moves`` (the sticky assignor): once KIP-54 balanced, stop rather than move owned
    partitions for a better balance score. Without it (the cooperative target) the balance is the
    best chains of moves reach, which the follow-up round reproduces from the partitions kept, so
    the second round is complete.
    """
    m, t_count = problem.n_members, len(problem.topics)
    owner = kept.copy()
    if problem.n_partitions == 0 or m == 0:
        return owner
    has = kept >= 0
    topic_of = problem.topic_of(np.flatnonzero(has))
    o = np.bincount(kept[has] * t_count + topic_of, minlength=m * t_count).reshape(m, t_count)
    budget = 0
    if racks is not None:
        # Java's rack-aware general builder revokes every owned partition without a replica in its
        # owner's rack; as many moves as that may be spent on a better balance
        holders = kept[has]
        local = np.zeros(holders.size, dtype=np.bool_)
        gids = np.flatnonzero(has)
        for i in np.unique(holders).tolist():
            mine = holders == i
            local[mine] = racks.matches(i, gids[mine]) | (racks.member_rack[i] is None)
        budget = int((~local).sum())
    c = _counts(problem, o, fewest_moves=fewest_moves, budget=budget)
    if np.minimum(c, o).sum() < o.sum():  # something owned has to move: could a fresh run keep more?
        # Guarantee: never less sticky than a fresh assignment (both KIP-54 balanced); if the
        # counts of a fresh run keep more owned partitions, take those.
        fresh = _counts(problem, np.zeros_like(o))
        if np.minimum(fresh, o).sum() > np.minimum(c, o).sum():
            c = fresh
    # choose the partitions: keep own ones first, then fill from the rest of the topic (only topics where
    # some member keeps fewer than it owns have anything to give up)
    for t in np.flatnonzero((o > c).any(axis=0)).tolist():
        lo, hi = int(problem.offsets[t]), int(problem.offsets[t + 1])
        seg = owner[lo:hi]  # a view: edits land in owner
        holders = np.flatnonzero(o[:, t] > c[:, t])
        if holders.size:
            spots = np.flatnonzero(np.isin(seg, holders))
            spots = spots[np.argsort(seg[spots], kind="stable")]
            starts = np.searchsorted(seg[spots], holders, side="left")
            ends = np.searchsorted(seg[spots], holders, side="right")
        for j, i in enumerate(holders.tolist()):
            mine = spots[starts[j] : ends[j]]
            if racks is not None:
                local = racks.matches(i, mine + lo)
                mine = np.concatenate((mine[local], mine[~local]))
            seg[mine[int(c[i, t]) :]] = -1
    # then deal the free partitions topic by topic in Java's order (fewest subscribers first), each to
    # the taker with the fewest partitions so far (ties: member order), as Java's general builder does
    nothing_kept = not has.any()
    sizes = np.minimum(c, o).sum(axis=1)
    subscribers = problem.subscribed.sum(axis=0)
    # a topic's row is contiguous
    needs_by_topic = np.ascontiguousarray((c if nothing_kept else c - np.minimum(c, o)).T)
    # Without history or racks every partition is free. A topic that gives one partition to each of
    # its takers raises all their sizes by one, so the next topic with the same takers (the same row of
    # needs) deals them in the same order: that order is reused (the usual group: most topics alike).
    repeatable = nothing_kept and racks is None and _REUSE_DEALT_ORDER
    last: tuple[IntArray, IntArray] | None = None  # (the need row, the owners dealt) to reuse
    for t in np.lexsort((np.arange(t_count), subscribers)).tolist():
        lo, hi = int(problem.offsets[t]), int(problem.offsets[t + 1])
        seg = owner[lo:hi]
        need = needs_by_topic[t]
        if last is not None and last[1].size == seg.size and np.array_equal(need, last[0]):
            seg[:] = last[1]
            sizes += need
            continue
        free = np.flatnonzero(seg < 0)
        if free.size == 0:
            continue
        before = need.copy()
        if racks is not None:
            free = rack_deal(owner, free + lo, need, racks) - lo
        takers = np.flatnonzero(need > 0)
        levels = sizes[takers] + (before - need)[takers]
        dealt = round_robin_deal(free, takers, need[takers], levels)
        seg[free] = dealt
        if repeatable:
            one_each = int(before.sum()) == takers.size == free.size == seg.size
            last = (before, dealt) if one_each else None
        sizes += before
    return owner
