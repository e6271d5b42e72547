"""kafka-python adapters: kafka-python's own DefaultPartitioner is the keyed oracle; keyless strategies
see only available partitions; on_new_batch keeps one counter step per record."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from kafka.partitioner import DefaultPartitioner, Partitioner
from kafka.structs import TopicPartition

from kafka_placement.clients.kafka_python.partitioners import (
    JavaDefaultPartitioner,
    LegacyDefaultPartitioner,
    PlacementPartitioner,
    RackAwarePartitioner,
    RoundRobinPartitioner,
    SchemePartitioner,
    topic_view,
)
from kafka_placement.errors import UnknownTopicError
from kafka_placement.partitioning import partition_key


@dataclass
class _Broker:
    nodeId: int
    rack: str | None


class FakeCluster:
    """The ClusterMetadata methods kafka-python's partitioners use, with a settable leader map."""

    def __init__(self, leaders: dict[str, dict[int, int]], racks: dict[int, str]) -> None:
        self.leaders = leaders
        self.racks = racks

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return set(self.leaders)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return set(self.leaders[topic]) if topic in self.leaders else None

    def available_partitions_for_topic(self, topic: str) -> set[int] | None:
        if topic not in self.leaders:
            return None
        return {p for p, leader in self.leaders[topic].items() if leader != -1}

    def leader_for_partition(self, tp: TopicPartition) -> int | None:
        return self.leaders.get(tp.topic, {}).get(tp.partition)

    def broker_metadata(self, broker_id: int) -> _Broker | None:
        return _Broker(broker_id, self.racks[broker_id]) if broker_id in self.racks else None


RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def _cluster(n: int = 12, down: frozenset[int] = frozenset()) -> FakeCluster:
    leaders = {p: (-1 if p % 6 in down else p % 6) for p in range(n)}
    return FakeCluster({"t": leaders}, RACKS)


@pytest.mark.parametrize(
    "make",
    [
        JavaDefaultPartitioner,
        LegacyDefaultPartitioner,
        lambda: RackAwarePartitioner("rack1"),
        lambda: SchemePartitioner("murmur2_random"),
    ],
)
def test_keyed_equals_kafka_python_default_partitioner(make: object) -> None:
    ours = make()  # type: ignore[operator]
    assert isinstance(ours, Partitioner)
    oracle = DefaultPartitioner()
    rng = np.random.default_rng(1)
    for n in (1, 12, 13):
        cluster = _cluster(n, down=frozenset({1, 2}))  # availability must not matter for keys
        for _ in range(500):
            key = rng.bytes(int(rng.integers(0, 60)))
            assert ours.partition("t", key, key, b"v", b"v", cluster) == oracle.partition(
                "t", key, key, b"v", b"v", cluster
            )


def test_scheme_partitioner_matches_librdkafka_schemes() -> None:
    cluster = _cluster(13)
    for scheme in ("consistent_random", "fnv1a_random", "murmur2"):
        ours = SchemePartitioner(scheme)
        for i in range(200):
            key = f"key-{i}".encode()
            assert ours.partition("t", key, key, None, None, cluster) == partition_key(key, 13, scheme)


def test_keyless_avoids_partitions_without_leader() -> None:
    cluster = _cluster(12, down=frozenset({0, 3}))
    allowed = {p for p in range(12) if p % 6 not in (0, 3)}
    for part in (JavaDefaultPartitioner(batch_size=1), LegacyDefaultPartitioner(), RoundRobinPartitioner()):
        got = {part.partition("t", None, None, b"x", b"x", cluster) for _ in range(300)}
        assert got <= allowed
    rr = RoundRobinPartitioner(start=0)
    assert [rr.partition("t", None, None, b"x", b"x", cluster) for _ in range(8)] == sorted(allowed)


def test_on_new_batch_is_wired_to_the_core() -> None:
    cluster = _cluster(6)
    rr = RoundRobinPartitioner(start=0)
    seen = []
    for _ in range(12):  # kafka-python: partition(), abort → on_new_batch(prev), partition() again
        first = rr.partition("t", None, None, b"x", b"x", cluster)
        rr.on_new_batch("t", cluster, first)
        seen.append(rr.partition("t", None, None, b"x", b"x", cluster))
    assert seen == [0, 1, 2, 3, 4, 5] * 2


def test_rack_aware_reads_leader_racks_from_broker_metadata() -> None:
    cluster = _cluster(12)
    view = topic_view(cluster, "t", with_racks=True)
    assert view.leader_racks[3] == "rack2"
    part = RackAwarePartitioner("rack1", batch_size=1)
    got = {part.partition("t", None, None, b"x", b"x", cluster) for _ in range(400)}
    assert got == {p for p in range(12) if RACKS[p % 6] == "rack1"}


