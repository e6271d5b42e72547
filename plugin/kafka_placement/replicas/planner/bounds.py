"""The lower bounds every plan is measured against (see the package docstring for their proofs; the
excess/shortfall argument they share: :mod:`~kafka_placement.replicas.transfer_bound`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kafka_placement.replicas.planner.state import TopicState
from kafka_placement.replicas.quotas import leader_quotas
from kafka_placement.replicas.transfer_bound import excess_and_shortfall

#: "No path yet" in the min-cost-flow searches: larger than any cost a plan can have.
UNREACHED = 10**18


@dataclass(frozen=True)
class LowerBound:
    """What any plan reaching the goals must at least do."""

    replica_moves: int
    leader_changes: int
    over_quota: int
    """``A``: replicas that must land on brokers below quota (above-quota + removed-broker replicas)."""
    diversity: int
    """``B``: replicas partitions must replace for rack diversity / removed brokers."""
    rack_level: int = 0
    """``C``: additions any plan needs just to reach the racks' target totals (exact rack-level
    minimum, ``rf <= R``; 0 otherwise)."""

    def summary(self) -> dict[str, int]:
        return {
            "replica_moves": self.replica_moves,
            "leader_changes": self.leader_changes,
            "over_quota_and_removed": self.over_quota,
            "per_partition_replacements": self.diversity,
            "rack_level": self.rack_level,
        }


def topic_lower_bound(
    topic: TopicState,
    quotas: Mapping[int, int],
    current: Mapping[int, int],
    old: list[list[int]],
    kept: list[list[int]],
) -> LowerBound:
    """``A`` (quota deficits), ``B`` (per-partition replacements), ``C`` (rack level) and the leader
    changes of one topic."""
    layout = topic.layout
    surviving = topic.rack_of
    rf = topic.rf
    brokers = list(surviving)
    _, missing = excess_and_shortfall([current[b] for b in brokers], [quotas[b] for b in brokers], np.inf)
    bound_a = int(missing)
    bound_b = sum(rf - len(k) for k in kept)
    bound_c = 0
    if layout.racked and rf <= layout.num_racks:
        totals = {r: sum(quotas[b] for b in ids) for r, ids in layout.racks.items()}
        kinds = [frozenset(layout.rack_of[b] for b in reps if b in surviving) for reps in old]
        bound_c = rack_level_minimum(kinds, totals, rf)
    leader_low, leader_high = leader_quotas(quotas, len(old))
    old_leads = {b: 0 for b in surviving}
    lost_leaders = 0
    for reps, keep in zip(old, kept, strict=True):
        if reps[0] in keep:
            old_leads[reps[0]] += 1
        else:
            lost_leaders += 1
    over, under = excess_and_shortfall(
        [old_leads[b] for b in brokers], [leader_low[b] for b in brokers], [leader_high[b] for b in brokers]
    )
    over_leads, under_leads = int(over), int(under)
    bound_leaders = max(lost_leaders + over_leads, under_leads)
    return LowerBound(max(bound_a, bound_b, bound_c), bound_leaders, bound_a, bound_b, bound_c)


def rack_level_minimum(
    kinds: Sequence[frozenset[str | None]], totals: Mapping[str | None, int], rf: int
) -> int:
    """Fewest replica additions needed so every partition spans ``rf`` distinct racks and rack ``r``
    holds ``totals[r]`` replicas (``rf <= R``), given the racks each partition already has.

    Exact: partitions with the same rack set are interchangeable, so a min-cost flow over those
    groups (group → rack, capacity = group size, cost 0 for a rack the group has, 1 otherwise)
    solves it; a flow splits back into per-partition rack sets (column fill)."""
    groups: dict[frozenset[str | None], int] = {}
    for kind in kinds:
        groups[kind] = groups.get(kind, 0) + 1
    racks = list(totals)
    group_list = list(groups)
    # nodes: 0 source, 1..G groups, G+1..G+R racks, G+R+1 sink
    g, r_count = len(group_list), len(racks)
    sink = g + r_count + 1
    graph: list[list[list[int]]] = [[] for _ in range(sink + 1)]  # edges: [to, cap, cost, rev]

    def edge(a: int, b: int, cap: int, cost: int) -> None:
        graph[a].append([b, cap, cost, len(graph[b])])
        graph[b].append([a, 0, -cost, len(graph[a]) - 1])

    for i, kind in enumerate(group_list, start=1):
        edge(0, i, groups[kind] * rf, 0)
        for j, rack in enumerate(racks):
            edge(i, g + 1 + j, groups[kind], 0 if rack in kind else 1)
    for j, rack in enumerate(racks):
        edge(g + 1 + j, sink, totals[rack], 0)
    need = sum(groups.values()) * rf
    cost = 0
    while need > 0:
        dist = [UNREACHED] * (sink + 1)
        prev: list[tuple[int, int] | None] = [None] * (sink + 1)
        dist[0] = 0
        for _ in range(sink + 1):  # Bellman-Ford: the graph has a few dozen nodes
            changed = False
            for a in range(sink + 1):
                if dist[a] == UNREACHED:
                    continue
                for k, (b, cap, c, _) in enumerate(graph[a]):
                    if cap > 0 and dist[a] + c < dist[b]:
                        dist[b] = dist[a] + c
                        prev[b] = (a, k)
                        changed = True
            if not changed:
                break
        if dist[sink] == UNREACHED:
            raise AssertionError("rack totals not reachable (quotas inconsistent)")
        push = need
        node = sink
        while node != 0:
            a, k = prev[node]  # type: ignore[misc]
            push = min(push, graph[a][k][1])
            node = a
        node = sink
        while node != 0:
            a, k = prev[node]  # type: ignore[misc]
            graph[a][k][1] -= push
            back = graph[a][k][3]
            graph[node][back][1] += push
            node = a
        need -= push
        cost += push * dist[sink]
    return cost
