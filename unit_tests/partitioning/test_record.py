"""Record-level rule: explicit partition (Java's message), keyed over ALL partitions, keyless."""

from __future__ import annotations

import random

import pytest

from kafka_placement.errors import InvalidArgumentError, InvalidPartitionError, KeyTypeError
from kafka_placement.partitioning import (
    RandomKeyless,
    RecordPartitioner,
    RoundRobin,
    TopicView,
    default_partitioner,
    legacy_default_partitioner,
    partition_key,
    rack_aware_partitioner,
)


def test_explicit_partition_message_is_javas() -> None:
    view = TopicView.of_count("t", 3)
    part = default_partitioner()
    assert part.partition(view, b"k", explicit=2) == 2
    with pytest.raises(InvalidPartitionError) as err:
        part.partition(view, b"k", explicit=3)
    assert str(err.value) == "Invalid partition given with record: 3 is not in the range [0...3]."
    with pytest.raises(
        InvalidPartitionError, match=r"Invalid partition given with record: -1 is not in the range"
    ):
        part.partition(view, b"k", explicit=-1)
    with pytest.raises(InvalidPartitionError, match=r"'2' is not an int"):
        part.partition(view, b"k", explicit="2")  # type: ignore[arg-type]


def test_keyed_ignores_availability() -> None:
    view = TopicView.build("t", range(12), [0])
    part = default_partitioner()
    for key in (b"a", b"bb", b"user-17", b""):
        assert part.partition(view, key) == partition_key(key, 12, "murmur2_random")


def test_keyless_goes_to_strategy() -> None:
    view = TopicView.of_count("t", 5)
    legacy = legacy_default_partitioner(start=3)
    assert [legacy.partition(view, None) for _ in range(3)] == [3, 4, 0]
    assert legacy.partition(view, b"") == partition_key(b"", 5, "murmur2")  # Java hashes empty keys


def test_consistent_random_empty_key_is_keyless() -> None:
    view = TopicView.of_count("t", 5)
    part = RecordPartitioner("consistent_random", RoundRobin(0))
    assert [part.partition(view, b"") for _ in range(3)] == [0, 1, 2]


def test_random_scheme_uses_available_only() -> None:
    view = TopicView.build("t", range(6), [2, 4])
    part = RecordPartitioner("random", RandomKeyless(random.Random(1)))
    assert {part.partition(view, b"key") for _ in range(100)} == {2, 4}


def test_rack_aware_factory() -> None:
    view = TopicView.build("t", range(4), range(4), {0: "a", 1: "b", 2: "b", 3: "a"})
    part = rack_aware_partitioner("b", batch_size=1, rng=random.Random(0))
    assert {part.partition(view, None, 1) for _ in range(100)} == {1, 2}
    assert part.partition(view, b"k") == partition_key(b"k", 4, "murmur2")


def test_bad_keys_and_views() -> None:
    view = TopicView.of_count("t", 3)
    with pytest.raises(KeyTypeError, match="got int"):
        default_partitioner().partition(view, 5)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="has no partitions"):
        TopicView.build("t", [])
    with pytest.raises(InvalidArgumentError, match=r"available partitions \[7\]"):
        TopicView.build("t", range(3), [7])
