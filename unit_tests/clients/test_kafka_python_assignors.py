"""kafka-python 3.x adapters: subscriptions through the real ConsumerProtocol codecs, the leader's
assign() against the core, failover/sticky/cooperative flows, rack locality from cluster metadata,
and hostile members that must not crash the leader."""

from __future__ import annotations

import struct
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka.structs import TopicPartition as KTP
from kafka_python_group_fakes import (  # this directory is on sys.path
    TP,
    FakeCluster,
    JoinMember,
    deliver,
    join,
    run_leader,
)

from kafka_placement.assignment import Member, assign
from kafka_placement.clients.kafka_python import (
    CooperativeStickyAssignor,
    FailoverAssignor,
    PriorityAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
)
from kafka_placement.errors import InvalidArgumentError


def test_names_protocols_and_abc() -> None:
    names = {
        RangeAssignor: "range",
        RoundRobinAssignor: "roundrobin",
        StickyAssignor: "sticky",
        CooperativeStickyAssignor: "cooperative-sticky",
        FailoverAssignor: "failover",
        PriorityAssignor: "priority",
    }
    for cls, name in names.items():
        assert issubclass(cls, AbstractPartitionAssignor)
        assert cls.name == name == cls().name
    # as Java's CooperativeStickyAssignor (unit_tests/conformance/test_java_semantics.py checks it)
    both = [RebalanceProtocol.EAGER, RebalanceProtocol.COOPERATIVE]
    assert CooperativeStickyAssignor().supported_protocols() == both
    assert RangeAssignor().supported_protocols() == [RebalanceProtocol.EAGER]


def test_subscription_is_v3_with_rack_and_priority() -> None:
    sub = ConsumerProtocolSubscription.decode(
        FailoverAssignor(priority=10, rack="az1").metadata({"b", "a"}).encode()
    )
    assert (sub.version, sub.topics, sub.rack_id, sub.generation_id) == (3, ["a", "b"], "az1", -1)
    assert sub.user_data == b"\x00\x00\x00\x0a"
    assert ConsumerProtocolSubscription.decode(RangeAssignor().metadata({"t"}).encode()).user_data is None


def test_bad_constructor_arguments() -> None:
    with pytest.raises(InvalidArgumentError, match="priority must be an int"):
        FailoverAssignor(priority="10")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="out of range"):
        FailoverAssignor(priority=2**31)
    with pytest.raises(InvalidArgumentError, match="rack must be a str"):
        RangeAssignor(rack=3)  # type: ignore[arg-type]


@pytest.mark.parametrize("cls", [RangeAssignor, RoundRobinAssignor, StickyAssignor])
def test_leader_matches_core(cls: type) -> None:
    topics = {"m1": ["t0", "t1"], "m2": ["t0"], "m3": ["t1", "missing"]}
    members = {m: cls() for m in topics}
    ppt = {"t0": 5, "t1": 3}
    result = run_leader(members["m1"], FakeCluster(ppt), join(members, topics))
    expected = assign(cls.name, ppt, {m: Member(t) for m, t in topics.items()})
    assert result == expected


def test_static_members_through_adapter_fix_kafka_python_groupby_bug() -> None:
    topics = {"a": ["t"], "b": ["t"], "c": ["t"]}
    members = {m: RangeAssignor() for m in topics}
    result = run_leader(members["a"], FakeCluster({"t": 6}), join(members, topics, {"a": "x", "c": "y"}))
    # Java MemberInfo order: static x (a), static y (c), then dynamic b
    assert result == {
        "a": [TP("t", 0), TP("t", 1)],
        "c": [TP("t", 2), TP("t", 3)],
        "b": [TP("t", 4), TP("t", 5)],
    }


def test_failover_flow_10_5_1() -> None:
    topics = {"c10": ["t"], "c5": ["t"], "c1": ["t"]}
    members = {
        "c10": FailoverAssignor(priority=10),
        "c5": FailoverAssignor(priority=5),
        "c1": FailoverAssignor(1),
    }
    cluster = FakeCluster({"t": 4})
    everything = [TP("t", p) for p in range(4)]
    assert run_leader(members["c1"], cluster, join(members, topics)) == {
        "c10": everything,
        "c5": [],
        "c1": [],
    }
    del members["c10"]
    assert run_leader(members["c1"], cluster, join(members, topics)) == {"c5": everything, "c1": []}
    del members["c5"]
    assert run_leader(members["c1"], cluster, join(members, topics)) == {"c1": everything}


