"""Sticky assignment when every member subscribes to the same topics (the quota fill).

Java's ``ConstrainedAssignmentBuilder`` (Kafka 3.5+), step by step (see :func:`constrained_assign`):
with ``N`` partitions and ``M`` members every member ends with ``N // M`` or ``N // M + 1``
partitions (exactly ``N % M`` members get the extra one); members keep as many of their previously
owned partitions as their quota allows; the free partitions are dealt round robin in
``(topic, partition)`` order. With racks (KIP-881) Java keeps only owned partitions with a replica
in the owner's rack and deals rack-local partitions first, one partition at a time
(:func:`_rack_aware_fill`); that deterministic walk is reproduced exactly.

Everything but the rack-aware walk runs on numpy arrays: no Python object per partition.
"""

from __future__ import annotations

import numpy as np

from kafka_placement.assignment.sticky.problem import BoolArray, IntArray, Problem, RackView, round_robin_deal
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
    reached it). With racks, owned partitions without a replica in the owner's rack are not kept, and
    the free ones go through Java's rack-aware round robin first (:func:`_rack_aware_fill`).
    """
    n, m = problem.n_partitions, problem.n_members
    owner = kept.copy()
    if n == 0 or m == 0:
        return owner
    if racks is not None:
        # Java keeps only owned partitions with a replica in the owner's rack (the others are free)
        has = owner >= 0
        gids = np.flatnonzero(has)
        holders = owner[gids]
        local = np.ones(gids.size, dtype=np.bool_)
        for rack, members in racks.members_in_rack.items():
            in_rack = np.isin(holders, members)
            local[in_rack] = racks.mask_in_rack[rack][gids[in_rack]]
        owner[gids[~local]] = -1
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
    # Revoke what is above `keep`, in Java's order (partition, topic).
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
            owner[gids[bounds[i] : bounds[i + 1]][int(keep[i]) :]] = -1
    under = np.flatnonzero(keep < quota)
    under_needs = quota - keep[under]
    # who takes the remaining `extra - over_min` larger slots, in Java's order
    reached = under[np.lexsort((under, under_needs))]
    extra_takers = np.asarray(sorted(exactly_min) + reached.tolist(), dtype=np.int64)[: extra - over_min]
    free = np.flatnonzero(owner < 0)
    if racks is not None:
        open_slots = extra - over_min
        _rack_aware_fill(problem, owner, free, quota, open_slots, under.tolist(), sorted(exactly_min), racks)
        return owner
    total_under = int(under_needs.sum())
    if total_under:
        owner[free[:total_under]] = round_robin_deal(free[:total_under], under, under_needs)
    rest = free[total_under:]
    owner[rest] = extra_takers[: rest.size]
    return owner


def _rack_aware_fill(
    problem: Problem,
    owner: IntArray,
    free: IntArray,
    min_quota: int,
    open_max_slots: int,
    under: list[int],
    exactly_min: list[int],
    racks: RackView,
) -> None:
    """Java's ``assignRackAwareRoundRobin`` then ``assignRoundRobin``, step by step (in place).

    ``free`` partitions in (topic, partition) order are first sorted (stably) by how many consumers
    live in their replicas' racks; each goes, in that order, to the next member below ``minQuota``
    in its rack (a cursor cycling over them in member-id order), else to the first member at exactly
    ``minQuota`` in its rack while members may still take one more; what no rack-local member takes
    is then dealt round robin: members below ``minQuota`` in member-id order, once none is left those
    at exactly ``minQuota`` (first the initial ones, then in the order they reached it).
    ``open_max_slots`` = members that may still go above ``minQuota``.
    """
    max_quota = min_quota + 1 if (problem.n_partitions % problem.n_members) else min_quota
    size = np.bincount(owner[owner >= 0], minlength=problem.n_members).tolist()
    member_mask: list[BoolArray | None] = [
        None if r is None else racks.mask_in_rack.get(r) for r in racks.member_rack
    ]
    # consumers in each partition's replica racks (Java's numConsumersByPartition), for the order
    consumers_in = np.zeros(free.size, dtype=np.int64)
    for rack, members in racks.members_in_rack.items():
        consumers_in += racks.mask_in_rack[rack][free].astype(np.int64) * members.size
    order = free[np.argsort(consumers_in, kind="stable")].tolist()
    remaining_slots = open_max_slots
    left: list[int] = []
    cursor = 0

    def next_rack_member(gid: int, members: list[int], first: int) -> int:
        count = len(members)
        for k in range(count):
            index = (first + k) % count
            mask = member_mask[members[index]]
            if mask is not None and mask[gid]:
                return index
        return -1

    for gid in order:
        taker = -1
        index = next_rack_member(gid, under, cursor) if under else -1
        if index >= 0:
            taker = under[index]
            if size[taker] + 1 >= min_quota:
                under.pop(index)
                if size[taker] + 1 < max_quota and remaining_slots > 0:
                    exactly_min.append(taker)
            else:
                index += 1
            cursor = index % len(under) if under else 0
        elif exactly_min:
            first = next_rack_member(gid, exactly_min, 0)
            if first >= 0:
                taker = exactly_min[first]
                if size[taker] + 1 == max_quota:
                    exactly_min.pop(first)
                    remaining_slots -= 1
                    if remaining_slots == 0:
                        exactly_min.clear()
        if taker >= 0:
            owner[gid] = taker
            size[taker] += 1
        else:
            left.append(gid)
    # assignRoundRobin over what is left, in the same (sorted) order
    position = 0
    for gid in left:
        if position < len(under):
            taker = under[position]
            position += 1
        elif not under:
            taker = exactly_min.pop(0)
        else:
            position = 1
            taker = under[0]
        owner[gid] = taker
        size[taker] += 1
        if size[taker] == min_quota:
            position -= 1
            under.pop(position)
            exactly_min.append(taker)
