"""What a group leader reads from its client's cluster metadata, for any client whose metadata object
answers ``partitions_for_topic(topic)`` (kafka-python's ``ClusterMetadata``, aiokafka's copy of it)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

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
