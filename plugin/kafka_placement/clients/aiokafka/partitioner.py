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
from typing import Any

from kafka_placement.clients.cluster_metadata import StickyLeaderShortcut
from kafka_placement.partitioning.availability import PartitionAvailability
from kafka_placement.partitioning.record import RecordPartitioner, default_partitioner, scheme_partitioner
from kafka_placement.partitioning.schemes import Scheme
from kafka_placement.partitioning.sticky import unmodified_sticky
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
        # Java's sticky strategy, unmodified, behind the core's own partition(): a keyless record that stays
        # on the sticky partition is placed without a view (see place)
        self._sticky = (
            unmodified_sticky(core.keyless) if type(core).partition is RecordPartitioner.partition else None
        )
        self._leader_shortcut: StickyLeaderShortcut | None = None  # made at its first use (aiokafka's type)

    def stay_sticky(self, topic: str, key_bytes: bytes | None, record_size: int, cluster: Any) -> int | None:
        """For our producer: the sticky partition of a keyless record of ``topic`` that stays on it, counted
        as :meth:`place` counts it, asking aiokafka's ``cluster`` metadata only whether that partition has
        a leader (is among the available ones) — not for the partition lists; None: ask :meth:`place`."""
        sticky = self._sticky
        if sticky is None or not self.core.scheme.is_keyless(check_key(key_bytes)):
            return None
        if self._leader_shortcut is None:
            from aiokafka.structs import TopicPartition as AioTopicPartition

            self._leader_shortcut = StickyLeaderShortcut(sticky, AioTopicPartition)
        return self._leader_shortcut.stay(cluster, topic, record_size)

    def __call__(
        self, key_bytes: bytes | None, all_partitions: Sequence[int], available_partitions: Sequence[int]
    ) -> int:
        return self.place(_SHARED_TOPIC, key_bytes, all_partitions, available_partitions)

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
        key = check_key(key_bytes)
        sticky = self._sticky
        if sticky is not None and availability is None and self.core.scheme.is_keyless(key):
            # what choose() does for a record that stays: the sticky partition is among the available ones
            # (all, when none is) and the record leaves room before the switch
            current = sticky.current(topic)
            pool = available_partitions or all_partitions
            if current is not None and current in pool and sticky.stay(topic, current, record_size):
                return current
        view = self._view(topic, all_partitions, available_partitions)
        return self.core.partition(view, key, record_size, availability=availability)
