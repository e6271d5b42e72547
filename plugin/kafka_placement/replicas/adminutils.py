"""Kafka's ``AdminUtils.assignReplicasToBrokers`` (``org.apache.kafka.admin``, kafka-server-common).

This is what ``kafka-topics --create`` without a replica assignment used under ZooKeeper and what
``kafka-reassign-partitions --generate`` still runs. Semantics, error classes, messages and their
order follow the Java class; Java ``int`` arithmetic (wrap-around) is emulated so every input with a
fixed start index gives the identical map.

* rack-unaware: the first replica of partition ``p`` is broker ``(p + start) % n`` of the broker list
  (in the caller's order); the others follow with a shift that grows by one after every ``n``
  partitions;
* rack-aware: the same walk over the *rack-alternated* list (racks sorted, brokers sorted inside a
  rack, one broker per rack in turn), skipping a broker whose rack already holds a replica while a
  rack without one remains, and a broker that already holds one while a broker without one remains.

The start index and the first shift are random unless ``fixed_start_index >= 0`` (then both equal
it). With ``seed`` the two draws come from ``java.util.Random(seed)`` — the same numbers Java would
get from a ``Random`` seeded that way.
"""

from __future__ import annotations

import random as _random
from collections.abc import Callable, Iterable, Mapping

from kafka_placement.errors import (
    AdminOperationError,
    IndexOutOfBoundsError,
    InvalidArgumentError,
    InvalidBrokerError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
)
from kafka_placement.java import INT_MAX, INT_MIN, is_int32, java_mod, java_string_key, to_int32
from kafka_placement.replicas.javarandom import JavaRandom, JavaRandomBase
from kafka_placement.replicas.limits import check_placement_work
from kafka_placement.vocabulary import Broker


def as_brokers(brokers: Iterable[Broker | int]) -> list[Broker]:
    """Normalise a broker collection (``Broker`` or bare ids) and reject duplicate ids.

    Order is kept: the rack-unaware assignment depends on the caller's broker order, as in Java.
    """
    if isinstance(brokers, (str, bytes)) or not isinstance(brokers, Iterable):
        raise InvalidBrokerError(f"brokers must be a collection of Broker or int ids, got {brokers!r:.60}")
    result: list[Broker] = []
    seen: dict[int, int] = {}
    for position, item in enumerate(brokers):
        broker = item if isinstance(item, Broker) else Broker(item)  # Broker() validates the id
        if broker.id in seen:
            raise InvalidBrokerError(
                f"duplicate broker id {broker.id} at positions {seen[broker.id]} and {position} of the "
                "broker list; broker ids must be unique"
            )
        seen[broker.id] = position
        result.append(broker)
    return result


def _check_int32(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgumentError(f"{name} must be an int, got {value!r}")
    if not is_int32(value):
        raise InvalidArgumentError(f"{name} {value} is out of the Java int range [{INT_MIN}, {INT_MAX}]")


def rack_alternated_broker_list(broker_racks: Mapping[int, str]) -> list[int]:
    """``AdminUtils.getRackAlternatedBrokerList``: racks in sorted order, brokers sorted in a rack,
    taking one broker from each rack in turn (racks that ran out are skipped).

    ``{0:rack1,1:rack3,2:rack3,3:rack2,4:rack2,5:rack1}`` → ``[0, 3, 1, 5, 4, 2]``.
    """
    by_rack: dict[str, list[int]] = {}
    for broker_id, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker_id)
    racks = sorted(by_rack, key=java_string_key)
    iterators = [iter(sorted(by_rack[rack])) for rack in racks]
    result: list[int] = []
    rack_index = 0
    while len(result) < len(broker_racks):
        nxt = next(iterators[rack_index], None)
        if nxt is not None:
            result.append(nxt)
        rack_index = (rack_index + 1) % len(racks)
    return result


def _replica_index(first_replica_index: int, second_replica_shift: int, replica_index: int, n: int) -> int:
    # Java: long shift = 1 + (secondReplicaShift + replicaIndex) % (nBrokers - 1)  (int sum, int %)
    shift = 1 + java_mod(to_int32(second_replica_shift + replica_index), n - 1)
    return _checked_index(java_mod(first_replica_index + shift, n), n)


def _checked_index(index: int, n: int) -> int:
    if not 0 <= index < n:
        # Java's List.get throws IndexOutOfBoundsException with this text after the int overflow
        # of the start index plus the partition id.
        raise IndexOutOfBoundsError(f"Index {index} out of bounds for length {n}")
    return index


