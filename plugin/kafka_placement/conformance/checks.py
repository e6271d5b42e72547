"""Judging an assignment on its own: validity, KIP-54 balance score, partitions moved.

These are definitions, written here independently of ``kafka_placement.assignment.assignment_quality`` so the
checks that compare our sticky assignors with Java's do not rest on the code under test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafka_placement.conformance.group_scenarios import GroupScenario
from kafka_placement.vocabulary import Member, TopicPartition

Assignment = Mapping[str, Sequence[TopicPartition]]


def all_partitions(
    partitions_per_topic: Mapping[str, int], members: Mapping[str, Member]
) -> set[TopicPartition]:
    """Partitions that must be assigned: every partition of every subscribed topic with metadata."""
    subscribed = {t for m in members.values() for t in m.topics}
    return {
        TopicPartition(t, p) for t, n in partitions_per_topic.items() if t in subscribed for p in range(n)
    }


def previous_owners(members: Mapping[str, Member]) -> dict[TopicPartition, str]:
    """Each claimed partition's previous owner: the claimant with the highest generation (KIP-341).

    Partitions claimed by two members in the same highest generation have no single owner and are
    left out (Java also disregards such claims)."""
    best: dict[TopicPartition, tuple[int, str | None]] = {}
    for member_id, member in members.items():
        for tp in member.owned:
            current = best.get(tp)
            if current is None or member.generation > current[0]:
                best[tp] = (member.generation, member_id)
            elif member.generation == current[0] and current[1] != member_id:
                best[tp] = (member.generation, None)
    return {tp: owner for tp, (_, owner) in best.items() if owner is not None}


def problems(
    partitions_per_topic: Mapping[str, int],
    members: Mapping[str, Member],
    assignment: Assignment,
    *,
    complete: bool = True,
) -> list[str]:
    """Why ``assignment`` is not a valid result for this group (empty list: valid).

    Every member present and no stranger; no partition twice; only existing partitions of topics
    the member subscribes to; with ``complete``, every partition of a subscribed topic assigned.
    """
    out: list[str] = []
    missing = sorted(set(members) - set(assignment))
    if missing:
        out.append(f"members missing from the result: {missing}")
    strangers = sorted(set(assignment) - set(members))
    if strangers:
        out.append(f"unknown members in the result: {strangers}")
    seen: dict[TopicPartition, str] = {}
    for member_id, tps in assignment.items():
        member = members.get(member_id)
        for tp in tps:
            if tp in seen:
                out.append(f"{tp} assigned to both {seen[tp]} and {member_id}")
            seen[tp] = member_id
            if not 0 <= tp.partition < partitions_per_topic.get(tp.topic, 0):
                out.append(f"{member_id} got {tp}, which does not exist")
            elif member is not None and tp.topic not in member.topics:
                out.append(f"{member_id} got {tp} of a topic it does not subscribe to")
    if complete:
        unassigned = sorted(all_partitions(partitions_per_topic, members) - set(seen))
        if unassigned:
            out.append(f"{len(unassigned)} partitions unassigned, e.g. {unassigned[:3]}")
    return out


def cooperative_problems(members: Mapping[str, Member], assignment: Assignment) -> list[str]:
    """KIP-429: a partition still owned by one member is never given to another in the same
    rebalance (it is first only revoked), so no partition ever has two owners at once."""
    out: list[str] = []
    owner = previous_owners(members)
    for member_id, tps in assignment.items():
        for tp in tps:
            previous = owner.get(tp)
            if previous is not None and previous != member_id and previous in members:
                out.append(f"{tp} given to {member_id} while {previous} still owns it")
    return out


def unassigned_count(
    partitions_per_topic: Mapping[str, int], members: Mapping[str, Member], assignment: Assignment
) -> int:
    assigned = {tp for tps in assignment.values() for tp in tps}
    return len(all_partitions(partitions_per_topic, members) - assigned)


def is_balanced(members: Mapping[str, Member], assignment: Assignment) -> bool:
    """KIP-54 balance: sizes differ by at most one, or no partition of a member could move to
    another subscribed member that has at least two fewer partitions."""
    sizes = {m: len(tps) for m, tps in assignment.items()}
    if not sizes or max(sizes.values()) - min(sizes.values()) <= 1:
        return True
    for member_id, tps in assignment.items():
        for tp in tps:
            for other_id, other in members.items():
                if tp.topic in other.topics and sizes.get(other_id, 0) < sizes[member_id] - 1:
                    return False
    return True


def moves(members: Mapping[str, Member], assignment: Assignment) -> int:
    """Partitions whose previous owner (:func:`previous_owners`, still in the group) lost them."""
    owner = previous_owners(members)
    now = {tp: m for m, tps in assignment.items() for tp in tps}
    return sum(1 for tp, previous in owner.items() if previous in members and now.get(tp) != previous)


def moves_between(before: Mapping[TopicPartition, str], assignment: Assignment) -> int:
    """Partitions of ``before`` (partition → owner) that ended with another owner or none."""
    now = {tp: m for m, tps in assignment.items() for tp in tps}
    return sum(1 for tp, previous in before.items() if now.get(tp) != previous)


def normalized(assignment: Assignment) -> dict[str, list[TopicPartition]]:
    """Members with their partitions sorted by (topic, partition), for exact comparison."""
    return {m: sorted(tps) for m, tps in sorted(assignment.items())}


def off_rack(s: GroupScenario, assignment: Assignment) -> int:
    """Partitions held by a consumer with a rack where none of the partition's replicas lives."""
    racks = s.partition_racks() or {}
    return sum(
        1
        for m, tps in assignment.items()
        if s.members[m].rack
        for tp in tps
        if s.members[m].rack not in racks.get(tp, frozenset())
    )


def rack_aware(s: GroupScenario) -> bool:
    """KIP-881's condition (``useRackAwareAssignment``): some consumer has a rack, some replica of
    the subscribed partitions lives in one of those racks, and not every subscribed partition has
    the same set of replica racks."""
    racks = s.partition_racks()
    consumer_racks = {m.rack for m in s.members.values() if m.rack}
    if racks is None or not consumer_racks:
        return False
    subscribed = {t for m in s.members.values() for t in m.topics}
    per_partition = [
        racks.get(TopicPartition(t, p), frozenset())
        for t, n in s.partitions_per_topic.items()
        if t in subscribed
        for p in range(n)
    ]
    union = frozenset().union(*per_partition) if per_partition else frozenset()
    if consumer_racks.isdisjoint(union):
        return False
    return not all(r == union for r in per_partition)
