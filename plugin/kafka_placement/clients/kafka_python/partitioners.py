"""kafka-python 3.x partitioners: thin adapters over :mod:`kafka_placement.partitioning` (no algorithm here).

Pass an instance: ``KafkaProducer(partitioner=JavaDefaultPartitioner())``. kafka-python calls
``partition(topic, key, serialized_key, value, serialized_value, cluster)`` for records without an explicit
partition, and, for keyless records whose append would open a new batch, ``on_new_batch(topic, cluster,
prev_partition)`` followed by a second ``partition()`` call for the same record (KIP-480 hook).
The ``cluster`` (``kafka.cluster.ClusterMetadata``) gives all partitions, the available ones (leader known)
and, for rack awareness, each leader's ``broker_metadata(id).rack``.
"""

from __future__ import annotations

from typing import Any

from kafka.partitioner.abc import Partitioner
from kafka.structs import TopicPartition as KafkaTopicPartition

from kafka_placement.clients.cluster_metadata import StickyLeaderShortcut
from kafka_placement.errors import UnknownTopicError
from kafka_placement.partitioning.availability import PartitionAvailability
from kafka_placement.partitioning.record import RecordPartitioner, scheme_partitioner
from kafka_placement.partitioning.record import RoundRobinPartitioner as _CoreRoundRobin
from kafka_placement.partitioning.roundrobin import RoundRobin
from kafka_placement.partitioning.schemes import Scheme
from kafka_placement.partitioning.sticky import (
    DEFAULT_BATCH_SIZE,
    RackAwareSticky,
    UniformSticky,
    unmodified_sticky,
)
from kafka_placement.partitioning.topicview import TopicView
from kafka_placement.partitioning.validation import check_key

__all__ = [
    "JavaDefaultPartitioner",
    "LegacyDefaultPartitioner",
    "PlacementPartitioner",
    "RackAwarePartitioner",
    "RoundRobinPartitioner",
    "SchemePartitioner",
]


def topic_view(cluster: Any, topic: str, *, with_racks: bool = False) -> TopicView:
    """A :class:`TopicView` from kafka-python's ClusterMetadata (UnknownTopicError if it lacks ``topic``)."""
    partitions = cluster.partitions_for_topic(topic)
    if not partitions:
        raise UnknownTopicError(
            f"topic {topic!r} is not in the cluster metadata (known: {sorted(cluster.topics())})"
        )
    available = cluster.available_partitions_for_topic(topic) or ()
    racks: dict[int, str | None] = {}
    if with_racks:
        for p in available:
            leader = cluster.leader_for_partition(KafkaTopicPartition(topic, p))
            broker = cluster.broker_metadata(leader) if leader is not None and leader >= 0 else None
            racks[p] = getattr(broker, "rack", None)
    return TopicView(topic, tuple(sorted(partitions)), tuple(sorted(available)), racks)


