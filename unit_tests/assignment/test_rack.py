"""KIP-881 helpers: Java's useRackAwareAssignment vectors (AbstractPartitionAssignorTest)."""

from __future__ import annotations

from kafka_placement.assignment import Member, TopicPartition
from kafka_placement.assignment.rack import (
    consumer_rack,
    is_rack_local,
    partition_racks_from_replicas,
    use_rack_aware_assignment,
)

TP = TopicPartition
ALL = frozenset({"a", "b", "c"})
TWO = frozenset({"a", "b"})
ON_ALL = {TP("topic", i): ALL for i in range(10)}
ON_SUBSET = {TP("topic", i): frozenset({"abc"[i % 3]}) for i in range(10)}


def test_use_rack_aware_assignment_java_vectors() -> None:
    empty: frozenset[str] = frozenset()
    assert not use_rack_aware_assignment(empty, empty, ON_ALL)
    assert not use_rack_aware_assignment(empty, ALL, ON_ALL)
    assert not use_rack_aware_assignment(ALL, empty, {})
    assert not use_rack_aware_assignment(frozenset({"d"}), ALL, ON_ALL)
    assert not use_rack_aware_assignment(ALL, ALL, ON_ALL)
    assert not use_rack_aware_assignment(TWO, ALL, ON_ALL)
    assert not use_rack_aware_assignment(frozenset({"a", "d"}), ALL, ON_ALL)
    assert use_rack_aware_assignment(ALL, ALL, ON_SUBSET)
    assert use_rack_aware_assignment(TWO, ALL, ON_SUBSET)
    assert use_rack_aware_assignment(frozenset({"a", "d"}), ALL, ON_SUBSET)


def test_partition_racks_from_replicas_and_helpers() -> None:
    racks = partition_racks_from_replicas(
        {TP("t", 0): [0, 1], TP("t", 1): [2, 9]}, {0: "r1", 1: "r1", 2: None}
    )
    assert racks == {TP("t", 0): frozenset({"r1"}), TP("t", 1): frozenset()}
    assert consumer_rack(Member([], rack="")) is None
    assert consumer_rack(Member([], rack="az")) == "az"
    assert is_rack_local("r1", {"r1"}) and not is_rack_local(None, {"r1"}) and not is_rack_local("r1", None)
