"""aiokafka 0.14 adapters: v0 subscriptions through aiokafka's own codecs, leader results equal
the core, failover and sticky flows, hostile userData."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor
from aiokafka.coordinator.protocol import ConsumerProtocol
from cluster_stub import PartitionCounts  # this directory is on sys.path

from kafka_placement.assignment import Member, TopicPartition, assign
from kafka_placement.assignment.userdata import decode_sticky_user_data
from kafka_placement.clients.aiokafka import (
    FailoverAssignor,
    PriorityAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
)
from kafka_placement.errors import InvalidArgumentError

TP = TopicPartition
FakeCluster = PartitionCounts


def join(assignors: dict[str, Any], topics: dict[str, list[str]]) -> dict[str, Any]:
    out = {}
    for member_id, assignor in assignors.items():
        metadata = assignor.metadata(set(topics[member_id]))
        out[member_id] = ConsumerProtocol.METADATA.decode(metadata.encode())
    return out


def run_leader(leader: Any, cluster: FakeCluster, members: dict[str, Any]) -> dict[str, list[TP]]:
    raw = leader.assign(cluster, members)
    return {
        m: sorted(
            TP(tp.topic, tp.partition) for tp in ConsumerProtocol.ASSIGNMENT.decode(a.encode()).partitions()
        )
        for m, a in raw.items()
    }


def test_names_and_abc() -> None:
    for cls, name in {
        RangeAssignor: "range",
        RoundRobinAssignor: "roundrobin",
        StickyAssignor: "sticky",
        FailoverAssignor: "failover",
        PriorityAssignor: "priority",
    }.items():
        assert issubclass(cls, AbstractPartitionAssignor)
        assert cls().name == name
    with pytest.raises(InvalidArgumentError, match="priority must be an int"):
        FailoverAssignor(priority=1.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("cls", [RangeAssignor, RoundRobinAssignor, StickyAssignor])
def test_leader_matches_core(cls: type) -> None:
    topics = {"m1": ["t0", "t1"], "m2": ["t0"], "m3": ["t1", "missing"]}
    members = {m: cls() for m in topics}
    ppt = {"t0": 5, "t1": 3}
    result = run_leader(members["m1"], FakeCluster(ppt), join(members, topics))
    assert result == assign(cls.name, ppt, {m: Member(t) for m, t in topics.items()})


def test_failover_and_priority_user_data() -> None:
    members = {
        "hi": FailoverAssignor(priority=10),
        "lo": FailoverAssignor(priority=1),
        "none": FailoverAssignor(),
    }
    wire = join(members, {m: ["t"] for m in members})
    assert wire["hi"].user_data == b"\x00\x00\x00\x0a"
    assert wire["none"].user_data == b""
    result = run_leader(members["lo"], FakeCluster({"t": 3}), wire)
    assert result == {"hi": [TP("t", 0), TP("t", 1), TP("t", 2)], "lo": [], "none": []}


def test_failover_assignment_user_data_on_the_wire_and_back() -> None:
    # non-empty assignment userData keeps Kafka from converting the group (KAFKA-18134)
    members = {"hi": FailoverAssignor(priority=10), "none": FailoverAssignor()}
    raw = members["hi"].assign(FakeCluster({"t": 1}), join(members, {m: ["t"] for m in members}))
    decoded = {m: ConsumerProtocol.ASSIGNMENT.decode(a.encode()) for m, a in raw.items()}
    assert decoded["hi"].user_data == bytes([0, 0, 1, 0, 0, 0, 10])
    assert decoded["none"].user_data == bytes(7)
    members["hi"].on_assignment(decoded["hi"])
    assert members["hi"].state.assignment_problem is None
    members["none"].on_assignment(ConsumerProtocol.ASSIGNMENT(0, [], b""))
    assert "no failover userData" in (members["none"].state.assignment_problem or "")


def test_java_strategies_leave_assignment_user_data_empty() -> None:
    members = {"a": StickyAssignor(), "b": StickyAssignor()}
    raw = members["a"].assign(FakeCluster({"t": 2}), join(members, {m: ["t"] for m in members}))
    assert {m: ConsumerProtocol.ASSIGNMENT.decode(a.encode()).user_data for m, a in raw.items()} == {
        "a": b"",
        "b": b"",
    }


def test_sticky_sends_java_v0_after_assignment() -> None:
    assignor = StickyAssignor()
    assert assignor.metadata({"t"}).user_data == b""
    assignor.on_assignment(ConsumerProtocol.ASSIGNMENT(0, [("t", [2, 0])], b""))
    data = assignor.metadata({"t"}).user_data
    assert decode_sticky_user_data(data).partitions == (TP("t", 2), TP("t", 0))
    assert decode_sticky_user_data(data).generation is None


def test_hostile_user_data_never_crashes() -> None:
    members = {
        "a": ConsumerProtocol.METADATA(0, ["t"], struct.pack(">i", 2**31 - 1)),
        "b": ConsumerProtocol.METADATA(0, ["t"], b"\xff"),
        "c": ConsumerProtocol.METADATA(0, ["gone"], b""),
    }
    for leader in (StickyAssignor(), FailoverAssignor(1), RangeAssignor()):
        result = run_leader(leader, FakeCluster({"t": 2}), members)
        assert set(result) == {"a", "b", "c"}
        assert sorted(tp for p in result.values() for tp in p) == [TP("t", 0), TP("t", 1)]


def test_assignors_from_a_java_style_config() -> None:
    from kafka_placement.clients.aiokafka import FailoverAssignor, StickyAssignor, assignors_from_config
    from kafka_placement.errors import UnknownStrategyError

    got = assignors_from_config("org.apache.kafka.clients.consumer.StickyAssignor,failover", priority=3)
    assert [type(a) for a in got] == [StickyAssignor, FailoverAssignor]
    assert got[1].priority == 3  # type: ignore[attr-defined]
    assert [a.name for a in assignors_from_config()] == ["range"]
    with pytest.raises(UnknownStrategyError, match="needs cooperative rebalancing, which aiokafka does not"):
        assignors_from_config("range,cooperative-sticky")


def test_migration_ready_member_sends_a_v3_subscription_that_kafka_python_and_aiokafka_read() -> None:
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    raw = FailoverAssignor(30, rack="az1", migration_ready=True).metadata({"t", "u"}).encode()
    other = ConsumerProtocolSubscription.decode(raw)  # an independent decoder of Kafka's schema
    assert (other.version, other.topics, other.rack_id) == (3, ["t", "u"], "az1#priority=30")
    assert other.user_data == struct.pack(">i", 30)
    assert other.owned_partitions == [] and other.generation_id == -1
    v0 = ConsumerProtocol.METADATA.decode(raw)  # an aiokafka leader still reads its topics and priority
    assert (v0.subscription, v0.user_data) == (["t", "u"], struct.pack(">i", 30))
    assert FailoverAssignor(30).metadata({"t"}).version == 0  # not ready: aiokafka's own v0 as before


def test_aiokafka_leader_keeps_a_ready_group_protected_and_says_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from kafka_placement.clients.aiokafka.assignors import LEADER_CANNOT_SEE_RACKS

    members = {
        "a": FailoverAssignor(30, migration_ready=True),
        "b": FailoverAssignor(20, migration_ready=True),
    }
    with caplog.at_level("INFO"):
        raw = members["a"].assign(FakeCluster({"t": 2}), join(members, {"a": ["t"], "b": ["t"]}))
        members["a"].assign(FakeCluster({"t": 2}), join(members, {"a": ["t"], "b": ["t"]}))
    assert all(ConsumerProtocol.ASSIGNMENT.decode(a.encode()).user_data for a in raw.values())
    assert [r.getMessage() for r in caplog.records].count(LEADER_CANNOT_SEE_RACKS) == 1
