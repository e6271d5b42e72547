"""Round-robin over available partitions: Java's keyless rule (0.9–2.3) and RoundRobinPartitioner.

Semantics (Java ``DefaultPartitioner`` ≤2.3 keyless branch and ``RoundRobinPartitioner``):
a per-topic counter starting at a random int; each record takes ``next = counter++`` and goes to
``available[toPositive(next) % len(available)]``, or ``toPositive(next) % numPartitions`` when no partition
is available.

KAFKA-9965/KAFKA-16283: the Java producer calls ``partition()`` a second time when a new batch aborts the
first append, so the counter advances twice for one record and, with an even partition count, every
other partition is skipped. Here :meth:`RoundRobin.on_new_batch` rewinds the counter for that record, so
the retried call returns the same counter value (the KAFKA-17632 outcome): one counter step per record.
"""

from __future__ import annotations

import random as _random
import threading

from kafka_placement.java import INT_MAX, INT_MIN, POSITIVE_MASK, to_int32
from kafka_placement.partitioning.topicview import TopicView


class RoundRobin:
    """Keyless strategy: per-topic counter from a random start (``start`` fixes it, for tests)."""

    def __init__(self, start: int | None = None, *, rng: _random.Random | None = None) -> None:
        self._start = start
        self._rng = rng or _random.Random()
        self._counters: dict[str, int] = {}
        self._last: dict[str, int] = {}
        self._lock = threading.Lock()

    def _next_value(self, topic: str) -> int:
        value = self._counters.get(topic)
        if value is None:
            value = self._start if self._start is not None else self._rng.randint(INT_MIN, INT_MAX)
        self._counters[topic] = to_int32(value + 1)  # Java AtomicInteger.getAndIncrement wraps
        return value

    def choose(self, view: TopicView, record_size: int = 0) -> int:
        with self._lock:
            value = self._next_value(view.topic)
            positive = value & POSITIVE_MASK
            if view.available:
                partition = view.available[positive % len(view.available)]
            else:
                partition = view.partitions[positive % len(view.partitions)]
            self._last[view.topic] = partition
            return partition

    def on_new_batch(self, topic: str, prev_partition: int) -> None:
        """The record that just got ``prev_partition`` will be partitioned again: give it the same step."""
        with self._lock:
            if self._last.get(topic) == prev_partition and topic in self._counters:
                self._counters[topic] = to_int32(self._counters[topic] - 1)
                del self._last[topic]
