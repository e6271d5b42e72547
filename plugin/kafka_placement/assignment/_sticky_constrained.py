"""Sticky assignment when every member subscribes to the same topics (the quota fill).

Java's ``ConstrainedAssignmentBuilder`` (Kafka 3.5+), step by step (see :func:`constrained_assign`):
with ``N`` partitions and ``M`` members every member ends with ``N // M`` or ``N // M + 1``
partitions (exactly ``N % M`` members get the extra one); members keep as many of their previously
owned partitions as their quota allows; the free partitions are dealt round robin in
``(topic, partition)`` order — with racks, the most rack-local dealing first (:mod:`._sticky_racks`).

Everything runs on numpy arrays: no Python object per partition.
"""

from __future__ import annotations

import numpy as np

from kafka_placement.assignment._sticky_core import IntArray, Problem, RackView, round_robin_deal
from kafka_placement.assignment._sticky_racks import rack_deal
from kafka_placement.java import java_hashmap_order


def constrained_assign(problem: Problem, kept: IntArray, racks: RackView | None) -> IntArray:
    """The sticky owner array for equal subscriptions, from the resolved previous owners ``kept``.

    Follows Java's ``ConstrainedAssignmentBuilder`` step by step: members are visited in Java
    ``HashMap`` order; one owning fewer than ``minQuota`` keeps all it owns; one owning ``maxQuota`` or
    more keeps ``maxQuota`` while members above ``minQuota`` are still needed, else ``minQuota``
    (and may then take one more later). Each keeps its owned partitions in (partition, topic) order.
    The free partitions, in (topic, partition) order, go round robin to the members below
    ``minQuota`` (member-id order) until all reach it, then one each to the members at exactly
    ``minQuota`` (those that were there from the start in member-id order, then in the order the others
    reached it). With racks, rack-local partitions are dealt first and owned rack-local ones kept first.
    """
    n, m = problem.n_partitions, problem.n_members
    owner = kept.copy()
    if n == 0 or m == 0:
        return owner
    quota, extra = divmod(n, m)
    has = owner >= 0
    owned_count = np.bincount(owner[has], minlength=m)
    keep = np.minimum(owned_count, quota)
    over_min = 0
    exactly_min: list[int] = []
    for i in java_hashmap_order(problem.member_ids, problem.arrival):
        k = int(owned_count[i])
        if k < quota:
            continue
        if k > quota and over_min < extra:
            keep[i] = quota + 1
            over_min += 1
            if over_min == extra:
                exactly_min.clear()
        elif over_min < extra:
            exactly_min.append(i)
    # Revoke what is above `keep`, in Java's order (partition, topic); rack-local partitions first.
    over = np.flatnonzero(owned_count > keep)
    if over.size:
        over_mask = np.zeros(m, dtype=np.bool_)
        over_mask[over] = True
        gids = np.flatnonzero(has & over_mask[np.where(has, owner, 0)])
        holders = owner[gids]
        topic = problem.topic_of(gids)
        partition = gids - problem.offsets[topic]
        order = np.lexsort((topic, partition, holders))
        gids, holders = gids[order], holders[order]
        bounds = np.searchsorted(holders, np.arange(m + 1))
        for i in over.tolist():
            mine = gids[bounds[i] : bounds[i + 1]]
            if racks is not None:
                local = racks.matches(i, mine)
                mine = np.concatenate((mine[local], mine[~local]))
            owner[mine[int(keep[i]) :]] = -1
    under = np.flatnonzero(keep < quota)
    under_needs = quota - keep[under]
    # who takes the remaining `extra - over_min` larger slots, in Java's order
    reached = under[np.lexsort((under, under_needs))]
    extra_takers = np.asarray(sorted(exactly_min) + reached.tolist(), dtype=np.int64)[: extra - over_min]
    free = np.flatnonzero(owner < 0)
    if racks is not None:
        needs = np.zeros(m, dtype=np.int64)
        needs[under] = under_needs
        needs[extra_takers] += 1
        free = rack_deal(owner, free, needs, racks)
        takers = np.flatnonzero(needs > 0)
        if free.size:
            owner[free] = round_robin_deal(free, takers, needs[takers])
        return owner
    total_under = int(under_needs.sum())
    if total_under:
        owner[free[:total_under]] = round_robin_deal(free[:total_under], under, under_needs)
    rest = free[total_under:]
    owner[rest] = extra_takers[: rest.size]
    return owner
