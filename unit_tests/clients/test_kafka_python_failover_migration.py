"""kafka-python members ready for the move to the consumer protocol (docs/migration.md): the priority
advertised in the subscription's rack id, the ready leader's empty userData, and a member telling our
leader's assignment from the broker's."""

from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka_python_group_fakes import TP, FakeCluster, join  # this directory is on sys.path

from kafka_placement.clients.kafka_python import FailoverAssignor
from kafka_placement.errors import InvalidArgumentError


def test_migration_ready_member_advertises_its_priority_in_the_subscription_rack_on_the_wire() -> None:
    raw = FailoverAssignor(30, rack="rack1", migration_ready=True).metadata({"t"}).encode()
    assert ConsumerProtocolSubscription.decode(raw).rack_id == "rack1#priority=30"
    assert ConsumerProtocolSubscription.decode(raw).user_data == struct.pack(">i", 30)
    plain = FailoverAssignor(30, rack="rack1").metadata({"t"}).encode()
    assert ConsumerProtocolSubscription.decode(plain).rack_id == "rack1"


def test_migration_ready_leader_leaves_user_data_empty_only_when_every_member_is_ready() -> None:
    topics = {"c30": ["t"], "c20": ["t"], "c10": ["t"]}
    cluster = FakeCluster({"t": 2})
    ready = {p: FailoverAssignor(int(p[1:]), migration_ready=True) for p in topics}
    raw = ready["c10"].assign(cluster, join(ready, topics))
    decoded = {m: ConsumerProtocolAssignment.decode(a.encode()) for m, a in raw.items()}
    assert {m: d.user_data for m, d in decoded.items()} == {"c30": b"", "c20": b"", "c10": b""}
    owned = sorted(TP(tp.topic, tp.partition) for tp in decoded["c30"].partitions())
    assert owned == [TP("t", 0), TP("t", 1)]
    for member_id, assignment in decoded.items():  # accepted without the no-failover-leader warning
        ready[member_id].on_assignment(assignment, 2)
        assert ready[member_id].state.assignment_problem is None
        assert ready[member_id].state.assigned_by == "ready-leader"

    # one member still on the old setting: the ready leader keeps the whole group protected
    mixed = {**ready, "c20": FailoverAssignor(20)}
    raw = ready["c10"].assign(cluster, join(mixed, topics))
    assert all(ConsumerProtocolAssignment.decode(a.encode()).user_data for a in raw.values())
    # and a leader on the old setting protects it whatever the others advertise
    raw = mixed["c20"].assign(cluster, join(ready, topics))
    assert all(ConsumerProtocolAssignment.decode(a.encode()).user_data for a in raw.values())


def test_migration_ready_is_refused_when_not_a_bool() -> None:
    with pytest.raises(InvalidArgumentError, match="migration_ready must be True or False, got 'yes'"):
        FailoverAssignor(1, migration_ready="yes")  # type: ignore[arg-type]


def test_migration_ready_member_tells_our_leader_from_the_broker_and_sees_a_split(
    caplog: pytest.LogCaptureFixture,
) -> None:
    member = FailoverAssignor(20, migration_ready=True)
    member.state.partition_count = {"t": 4}.get
    two = ConsumerProtocolAssignment(version=0, assigned_partitions=[("t", [0, 1])], user_data=b"")
    with caplog.at_level("INFO"):
        member.on_assignment(two, 3)  # our ready leader: empty, non-null userData
    assert member.state.assigned_by == "ready-leader" and member.state.assignment_problem is None
    # the broker's SyncGroup assignment of a converted group carries null userData (Kafka's
    # ConsumerProtocol.serializeAssignment of an Assignment without userData)
    from_broker = ConsumerProtocolAssignment.decode(
        ConsumerProtocolAssignment(version=0, assigned_partitions=[("t", [0, 1])], user_data=None).encode()
    )
    assert from_broker.user_data is None
    caplog.clear()
    with caplog.at_level("INFO"):
        member.on_assignment(from_broker, 4)
        member.on_assignment(from_broker, 5)  # the same split is logged once
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "topic(s) t (2 of 4)" in errors[0].getMessage()
    assert member.state.assigned_by == "broker"
    everything = ConsumerProtocolAssignment(
        version=0, assigned_partitions=[("t", [0, 1, 2, 3])], user_data=None
    )
    member.on_assignment(everything, 6)
    assert member.state.assignment_problem is None


def test_watch_partition_counts_reads_the_consumers_own_metadata() -> None:
    # a stand-in consumer (a real one against a refused bootstrap leaves a socket for the collector)
    from kafka.cluster import ClusterMetadata

    from kafka_placement.clients.kafka_python.partition_counts import watch_partition_counts

    ready, plain = FailoverAssignor(10, migration_ready=True), FailoverAssignor(10)
    cluster = ClusterMetadata()
    cluster.partitions_for_topic = {"t": {0, 1, 2}}.get  # what a metadata response would have filled in
    consumer = SimpleNamespace(config={"partition_assignment_strategy": [ready, plain]}, _cluster=cluster)
    watch_partition_counts(consumer)
    assert plain.state.partition_count is None and ready.state.partition_count is not None
    assert ready.state.partition_count("t") == 3
    assert ready.state.partition_count("unknown-topic") is None  # no metadata yet: not judged
