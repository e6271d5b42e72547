"""What we read from a client's cluster metadata, for any client whose metadata object answers
``partitions_for_topic(topic)`` and ``leader_for_partition(TopicPartition)`` (kafka-python's
``ClusterMetadata``, aiokafka's copy of it): a group leader's partition counts, and a producer's check
that a keyless record may stay on its sticky partition."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from kafka_placement.partitioning.sticky import UniformSticky

log = logging.getLogger(__name__)


def partitions_per_topic(cluster: Any, topics: Iterable[str]) -> dict[str, int]:
    """Partition counts of the subscribed topics the consumer's metadata knows (others skipped,
    as Java skips topics without metadata)."""
    counts: dict[str, int] = {}
    for topic in topics:
        partitions = cluster.partitions_for_topic(topic)
        if partitions:
            counts[topic] = len(partitions)
        else:
            log.warning("No partition metadata for topic %s; it is left unassigned", topic)
    return counts


class StickyLeaderShortcut:
    """A keyless record onto its sticky partition, asking the client's metadata only for that partition's
    leader (``None`` or ``-1``: none) instead of the topic's partition sets, which both clients build anew
    for every call. ``topic_partition`` makes the client's own ``TopicPartition``."""

    def __init__(self, sticky: UniformSticky, topic_partition: Callable[[str, int], Any]) -> None:
        self.sticky = sticky
        self._topic_partition = topic_partition
        self._tps: dict[str, Any] = {}  # topic → the client's TopicPartition of its sticky partition

    def stay(self, cluster: Any, topic: str, record_size: int) -> int | None:
        """The sticky partition, counted as :meth:`UniformSticky.choose` counts it, when it still has a
        leader (it is among the available ones) and the record leaves room before the switch; None: the
        topic's view and ``choose`` decide."""
        sticky = self.sticky
        current = sticky.current(topic)
        if current is None:
            return None
        tp = self._tps.get(topic)
        if tp is None or tp.partition != current:
            tp = self._tps[topic] = self._topic_partition(topic, current)
        leader = cluster.leader_for_partition(tp)
        if leader is None or leader == -1 or not sticky.stay(topic, current, record_size):
            return None
        return current
