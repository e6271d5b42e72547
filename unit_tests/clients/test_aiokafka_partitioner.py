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
