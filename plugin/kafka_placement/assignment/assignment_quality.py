"""Quality metrics of an assignment: sizes, KIP-54 balance score, movement, rack locality."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from kafka_placement.assignment.rack import consumer_rack, is_rack_local
from kafka_placement.vocabulary import Member, TopicPartition

Assignment = Mapping[str, Collection[TopicPartition]]


@dataclass(frozen=True)
class AssignmentMetrics:
    """``min_size``/``max_size``: fewest/most partitions of any member (0/0 for no members);
    ``balance_score``: KIP-54 score; ``moved``: partitions whose owner changed vs ``previous``
    (None without a previous assignment); ``rack_local_fraction``: share of partitions on racked
    consumers that have a replica in the consumer's rack (None when nothing is measurable)."""

    min_size: int
    max_size: int
    balance_score: int
    moved: int | None
    rack_local_fraction: float | None


def sizes(assignment: Assignment) -> dict[str, int]:
    """Number of partitions of each member."""
    return {member_id: len(partitions) for member_id, partitions in assignment.items()}


def balance_score(assignment: Assignment) -> int:
    """KIP-54: the sum, over all unordered member pairs, of the difference of their sizes.

    0 means perfectly balanced. Computed in O(n log n): with sizes sorted ascending, size i
    is larger than the i sizes before it and smaller than the n-1-i after it.
    """
    ordered = sorted(sizes(assignment).values())
    n = len(ordered)
    return sum(size * (2 * i - n + 1) for i, size in enumerate(ordered))


def owners(assignment: Assignment) -> dict[TopicPartition, str]:
    """Partition → owning member (the last one wins if a partition appears twice)."""
    return {tp: member_id for member_id, partitions in assignment.items() for tp in partitions}


def partitions_moved(previous: Assignment, current: Assignment) -> int:
    """Partitions owned by some member in both assignments, by different members.

    A partition that newly appears (new topic) or disappears (deleted topic) is not a move.
    """
    before = owners(previous)
    return sum(1 for tp, owner in owners(current).items() if tp in before and before[tp] != owner)


def rack_local_fraction(
    assignment: Assignment,
    members: Mapping[str, Member],
    partition_racks: Mapping[TopicPartition, Iterable[str]],
) -> float | None:
    """Of the partitions assigned to members with a rack, the fraction that has a replica in the
    member's rack. None when no assigned partition sits on a member with a rack."""
    measured = local = 0
    for member_id, partitions in assignment.items():
        member = members.get(member_id)
        rack = consumer_rack(member) if member is not None else None
        if rack is None:
            continue
        for tp in partitions:
            measured += 1
            if is_rack_local(rack, partition_racks.get(tp)):
                local += 1
    return local / measured if measured else None


def assignment_metrics(
    assignment: Assignment,
    *,
    previous: Assignment | None = None,
    members: Mapping[str, Member] | None = None,
    partition_racks: Mapping[TopicPartition, Iterable[str]] | None = None,
) -> AssignmentMetrics:
    """All metrics at once; movement needs ``previous``, locality ``members`` and racks."""
    member_sizes = sizes(assignment)
    return AssignmentMetrics(
        min_size=min(member_sizes.values(), default=0),
        max_size=max(member_sizes.values(), default=0),
        balance_score=balance_score(assignment),
        moved=partitions_moved(previous, assignment) if previous is not None else None,
        rack_local_fraction=(
            rack_local_fraction(assignment, members, partition_racks)
            if members is not None and partition_racks is not None
            else None
        ),
    )
