"""Leader (first replica) balancing over fixed replica sets, with the fewest leadership changes.

Choosing one leader per partition among its replicas so that every broker leads between ``low``
and ``high`` partitions is a bipartite degree-constrained matching. Starting from any choice (the
current leaders, or a greedy one), each broker above ``high`` hands a partition down an
*alternating path* — ``v`` gives partition ``p1`` to its replica ``w1``, ``w1`` gives ``p2`` to
``w2``, … until a broker with room takes it — found by breadth-first search so each fix changes
as few leaders as possible; brokers below ``low`` pull one up the same way. By the augmenting-path
theorem this reaches the bounds whenever any leader choice for these replica sets does.

Not the same thing as the load planner's leadership phase (:mod:`.loads.leadership`): this balances
leader *counts* exactly, for the count planner and the placement audit; that one trades leaderships
greedily against every leader-only *load* at once (bytes out, leader bytes in and the count, each
within its band), where a matching on counts alone would move bytes out anywhere.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence


def greedy_leaders(replica_sets: Sequence[Sequence[int]], high: Mapping[int, int]) -> list[int]:
    """A first leader per partition: the replica with the most room left under ``high``."""
    count = dict.fromkeys(high, 0)
    leaders: list[int] = []
    for replicas in replica_sets:
        best = max(replicas, key=lambda b: (high.get(b, 0) - count.get(b, 0), -replicas.index(b)))
        count[best] = count.get(best, 0) + 1
        leaders.append(best)
    return leaders


def balance_leaders(
    replica_sets: Sequence[Sequence[int]],
    leaders: list[int],
    low: Mapping[int, int],
    high: Mapping[int, int],
) -> int:
    """Move leadership along shortest alternating paths until ``low[b] <= leads(b) <= high[b]``
    wherever possible. ``leaders`` is updated in place; returns how many partitions changed leader."""
    members: dict[int, list[int]] = {}
    led: dict[int, set[int]] = {}
    for p, replicas in enumerate(replica_sets):
        for b in replicas:
            members.setdefault(b, []).append(p)
        led.setdefault(leaders[p], set()).add(p)
    count = {b: len(led.get(b, ())) for b in set(members) | set(high)}
    changed: set[int] = set()

    def move(p: int, src: int, dst: int) -> None:
        led[src].discard(p)
        led.setdefault(dst, set()).add(p)
        leaders[p] = dst
        changed.add(p)

    def push_down(start: int) -> bool:
        # start leads too many: find a chain start -> ... -> w with count[w] < high[w].
        parent: dict[int, tuple[int, int]] = {}
        seen = {start}
        queue = deque([start])
        while queue:
            v = queue.popleft()
            for p in sorted(led.get(v, ())):
                for w in replica_sets[p]:
                    if w in seen:
                        continue
                    seen.add(w)
                    parent[w] = (v, p)
                    if count.get(w, 0) < high.get(w, 0):
                        node = w
                        while node != start:
                            src, part = parent[node]
                            move(part, src, node)
                            node = src
                        count[start] -= 1
                        count[w] = count.get(w, 0) + 1
                        return True
                    queue.append(w)
        return False

    def pull_up(start: int) -> bool:
        # start leads too few: find a chain w -> ... -> start with count[w] > low[w].
        parent: dict[int, tuple[int, int]] = {}
        seen = {start}
        queue = deque([start])
        while queue:
            u = queue.popleft()
            for p in members.get(u, ()):
                w = leaders[p]
                if w in seen:
                    continue
                seen.add(w)
                parent[w] = (u, p)
                if count.get(w, 0) > low.get(w, 0):
                    node = w
                    while node != start:
                        dst, part = parent[node]
                        move(part, node, dst)
                        node = dst
                    count[start] += 1
                    count[w] -= 1
                    return True
                queue.append(w)
        return False

    for broker in sorted(count):
        while count[broker] > high.get(broker, 0) and push_down(broker):
            pass
    for broker in sorted(count):
        while count[broker] < low.get(broker, 0) and pull_up(broker):
            pass
    return len(changed)
