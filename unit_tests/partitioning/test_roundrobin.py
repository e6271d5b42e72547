"""Round-robin keyless / Java RoundRobinPartitioner semantics, and the KAFKA-9965 scenario."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.partitioning import RoundRobin, RoundRobinPartitioner, TopicView


def _java_round_robin(start: int, records: int, available: list[int], n: int) -> list[int]:
    """Java DefaultPartitioner 0.9–2.3, keyless: nextValue = counter.getAndIncrement();
    toPositive(next) % available.size()."""
    out = []
    counter = start
    for _ in range(records):
        value = counter
        counter = (counter + 1 + 2**31) % 2**32 - 2**31  # AtomicInteger wraps
        positive = value & 0x7FFFFFFF
        out.append(available[positive % len(available)] if available else positive % n)
    return out


@given(st.integers(-(2**31), 2**31 - 1), st.integers(1, 20), st.data())
def test_matches_java_counter_formula(start: int, n: int, data: st.DataObject) -> None:
    available = sorted(data.draw(st.sets(st.integers(0, n - 1))))
    view = TopicView.build("t", range(n), available)
    rr = RoundRobin(start)
    got = [rr.choose(view) for _ in range(3 * n + 5)]
    assert got == _java_round_robin(start, 3 * n + 5, available, n)


def test_counter_wraps_like_java_int() -> None:
    view = TopicView.of_count("t", 7)
    rr = RoundRobin(2**31 - 2)
    assert [rr.choose(view) for _ in range(4)] == _java_round_robin(2**31 - 2, 4, list(range(7)), 7)


def test_random_start_and_per_topic_counters() -> None:
    rr = RoundRobin(rng=random.Random(1))
    a, b = TopicView.of_count("a", 5), TopicView.of_count("b", 5)
    first_a = rr.choose(a)
    first_b = rr.choose(b)
    assert rr.choose(a) == (first_a + 1) % 5
    assert rr.choose(b) == (first_b + 1) % 5
    starts = {RoundRobin(rng=random.Random(s)).choose(a) for s in range(40)}
    assert len(starts) == 5  # the start is random


def test_only_available_partitions_get_records() -> None:
    view = TopicView.build("t", range(6), [0, 2, 5])
    rr = RoundRobin(0)
    assert {rr.choose(view) for _ in range(30)} == {0, 2, 5}


class _AbortingAccumulator:
    """Java/kafka-python producer send path when every append needs a new batch (linger 0, batch sent):
    partition() → append aborts for a new batch → on_new_batch(prev) → partition() again → append."""

    def __init__(self) -> None:
        self.appended: list[int] = []

    def send(self, partitioner: RoundRobinPartitioner | RoundRobin, view: TopicView, rewind: bool) -> None:
        first = self._partition(partitioner, view)
        if rewind:
            partitioner.on_new_batch(view.topic, first)
        self.appended.append(self._partition(partitioner, view))

    @staticmethod
    def _partition(partitioner: RoundRobinPartitioner | RoundRobin, view: TopicView) -> int:
        if isinstance(partitioner, RoundRobin):
            return partitioner.choose(view)
        return partitioner.partition(view, None)


def test_kafka_9965_even_partition_count_reaches_every_partition() -> None:
    view = TopicView.of_count("t", 6)
    fixed = _AbortingAccumulator()
    ours = RoundRobinPartitioner(start=0)
    for _ in range(60):
        fixed.send(ours, view, rewind=True)
    assert [fixed.appended.count(p) for p in range(6)] == [10] * 6

    # the bug, reproduced with the same counter but no rewind: two steps per record, half the partitions
    buggy = _AbortingAccumulator()
    skipping = RoundRobin(0)
    for _ in range(60):
        buggy.send(skipping, view, rewind=False)
    assert sorted(set(buggy.appended)) == [1, 3, 5]


def test_keyed_records_are_round_robin_too() -> None:
    view = TopicView.of_count("t", 4)
    rr = RoundRobinPartitioner(start=0)
    assert [rr.partition(view, b"same-key") for _ in range(8)] == [0, 1, 2, 3, 0, 1, 2, 3]
