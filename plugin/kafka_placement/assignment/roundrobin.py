"""Java's ``RoundRobinAssignor`` (``roundrobin``).

All partitions of all subscribed topics in (topic, partition) order; members in ``MemberInfo``
order (static members by ``group.instance.id`` first, then member ids) on a circular iterator that
skips members not subscribed to the partition's topic. Topics missing from metadata are skipped.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_placement.assignment.ordering import java_sorted, member_sort_key, topic_partitions
from kafka_placement.vocabulary import Member, TopicPartition


def assign_roundrobin(
    partitions_per_topic: Mapping[str, int],
    members: Mapping[str, Member],
    *,
    partition_racks: Mapping[TopicPartition, frozenset[str]] | None = None,
) -> dict[str, list[TopicPartition]]:
    """Round-robin assignment, identical to Java's; ``partition_racks`` is ignored (Java's
    round robin is not rack-aware). Lists are sorted by (topic, partition)."""
    assignment: dict[str, list[TopicPartition]] = {member_id: [] for member_id in members}
    if not members:
        return assignment
    order = sorted(members, key=lambda mid: member_sort_key(mid, members[mid].group_instance_id))
    subscriptions = [frozenset(members[mid].topics) for mid in order]
    lists = [assignment[mid] for mid in order]
    n = len(order)
    all_topics = java_sorted({topic for member in members.values() for topic in member.topics})
    everyones = frozenset.intersection(*subscriptions)
    cursor = 0
    for topic in all_topics:
        count = partitions_per_topic.get(topic, 0)
        if count <= 0:
            continue
        if topic in everyones:
            # Every member takes it: no skipping, so member (cursor + k) % n gets partitions
            # k, k + n, k + 2n, ...
            tps = topic_partitions(topic, range(count))
            for k in range(min(n, count)):
                lists[(cursor + k) % n].extend(tps[k::n])
            cursor = (cursor + count) % n
            continue
        for p in range(count):
            while topic not in subscriptions[cursor]:
                cursor = (cursor + 1) % n
            lists[cursor].append(TopicPartition(topic, p))
            cursor = (cursor + 1) % n
    for partitions in assignment.values():
        partitions.sort()
    return assignment
