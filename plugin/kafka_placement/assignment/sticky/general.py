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

from kafka_placement.assignment.sticky.count_balance import balance_chains, balance_direct
from kafka_placement.assignment.sticky.problem import BoolArray, IntArray, Problem, RackView, round_robin_deal
from kafka_placement.assignment.sticky.rack_awareness import rack_deal
from kafka_placement.assignment.sticky.water_fill import fill_run, water_fill

#: the two shortcuts below; off, the topic-by-topic forms they are tested against run instead
_FILL_RUNS = True
_REUSE_DEALT_ORDER = True


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
        if in_bulk and fill_run(c_by_topic, loads, who, np.asarray(run, dtype=np.int64), unowned):
            continue
        for t in run:
            units = int(unowned[t])
            if units == 0:
                continue
            give = water_fill(loads[who], units)
            c_by_topic[t, who] += give
            loads[who] += give
    c = np.ascontiguousarray(c_by_topic.T)
    balance_chains(problem, c, o, free_only=True)
    if not o.any():
        # nothing owned: every move above was free, so the pass reached what chains of moves reach —
        # the candidates below (direct moves, chains) would all return these counts unchanged
        return c
    if not fewest_moves:
        balance_chains(problem, c, o, free_only=False)
        return c
    # Two ways on from here: direct moves until KIP-54 balanced (as Java stops), or chains of moves
    # for the best balance. Take the one that moves fewer owned partitions; at equal cost the better
    # balanced one (chains only win when they cost no more). A ``budget`` of moves that are spent
    # anyway (see general_assign) lets the better balanced one win within it.
    direct = c.copy()
    balance_direct(problem, direct, o, broad_first=True)
    narrow = c.copy()  # the other tie-break between equally loaded holders: keep the better balanced
    balance_direct(problem, narrow, o, broad_first=False)
    if (_score(narrow), _moved(narrow, o)) < (_score(direct), _moved(direct, o)):
        direct = narrow
    chained = c.copy()
    balance_chains(problem, chained, o, free_only=False)
    d_moved = _moved(direct, o)
    if _score(chained) < _score(direct) and d_moved * c.size <= _LIMITED_CHAIN_WORK:
        # chains of moves within the moves the direct way spends: taken when better balanced (one
        # search per path, so only while moves x members x topics stays small)
        balance_chains(problem, c, o, free_only=False, limit=d_moved)
        balance_direct(problem, c, o, broad_first=True)  # the budget may stop it short of KIP-54
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