def test_failover_assignment_user_data_on_the_wire_and_back() -> None:
    # non-empty for every member, the standby's too: Kafka then refuses to convert the group (KAFKA-18134)
    members = {"c10": FailoverAssignor(priority=10), "c5": FailoverAssignor(priority=5)}
    raw = members["c5"].assign(FakeCluster({"t": 2}), join(members, {"c10": ["t"], "c5": ["t"]}))
    decoded = {m: ConsumerProtocolAssignment.decode(a.encode()) for m, a in raw.items()}
    assert decoded["c10"].user_data == bytes([0, 0, 1, 0, 0, 0, 10])
    assert decoded["c5"].user_data == bytes([0, 0, 1, 0, 0, 0, 5])
    for member_id, assignment in decoded.items():
        members[member_id].on_assignment(assignment, 3)
        assert members[member_id].state.assignment_problem is None
    # what a converted group's SyncGroup brings: the broker's assignment, no userData
    converted = ConsumerProtocolAssignment(version=0, assigned_partitions=[], user_data=b"")
    members["c5"].on_assignment(converted, 4)
    assert "no failover userData" in (members["c5"].state.assignment_problem or "")


@pytest.mark.parametrize(
    "cls", [RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor]
)
def test_java_strategies_leave_assignment_user_data_empty_like_java(cls: type) -> None:
    members = {"a": cls(), "b": cls()}
    raw = members["a"].assign(FakeCluster({"t": 2}), join(members, {"a": ["t"], "b": ["t"]}))
    assert {m: ConsumerProtocolAssignment.decode(a.encode()).user_data for m, a in raw.items()} == {
        "a": b"",
        "b": b"",
    }


def test_sticky_flow_keeps_assignment_via_java_user_data() -> None:
    topics = {m: ["t0", "t1"] for m in ("C0", "C1", "C2")}
    members: dict[str, Any] = {m: StickyAssignor() for m in topics}
    cluster = FakeCluster({"t0": 3, "t1": 3})
    first = run_leader(members["C0"], cluster, join(members, topics))
    deliver(members, first, generation=1)
    sub = ConsumerProtocolSubscription.decode(members["C0"].metadata({"t0", "t1"}).encode())
    # Java StickyAssignor V1: [ {topic, [partitions]} ] + generation, no version header
    count = struct.unpack(">i", sub.user_data[:4])[0]
    assert count == len({tp.topic for tp in first["C0"]})
    assert struct.unpack(">i", sub.user_data[-4:])[0] == 1
    del members["C1"]
    second = run_leader(members["C0"], cluster, join(members, topics))
    for m in ("C0", "C2"):
        assert set(first[m]) <= set(second[m]), "sticky must keep every surviving assignment"


def test_cooperative_two_rounds_never_two_owners() -> None:
    topics = {m: ["t"] for m in ("a", "b", "c")}
    members: dict[str, Any] = {"a": CooperativeStickyAssignor(), "b": CooperativeStickyAssignor()}
    cluster = FakeCluster({"t": 6})
    r0 = run_leader(members["a"], cluster, join(members, {"a": ["t"], "b": ["t"]}))
    deliver(members, r0, generation=1)
    members["c"] = CooperativeStickyAssignor()
    r1 = run_leader(members["a"], cluster, join(members, topics))
    # round one: nothing moves straight to c; a and b only shrink
    assert r1["c"] == []
    assert set(r1["a"]) <= set(r0["a"]) and set(r1["b"]) <= set(r0["b"])
    revoked = (set(r0["a"]) - set(r1["a"])) | (set(r0["b"]) - set(r1["b"]))
    assert revoked
    deliver(members, r1, generation=2)
    r2 = run_leader(members["a"], cluster, join(members, topics))
    assert set(r2["c"]) == revoked
    assert sorted(len(v) for v in r2.values()) == [2, 2, 2]
    owners: dict[TP, str] = {}
    for m, parts in r2.items():
        for tp in parts:
            assert tp not in owners
            owners[tp] = m


