"""Validation of the inputs every strategy shares (typed errors naming the bad value)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.vocabulary import Member, TopicPartition

#: Java's partition count is an int; we accept the same range.
MAX_PARTITIONS_PER_TOPIC = 2**31 - 1

PartitionRacks = Mapping[TopicPartition, Iterable[str]]


#: Partitions one assignment may cover (all topics together): 2**22, just above the largest case we
#: benchmark (4M). Every strategy answers it in a few seconds on a loaded 2-core machine (a result is
#: one tuple per partition, ~100 bytes each); above it an assignment is refused up front instead.
MAX_GROUP_PARTITIONS = 4_194_304


def check_partitions_per_topic(partitions_per_topic: Mapping[str, int]) -> dict[str, int]:
    """A plain ``{topic: count}`` copy; counts must be ints in [0, 2147483647]."""
    if not isinstance(partitions_per_topic, Mapping):
        raise InvalidArgumentError(
            f"partitions_per_topic must be a mapping of topic name to partition count, "
            f"got {type(partitions_per_topic).__name__}"
        )
    checked: dict[str, int] = {}
    for topic, count in partitions_per_topic.items():
        if not isinstance(topic, str):
            raise InvalidArgumentError(f"topic names must be str, got {topic!r}")
        if isinstance(count, bool) or not isinstance(count, int):
            raise InvalidArgumentError(
                f"partition count of topic {topic!r} must be an int in [0, {MAX_PARTITIONS_PER_TOPIC}], "
                f"got {count!r}"
            )
        if not 0 <= count <= MAX_PARTITIONS_PER_TOPIC:
            raise InvalidArgumentError(
                f"partition count of topic {topic!r} is {count}, allowed range is "
                f"[0, {MAX_PARTITIONS_PER_TOPIC}]"
            )
        checked[topic] = count
    total = sum(checked.values())
    if total > MAX_GROUP_PARTITIONS:
        raise InvalidArgumentError(
            f"partitions_per_topic lists {total:,} partitions; the limit is {MAX_GROUP_PARTITIONS:,} "
            "(an assignment is a list per partition)"
        )
    return checked


def check_members(members: Mapping[str, Member]) -> dict[str, Member]:
    """A plain ``{member_id: Member}`` copy; ids must be str, values ``Member``."""
    if not isinstance(members, Mapping):
        raise InvalidArgumentError(
            f"members must be a mapping of member id to Member, got {type(members).__name__}"
        )
    checked: dict[str, Member] = {}
    for member_id, member in members.items():
        if not isinstance(member_id, str):
            raise InvalidArgumentError(f"member ids must be str, got {member_id!r}")
        if not isinstance(member, Member):
            raise InvalidArgumentError(
                f"member {member_id!r} must be a kafka_placement.assignment.Member, "
                f"got {type(member).__name__}"
            )
        checked[member_id] = member
    return checked


def check_partition_racks(
    partition_racks: PartitionRacks | None,
) -> dict[TopicPartition, frozenset[str]] | None:
    """``{TopicPartition: frozenset(racks)}``; ``None`` racks of rackless brokers are dropped."""
    if partition_racks is None:
        return None
    if not isinstance(partition_racks, Mapping):
        raise InvalidArgumentError(
            "partition_racks must be a mapping of TopicPartition to a set of rack names, "
            f"got {type(partition_racks).__name__}"
        )
    checked: dict[TopicPartition, frozenset[str]] = {}
    for tp, racks in partition_racks.items():
        if not (isinstance(tp, tuple) and len(tp) == 2 and isinstance(tp[0], str) and isinstance(tp[1], int)):
            raise InvalidArgumentError(
                f"partition_racks keys must be TopicPartition(topic, partition), got {tp!r}"
            )
        if isinstance(racks, str):
            raise InvalidArgumentError(
                f"racks of {tp!r} must be a set of rack names, not the single string {racks!r}"
            )
        rack_set = frozenset(r for r in racks if r is not None)
        for rack in rack_set:
            if not isinstance(rack, str):
                raise InvalidArgumentError(f"rack names of {tp!r} must be str, got {rack!r}")
        checked[TopicPartition(tp[0], tp[1])] = rack_set
    return checked