class PlacementPartitioner(Partitioner):  # type: ignore[misc]
    """Adapter for any :class:`~kafka_placement.partitioning.record.RecordPartitioner`."""

    def __init__(self, core: RecordPartitioner, *, needs_racks: bool = False) -> None:
        self.core = core
        self._needs_racks = needs_racks
        #: KIP-794 tracking, set by our KafkaProducer (kafka_placement.clients.kafka_python.producer)
        self.availability: PartitionAvailability | None = None
        self._hashes_key = not isinstance(core, _CoreRoundRobin)
        # a keyless record goes straight to the keyless strategy when the core's own partition() would do
        # only that (kafka-python calls us for every record: a Python call less per keyless one)
        self._keyless_direct = self._hashes_key and type(core).partition is RecordPartitioner.partition
        self._null_is_keyless = core.scheme.is_keyless(None)  # the scheme's answer, asked once
        # Java's sticky strategy, unmodified: a keyless record that stays on the sticky partition needs only
        # that partition's leader, not the topic's view (kafka-python rebuilds its partition sets per call)
        sticky = unmodified_sticky(core.keyless) if self._keyless_direct else None
        self._sticky_shortcut = (
            StickyLeaderShortcut(sticky, KafkaTopicPartition) if sticky is not None else None
        )
        # topic → (partitions, available, view): the view is rebuilt only when the metadata changed
        self._views: dict[str, tuple[set[int], set[int], TopicView]] = {}

    def partition(
        self,
        topic: str,
        key: Any,
        serialized_key: bytes | None,
        value: Any,
        serialized_value: bytes | None,
        cluster: Any,
    ) -> int:
        scheme = self.core.scheme
        if serialized_key is not None:
            serialized_key = check_key(serialized_key)  # any bytes-like form hashes its raw bytes
            keyless = scheme.is_keyless(serialized_key)
        else:
            keyless = self._null_is_keyless
        if self._hashes_key and not keyless:
            partitions = cluster.partitions_for_topic(topic)
            if not partitions:
                raise UnknownTopicError(f"topic {topic!r} is not in the cluster metadata")
            n = len(partitions)
            idx = scheme.keyed_index(serialized_key, n)
            return idx if idx in partitions and n - 1 in partitions else sorted(partitions)[idx]
        size = (len(serialized_key) if serialized_key else 0) + (
            len(serialized_value) if serialized_value else 0
        )
        if self._sticky_shortcut is not None and self.availability is None:
            stayed = self._sticky_shortcut.stay(cluster, topic, size)
            if stayed is not None:
                return stayed
        view = self._view(cluster, topic)
        if self._keyless_direct and self.availability is None:  # keyless: what core.partition would do
            return self.core.keyless.choose(view, size)
        return self.core.partition(view, serialized_key, size, availability=self.availability)

    def _view(self, cluster: Any, topic: str) -> TopicView:
        """``topic``'s view, reused while kafka-python reports the same partitions and available ones
        (a rack-aware view also depends on the leaders, so it is built every time)."""
        if self._needs_racks:
            return topic_view(cluster, topic, with_racks=True)
        partitions = cluster.partitions_for_topic(topic)
        available = cluster.available_partitions_for_topic(topic) or set()
        cached = self._views.get(topic)
        if cached is not None and cached[0] == partitions and cached[1] == available:
            return cached[2]
        view = topic_view(cluster, topic)
        self._views[topic] = (set(partitions or ()), set(available), view)
        return view

    def on_new_batch(self, topic: str, cluster: Any, prev_partition: int) -> None:
        self.core.on_new_batch(topic, prev_partition)


class JavaDefaultPartitioner(PlacementPartitioner):
    """Java producer 3.3+: ``toPositive(murmur2(key)) % n`` keyed; uniform sticky keyless (KIP-794)."""

    def __init__(self, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        super().__init__(RecordPartitioner("murmur2_random", UniformSticky(batch_size)))


class LegacyDefaultPartitioner(PlacementPartitioner):
    """Java producer 0.9–2.3 DefaultPartitioner: murmur2 keyed; keyless round-robin over available partitions
    from a random per-topic start."""

    def __init__(self, start: int | None = None) -> None:
        super().__init__(RecordPartitioner("murmur2_random", RoundRobin(start)))


class RoundRobinPartitioner(PlacementPartitioner):
    """Java ``RoundRobinPartitioner`` (every record, keyed too) without the KAFKA-9965 skip."""

    def __init__(self, start: int | None = None) -> None:
        super().__init__(_CoreRoundRobin(start))


class RackAwarePartitioner(PlacementPartitioner):
    """KIP-1123: murmur2 keyed; keyless sticky among partitions led from ``rack`` (producer client.rack)."""

    def __init__(self, rack: str, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        super().__init__(
            RecordPartitioner("murmur2_random", RackAwareSticky(rack, batch_size)), needs_racks=True
        )


class SchemePartitioner(PlacementPartitioner):
    """A librdkafka scheme by name (``consistent_random``, ``murmur2``, ``fnv1a``, …) so kafka-python and
    confluent-kafka producers agree; keyless records (per the scheme's NULL/empty rule) go uniform sticky."""

    def __init__(self, scheme: str | Scheme, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        super().__init__(scheme_partitioner(scheme, batch_size))
