"""Water-filling: units of one topic dealt onto its least loaded subscribers.

The general sticky path fills unowned partitions topic by topic; :func:`fill_run` fills a run of alike
topics (same subscribers, same size) at once, in blocks, with the same result as one by one.
"""

from __future__ import annotations

import numpy as np

from kafka_placement.assignment.sticky.problem import IntArray


def water_fill(loads: IntArray, units: int) -> IntArray:
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


RUN_BLOCK = 16  # topics filled per block of a run (a block x members temporary)


def fill_run(c_by_topic: IntArray, loads: IntArray, who: IntArray, run: IntArray, unowned: IntArray) -> bool:
    """Water-fill the topics ``run`` (in this order, all subscribed by exactly ``who``) at once, when
    the loads of ``who`` are level except one higher by one on a prefix; False (nothing done) otherwise.

    From such loads each topic's :func:`water_fill` lifts the lower members first, in member order,
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
    for b in range(0, run.size, RUN_BLOCK):
        block, part = run[b : b + RUN_BLOCK], slice(b, b + RUN_BLOCK)
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
