"""AdminUtils.assignReplicasToBrokers: Kafka's AdminRackAwareTest vectors, Javadoc examples, errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.errors import (
    AdminOperationError,
    IndexOutOfBoundsError,
    InvalidArgumentError,
    InvalidBrokerError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
)
from kafka_placement.replicas import Broker, JavaRandom, assign_replicas_to_brokers
from kafka_placement.replicas.adminutils import rack_alternated_broker_list

SEED_RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def test_rack_alternated_list_from_reference() -> None:
    assert rack_alternated_broker_list(SEED_RACKS) == [0, 3, 1, 5, 4, 2]
    racks = {0: "r1", 1: "r1", 2: "r1", 3: "r2", 4: "r2", 5: "r2", 6: "r3", 7: "r3", 8: "r3"}
    assert rack_alternated_broker_list(racks) == [0, 3, 6, 1, 4, 7, 2, 5, 8]


def test_rack_aware_seven_partitions_from_reference() -> None:
    brokers = [Broker(b, r) for b, r in SEED_RACKS.items()]
    assert assign_replicas_to_brokers(brokers, 7, 3, 0) == {
        0: [0, 3, 1],
        1: [3, 1, 5],
        2: [1, 5, 4],
        3: [5, 4, 2],
        4: [4, 2, 0],
        5: [2, 0, 3],
        6: [0, 4, 2],
    }


def test_rack_aware_six_partitions_javadoc() -> None:
    brokers = [Broker(b, r) for b, r in reversed(list(SEED_RACKS.items()))]  # input order is irrelevant
    assert assign_replicas_to_brokers(brokers, 6, 3, 0) == {
        0: [0, 3, 1],
        1: [3, 1, 5],
        2: [1, 5, 4],
        3: [5, 4, 2],
        4: [4, 2, 0],
        5: [2, 0, 3],
    }


def test_rack_unaware_ten_partitions_from_reference() -> None:
    assert assign_replicas_to_brokers([Broker(i) for i in range(5)], 10, 3, 0) == {
        0: [0, 1, 2],
        1: [1, 2, 3],
        2: [2, 3, 4],
        3: [3, 4, 0],
        4: [4, 0, 1],
        5: [0, 2, 3],
        6: [1, 3, 4],
        7: [2, 4, 0],
        8: [3, 0, 1],
        9: [4, 1, 2],
    }


def test_rack_unaware_uses_caller_order_and_start_partition() -> None:
    # assignReplicasToBrokers javadoc table: with the broker list in the given order; partition ids continue.
    result = assign_replicas_to_brokers([0, 1, 2, 3, 4], 5, 3, 0, start_partition_id=5)
    assert result == {5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}


def test_seeded_random_start_is_two_java_draws() -> None:
    # With seed s the start index and shift are JavaRandom(s).nextInt(n) twice, as with Java's RAND.
    rng = JavaRandom(7)
    start, shift = rng.next_int(5), rng.next_int(5)
    seeded = assign_replicas_to_brokers(range(5), 10, 3, seed=7)
    assert seeded[0][0] == start
    assert seeded == assign_replicas_to_brokers(range(5), 10, 3, seed=7)
    if start == shift:
        assert seeded == assign_replicas_to_brokers(range(5), 10, 3, start)


def test_unseeded_random_start_still_valid() -> None:
    result = assign_replicas_to_brokers(range(6), 12, 3)
    assert sorted(result) == list(range(12))
    assert all(len(set(r)) == 3 for r in result.values())


@pytest.mark.parametrize(
    ("brokers", "n", "rf", "error", "message"),
    [
        (range(3), 0, 1, InvalidPartitionsError, "Number of partitions must be larger than 0."),
        (range(3), -2, 0, InvalidPartitionsError, "Number of partitions must be larger than 0."),
        (range(3), 3, 0, InvalidReplicationFactorError, "Replication factor must be larger than 0."),
        (
            range(3),
            3,
            4,
            InvalidReplicationFactorError,
            "Replication factor: 4 larger than available brokers: 3.",
        ),
        ([], 3, 1, InvalidReplicationFactorError, "Replication factor: 1 larger than available brokers: 0."),
        (
            [Broker(0, "a"), Broker(1)],
            3,
            2,
            AdminOperationError,
            "Not all brokers have rack information for replica rack aware assignment.",
        ),
    ],
)
def test_errors_in_java_order_with_java_text(
    brokers: object, n: int, rf: int, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        assign_replicas_to_brokers(brokers, n, rf, 0)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_duplicate_broker_ids_are_named() -> None:
    with pytest.raises(InvalidBrokerError, match="duplicate broker id 2 at positions 1 and 3"):
        assign_replicas_to_brokers([1, 2, 3, 2], 3, 2, 0)


@pytest.mark.parametrize(("arg", "value"), [("n_partitions", 2**31), ("fixed_start_index", 1.0)])
def test_non_int_arguments(arg: str, value: object) -> None:
    kwargs = {"n_partitions": 3, "replication_factor": 1, "fixed_start_index": 0}
    kwargs[arg] = value  # type: ignore[assignment]
    with pytest.raises(InvalidArgumentError, match=arg):
        assign_replicas_to_brokers(range(3), **kwargs)  # type: ignore[arg-type]


def test_int_overflow_fails_at_the_same_index_as_java() -> None:
    # Java (kafka-server-common 4.0.2): IndexOutOfBoundsException "Index -4 out of bounds for length 5"
    # same kind (IndexOutOfBounds) and the same text; still an InvalidArgumentError for callers
    with pytest.raises(IndexOutOfBoundsError, match=r"^Index -4 out of bounds for length 5$"):
        assign_replicas_to_brokers(range(5), 3, 2, 2147483647, 5)
    racked = [Broker(0, "a"), Broker(1, "b"), Broker(2, "c"), Broker(3, "a"), Broker(4, "b")]
    with pytest.raises(InvalidArgumentError, match=r"^Index -1 out of bounds for length 5$"):
        assign_replicas_to_brokers(racked, 3, 3, 2147483000, 2000)


def test_overflowed_shift_gives_javas_eventual_result_without_the_wait() -> None:
    # Java (kafka-server-common 4.0.2) iterates ~2^31 refused candidates here (minutes on this
    # machine) and then throws IndexOutOfBoundsException "Index -3 out of bounds for length 6".
    brokers = [
        Broker(b, r) for b, r in [(33, "z\ue000"), (21, "é"), (30, "é"), (19, "é"), (31, "é"), (9, "z\ue000")]
    ]
    with pytest.raises(IndexOutOfBoundsError, match=r"^Index -3 out of bounds for length 6$"):
        assign_replicas_to_brokers(brokers, 20, 6, 1297729221, -1)


def test_negative_broker_id_rejected() -> None:
    with pytest.raises(InvalidArgumentError, match=r"broker id must be an int in \[0, 2147483647\], got -1"):
        assign_replicas_to_brokers([0, -1], 1, 1, 0)


@given(
    n=st.integers(1, 12),
    extra=st.integers(0, 40),
    rf_seed=st.integers(0, 1000),
    start=st.integers(0, 30),
    racks=st.integers(1, 4),
)
def test_properties_of_the_java_algorithm(n: int, extra: int, rf_seed: int, start: int, racks: int) -> None:
    """Javadoc goals: distinct brokers per partition; rack-aware spreads over min(rf, racks) racks."""
    rf = 1 + rf_seed % n
    brokers = [Broker(i, f"r{i % racks}") for i in range(n)]
    result = assign_replicas_to_brokers(brokers, 1 + extra, rf, start)
    for replicas in result.values():
        assert len(set(replicas)) == rf
        assert len({f"r{b % racks}" for b in replicas}) == min(rf, min(racks, n))
