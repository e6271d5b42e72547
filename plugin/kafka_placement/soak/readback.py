"""What the cluster holds after a soak, read independently of the groups under test: every record of the
topic (a plain kafka-python consumer with no group, from each partition's start to its high watermark)
and each group's committed offsets. The records read back are judged against the acknowledgements
after the run's reassignment (:func:`~kafka_placement.soak.invariants.missing_from_topic`) and explain
unconsumed records (:mod:`~kafka_placement.soak.diagnosis`)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from kafka_placement.soak.events import RecordId
from kafka_placement.soak.load import record_identity

__all__ = ["committed_offsets", "read_topic"]


def read_topic(
    settings: dict[str, Any], topic: str, partitions: int, timeout_s: float
) -> tuple[dict[RecordId, tuple[int, int]], dict[int, int], bool]:
    """Every record of ``topic`` as (producer, sequence) → (partition, offset), the high watermarks, and
    whether the read reached every high watermark within ``timeout_s``."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        **settings, group_id=None, enable_auto_commit=False, request_timeout_ms=30000, max_poll_records=5000
    )
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        found: dict[RecordId, tuple[int, int]] = {}
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            if time.monotonic() > deadline:
                return found, {tp.partition: ends[tp] for tp in tps}, False
            for tp, records in consumer.poll(timeout_ms=1000).items():
                for record in records:
                    found[record_identity(record.value)] = (tp.partition, record.offset)
        return found, {tp.partition: ends[tp] for tp in tps}, True
    finally:
        consumer.close()


def committed_offsets(admin: Any, topic: str, groups: Iterable[str]) -> dict[str, dict[int, int]]:
    """Group → partition → committed offset (partitions without a commit left out)."""
    from kafka_placement.clients.kafka_python.group_reads import fetch_group_offsets

    out: dict[str, dict[int, int]] = {}
    for group in groups:
        # after the soak's broker kills the group's coordinator has often moved
        offsets = fetch_group_offsets(admin, [group]).get(group) or {}  # group → {tp: meta}
        out[group] = {
            tp.partition: meta.offset
            for tp, meta in offsets.items()
            if tp.topic == topic and meta.offset >= 0
        }
    return out