def test_rack_aware_range_from_cluster_metadata() -> None:
    # brokers 0,1 in rack r1 / r2; partition p's only replica on broker p % 2
    cluster = FakeCluster(
        {"t": 6}, replicas={TP("t", p): [p % 2] for p in range(6)}, broker_racks={0: "r1", 1: "r2", 2: None}
    )
    members = {"x": RangeAssignor(rack="r2"), "y": RangeAssignor(rack="r1")}
    result = run_leader(members["x"], cluster, join(members, {"x": ["t"], "y": ["t"]}))
    assert result == {"x": [TP("t", 1), TP("t", 3), TP("t", 5)], "y": [TP("t", 0), TP("t", 2), TP("t", 4)]}


def test_hostile_members_never_crash_the_leader() -> None:
    cluster = FakeCluster({"t": 4})

    def sub(user_data: Any, version: int = 0, **kw: Any) -> Any:
        return ConsumerProtocolSubscription.decode(
            ConsumerProtocolSubscription(version=version, topics=["t"], user_data=user_data, **kw).encode()
        )

    hostile = [
        JoinMember("ok", None, sub(struct.pack(">i", 3))),
        JoinMember("short", None, sub(b"\x01\x02")),
        JoinMember("huge-array", None, sub(struct.pack(">i", 2**31 - 1) + b"\x00" * 16)),
        JoinMember("neg", None, sub(struct.pack(">i", -7))),
        JoinMember(
            "vanished",
            None,
            sub(
                None,
                version=2,
                owned_partitions=[
                    ConsumerProtocolSubscription.TopicPartition(topic="deleted", partitions=[0, 1])
                ],
                generation_id=5,
            ),
        ),
    ]
    for leader in (FailoverAssignor(1), StickyAssignor(), CooperativeStickyAssignor(), RangeAssignor()):
        result = run_leader(leader, cluster, hostile)
        assert set(result) == {m.member_id for m in hostile}
        assert sorted(tp for parts in result.values() for tp in parts) == [TP("t", p) for p in range(4)]
    assert run_leader(FailoverAssignor(1), cluster, hostile)["ok"] == [TP("t", p) for p in range(4)]
    assert run_leader(RangeAssignor(), cluster, []) == {}


