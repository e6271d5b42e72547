"""Uniform sticky keyless partitioning (KIP-480, KIP-794) and its rack-aware form (KIP-1123).

Semantics (Java ``BuiltInPartitioner``, Kafka 3.3+ default for keyless records):

- a topic's keyless records all go to one "sticky" partition until ``batch_size`` bytes have been
  produced to it (KIP-794; KIP-480's "until a new batch is created" let slow partitions get more data);
- then the next partition is drawn at random among the available partitions (all partitions if none is
  available), or, when queue sizes are known (``partitioner.adaptive.partitioning.enable``, default on),
  weighted by inverse queue size: weight ``max_queue + 1 - queue`` via a cumulative frequency table;
- KIP-1123 (``partitioner.rack.aware`` + ``client.rack``): the draw is restricted to available partitions
  whose leader is in the producer's rack, if there are any.

Deviation, stated: when the current sticky partition stops being available (its leader is gone) we switch
at once. KIP-794's ``partitioner.availability.timeout.ms`` (partitions that stopped taking data are skipped)
is applied by the producers that see deliveries (:mod:`kafka_placement.partitioning.availability`).
A record's bytes are counted once even if the client re-partitions it after
:meth:`UniformSticky.on_new_batch`.
"""

from __future__ import annotations

import bisect
import random as _random
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning.topicview import TopicView

DEFAULT_BATCH_SIZE = 16384  # batch.size default in Java and kafka-python


@dataclass(slots=True)
class _StickyState:
    partition: int
    produced: int = 0
    undo: tuple[int, int] | None = None  # (partition, produced before) of the last record counted


class UniformSticky:
    """Keyless strategy (KIP-794). ``rack`` set = rack-aware (KIP-1123)."""

    def __init__(
        self,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        rack: str | None = None,
        rng: _random.Random | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidArgumentError(f"batch_size must be an int >= 1, got {batch_size!r}")
        self.batch_size = batch_size
        self.rack = rack
        self._rng = rng or _random.Random()
        self._state: dict[str, _StickyState] = {}
        self._queues: dict[str, dict[int, int]] = {}
        self._lock = threading.Lock()

    def set_queue_sizes(self, topic: str, queue_sizes: Mapping[int, int]) -> None:
        """Known queued bytes/batches per partition (adaptive partitioning); empty mapping = unknown."""
        with self._lock:
            self._queues[topic] = dict(queue_sizes)

    def candidates(self, view: TopicView) -> tuple[int, ...]:
        """Partitions the next sticky partition is drawn from."""
        pool = view.available or view.partitions
        if self.rack is not None:
            local = tuple(p for p in pool if view.leader_racks.get(p) == self.rack)
            if local:
                return local
        return pool

    def next_partition(self, view: TopicView) -> int:
        """Draw a new sticky partition (uniform, or weighted by inverse queue size when known)."""
        pool = self.candidates(view)
        queues = self._queues.get(view.topic)
        if queues and all(p in queues for p in pool):
            sizes = [queues[p] for p in pool]
            top = max(sizes) + 1
            cumulative: list[int] = []
            total = 0
            for size in sizes:
                total += top - size
                cumulative.append(total)
            pick = self._rng.randrange(total)
            return pool[bisect.bisect_right(cumulative, pick)]
        return pool[self._rng.randrange(len(pool))]

    def choose(self, view: TopicView, record_size: int = 0) -> int:
        with self._lock:
            state = self._state.get(view.topic)
            if state is None or state.partition not in (view.available or view.partitions):
                state = _StickyState(self.next_partition(view))
                self._state[view.topic] = state
            partition = state.partition
            undo = (partition, state.produced)
            if record_size > 0:
                state.produced += record_size
            state.undo = undo
            if state.produced >= self.batch_size:  # Java: switch after batch.size bytes were produced
                self._state[view.topic] = _StickyState(self.next_partition(view), 0, undo)
            return partition

    def add_produced(self, topic: str, partition: int, produced: int) -> None:
        """Count ``produced`` bytes that another path (the C record router, under :meth:`lease`) sent to
        ``topic``'s sticky ``partition``."""
        with self._lock:
            state = self._state.get(topic)
            if state is not None and state.partition == partition and produced > 0:
                state.produced += produced
                state.undo = None

    def lease(self, topic: str) -> tuple[int, int] | None:
        """``(sticky partition, room)``: records whose bytes stay below ``room`` would go to that partition
        without a switch (None before the first record)."""
        with self._lock:
            state = self._state.get(topic)
            if state is None or state.produced >= self.batch_size:
                return None
            return state.partition, self.batch_size - state.produced

    def stay(self, topic: str, partition: int, record_size: int = 0) -> bool:
        """Count a record for ``topic``'s sticky ``partition`` if that is still the sticky one and the record
        leaves room before the switch: what :meth:`choose` does for such a record, for a caller that
        checked the partition is available without building a view. False: ask :meth:`choose`."""
        with self._lock:
            state = self._state.get(topic)
            if state is None or state.partition != partition:
                return False
            produced = state.produced + record_size if record_size > 0 else state.produced
            if produced >= self.batch_size:  # this record switches: choose() draws the next partition
                return False
            state.undo = (partition, state.produced)
            state.produced = produced
            return True

    def on_new_batch(self, topic: str, prev_partition: int) -> None:
        """The client will partition the last record again: un-count it so it lands on the same partition."""
        with self._lock:
            state = self._state.get(topic)
            if state is not None and state.undo is not None and state.undo[0] == prev_partition:
                self._state[topic] = _StickyState(prev_partition, state.undo[1])

    def current(self, topic: str) -> int | None:
        """The sticky partition the next keyless record of ``topic`` would get (None before the first)."""
        state = self._state.get(topic)
        return None if state is None else state.partition


def unmodified_sticky(strategy: object) -> UniformSticky | None:
    """``strategy`` when it is Java's sticky strategy with :meth:`UniformSticky.choose` as written (the
    rack-aware form included), else None: the shortcuts that count a record onto the sticky partition
    without calling ``choose`` (``stay``, the C router's lease) reproduce that ``choose`` only."""
    if isinstance(strategy, UniformSticky) and type(strategy).choose is UniformSticky.choose:
        return strategy
    return None


class RackAwareSticky(UniformSticky):
    """KIP-1123: uniform sticky restricted to partitions led from the producer's ``rack`` when possible."""

    def __init__(
        self, rack: str, batch_size: int = DEFAULT_BATCH_SIZE, *, rng: _random.Random | None = None
    ) -> None:
        if not isinstance(rack, str) or not rack:
            raise InvalidArgumentError(
                f"rack must be a non-empty str (the producer's client.rack), got {rack!r}"
            )
        super().__init__(batch_size, rack=rack, rng=rng)