def test_unknown_topic_is_typed() -> None:
    with pytest.raises(UnknownTopicError, match="'nope' is not in the cluster metadata"):
        JavaDefaultPartitioner().partition("nope", None, None, b"x", b"x", _cluster())
    with pytest.raises(UnknownTopicError, match="'nope'"):
        JavaDefaultPartitioner().partition("nope", b"k", b"k", b"x", b"x", _cluster())


def test_keyless_view_follows_metadata_changes() -> None:
    """The keyless view is reused while the metadata is unchanged and rebuilt as soon as it changes."""
    cluster = _cluster(6)
    partitioner = LegacyDefaultPartitioner(start=0)  # round robin: every partition in turn
    first = [partitioner.partition("t", None, None, b"v", b"v", cluster) for _ in range(6)]
    assert sorted(first) == [0, 1, 2, 3, 4, 5]
    cluster.leaders["t"][2] = -1  # partition 2 lost its leader
    cluster.leaders["t"][4] = -1
    later = {partitioner.partition("t", None, None, b"v", b"v", cluster) for _ in range(12)}
    assert later == {0, 1, 3, 5}
    cluster.leaders["t"] = {p: p for p in range(8)}  # the topic grew, everything led again
    grown = {partitioner.partition("t", None, None, b"v", b"v", cluster) for _ in range(16)}
    assert grown == set(range(8))


def test_keyless_records_place_as_the_core_places_them() -> None:
    """The adapter's direct keyless path (no call through the core's partition()) gives the sequence the
    core itself gives, with the same random draws, switching after batch_size bytes."""
    import random

    from kafka_placement.partitioning.record import RecordPartitioner
    from kafka_placement.partitioning.sticky import UniformSticky

    cluster = _cluster(12, down=frozenset({2}))

    def sticky() -> UniformSticky:
        return UniformSticky(300, rng=random.Random(5))

    adapter = PlacementPartitioner(RecordPartitioner("murmur2_random", sticky()))
    core = RecordPartitioner("murmur2_random", sticky())
    view = topic_view(cluster, "t")
    values = [b"v" * (i % 70) for i in range(400)]
    got = [adapter.partition("t", None, None, v, v, cluster) for v in values]
    assert got == [core.partition(view, None, len(v)) for v in values]
    assert len(set(got)) > 3 and all(cluster.leaders["t"][p] != -1 for p in got)


@pytest.mark.parametrize("rack", [None, "rack2"])
def test_keyless_fast_path_follows_the_core_through_leader_loss_and_new_batches(rack: str | None) -> None:
    """A keyless record that stays on the sticky partition is placed from that partition's leader alone;
    the sequence still equals the core's, fed the full view each time, while leaders come and go and
    kafka-python re-partitions records after ``on_new_batch``."""
    import random

    from kafka_placement.partitioning.record import RecordPartitioner
    from kafka_placement.partitioning.sticky import UniformSticky

    def sticky() -> UniformSticky:
        return UniformSticky(500, rack=rack, rng=random.Random(7))

    cluster = _cluster(12)
    core_of_adapter = RecordPartitioner("murmur2_random", sticky())
    adapter = PlacementPartitioner(core_of_adapter, needs_racks=rack is not None)
    core = RecordPartitioner("murmur2_random", sticky())
    events = random.Random(3)
    got, expected = [], []
    for i in range(3000):
        if events.random() < 0.02:  # a leader is lost or comes back
            p = events.randrange(12)
            cluster.leaders["t"][p] = -1 if cluster.leaders["t"][p] != -1 else p % 6
        view = topic_view(cluster, "t", with_racks=rack is not None)
        value = b"v" * (i % 90)
        placed = adapter.partition("t", None, None, value, value, cluster)
        wanted = core.partition(view, None, len(value))
        if events.random() < 0.05:  # the append opened a new batch: kafka-python asks again
            adapter.on_new_batch("t", cluster, placed)
            core.on_new_batch("t", wanted)
            placed = adapter.partition("t", None, None, value, value, cluster)
            wanted = core.partition(view, None, len(value))
        got.append(placed)
        expected.append(wanted)
        assert cluster.leaders["t"][placed] != -1 or not any(v != -1 for v in cluster.leaders["t"].values())
    assert got == expected
    assert len(set(got)) > 3


def test_a_core_with_its_own_partition_method_is_asked_for_keyless_records() -> None:
    from kafka_placement.partitioning.record import RecordPartitioner

    class Fixed(RecordPartitioner):
        def partition(
            self,
            view: object,
            key: object,
            record_size: int = 0,
            explicit: object = None,
            availability: object = None,
        ) -> int:
            return 7

    adapter = PlacementPartitioner(Fixed("murmur2_random"))
    assert adapter.partition("t", None, None, b"v", b"v", _cluster()) == 7
