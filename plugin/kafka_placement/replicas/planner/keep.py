"""Step 2, keep: which surviving replicas each partition keeps under the rack rule."""

from __future__ import annotations

from collections.abc import Mapping

from kafka_placement.replicas.planner.state import TopicState


def racks_at_quota(topic: TopicState, quotas: Mapping[int, int], partitions: int) -> set[str | None]:
    """Racks whose brokers' quotas add up to the partition count: ``rf <= R`` they must appear in
    every partition (mandatory); ``rf > R`` they hold exactly one replica of every partition."""
    return {r for r, ids in topic.layout.racks.items() if sum(quotas[b] for b in ids) == partitions}


def kept_replicas(
    topic: TopicState, old: list[list[int]], quotas: Mapping[int, int], current: Mapping[int, int]
) -> list[list[int]]:
    """What every partition keeps; sets ``topic.single`` for ``rf > R``. Drops spread over a rack's
    brokers because each drop lowers the dropped broker's surplus."""
    exact = racks_at_quota(topic, quotas, len(old))
    mandatory: set[str | None] = set()
    if topic.racked and topic.rf <= topic.num_racks:
        mandatory = exact
    elif topic.racked:
        topic.single = exact
    surplus = {b: current[b] - quotas[b] for b in topic.rack_of}
    return [keepable(topic, reps, surplus, reps[0], mandatory) for reps in old]


def keepable(
    topic: TopicState, reps: list[int], surplus: dict[int, int], leader: int, mandatory: set[str | None]
) -> list[int]:
    """Surviving replicas a partition can keep under the rack rule. Among replicas competing for a
    rack the one on the broker furthest above quota goes (``surplus`` is updated as it goes, so the
    drops spread over a rack's brokers), not the leader when tied. ``mandatory`` racks (target total
    = number of partitions) must end up in every partition, so a partition lacking one keeps at most
    ``rf`` minus the mandatory racks it lacks."""
    keep = [b for b in reps if b in topic.rack_of]
    if not topic.racked:
        return keep

    def drop(b: int) -> None:
        keep.remove(b)
        surplus[b] -= 1

    def drop_order(b: int) -> tuple[int, bool, int]:
        return (surplus[b], b != leader, b)

    if topic.rf <= topic.num_racks:
        by_rack: dict[str | None, list[int]] = {}
        for b in keep:
            by_rack.setdefault(topic.rack_of[b], []).append(b)
        for members in by_rack.values():
            while len(members) > 1:
                loser = max(members, key=drop_order)
                members.remove(loser)
                drop(loser)
        lacking = len(mandatory - {topic.rack_of[b] for b in keep})
        while len(keep) > topic.rf - lacking:
            drop(max((b for b in keep if topic.rack_of[b] not in mandatory), key=drop_order))
        return keep
    for rack in topic.single:
        members = [b for b in keep if topic.rack_of[b] == rack]
        while len(members) > 1:
            loser = max(members, key=drop_order)
            members.remove(loser)
            drop(loser)
    while True:
        racks = topic.racks_in(keep)
        if topic.num_racks - len(racks) <= topic.rf - len(keep):
            return keep
        drop(max((b for b in keep if racks[topic.rack_of[b]] > 1), key=drop_order))
