"""Java's ``RangeAssignor`` (``range``), including KIP-881 rack-aware assignment.

Per topic, subscribers in ``MemberInfo`` order (static members by ``group.instance.id`` first,
then member ids), ``q = P // C``, ``r = P % C``: member i takes ``q + (1 if i < r)`` consecutive
partitions. With consumer racks and replica racks that can make a difference (KIP-881), a first
pass hands out rack-matching partitions under the same per-topic quotas (co-partitioned topics,
same subscribers and same partition count, are matched partition index by partition index so
co-partitioning survives); the plain pass then fills the rest in partition order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kafka_placement.assignment.ordering import member_sort_key, topic_partitions
from kafka_placement.assignment.rack import consumer_rack, use_rack_aware_assignment
from kafka_placement.vocabulary import Member, TopicPartition

_EMPTY: frozenset[str] = frozenset()


class _TopicState:
    """The per-topic bookkeeping of Java's ``TopicAssignmentState``."""

    __slots__ = (
        "assigned_count",
        "consumer_racks",
        "consumers",
        "extra_left",
        "needs_rack_aware",
        "num_partitions",
        "partition_racks",
        "per_consumer",
        "topic",
        "touched",
        "unassigned",
    )

    def __init__(
        self,
        topic: str,
        num_partitions: int,
        consumers: list[str],
        racks: Mapping[str, str],
        partition_racks: Mapping[TopicPartition, frozenset[str]],
    ) -> None:
        self.topic = topic
        self.num_partitions = num_partitions
        self.consumers = consumers
        # Per-consumer maps only matter on the rack-aware path; skip them for plain groups.
        self.consumer_racks: dict[str, str | None] = {c: racks.get(c) for c in consumers} if racks else {}
        self.assigned_count: dict[str, int] = {}
        self.per_consumer = num_partitions // len(consumers) if consumers else 0
        self.extra_left = num_partitions % len(consumers) if consumers else 0
        self.touched = False
        self.unassigned: dict[int, None] = {}
        topic_consumer_racks = {r for r in self.consumer_racks.values() if r is not None}
        self.partition_racks: list[frozenset[str]] = []
        if topic_consumer_racks:
            self.partition_racks = [
                partition_racks.get(TopicPartition(topic, p), _EMPTY) for p in range(num_partitions)
            ]
            union: set[str] = set().union(*self.partition_racks)
            per_partition = {TopicPartition(topic, p): r for p, r in enumerate(self.partition_racks)}
            self.needs_rack_aware = use_rack_aware_assignment(topic_consumer_racks, union, per_partition)
        else:
            self.needs_rack_aware = False

    def group_key(self) -> tuple[tuple[tuple[str, str | None], ...], int]:
        """Java groups topics by (consumers with racks, size of the partition→racks map)."""
        return tuple(self.consumer_racks.items()), len(self.partition_racks)

    def racks_match(self, consumer: str, partition: int) -> bool:
        rack = self.consumer_racks[consumer]
        if rack is None:
            return True
        return bool(self.partition_racks) and rack in self.partition_racks[partition]

    def max_assignable(self, consumer: str) -> int:
        cap = self.per_consumer + (1 if self.extra_left > 0 else 0)
        return max(0, cap - self.assigned_count[consumer])

    def start_tracking(self) -> None:
        if not self.touched:
            self.touched = True
            self.unassigned = dict.fromkeys(range(self.num_partitions))
            self.assigned_count = dict.fromkeys(self.consumers, 0)

    def on_assigned(self, consumer: str, partitions: list[int]) -> None:
        self.assigned_count[consumer] += len(partitions)
        if self.assigned_count[consumer] > self.per_consumer:
            self.extra_left -= 1
        for p in partitions:
            del self.unassigned[p]


def _assign_ranges_matching(
    state: _TopicState,
    may_assign: Callable[[str, int], bool],
    assignment: dict[str, list[TopicPartition]],
) -> None:
    """Java ``assignRanges`` with a filter (the rack-matching pass)."""
    state.start_tracking()
    for consumer in state.consumers:
        if not state.unassigned:
            break
        limit = state.max_assignable(consumer)
        chosen: list[int] = []
        if limit > 0:
            for p in state.unassigned:
                if may_assign(consumer, p):
                    chosen.append(p)
                    if len(chosen) == limit:
                        break
        if chosen:
            assignment[consumer].extend(TopicPartition(state.topic, p) for p in chosen)
            state.on_assigned(consumer, chosen)


