"""Record-level partitioners: explicit partition, key, or keyless — the whole producer rule, sans I/O.

Client adapters hand these a :class:`TopicView` built from their metadata and the serialized key; the
strategy returns the partition id. Every class documents the Kafka/librdkafka behaviour it follows.
"""

from __future__ import annotations

import random as _random
from typing import Protocol

from kafka_placement.partitioning.availability import PartitionAvailability
from kafka_placement.partitioning.roundrobin import RoundRobin
from kafka_placement.partitioning.schemes import Scheme, get_scheme
from kafka_placement.partitioning.sticky import DEFAULT_BATCH_SIZE, RackAwareSticky, UniformSticky
from kafka_placement.partitioning.topicview import TopicView
from kafka_placement.partitioning.validation import check_explicit_partition, check_key


class KeylessStrategy(Protocol):
    def choose(self, view: TopicView, record_size: int = 0) -> int: ...

    def on_new_batch(self, topic: str, prev_partition: int) -> None: ...


class RandomKeyless:
    """librdkafka ``random``: a uniformly random available partition (all partitions if none available)."""

    def __init__(self, rng: _random.Random | None = None) -> None:
        self._rng = rng or _random.Random()

    def choose(self, view: TopicView, record_size: int = 0) -> int:
        pool = view.available or view.partitions
        return pool[self._rng.randrange(len(pool))]

    def on_new_batch(self, topic: str, prev_partition: int) -> None:
        return None


class RecordPartitioner:
    """Explicit partition (validated) → itself; keyed → ``scheme`` over ALL partitions; keyless → ``keyless``.

    The default (``murmur2_random`` + :class:`UniformSticky`) is the Java producer since 3.3.
    ``record_size`` (key + value bytes) feeds the sticky byte count.
    """

    def __init__(
        self, scheme: str | Scheme = "murmur2_random", keyless: KeylessStrategy | None = None
    ) -> None:
        self.scheme = get_scheme(scheme)
        if self.scheme.always_random and keyless is None:
            keyless = RandomKeyless()
        self.keyless: KeylessStrategy = keyless if keyless is not None else UniformSticky()

    def partition(
        self,
        view: TopicView,
        key: bytes | None,
        record_size: int = 0,
        explicit: int | None = None,
        availability: PartitionAvailability | None = None,
    ) -> int:
        """``availability`` (KIP-794, the producer's): keyless records skip partitions that stopped
        taking data."""
        if explicit is not None:
            return check_explicit_partition(explicit, view.num_partitions)
        k = check_key(key)
        if self.scheme.is_keyless(k):
            return self.keyless.choose(self._keyless_view(view, availability), record_size)
        return view.partitions[self.scheme.keyed_index(k, view.num_partitions)]

    @staticmethod
    def _keyless_view(view: TopicView, availability: PartitionAvailability | None) -> TopicView:
        return view if availability is None else availability.filter(view)

    def on_new_batch(self, topic: str, prev_partition: int) -> None:
        self.keyless.on_new_batch(topic, prev_partition)


class RoundRobinPartitioner(RecordPartitioner):
    """Java ``RoundRobinPartitioner``: every record (keyed too) round-robin over available partitions,
    without the KAFKA-9965 double-count (see :mod:`kafka_placement.partitioning.roundrobin`)."""

    def __init__(self, start: int | None = None, *, rng: _random.Random | None = None) -> None:
        super().__init__("murmur2_random", RoundRobin(start, rng=rng))

    def partition(
        self,
        view: TopicView,
        key: bytes | None,
        record_size: int = 0,
        explicit: int | None = None,
        availability: PartitionAvailability | None = None,
    ) -> int:
        if explicit is not None:
            return check_explicit_partition(explicit, view.num_partitions)
        k = check_key(key)
        if self.scheme.is_keyless(k):  # KIP-794 applies to the records the scheme calls keyless
            view = self._keyless_view(view, availability)
        return self.keyless.choose(view, record_size)


def default_partitioner(
    batch_size: int = DEFAULT_BATCH_SIZE, rng: _random.Random | None = None
) -> RecordPartitioner:
    """Java 3.3+ default: murmur2 keyed, uniform sticky keyless."""
    return RecordPartitioner("murmur2_random", UniformSticky(batch_size, rng=rng))


def scheme_partitioner(scheme: str | Scheme, batch_size: int = DEFAULT_BATCH_SIZE) -> RecordPartitioner:
    """A scheme by name with Java's keyless stickiness (uniform sticky, ``batch_size`` bytes), or none
    for a scheme that places every record at random: what every adapter builds from a scheme name."""
    sch = get_scheme(scheme)
    return RecordPartitioner(sch, None if sch.always_random else UniformSticky(batch_size))


def legacy_default_partitioner(start: int | None = None) -> RecordPartitioner:
    """Java 0.9–2.3 DefaultPartitioner: murmur2 keyed, round-robin keyless."""
    return RecordPartitioner("murmur2_random", RoundRobin(start))


def rack_aware_partitioner(
    rack: str, batch_size: int = DEFAULT_BATCH_SIZE, rng: _random.Random | None = None
) -> RecordPartitioner:
    """Java with ``partitioner.rack.aware=true`` (KIP-1123): murmur2 keyed, rack-aware sticky keyless."""
    return RecordPartitioner("murmur2_random", RackAwareSticky(rack, batch_size, rng=rng))
