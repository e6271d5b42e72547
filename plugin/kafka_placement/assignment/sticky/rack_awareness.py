"""Rack-local dealing of free partitions with the most rack-local partitions possible (KIP-881).

Free partitions are grouped by the set of member racks their replicas live in (a handful of
groups, whatever the number of partitions); members by rack. How many partitions of each group
go to each rack is a maximum flow on that tiny graph (group -> rack when the group has a replica
there, capped by the rack members' remaining needs), so the number of rack-local placements is the
largest any assignment with these quotas can reach — Java's greedy round robin per partition can
fall short of it. Within a (group, rack) pair partitions go in id order, round robin over the rack's
members in member order.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from kafka_placement.assignment.sticky.problem import IntArray, RackView, round_robin_deal
from kafka_placement.java import java_sorted


def _max_flow(capacity: list[list[int]], source: int, sink: int) -> list[list[int]]:
    """Edmonds-Karp on a small dense graph; returns the flow matrix (deterministic)."""
    n = len(capacity)
    flow = [[0] * n for _ in range(n)]
    while True:
        parent = [-1] * n
        parent[source] = source
        queue = deque([source])
        while queue and parent[sink] < 0:
            u = queue.popleft()
            for v in range(n):
                if parent[v] < 0 and capacity[u][v] - flow[u][v] > 0:
                    parent[v] = u
                    queue.append(v)
        if parent[sink] < 0:
            return flow
        push, v = None, sink
        while v != source:
            u = parent[v]
            room = capacity[u][v] - flow[u][v]
            push = room if push is None else min(push, room)
            v = u
        assert push is not None
        v = sink
        while v != source:
            u = parent[v]
            flow[u][v] += push
            flow[v][u] -= push
            v = u


def rack_deal(
    owner: IntArray,
    free: IntArray,
    needs: IntArray,
    racks: RackView,
) -> IntArray:
    """Give free partitions to members of a rack holding a replica, as many as possible; returns the
    partitions left. ``owner`` and ``needs`` are updated in place."""
    if free.size == 0:
        return free
    names = java_sorted(r for r, members in racks.members_in_rack.items() if int(needs[members].sum()) > 0)
    if not names:
        return free
    code = np.zeros(free.size, dtype=np.int64)
    for bit, rack in enumerate(names):
        code |= racks.mask_in_rack[rack][free].astype(np.int64) << bit
    codes, counts = np.unique(code[code > 0], return_counts=True)
    if codes.size == 0:
        return free
    g, r = codes.size, len(names)
    source, sink = 0, 1 + g + r
    capacity = [[0] * (sink + 1) for _ in range(sink + 1)]
    for i, (c, k) in enumerate(zip(codes.tolist(), counts.tolist(), strict=True)):
        capacity[source][1 + i] = k
        for bit in range(r):
            if c >> bit & 1:
                capacity[1 + i][1 + g + bit] = k
    for bit, rack in enumerate(names):
        capacity[1 + g + bit][sink] = int(needs[racks.members_in_rack[rack]].sum())
    flow = _max_flow(capacity, source, sink)
    taken = np.zeros(free.size, dtype=np.bool_)
    for bit, rack in enumerate(names):
        picks: list[IntArray] = []
        for i, c in enumerate(codes.tolist()):
            amount = flow[1 + i][1 + g + bit]
            if amount > 0:
                spots = np.flatnonzero((code == c) & ~taken)[:amount]
                taken[spots] = True
                picks.append(spots)
        if not picks:
            continue
        spots = np.sort(np.concatenate(picks))
        members = racks.members_in_rack[rack]
        takers = members[needs[members] > 0]
        got = round_robin_deal(spots, takers, needs[takers])
        owner[free[spots]] = got
        np.subtract.at(needs, got, 1)
    return free[~taken]
