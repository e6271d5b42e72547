"""Reading one classic DescribeGroups member: our failover userData decoded, any other assignor's and
any hostile bytes never raise (the member's ``problems`` say what could not be read)."""

from __future__ import annotations

import struct
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from kafka_placement.clients.kafka_python.group_description import classic_member
from kafka_placement.vocabulary import TopicPartition


def raw(metadata: bytes, assignment: bytes) -> SimpleNamespace:
    return SimpleNamespace(
        member_id="m-1",
        client_id="c",
        client_host="/127.0.0.1",
        group_instance_id=None,
        member_metadata=metadata,
        member_assignment=assignment,
    )


def subscription(user_data: bytes | None, rack: str | None = None) -> bytes:
    encoded = ConsumerProtocolSubscription(
        version=3, topics=["t"], user_data=user_data, owned_partitions=[], generation_id=-1, rack_id=rack
    ).encode()
    return bytes(encoded)


def assignment(user_data: bytes) -> bytes:
    return bytes(
        ConsumerProtocolAssignment(
            version=0, assigned_partitions=[("t", [0, 1])], user_data=user_data
        ).encode()
    )


def test_failover_member() -> None:
    data = raw(subscription(struct.pack(">i", 10), "az1"), assignment(bytes([0, 0, 1, 0, 0, 0, 10])))
    m = classic_member(data, "consumer", "failover")
    assert (m.priority, m.priority_source, m.rack, m.topics) == (10, "userData", "az1", ("t",))
    assert m.assignment == (TopicPartition("t", 0), TopicPartition("t", 1))
    assert m.assignment_user_data == "failover" and m.problems == ()


def test_other_assignors_userdata_is_not_a_priority() -> None:
    sticky = classic_member(raw(subscription(b"\x00\x00\x00\x00"), assignment(b"")), "consumer", "sticky")
    assert sticky.priority is None and sticky.priority_source == "none"
    assert sticky.assignment_user_data == "empty" and sticky.problems == ()
    custom = classic_member(raw(subscription(None), assignment(b"xyz")), "consumer", "my-assignor")
    assert custom.assignment_user_data == "other"


def test_bad_priority_and_foreign_protocol_type() -> None:
    m = classic_member(raw(subscription(b"\x01\x02"), assignment(b"")), "consumer", "failover")
    assert m.priority is None and "unusable failover priority" in m.problems[0]
    connect = classic_member(raw(b"\x00\x01garbage", b"garbage"), "connect", "sessioned")
    assert connect.topics is None and "not a consumer group" in connect.problems[0]


@given(st.binary(max_size=120), st.binary(max_size=120))
def test_hostile_bytes_never_raise(metadata: bytes, assigned: bytes) -> None:
    m = classic_member(raw(metadata, assigned), "consumer", "failover")
    assert m.member_id == "m-1"


def test_migration_readiness_of_a_classic_failover_member() -> None:
    # ready: the subscription's rack id carries the same priority as its userData (docs/migration.md)
    ready = classic_member(
        raw(subscription(struct.pack(">i", 30), "az1#priority=30"), assignment(b"")), "consumer", "failover"
    )
    assert (ready.priority, ready.rack, ready.migration_problem, ready.member_protocol) == (
        30,
        "az1",
        None,
        "classic",
    )
    old = classic_member(
        raw(subscription(struct.pack(">i", 30), "az1"), assignment(b"")), "consumer", "failover"
    )
    assert "carries no priority" in (old.migration_problem or "") and old.rack == "az1"
    other = classic_member(
        raw(subscription(struct.pack(">i", 30), "#priority=7"), assignment(b"")), "consumer", "failover"
    )
    assert "says priority 7 but its userData says 30" in (other.migration_problem or "")
