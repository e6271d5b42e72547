"""``kafka.KafkaProducer`` with KIP-794's ``partitioner.availability.timeout.ms`` for our partitioners.

kafka-python's partitioner sees the cluster metadata but never a delivery: this subclass tells our
:class:`~kafka_placement.clients.kafka_python.partitioners.PlacementPartitioner` which partitions have had
records waiting longer than ``availability_timeout_s`` since their last delivery, and keyless records skip
them (:mod:`kafka_placement.partitioning.availability`). An idempotent producer also asks for a new
producer id after kafka-python resets its old one, instead of stalling for good
(:mod:`~kafka_placement.clients.kafka_python.producer_id_reset`), and sends a producer-id request that
timed out again instead of failing for good
(:mod:`~kafka_placement.clients.kafka_python.producer_request_timeout`). Its metadata refresh loop outlives a
bare ``OSError`` (:mod:`~kafka_placement.clients.kafka_python.metadata_refresh`), and its sender waits
for a leader it cannot reach instead of spinning a core
(:mod:`~kafka_placement.clients.kafka_python.producer_connection_delay`) and goes on when a leader is
missing from the metadata's broker list
(:mod:`~kafka_placement.clients.kafka_python.producer_unknown_leader`)::

    from kafka_placement.clients.kafka_python.partitioners import JavaDefaultPartitioner
    from kafka_placement.clients.kafka_python.producer import KafkaProducer
    KafkaProducer(bootstrap_servers=..., partitioner=JavaDefaultPartitioner(), availability_timeout_s=1.0)
"""

from __future__ import annotations

from typing import Any

import kafka

from kafka_placement.clients.kafka_python.metadata_refresh import (
    MetadataRefreshMend,
    client_cluster,
    mend_metadata_refresh,
)
from kafka_placement.clients.kafka_python.partitioners import PlacementPartitioner
from kafka_placement.clients.kafka_python.producer_connection_delay import mend_sender_connection_delay
from kafka_placement.clients.kafka_python.producer_id_reset import mend_producer_id_reset
from kafka_placement.clients.kafka_python.producer_request_timeout import mend_request_timeout_retry
from kafka_placement.clients.kafka_python.producer_unknown_leader import mend_sender_unknown_leader
from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning.availability import PartitionAvailability

__all__ = ["KafkaProducer"]


class KafkaProducer(kafka.KafkaProducer):  # type: ignore[misc]  # kafka-python is untyped
    """``kafka.KafkaProducer``; ``availability_timeout_s`` (Java's ``partitioner.availability.timeout.ms``
    in seconds, 0 = off) needs one of our partitioners."""

    def __init__(self, *args: Any, availability_timeout_s: float = 0.0, **configs: Any) -> None:
        super().__init__(*args, **configs)
        mend_producer_id_reset(self)  # two kafka-python 3.0.12 bugs that end an idempotent producer
        mend_request_timeout_retry(self)
        mend_sender_connection_delay(self)  # its sender waits for an unreachable leader, not spins
        mend_sender_unknown_leader(self)  # and for a leader the broker list lacks, not fails for good
        #: kafka-python 3.0.12's refresh loop ends on a bare OSError; this one's goes on (what it converted)
        self.metadata_refresh: MetadataRefreshMend = mend_metadata_refresh(client_cluster(self))
        self.availability: PartitionAvailability | None = None
        if availability_timeout_s:
            partitioner = self.config["partitioner"]
            if not isinstance(partitioner, PlacementPartitioner):
                raise InvalidArgumentError(
                    "availability_timeout_s (KIP-794) needs one of kafka_placement's kafka-python "
                    f"partitioners, got {type(partitioner).__name__}"
                )
            self.availability = PartitionAvailability(availability_timeout_s)
            partitioner.availability = self.availability

    def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        headers: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
    ) -> Any:
        future = super().send(
            topic, value=value, key=key, headers=headers, partition=partition, timestamp_ms=timestamp_ms
        )
        tracker = self.availability
        if tracker is not None:
            tp = future._produce_future.topic_partition  # where kafka-python put the record
            if tp.partition is not None and tp.partition >= 0:
                tracker.sent(tp.topic, tp.partition)
                future.add_both(lambda _: tracker.delivered(tp.topic, tp.partition))
        return future
