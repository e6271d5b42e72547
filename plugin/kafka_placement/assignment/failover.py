"""The failover (``priority``) assignor, per topic.

Every member sends a priority (4-byte big-endian int in userData, see ``userdata``). For each topic,
the subscriber with the highest priority gets every partition; ties go to the smallest member id
(Java string order); a member that sent no priority ranks below every number. A member not
subscribed to a topic never gets it: the topic falls to its best subscriber. When the active
member leaves, the next rebalance hands everything to the next best, which is the failover.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_placement.assignment.ordering import java_string_key, topic_partitions
from kafka_placement.vocabulary import Member, TopicPartition


def failover_rank(member_id: str, member: Member) -> tuple[int, int, bytes]:
    """Sort key: smaller is preferred (has priority, then higher priority, then smaller id)."""
    if member.priority is None:
        return (1, 0, java_string_key(member_id))
    return (0, -member.priority, java_string_key(member_id))


def assign_failover(
    partitions_per_topic: Mapping[str, int],
    members: Mapping[str, Member],
    *,
    partition_racks: Mapping[TopicPartition, frozenset[str]] | None = None,
) -> dict[str, list[TopicPartition]]:
    """Failover assignment; ``partition_racks`` is ignored. Lists are sorted."""
    assignment: dict[str, list[TopicPartition]] = {member_id: [] for member_id in members}
    ranked = sorted(members, key=lambda mid: failover_rank(mid, members[mid]))
    subscriptions = {mid: frozenset(m.topics) for mid, m in members.items()}
    topics = {topic for member in members.values() for topic in member.topics}
    # topics in sorted order, each one's partitions ascending: every list comes out sorted by
    # (topic, partition) without a sort pass over millions of tuples
    for topic in sorted(topics):
        count = partitions_per_topic.get(topic, 0)
        if count <= 0:
            continue
        owner = next(mid for mid in ranked if topic in subscriptions[mid])
        assignment[owner].extend(topic_partitions(topic, range(count)))
    return assignment
