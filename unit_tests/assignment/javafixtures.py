"""Builders for the fixtures of Kafka's Java assignor tests, so their expected values can be
checked here verbatim (RangeAssignorTest / AbstractPartitionAssignorTest)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafka_placement.assignment import Member, TopicPartition

ALL_RACKS = ("a", "b", "c", "d", "e", "f")


def racks(n: int) -> list[str | None]:
    """``AbstractPartitionAssignorTest.racks(n)``."""
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(n)]


def null_racks(n: int) -> list[str | None]:
    return [None] * n


def tps(text: str) -> list[TopicPartition]:
    """Parse Java's ``"t1-0, t1-3"`` partition strings."""
    if not text.strip():
        return []
    out = []
    for item in text.split(", "):
        topic, _, partition = item.rpartition("-")
        out.append(TopicPartition(topic, int(partition)))
    return sorted(out)


def java_partition_racks(
    num_partitions_per_topic: Mapping[str, int], replication_factor: int, broker_racks: Sequence[str | None]
) -> dict[TopicPartition, set[str]]:
    """Replica racks as the Java test lays replicas out: topics in insertion order, partition i of
    a topic starting at node index ``next_index`` has replicas ``(i + j + next_index) % brokers``."""
    result: dict[TopicPartition, set[str]] = {}
    next_index = 0
    n = len(broker_racks)
    for topic, count in num_partitions_per_topic.items():
        for i in range(count):
            replica_racks = {broker_racks[(i + j + next_index) % n] for j in range(replication_factor)}
            result[TopicPartition(topic, i)] = {r for r in replica_racks if r is not None}
        next_index += count
    return result


def java_members(
    consumer_topics: Sequence[Sequence[str]], consumer_racks: Sequence[str | None]
) -> dict[str, Member]:
    """``consumer0..n`` with the given topics and racks, as ``verifyRackAssignment`` builds them."""
    return {
        f"consumer{i}": Member(topics, rack=consumer_racks[i]) for i, topics in enumerate(consumer_topics)
    }


def rack_mismatches(
    assignment: Mapping[str, list[TopicPartition]],
    members: Mapping[str, Member],
    partition_racks: Mapping[TopicPartition, set[str]],
) -> int:
    """Partitions on a racked consumer without a replica in that rack (Java's mismatch count)."""
    count = 0
    for member_id, partitions in assignment.items():
        rack = members[member_id].rack
        if rack is None:
            continue
        count += sum(1 for tp in partitions if rack not in partition_racks.get(tp, set()))
    return count
