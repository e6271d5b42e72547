"""StripedReplicaPlacer: vectors from Kafka's StripedReplicaPlacerTest (MockRandom)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.errors import InvalidArgumentError, InvalidBrokerError, InvalidReplicationFactorError
from kafka_placement.java import java_hashmap_order, java_string_hash
from kafka_placement.replicas import MockRandom, UsableBroker, place_striped
from kafka_placement.replicas.javarandom import JavaRandom
from kafka_placement.replicas.striped import StripedRackList

U = UsableBroker


def test_reference_vector_brokers_0_3_2_1() -> None:
    brokers = [U(0), U(3), U(2), U(1)]
    expected = [[2, 3, 0], [3, 0, 1], [0, 1, 2], [1, 2, 3], [1, 0, 2]]
    assert place_striped(brokers, 5, 3, MockRandom()) == expected


def test_avoid_fenced_replica_if_possible_on_single_rack() -> None:
    rack_list = StripedRackList(MockRandom(), [U(3), U(1, None, True), U(0), U(4), U(2)])
    assert (rack_list.num_total_brokers, rack_list.num_unfenced_brokers) == (5, 4)
    assert rack_list.rack_names == [None]
    for bad in (0, -1):
        with pytest.raises(InvalidReplicationFactorError):
            rack_list.place(bad)
    assert [rack_list.place(4) for _ in range(5)] == [
        [3, 4, 0, 2],
        [4, 0, 2, 3],
        [0, 2, 3, 4],
        [2, 3, 4, 0],
        [0, 4, 3, 2],
    ]


def test_multi_partition_topic_on_single_unfenced_broker() -> None:
    assert place_striped([U(0), U(1, None, True)], 3, 1, MockRandom()) == [[0], [0], [0]]


def test_placement_on_fenced_replica_when_needed() -> None:
    brokers = [U(3), U(1, None, True), U(2)]
    assert place_striped(brokers, 4, 3, MockRandom()) == [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]]


def test_rack_list_with_multiple_racks() -> None:
    brokers = [U(11, "1"), U(10, "1"), U(30, "3"), U(31, "3"), U(21, "2"), U(20, "2", True)]
    rack_list = StripedRackList(MockRandom(), brokers)
    assert rack_list.rack_names == ["1", "2", "3"]
    assert [rack_list.place(4) for _ in range(3)] == [[11, 21, 31, 10], [21, 30, 10, 20], [31, 11, 21, 30]]


def test_rack_list_with_invalid_racks() -> None:
    brokers = [
        U(11, "1"),
        U(10, "1"),
        U(30, "3", True),
        U(31, "3", True),
        U(20, "2", True),
        U(21, "2", True),
        U(41, "4"),
        U(40, "4", True),
    ]
    expected = [[41, 11, 21, 30], [10, 20, 31, 41], [41, 21, 30, 11]]
    assert place_striped(brokers, 3, 4, MockRandom()) == expected


def test_even_distribution_counts() -> None:
    counts = Counter(tuple(r) for r in place_striped([U(i) for i in range(4)], 200, 2, MockRandom()))
    assert counts == {
        (0, 1): 14,
        (0, 2): 22,
        (0, 3): 14,
        (1, 0): 17,
        (1, 2): 17,
        (1, 3): 16,
        (2, 0): 13,
        (2, 1): 17,
        (2, 3): 20,
        (3, 0): 20,
        (3, 1): 19,
        (3, 2): 11,
    }


@pytest.mark.parametrize(
    ("brokers", "rf", "message"),
    [
        (
            [U(11, "1", True), U(10, "1", True)],
            1,
            "All brokers are currently fenced, or have all their log directories cordoned.",
        ),
        (
            [U(11, "1"), U(10, "1")],
            3,
            "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered "
            "or some brokers have all their log directories cordoned.",
        ),
        (
            [U(11, "1"), U(10, "1")],
            0,
            "Invalid replication factor 0: the replication factor must be positive.",
        ),
        (
            [U(11, "1"), U(10, "1")],
            -1,
            "Invalid replication factor -1: the replication factor must be positive.",
        ),
        ([], 1, "All brokers are currently fenced, or have all their log directories cordoned."),
    ],
)
def test_errors_with_kafka_text(brokers: list[UsableBroker], rf: int, message: str) -> None:
    with pytest.raises(InvalidReplicationFactorError) as info:
        place_striped(brokers, 1, rf, MockRandom())
    assert str(info.value) == message


def test_negative_partition_count_fails_like_java_arraylist() -> None:
    # Java sizes the result list with numPartitions: IllegalArgumentException("Illegal Capacity: -2"),
    # raised after the replication factor checks.
    with pytest.raises(InvalidArgumentError, match=r"^Illegal Capacity: -2$"):
        place_striped([U(0), U(1)], -2, 1, MockRandom())
    with pytest.raises(InvalidReplicationFactorError, match="Invalid replication factor 0"):
        place_striped([U(0), U(1)], -2, 0, MockRandom())
    assert place_striped([U(0), U(1)], 0, 1, MockRandom()) == []


def test_bad_inputs() -> None:
    with pytest.raises(InvalidBrokerError, match="duplicate broker id 1"):
        place_striped([U(1), U(1, "a")], 1, 1, MockRandom())
    with pytest.raises(InvalidBrokerError, match="got -3"):
        U(-3)
    with pytest.raises(InvalidArgumentError, match="Java short range"):
        place_striped([U(1)], 1, 40000, MockRandom())


def test_java_string_hash_known_values() -> None:
    # Values from the String.hashCode() Javadoc formula; "" hashes to 0, "a" to 97.
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -(2**31)


def test_hashmap_order_small_table() -> None:
    # Racks "b" (98) and "a" (97) and None (0): buckets 2, 1, 0 in a 16-bucket table.
    assert java_hashmap_order(["b", "a", None]) == [2, 1, 0]
    # Colliding keys keep insertion order within their bucket.
    assert java_hashmap_order(["BB", "Aa"]) == [0, 1]


@given(
    n=st.integers(1, 12),
    parts=st.integers(0, 30),
    rf=st.integers(1, 4),
    racks=st.integers(1, 5),
    seed=st.integers(-(2**40), 2**40),
    fenced=st.sets(st.integers(0, 11)),
)
def test_placer_invariants(n: int, parts: int, rf: int, racks: int, seed: int, fenced: set[int]) -> None:
    brokers = [U(i, f"r{i % racks}", i in fenced) for i in range(n)]
    if rf > n or all(b.fenced for b in brokers):
        with pytest.raises(InvalidReplicationFactorError):
            place_striped(brokers, parts, rf, JavaRandom(seed))
        return
    result = place_striped(brokers, parts, rf, JavaRandom(seed))
    assert len(result) == parts
    for replicas in result:
        assert len(set(replicas)) == rf
        assert replicas[0] not in fenced  # the leader is never fenced
