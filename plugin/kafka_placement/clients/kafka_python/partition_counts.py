"""Topic partition counts from a kafka-python consumer's own metadata, for our migration-ready assignors.

A migration-ready failover member that the broker assigns (Kafka converted its group to the consumer
protocol, docs/migration.md) can tell from its own assignment that the group's assignor is not failover:
failover never splits a topic between members. To see a split it needs the topic's partition count, which
kafka-python does not hand to an assignor; :func:`watch_partition_counts` gives it one.
"""

from __future__ import annotations

from typing import Any

from kafka_placement.clients.kafka_python.metadata_refresh import client_cluster

__all__ = ["watch_partition_counts"]


def watch_partition_counts(consumer: Any) -> None:
    """Let our migration-ready failover assignors in ``consumer`` (a ``kafka.KafkaConsumer``) read topic
    partition counts from its cluster metadata. Our ``KafkaConsumer`` and confluent ``Consumer`` call it;
    call it on a plain ``kafka.KafkaConsumer`` that runs ``FailoverAssignor(..., migration_ready=True)``."""
    assignors = consumer.config.get("partition_assignment_strategy") or ()
    states: list[Any] = [getattr(assignor, "state", None) for assignor in assignors]
    ready = [state for state in states if getattr(state, "migration_ready", False)]
    if not ready:
        return
    # kafka-python's public partitions_for_topic() may block to fetch metadata, and the check runs inside
    # a rebalance: read the metadata the client already holds
    cluster = client_cluster(consumer)

    def partition_count(topic: str) -> int | None:
        partitions = cluster.partitions_for_topic(topic)
        return len(partitions) if partitions else None

    for state in ready:
        state.partition_count = partition_count
