"""``aiokafka.AIOKafkaProducer`` that tells our partitioner the topic, the record's size and (KIP-794)
which partitions stopped taking data, that goes back to its bootstrap servers when no broker it knows
answers (:mod:`.rebootstrap`, KIP-899), and that, idempotent, takes a new producer id when the broker
refuses its sequence instead of failing that partition's records for ever (:mod:`.sequence_reset`).

aiokafka's partitioner callable gets no topic, so a keyless strategy's state would be shared by every
topic of the producer. This subclass hands :class:`~kafka_placement.clients.aiokafka.partitioner.
PlacementPartitioner` the topic and the record's bytes; with ``availability_timeout_s`` (Java's
``partitioner.availability.timeout.ms`` in seconds) keyless records skip partitions whose records have
waited that long since their last delivery. Any other partitioner is called as aiokafka does::

    from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer
    AIOKafkaProducer(bootstrap_servers=..., partitioner=PlacementPartitioner("murmur2_random"))
"""

from __future__ import annotations

import contextvars
from typing import Any

import aiokafka

from kafka_placement.clients.aiokafka.partitioner import PlacementPartitioner
from kafka_placement.clients.aiokafka.rebootstrap import mend_rebootstrap
from kafka_placement.clients.aiokafka.sequence_reset import mend_sequence_reset
from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning.availability import PartitionAvailability

# The partition chosen for the record a send() is enqueueing (set in _partition, read after it).
_CHOSEN: contextvars.ContextVar[int] = contextvars.ContextVar("kafka_placement_aiokafka_partition")

__all__ = ["AIOKafkaProducer"]


class AIOKafkaProducer(aiokafka.AIOKafkaProducer):  # type: ignore[misc]  # aiokafka is untyped
    """``aiokafka.AIOKafkaProducer``; with a :class:`PlacementPartitioner`, keyless state per topic."""

    def __init__(self, *args: Any, availability_timeout_s: float = 0.0, **configs: Any) -> None:
        super().__init__(*args, **configs)
        #: rebootstraps from bootstrap_servers when no known broker answers (KIP-899; .rebootstrap)
        self.rebootstraps = mend_rebootstrap(self.client)
        #: idempotent: a new producer id when the broker refuses a sequence (KIP-360; .sequence_reset)
        self.sequence_resets = mend_sequence_reset(self)
        self.availability: PartitionAvailability | None = None
        if availability_timeout_s:
            if not isinstance(self._partitioner, PlacementPartitioner):
                raise InvalidArgumentError(
                    "availability_timeout_s (KIP-794) needs kafka_placement's PlacementPartitioner, got "
                    f"{type(self._partitioner).__name__}"
                )
            self.availability = PartitionAvailability(availability_timeout_s)
        elif type(self).send is AIOKafkaProducer.send:  # (a subclass's own send stays in charge)
            # nothing to track: aiokafka's own send, without a coroutine of ours around each record
            self.__dict__["send"] = super().send

    async def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Any = None,
    ) -> Any:
        future = await super().send(topic, value, key, partition, timestamp_ms, headers)
        tracker = self.availability
        chosen = _CHOSEN.get(None)
        if tracker is not None and chosen is not None:
            tracker.sent(topic, chosen)
            future.add_done_callback(lambda _: tracker.delivered(topic, chosen))
        return future

    def _partition(
        self,
        topic: str,
        partition: int | None,
        key: Any,
        value: Any,
        serialized_key: bytes | None,
        serialized_value: bytes | None,
    ) -> int:
        partitioner = self._partitioner
        if partition is not None or not isinstance(partitioner, PlacementPartitioner):
            chosen = int(super()._partition(topic, partition, key, value, serialized_key, serialized_value))
        else:
            size = len(serialized_key or b"") + len(serialized_value or b"")
            stayed = None
            if self.availability is None:  # a keyless record on its sticky partition: no partition lists
                stayed = partitioner.stay_sticky(topic, serialized_key, size, self._metadata)
            chosen = (
                stayed
                if stayed is not None
                else partitioner.place(
                    topic,
                    serialized_key,
                    list(self._metadata.partitions_for_topic(topic)),
                    list(self._metadata.available_partitions_for_topic(topic)),
                    size,
                    self.availability,
                )
            )
        if self.availability is not None:  # for send(), which counts it as sent
            _CHOSEN.set(chosen)
        return chosen
