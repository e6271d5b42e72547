"""aiokafka partitioner callable: aiokafka's own DefaultPartitioner is the keyed oracle."""

from __future__ import annotations

import numpy as np
from aiokafka.partitioner import DefaultPartitioner

from kafka_placement.clients.aiokafka.partitioner import PlacementPartitioner
from kafka_placement.partitioning import RecordPartitioner, RoundRobin, partition_key


def test_keyed_matches_aiokafka_default() -> None:
    ours = PlacementPartitioner()
    theirs = DefaultPartitioner()
    rng = np.random.default_rng(3)
    parts = list(range(12))
    for _ in range(2000):
        key = rng.bytes(int(rng.integers(0, 50)))
        assert ours(key, parts, parts[:3]) == theirs(key, parts, parts[:3])


def test_keyless_uses_available_and_scheme_names() -> None:
    rr = PlacementPartitioner(RecordPartitioner("murmur2_random", RoundRobin(0)))
    assert [rr(None, [0, 1, 2, 3], [1, 3]) for _ in range(4)] == [1, 3, 1, 3]
    crc = PlacementPartitioner("consistent_random")
    assert crc(b"abc", list(range(7)), list(range(7))) == partition_key(b"abc", 7, "consistent")


class _Metadata:
    def __init__(self, partitions: dict[str, int]) -> None:
        self.partitions = partitions

    def partitions_for_topic(self, topic: str) -> set[int]:
        return set(range(self.partitions[topic]))

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return set(range(self.partitions[topic]))


def test_our_producer_keeps_keyless_state_per_topic() -> None:
    import asyncio

    from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer

    async def place() -> tuple[list[int], list[int]]:
        rr = PlacementPartitioner(RecordPartitioner("murmur2_random", RoundRobin(0)))
        ours = AIOKafkaProducer(bootstrap_servers="127.0.0.1:1", partitioner=rr)
        plain_rr = PlacementPartitioner(RecordPartitioner("murmur2_random", RoundRobin(0)))
        import aiokafka

        plain = aiokafka.AIOKafkaProducer(bootstrap_servers="127.0.0.1:1", partitioner=plain_rr)
        meta = _Metadata({"a": 4, "b": 4})
        ours._metadata = plain._metadata = meta
        got, shared = [], []
        for topic in "ababab":
            got.append(ours._partition(topic, None, None, b"v", None, b"v"))
            shared.append(plain._partition(topic, None, None, b"v", None, b"v"))
        assert ours._partition("a", 2, None, b"v", None, b"v") == 2  # explicit: aiokafka's own check
        assert ours._partition("a", None, b"k", b"v", b"k", b"v") == partition_key(b"k", 4)
        await ours.stop()  # never started: releases what the constructor opened
        await plain.stop()
        return got, shared

    got, shared = asyncio.run(place())
    assert got == [0, 0, 1, 1, 2, 2]  # round robin per topic: a0 b0 a1 b1 a2 b2
    assert shared == [0, 1, 2, 3, 0, 1]  # plain aiokafka: one counter for both topics


def test_the_view_follows_the_partitions_aiokafka_hands_over() -> None:
    """aiokafka lists the partitions anew for every record: the adapter reuses its view while they are the
    same and builds it again as soon as they change (a lost leader, a grown topic, a bad list)."""
    import pytest

    from kafka_placement.errors import InvalidArgumentError

    rr = PlacementPartitioner(RecordPartitioner("murmur2_random", RoundRobin(0)))
    assert {rr(None, [0, 1, 2, 3], [0, 1, 2, 3]) for _ in range(8)} == {0, 1, 2, 3}
    assert {rr(None, [0, 1, 2, 3], [0, 3]) for _ in range(8)} == {0, 3}  # 1 and 2 lost their leaders
    assert {rr.place("t", None, list(range(6)), list(range(6))) for _ in range(12)} == set(range(6))
    assert rr(b"k", list(range(9)), list(range(9))) == partition_key(b"k", 9, "murmur2")  # grown
    with pytest.raises(InvalidArgumentError, match=r"available partitions \[7\]"):
        rr(None, [0, 1], [0, 7])
    with pytest.raises(InvalidArgumentError, match=r"available partitions \[7\]"):
        rr(None, [0, 1], [0, 7])  # refused again: a bad list is never remembered