def assign_replicas_to_brokers(
    brokers: Iterable[Broker | int],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    *,
    seed: int | None = None,
    rng: JavaRandomBase | None = None,
) -> dict[int, list[int]]:
    """Java ``AdminUtils.assignReplicasToBrokers``: ``{partition id: [broker ids, leader first]}``.

    Errors, in Java's order: :class:`InvalidPartitionsError` ("Number of partitions must be larger
    than 0."), :class:`InvalidReplicationFactorError` ("Replication factor must be larger than 0.",
    "Replication factor: {rf} larger than available brokers: {n}."), :class:`AdminOperationError`
    ("Not all brokers have rack information for replica rack aware assignment."). Before those we
    reject what Java silently mis-handles: duplicate broker ids (:class:`InvalidBrokerError`) and
    non-``int`` arguments.

    Random draws: ``rng`` if given (any Java-compatible generator), else ``JavaRandom(seed)`` when
    ``seed`` is given, else Python's ``random`` (non-reproducible, like Java's static ``RAND``).
    """
    broker_list = as_brokers(brokers)
    _check_int32("n_partitions", n_partitions)
    _check_int32("replication_factor", replication_factor)
    _check_int32("fixed_start_index", fixed_start_index)
    _check_int32("start_partition_id", start_partition_id)
    if n_partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    check_placement_work(n_partitions, replication_factor)
    if replication_factor > len(broker_list):
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(broker_list)}."
        )
    if seed is not None and rng is None:
        rng = JavaRandom(seed)

    def draw(bound: int) -> int:
        if rng is not None:
            return rng.next_int(bound)
        return _random.randrange(bound)

    if all(b.rack is None for b in broker_list):
        return _rack_unaware(
            n_partitions,
            replication_factor,
            [b.id for b in broker_list],
            fixed_start_index,
            start_partition_id,
            draw,
        )
    if any(b.rack is None for b in broker_list):
        raise AdminOperationError("Not all brokers have rack information for replica rack aware assignment.")
    return _rack_aware(
        n_partitions,
        replication_factor,
        {b.id: b.rack for b in broker_list if b.rack is not None},
        fixed_start_index,
        start_partition_id,
        draw,
    )


def _starts(fixed_start_index: int, n: int, draw: Callable[[int], int]) -> tuple[int, int]:
    # Java draws the start index first, then the shift (two separate nextInt(n) calls).
    start_index = fixed_start_index if fixed_start_index >= 0 else draw(n)
    shift = fixed_start_index if fixed_start_index >= 0 else draw(n)
    return start_index, shift


def _rack_unaware(
    n_partitions: int,
    rf: int,
    broker_array: list[int],
    fixed_start_index: int,
    start_partition_id: int,
    draw: Callable[[int], int],
) -> dict[int, list[int]]:
    n = len(broker_array)
    start_index, next_replica_shift = _starts(fixed_start_index, n, draw)
    current = max(0, start_partition_id)
    result: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if current > 0 and current % n == 0:
            next_replica_shift = to_int32(next_replica_shift + 1)
        first = _checked_index(java_mod(to_int32(current + start_index), n), n)
        replicas = [broker_array[first]]
        for j in range(rf - 1):
            replicas.append(broker_array[_replica_index(first, next_replica_shift, j, n)])
        result[current] = replicas
        current = to_int32(current + 1)
    return result


def _rack_aware(
    n_partitions: int,
    rf: int,
    broker_racks: dict[int, str],
    fixed_start_index: int,
    start_partition_id: int,
    draw: Callable[[int], int],
) -> dict[int, list[int]]:
    num_racks = len(set(broker_racks.values()))
    arranged = rack_alternated_broker_list(broker_racks)
    n = len(arranged)
    start_index, next_replica_shift = _starts(fixed_start_index, n, draw)
    current = max(0, start_partition_id)
    result: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if current > 0 and current % n == 0:
            next_replica_shift = to_int32(next_replica_shift + 1)
        first = _checked_index(java_mod(to_int32(current + start_index), n), n)
        leader = arranged[first]
        replicas = [leader]
        racks_with_replicas = {broker_racks[leader]}
        brokers_with_replicas = {leader}
        k = 0
        shift = to_int32(next_replica_shift * num_racks)
        for _ in range(rf - 1):
            refused = jumps = 0
            negative = to_int32(shift + k) < 0
            while True:
                broker = arranged[_replica_index(first, shift, k, n)]
                rack = broker_racks[broker]
                k += 1
                if (rack not in racks_with_replicas or len(racks_with_replicas) == num_racks) and (
                    broker not in brokers_with_replicas or len(brokers_with_replicas) == n
                ):
                    replicas.append(broker)
                    racks_with_replicas.add(rack)
                    brokers_with_replicas.add(broker)
                    break
                refused += 1
                total = to_int32(shift + k)
                if (total < 0) != negative:  # the int sum changed sign: a new candidate cycle
                    negative, refused = total < 0, 0
                if refused >= n:
                    # Only with absurd start indexes (int overflow of shift * racks): a whole cycle
                    # of candidates was refused and nothing changes until the int sum changes sign,
                    # which Java reaches after up to 2^31 iterations. Jump there: same result.
                    k += -total if total < 0 else 2**31 - total
                    negative, refused, jumps = not negative, 0, jumps + 1
                    if jumps > 2:
                        raise InvalidArgumentError(
                            f"AdminUtils never finds a replica for partition {current} with start index "
                            f"{fixed_start_index} (Java loops forever here); use a start index below the "
                            "broker count"
                        )
        result[current] = replicas
        current = to_int32(current + 1)
    return result
