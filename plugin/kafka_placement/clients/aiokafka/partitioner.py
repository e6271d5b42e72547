"""aiokafka partitioner callable: ``AIOKafkaProducer(partitioner=PlacementPartitioner())``.

aiokafka calls ``partitioner(serialized_key, all_partitions, available_partitions)`` for every record without
an explicit partition. It does not pass the topic, so with plain ``aiokafka.AIOKafkaProducer`` keyless state
(round-robin counter, sticky partition) is shared by all topics of one producer. Our
:class:`kafka_placement.clients.aiokafka.producer.AIOKafkaProducer` passes the topic and the record's size
(:meth:`PlacementPartitioner.place`): keyless state per topic, and ``batch.size`` stickiness counted in
bytes as Java does. No algorithm here: the :class:`~kafka_placement.partitioning.record.RecordPartitioner`
decides.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka_placement.partitioning.availability import PartitionAvailability
from kafka_placement.partitioning.record import RecordPartitioner, default_partitioner, scheme_partitioner
from kafka_placement.partitioning.schemes import Scheme
from kafka_placement.partitioning.topicview import TopicView
from kafka_placement.partitioning.validation import check_key

__all__ = ["PlacementPartitioner"]

_SHARED_TOPIC = ""


class PlacementPartitioner:
    """Callable adapter; ``core`` is a RecordPartitioner or a scheme name (keyless → uniform sticky)."""

    def __init__(self, core: RecordPartitioner | str | Scheme | None = None) -> None:
        if core is None:
            core = default_partitioner()
        elif not isinstance(core, RecordPartitioner):
            core = scheme_partitioner(core)
        self.core = core

    def __call__(
        self, key_bytes: bytes | None, all_partitions: Sequence[int], available_partitions: Sequence[int]
    ) -> int:
        view = TopicView.build(_SHARED_TOPIC, all_partitions, available_partitions)
        return self.core.partition(view, check_key(key_bytes))

    def place(
        self,
        topic: str,
        key_bytes: bytes | None,
        all_partitions: Sequence[int],
        available_partitions: Sequence[int],
        record_size: int = 0,
        availability: PartitionAvailability | None = None,
    ) -> int:
        """The partition of one record of ``topic`` (keyless state kept per topic)."""
        view = TopicView.build(topic, all_partitions, available_partitions)
        return self.core.partition(view, check_key(key_bytes), record_size, availability=availability)
