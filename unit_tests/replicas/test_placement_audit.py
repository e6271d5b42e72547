"""Audit core: findings from a snapshot, and the explicit-assignment validation used by CreateTopics."""

from __future__ import annotations

import pytest

from kafka_placement.errors import InvalidArgumentError, InvalidBrokerError, UnknownTopicError
from kafka_placement.replicas.placement_audit import (
    ClusterSnapshot,
    PartitionState,
    audit,
    validate_explicit_assignment,
)
from kafka_placement.vocabulary import Broker, TopicPartition

BROKERS = (Broker(0, "a"), Broker(1, "b"), Broker(2, "c"))


def test_unknown_brokers_and_mixed_rf_are_findings() -> None:
    snap = ClusterSnapshot(
        BROKERS,
        {
            TopicPartition("t", 0): PartitionState((0, 1), 0, (0, 1)),
            TopicPartition("t", 1): PartitionState((2, 9, 1), 2, (2, 9, 1)),
        },
    )
    findings = audit(snap).topics[0].findings
    assert "mixed replication factors [2, 3]" in findings
    assert "replicas on brokers not in the cluster: [9]" in findings


def test_balanced_topic_has_no_findings() -> None:
    snap = ClusterSnapshot(
        BROKERS,
        {TopicPartition("t", p): PartitionState(r, r[0], r) for p, r in enumerate([(0, 1), (1, 2), (2, 0)])},
    )
    report = audit(snap)
    assert report.findings == [] and report.topics[0].best_replica_spread == 0


def test_unknown_topic() -> None:
    with pytest.raises(UnknownTopicError, match="Topic nope not found"):
        audit(ClusterSnapshot(BROKERS, {}), ["nope"])


@pytest.mark.parametrize(
    ("assignment", "error", "message"),
    [
        ({}, InvalidArgumentError, "replica assignment is empty"),
        ({1: [0, 1]}, InvalidArgumentError, r"partition ids must be 0..0, got \[1\]"),
        ({0: [0, 1], 1: [0]}, InvalidArgumentError, r"same replication factor, got \[1, 2\]"),
        ({0: [0, 0]}, InvalidArgumentError, r"partition 0 lists a broker twice: \[0, 0\]"),
        (
            {0: [0, 5]},
            InvalidBrokerError,
            r"Unknown broker id 5 in partition 0 \(cluster brokers: \[0, 1, 2, 3\]\)",
        ),
        (
            {0: [0, 3]},
            InvalidArgumentError,
            r"partition 0 replicas \[0, 3\] span racks \['a'\]; 2 distinct racks",
        ),
    ],
)
def test_explicit_assignment_validation(
    assignment: dict[int, list[int]], error: type[Exception], message: str
) -> None:
    brokers = [*BROKERS, Broker(3, "a")]
    with pytest.raises(error, match=message):
        validate_explicit_assignment(assignment, brokers)


def test_explicit_assignment_accepts_lists_and_can_skip_rack_check() -> None:
    brokers = [*BROKERS, Broker(3, "a")]
    assert validate_explicit_assignment([[0, 1], [3, 2]], brokers) == {0: [0, 1], 1: [3, 2]}
    assert validate_explicit_assignment({0: [0, 3]}, brokers, require_rack_diversity=False) == {0: [0, 3]}
