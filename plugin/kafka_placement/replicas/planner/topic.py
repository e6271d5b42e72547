"""One topic (or one replication-factor group), step by step: quotas, keep, bounds, rack-first or
fill, the fresh fallback, then leaders."""

from __future__ import annotations

from kafka_placement.replicas.leaders import balance_leaders
from kafka_placement.replicas.planner.bounds import LowerBound, topic_lower_bound
from kafka_placement.replicas.planner.fill import SlotFiller
from kafka_placement.replicas.planner.fresh import matched_fresh
from kafka_placement.replicas.planner.keep import kept_replicas
from kafka_placement.replicas.planner.rack_first import rack_first
from kafka_placement.replicas.planner.state import TopicState
from kafka_placement.replicas.quotas import RackLayout, leader_quotas, replica_quotas
from kafka_placement.vocabulary import Broker


def plan_topic(
    layout: RackLayout, brokers: list[Broker], old: list[list[int]], rf: int
) -> tuple[list[list[int]], LowerBound, list[str]]:
    """Target replica lists (leader first) for ``old``, the topic's lower bound and any warnings."""
    surviving = set(layout.rack_of)
    current = {b: 0 for b in surviving}
    for reps in old:
        for b in reps:
            if b in surviving:
                current[b] += 1
    quotas, _ = replica_quotas(brokers, len(old), rf, current=current)
    topic = TopicState(layout, rf, [])

    kept = kept_replicas(topic, old, quotas, current)
    bound = topic_lower_bound(topic, quotas, current, old, kept)

    topic.sets = [list(k) for k in kept]
    filler = SlotFiller(topic, quotas, old)
    if layout.racked and rf <= layout.num_racks:
        # Rack-first plan: racks are balanced by transfers, then brokers inside each rack (where any
        # broker fits any slot, so intra-rack balancing never costs more than the bound).
        topic.sets = rack_first(topic, quotas, kept, old)
        filler.need = {x: 0 for x in surviving}
    filler.fill_open_slots()
    filler.move_over_quota()

    warnings = filler.missed_quotas()
    if warnings:
        # The incremental plan could not reach the quotas: take a from-scratch balanced placement
        # (always meets the goals) matched to the current partitions for the largest overlap.
        topic.sets = matched_fresh(brokers, old, rf, surviving)
        warnings = [
            f"incremental plan missed a quota; used a fresh balanced placement ({w})" for w in warnings
        ]
    return _with_leaders(topic.sets, old, quotas), bound, warnings


def _with_leaders(sets: list[list[int]], old: list[list[int]], quotas: dict[int, int]) -> list[list[int]]:
    """Step 5: current leaders stay where possible, then leadership is balanced along shortest
    alternating paths; each list is ordered leader first, then the old order, then the new brokers."""
    leader_low, leader_high = leader_quotas(quotas, len(old))
    leaders: list[int] = []
    lead_count = {b: 0 for b in quotas}
    for p, reps in enumerate(sets):
        if old[p][0] in reps:
            leaders.append(old[p][0])
        else:
            leaders.append(max(reps, key=lambda b: (leader_high[b] - lead_count[b], b in old[p], -b)))
        lead_count[leaders[-1]] += 1
    balance_leaders(sets, leaders, leader_low, leader_high)
    result: list[list[int]] = []
    for p, reps in enumerate(sets):
        ordered = [b for b in old[p] if b in reps and b != leaders[p]]
        ordered += [b for b in reps if b not in ordered and b != leaders[p]]
        result.append([leaders[p], *ordered])
    return result