def test_keyless_fast_path_follows_the_core_as_leaders_come_and_go() -> None:
    """A keyless record that stays on the sticky partition is placed without a view; the sequence equals
    the core's, fed the full view each time, while partitions lose and regain their leaders."""
    import random

    from kafka_placement.partitioning.sticky import UniformSticky
    from kafka_placement.partitioning.topicview import TopicView

    def sticky() -> UniformSticky:
        return UniformSticky(400, rng=random.Random(11))

    adapter = PlacementPartitioner(RecordPartitioner("murmur2_random", sticky()))
    core = RecordPartitioner("murmur2_random", sticky())
    events = random.Random(5)
    partitions = list(range(12))
    led = set(partitions)
    got, expected = [], []
    for i in range(3000):
        if events.random() < 0.03:
            led ^= {events.randrange(12)}  # a partition loses its leader, or gets it back
        available = sorted(led)
        size = i % 80
        got.append(adapter.place("t", None, partitions, available, size))
        expected.append(core.partition(TopicView.build("t", partitions, available), None, size))
        assert got[-1] in (available or partitions)
    assert got == expected
    assert len(set(got)) > 3


class _LeaderMetadata:
    """aiokafka's ClusterMetadata methods the producer asks, with a settable leader per partition."""

    def __init__(self, leaders: dict[int, int]) -> None:
        self.leaders = leaders

    def partitions_for_topic(self, topic: str) -> set[int]:
        return set(self.leaders)

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return {p for p, leader in self.leaders.items() if leader != -1}

    def leader_for_partition(self, tp: object) -> int | None:
        return self.leaders.get(tp.partition)  # type: ignore[attr-defined]


def test_our_producer_places_keyless_records_as_the_core_without_partition_lists() -> None:
    """Our producer asks only the sticky partition's leader for a record that stays; the partitions are the
    core's, fed the full view, through leader loss — and records with a key still hash."""
    import asyncio
    import random

    from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer
    from kafka_placement.partitioning.sticky import UniformSticky
    from kafka_placement.partitioning.topicview import TopicView

    def sticky() -> UniformSticky:
        return UniformSticky(600, rng=random.Random(3))

    core = RecordPartitioner("murmur2_random", sticky())
    meta = _LeaderMetadata({p: p % 3 for p in range(12)})

    async def place() -> tuple[list[int], list[int]]:
        producer = AIOKafkaProducer(
            bootstrap_servers="127.0.0.1:1",
            partitioner=PlacementPartitioner(RecordPartitioner("murmur2_random", sticky())),
        )
        producer._metadata = meta
        events = random.Random(8)
        got, expected = [], []
        for i in range(2000):
            if events.random() < 0.03:
                p = events.randrange(12)
                meta.leaders[p] = -1 if meta.leaders[p] != -1 else p % 3
            value = b"v" * (i % 50)
            got.append(producer._partition("t", None, None, value, None, value))
            available = meta.available_partitions_for_topic("t")
            view = TopicView.build("t", meta.partitions_for_topic("t"), available)
            expected.append(core.partition(view, None, len(value)))
        assert producer._partition("t", None, b"k", b"v", b"k", b"v") == partition_key(b"k", 12)
        await producer.stop()
        return got, expected

    got, expected = asyncio.run(place())
    assert got == expected
    assert len(set(got)) > 3


def test_our_producer_sends_through_aiokafka_unless_it_tracks_or_is_subclassed() -> None:
    """Without availability tracking our producer's send is aiokafka's own (no coroutine of ours per
    record); with it, ours counts each record; a subclass's own send is never bypassed."""
    import asyncio

    import aiokafka

    from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer

    class Counting(AIOKafkaProducer):
        async def send(self, *args: object, **kwargs: object) -> object:
            return await super().send(*args, **kwargs)

    async def check() -> None:
        plain = AIOKafkaProducer(bootstrap_servers="127.0.0.1:1", partitioner=PlacementPartitioner())
        tracking = AIOKafkaProducer(
            bootstrap_servers="127.0.0.1:1", partitioner=PlacementPartitioner(), availability_timeout_s=1.0
        )
        sub = Counting(bootstrap_servers="127.0.0.1:1", partitioner=PlacementPartitioner())
        assert plain.send.__func__ is aiokafka.AIOKafkaProducer.send
        assert tracking.send.__func__ is AIOKafkaProducer.send
        assert sub.send.__func__ is Counting.send
        for producer in (plain, tracking, sub):
            await producer.stop()

    asyncio.run(check())