def _assign_ranges_rest(state: _TopicState, assignment: dict[str, list[TopicPartition]]) -> None:
    """Java ``assignRanges`` without a filter: every consumer takes the next partitions in order."""
    topic = state.topic
    if not state.touched:
        # Nothing was pre-assigned: the classic formula, without per-partition bookkeeping.
        q, extra = state.per_consumer, state.extra_left
        start = 0
        for i, consumer in enumerate(state.consumers):
            length = q + (1 if i < extra else 0)
            if length == 0:
                break
            assignment[consumer].extend(topic_partitions(topic, range(start, start + length)))
            start += length
        return
    remaining = list(state.unassigned)
    pos = 0
    for consumer in state.consumers:
        if pos >= len(remaining):
            break
        limit = state.max_assignable(consumer)
        chosen = remaining[pos : pos + limit]
        if chosen:
            pos += len(chosen)
            assignment[consumer].extend(topic_partitions(topic, chosen))
            state.assigned_count[consumer] += len(chosen)
            if state.assigned_count[consumer] > state.per_consumer:
                state.extra_left -= 1


def _assign_co_partitioned(
    consumers: list[str],
    num_partitions: int,
    states: list[_TopicState],
    assignment: dict[str, list[TopicPartition]],
) -> None:
    """Java ``assignCoPartitionedWithRackMatching``: partition p of every topic in the group goes
    to the first remaining consumer whose rack matches all of them and that has room in all."""
    if num_partitions == 0 or not consumers:
        return
    for state in states:
        state.start_tracking()
    remaining = list(consumers)
    for p in range(num_partitions):
        match = next(
            (c for c in remaining if all(s.racks_match(c, p) and s.max_assignable(c) > 0 for s in states)),
            None,
        )
        if match is None:
            continue
        for state in states:
            assignment[match].append(TopicPartition(state.topic, p))
            state.on_assigned(match, [p])
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break


def assign_range(
    partitions_per_topic: Mapping[str, int],
    members: Mapping[str, Member],
    *,
    partition_racks: Mapping[TopicPartition, frozenset[str]] | None = None,
) -> dict[str, list[TopicPartition]]:
    """Range assignment, identical to Java's ``RangeAssignor.assignPartitions``.

    Topics missing from ``partitions_per_topic`` (no metadata) or with 0 partitions are skipped,
    like Java. Lists are sorted by (topic, partition).
    """
    assignment: dict[str, list[TopicPartition]] = {member_id: [] for member_id in members}
    # Members in Java MemberInfo order once; every per-topic subscriber list inherits that order.
    order = sorted(members, key=lambda mid: member_sort_key(mid, members[mid].group_instance_id))
    subscribers: dict[str, list[str]] = {}
    for member_id in order:
        for topic in members[member_id].topics:
            subscribers.setdefault(topic, []).append(member_id)
    racks = {mid: rack for mid, m in members.items() if (rack := consumer_rack(m)) is not None}
    racks_of_partitions = partition_racks or {}

    states: list[_TopicState] = []
    # Topics are independent (Java walks a HashMap); sorted order leaves every list presorted.
    for topic in sorted(partitions_per_topic):
        count = partitions_per_topic[topic]
        if count <= 0:
            continue
        states.append(_TopicState(topic, count, subscribers.get(topic, []), racks, racks_of_partitions))

    if any(s.needs_rack_aware for s in states):
        groups: dict[tuple[tuple[tuple[str, str | None], ...], int], list[_TopicState]] = {}
        for state in states:
            groups.setdefault(state.group_key(), []).append(state)
        for (_consumers, size), group in groups.items():
            if len(group) > 1:
                _assign_co_partitioned(group[0].consumers, size, group, assignment)
            elif group[0].needs_rack_aware:
                only = group[0]
                _assign_ranges_matching(only, only.racks_match, assignment)

    for state in states:
        _assign_ranges_rest(state, assignment)
    for partitions in assignment.values():
        partitions.sort()
    return assignment