def test_kafka_consumer_accepts_instances_and_classes(
    kafka_python_clients: Callable[..., Any],
) -> None:
    """The real KafkaConsumer (no broker needed with a fixed api_version): instances and classes
    register under their Kafka names; cooperative-sticky with eager ones runs EAGER, as in Java."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        bootstrap_servers="127.0.0.1:1",
        api_version=(4, 0),
        group_id="g",
        partition_assignment_strategy=[FailoverAssignor(priority=3), RangeAssignor, StickyAssignor(rack="r")],
        kafka_client=kafka_python_clients,
    )
    try:
        assignors = consumer._coordinator._assignors
        assert sorted(assignors) == ["failover", "range", "sticky"]
        assert assignors["failover"].priority == 3
    finally:
        consumer.close()
    mixed = KafkaConsumer(
        bootstrap_servers="127.0.0.1:1",
        api_version=(4, 0),
        group_id="g",
        partition_assignment_strategy=[CooperativeStickyAssignor(), RangeAssignor()],
        kafka_client=kafka_python_clients,
    )
    try:
        assert mixed._coordinator._rebalance_protocol == RebalanceProtocol.EAGER
    finally:
        mixed.close()


_ADAPTERS = [RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor, FailoverAssignor]


@given(
    st.sampled_from(_ADAPTERS),
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(["t0", "t1", "gone"]), max_size=3),
            st.one_of(
                st.none(), st.binary(max_size=40), st.sampled_from([struct.pack(">i", 7), b"\x00" * 4])
            ),
            st.lists(st.tuples(st.sampled_from(["t0", "t1", "gone"]), st.integers(-3, 9)), max_size=6),
            st.integers(-5, 5),
            st.one_of(st.none(), st.sampled_from(["r1", "r2", ""])),
        ),
        max_size=5,
    ),
)
def test_leader_never_crashes_on_random_hostile_groups(cls: type, specs: list[Any]) -> None:
    """Random subscriptions (v3 on the wire) with garbage userData, bogus owned partitions and
    generations: every adapter returns an assignment for every member, no partition twice, only
    existing partitions of subscribed topics."""
    cluster = FakeCluster(
        {"t0": 4, "t1": 3},
        replicas={TP(t, p): [p % 3] for t, n in (("t0", 4), ("t1", 3)) for p in range(n)},
        broker_racks={0: "r1", 1: "r2", 2: None},
    )
    entry = ConsumerProtocolSubscription.TopicPartition
    members = []
    for i, (topics, user_data, owned, generation, rack) in enumerate(specs):
        by_topic: dict[str, list[int]] = {}
        for t, p in owned:
            by_topic.setdefault(t, []).append(p)
        raw = ConsumerProtocolSubscription(
            version=3,
            topics=topics,
            user_data=user_data,
            owned_partitions=[entry(topic=t, partitions=ps) for t, ps in by_topic.items()],
            generation_id=generation,
            rack_id=rack,
        ).encode()
        members.append(JoinMember(f"m{i}", None, ConsumerProtocolSubscription.decode(raw)))
    result = run_leader(cls(), cluster, members)
    assert set(result) == {m.member_id for m in members}
    flat = [tp for parts in result.values() for tp in parts]
    assert len(flat) == len(set(flat))
    subs = {m.member_id: set(m.metadata.topics) for m in members}
    for member_id, parts in result.items():
        assert all(tp.topic in subs[member_id] and 0 <= tp.partition < cluster.ppt[tp.topic] for tp in parts)


def test_assignors_from_a_java_style_config(kafka_python_clients: Callable[..., Any]) -> None:
    import kafka

    from kafka_placement.clients.kafka_python import (
        CooperativeStickyAssignor,
        FailoverAssignor,
        RangeAssignor,
        assignors_from_config,
    )
    from kafka_placement.errors import UnknownStrategyError

    got = assignors_from_config(
        "range, org.apache.kafka.clients.consumer.StickyAssignor,failover", rack="r1", priority=7
    )
    assert [a.name for a in got] == ["range", "sticky", "failover"]
    assert isinstance(got[0], RangeAssignor) and isinstance(got[2], FailoverAssignor)
    assert all(a.rack == "r1" for a in got)
    assert got[2].priority == 7  # type: ignore[attr-defined]
    (coop,) = assignors_from_config("org.apache.kafka.clients.consumer.CooperativeStickyAssignor")
    assert isinstance(coop, CooperativeStickyAssignor)
    assert [a.name for a in assignors_from_config()] == ["range"]
    with pytest.raises(UnknownStrategyError, match="unknown assignment strategy 'bogus'"):
        assignors_from_config("range,bogus")
    # Java's default list (its eager -> cooperative upgrade path): kafka-python's own coordinator
    # runs it EAGER, and the cooperative-sticky assignor then sends no owned partitions
    for config, protocol in [
        ("org.apache.kafka.clients.consumer.CooperativeStickyAssignor,range", RebalanceProtocol.EAGER),
        ("range, cooperative-sticky", RebalanceProtocol.EAGER),
        ("cooperative-sticky", RebalanceProtocol.COOPERATIVE),
    ]:
        assignors = assignors_from_config(config)
        consumer = kafka.KafkaConsumer(
            group_id="g",
            bootstrap_servers="127.0.0.1:1",
            partition_assignment_strategy=assignors,
            api_version=(3, 0),
            kafka_client=kafka_python_clients,
        )
        try:
            assert consumer._coordinator._rebalance_protocol == protocol, config
        finally:
            consumer.close()
        (coop,) = [a for a in assignors if isinstance(a, CooperativeStickyAssignor)]
        coop.on_assignment(SimpleNamespace(partitions=lambda: [KTP("t", 0)]), 3)
        owned = coop.metadata({"t"}).owned_partitions
        assert bool(owned) == (protocol == RebalanceProtocol.COOPERATIVE), config
