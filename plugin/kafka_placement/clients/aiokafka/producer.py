"""``aiokafka.AIOKafkaProducer`` that tells our partitioner the topic (and the record's size).

aiokafka's partitioner callable gets no topic, so a keyless strategy's state would be shared by every
topic of the producer. This subclass hands :class:`~kafka_placement.clients.aiokafka.partitioner.
PlacementPartitioner` the topic and the record's bytes; any other partitioner is called as aiokafka does::

    from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer
    AIOKafkaProducer(bootstrap_servers=..., partitioner=PlacementPartitioner("murmur2_random"))
"""

from __future__ import annotations

from typing import Any

import aiokafka

from kafka_placement.clients.aiokafka.partitioner import PlacementPartitioner

__all__ = ["AIOKafkaProducer"]


class AIOKafkaProducer(aiokafka.AIOKafkaProducer):  # type: ignore[misc]  # aiokafka is untyped
    """``aiokafka.AIOKafkaProducer``; with a :class:`PlacementPartitioner`, keyless state per topic."""

    def _partition(
        self,
        topic: str,
        partition: int | None,
        key: Any,
        value: Any,
        serialized_key: bytes | None,
        serialized_value: bytes | None,
    ) -> int:
        if partition is not None or not isinstance(self._partitioner, PlacementPartitioner):
            return int(super()._partition(topic, partition, key, value, serialized_key, serialized_value))
        size = len(serialized_key or b"") + len(serialized_value or b"")
        return self._partitioner.place(
            topic,
            serialized_key,
            list(self._metadata.partitions_for_topic(topic)),
            list(self._metadata.available_partitions_for_topic(topic)),
            size,
        )
