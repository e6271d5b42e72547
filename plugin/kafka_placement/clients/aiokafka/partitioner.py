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
        # topic → (partitions, available, view): aiokafka lists both anew for every record; the view is
        # built (and checked) again only when they changed — one entry per topic
        self._views: dict[str, tuple[tuple[int, ...], tuple[int, ...] | None, TopicView]] = {}

    def __call__(
        self, key_bytes: bytes | None, all_partitions: Sequence[int], available_partitions: Sequence[int]
    ) -> int:
        view = self._view(_SHARED_TOPIC, all_partitions, available_partitions)
        return self.core.partition(view, check_key(key_bytes))

    def _view(
        self, topic: str, all_partitions: Sequence[int], available_partitions: Sequence[int] | None
    ) -> TopicView:
        partitions = tuple(all_partitions)
        available = None if available_partitions is None else tuple(available_partitions)
        cached = self._views.get(topic)
        if cached is not None and cached[0] == partitions and cached[1] == available:
            return cached[2]
        view = TopicView.build(topic, partitions, available)
        self._views[topic] = (partitions, available, view)
        return view

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
        view = self._view(topic, all_partitions, available_partitions)
        return self.core.partition(view, check_key(key_bytes), record_size, availability=availability)
