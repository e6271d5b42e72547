"""Our Python members' side of the wire, as kafka-python runs it: subscriptions as a Python failover member
sends them, the Python leader's assignments, and a Python member receiving an assignment."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from types import SimpleNamespace

import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from kafka_placement.clients.kafka_python.assignors import FailoverAssignor


def python_subscription(
    topics: Sequence[str], priority: int | None, *, rack: str | None = None, ready: bool = False
) -> bytes:
    """What a kafka-python member with our FailoverAssignor sends in JoinGroup."""
    member = FailoverAssignor(priority=priority, rack=rack, migration_ready=ready)
    return bytes(member.metadata(set(topics)).encode())


def raw_subscription(topics: Sequence[str], user_data: bytes | None, rack_id: str | None) -> bytes:
    """A v3 subscription with any userData (a hostile or foreign member's)."""
    subscription = ConsumerProtocolSubscription(
        version=3,
        topics=sorted(topics),
        user_data=user_data,
        owned_partitions=[],
        generation_id=-1,
        rack_id=rack_id,
    )
    return bytes(subscription.encode())


class Cluster:
    """The little of kafka-python's ClusterMetadata a leader reads: partition counts (<= 0: unknown topic)."""

    def __init__(self, counts: Sequence[int]) -> None:
        self.counts = {f"t{t}": count for t, count in enumerate(counts)}

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        count = self.counts.get(topic, 0)
        return set(range(count)) if count > 0 else None


def python_leader(
    counts: Sequence[int], subscriptions: Sequence[tuple[str, bytes]], *, ready: bool
) -> dict[str, tuple[frozenset[int], bytes | None]]:
    """Our kafka-python leader on the same JoinGroup bytes: per member the topics it owns whole and the
    assignment userData (as kafka-python's coordinator calls ``assign``, metadata decoded)."""
    members = [
        SimpleNamespace(
            member_id=mid, group_instance_id=None, metadata=ConsumerProtocolSubscription.decode(wire)
        )
        for mid, wire in subscriptions
    ]
    result = FailoverAssignor(migration_ready=ready).assign(Cluster(counts), members)
    out = {}
    for mid, assignment in result.items():
        topics = set()
        for entry in assignment.assigned_partitions:
            topic, partitions = (entry.topic, entry.partitions) if hasattr(entry, "topic") else entry
            assert sorted(partitions) == list(range(counts[int(topic[1:])]))  # whole topics
            topics.add(int(topic[1:]))
        out[mid] = (frozenset(topics), assignment.user_data)
    return out


def python_member_receives(
    wire: bytes, priority: int | None, *, ready: bool, caplog: pytest.LogCaptureFixture
) -> list[logging.LogRecord]:
    """The log records of a kafka-python member with our FailoverAssignor receiving these assignment bytes."""
    member = FailoverAssignor(priority=priority, migration_ready=ready)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="kafka_placement"):
        member.on_assignment(ConsumerProtocolAssignment.decode(wire), 1)
    return list(caplog.records)
