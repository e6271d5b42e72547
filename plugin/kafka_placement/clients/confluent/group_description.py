"""confluent-kafka adapter for ``group describe`` of a consumer-protocol group (KIP-848):
``AdminClient.describe_consumer_groups`` (ConsumerGroupDescribe) as a
:class:`~kafka_placement.groups.description.DescribedGroup`. No judgement here.

confluent-kafka 2.16 gives the group type, state, server assignor and per member its client id, host,
instance id, assignment and target assignment — but neither the member's rack (``client.rack``, where
a consumer-protocol failover priority rides) nor its subscription, which ConsumerGroupDescribe carries.
So priorities are "not visible" here. ``group describe`` uses this only when Kafka's message schema for
ConsumerGroupDescribe cannot be had for kafka-python
(:mod:`kafka_placement.clients.kafka_python.consumer_group_describe`); see docs/groups.md.
"""

from __future__ import annotations

from typing import Any

from kafka_placement.groups.description import DescribedGroup, DescribedMember
from kafka_placement.vocabulary import TopicPartition

RACK_NOT_VISIBLE = (
    "members' client.rack (where a consumer-protocol priority rides) and subscriptions are not in "
    "confluent-kafka's ConsumerGroupDescribe result: priorities are not visible"
)


def _partitions(assignment: Any) -> tuple[TopicPartition, ...]:
    parts = getattr(assignment, "topic_partitions", None) or ()
    return tuple(sorted({TopicPartition(str(tp.topic), int(tp.partition)) for tp in parts}))


def describe_consumer_group(
    admin: Any, group_id: str, partition_counts: dict[str, int] | None = None, *, timeout_s: float = 15.0
) -> DescribedGroup:
    """The group through ConsumerGroupDescribe (``admin``: a confluent-kafka ``AdminClient``)."""
    description = admin.describe_consumer_groups([group_id], request_timeout=timeout_s)[group_id].result(
        timeout=timeout_s + 5
    )
    members = tuple(
        DescribedMember(
            member_id=str(m.member_id),
            client_id=str(m.client_id or ""),
            host=str(m.host or ""),
            instance_id=m.group_instance_id,
            priority_source="not visible",
            assignment=_partitions(m.assignment),
            target_assignment=_partitions(m.target_assignment) if m.target_assignment is not None else None,
        )
        for m in description.members
    )
    state = getattr(description.state, "name", str(description.state))
    group = DescribedGroup(
        group_id,
        "consumer",
        str(state),
        description.partition_assignor or None,
        members,
        notes=(RACK_NOT_VISIBLE,),
    )
    counts = dict(partition_counts or {})
    return DescribedGroup(
        group.group_id, group.protocol, group.state, group.assignor, members, counts, group.notes
    )


def topic_partition_counts(admin: Any, topics: list[str], *, timeout_s: float = 15.0) -> dict[str, int]:
    """Partition counts from cluster metadata (``list_topics``); topics that do not exist are left out."""
    counts = {}
    for topic in topics:
        metadata = admin.list_topics(topic=topic, timeout=timeout_s)
        info = metadata.topics.get(topic)
        if info is not None and info.error is None and info.partitions:
            counts[topic] = len(info.partitions)
    return counts
