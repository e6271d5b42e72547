"""The client-neutral assignor base: member state and userData, the leader's reading of
subscriptions, and Java's strategy list for a client."""

from __future__ import annotations

import struct

import pytest
from cluster_stub import PartitionCounts  # this directory is on sys.path

from kafka_placement.assignment import TopicPartition
from kafka_placement.clients.group_assignor import (
    MemberState,
    Subscription,
    assign_group,
    check_rack,
    strategies_for_client,
)
from kafka_placement.errors import InvalidArgumentError, UnknownStrategyError

TP = TopicPartition
FakeCluster = PartitionCounts


def test_failover_member_sends_its_priority_as_a_big_endian_int32() -> None:
    assert MemberState("failover", priority=10).user_data() == b"\x00\x00\x00\x0a"
    assert MemberState("failover", priority=-2).user_data() == struct.pack(">i", -2)
    assert MemberState("failover").user_data() is None
    assert MemberState("range", priority=10).user_data() is None
    with pytest.raises(InvalidArgumentError, match="out of range"):
        MemberState("failover", priority=2**31)


def test_cooperative_member_sends_its_generation_as_an_int32() -> None:
    # Java CooperativeStickyAssignor.subscriptionUserData: a struct of one INT32, the generation.
    state = MemberState("cooperative-sticky")
    assert state.user_data() == struct.pack(">i", -1)
    state.on_assignment([TP("t", 0)], 7)
    assert state.user_data() == struct.pack(">i", 7)
    assert state.assigned == [TP("t", 0)] and state.generation == 7


def test_sticky_member_sends_nothing_before_its_first_assignment() -> None:
    state = MemberState("sticky", generation=None)
    assert state.user_data() is None
    state.on_assignment([TP("t", 1)])
    # Java StickyAssignor V0: ARRAY(topic STRING, partitions ARRAY(INT32)), no generation.
    assert state.user_data() == struct.pack(">ih", 1, 1) + b"t" + struct.pack(">ii", 1, 1)
    assert state.generation is None


def test_rack_is_a_string_or_none() -> None:
    assert check_rack("") is None and check_rack("az1") == "az1" and check_rack(None) is None
    with pytest.raises(InvalidArgumentError, match="rack must be a str"):
        check_rack(3)


def test_leader_reads_each_subscription_and_runs_the_strategy() -> None:
    # Java RangeAssignor's documented example: C0, C1 on t0, t1 with 3 partitions each.
    subscriptions = [Subscription(m, ["t0", "t1"], None) for m in ("C1", "C0")]
    result = assign_group("range", FakeCluster({"t0": 3, "t1": 3}), subscriptions)
    assert result == {
        "C0": [TP("t0", 0), TP("t0", 1), TP("t1", 0), TP("t1", 1)],
        "C1": [TP("t0", 2), TP("t1", 2)],
    }


def test_hostile_subscriptions_do_not_stop_the_leader() -> None:
    subscriptions = [
        Subscription("good", ["t"], struct.pack(">i", 5)),
        Subscription("bad", 12345, b"\xff"),
        Subscription("odd", ["t", 7, None], b"\x00"),
    ]
    result = assign_group("failover", FakeCluster({"t": 2}), subscriptions)
    assert result["good"] == [TP("t", 0), TP("t", 1)] and result["bad"] == [] and result["odd"] == []


def test_partition_racks_are_read_only_when_a_rack_aware_strategy_has_racked_members() -> None:
    calls: list[dict[str, int]] = []

    def racks(counts: dict[str, int]) -> dict[TopicPartition, frozenset[str]]:
        calls.append(dict(counts))
        return {TP("t", p): frozenset({"az1" if p % 2 == 0 else "az2"}) for p in range(counts["t"])}

    cluster = FakeCluster({"t": 4})
    plain = [Subscription(m, ["t"], None) for m in ("a", "b")]
    assign_group("range", cluster, plain, partition_racks=racks)
    racked = [Subscription("a", ["t"], None, rack_id="az2"), Subscription("b", ["t"], None, rack_id="az1")]
    assign_group("roundrobin", cluster, racked, partition_racks=racks)
    assert calls == []
    result = assign_group("range", cluster, racked, partition_racks=racks)
    assert calls == [{"t": 4}]
    # KIP-881 range: each member gets the partitions whose replicas share its rack.
    assert result == {"a": [TP("t", 1), TP("t", 3)], "b": [TP("t", 0), TP("t", 2)]}


def test_java_strategy_lists_for_a_client() -> None:
    supported = ("range", "roundrobin", "sticky", "cooperative-sticky")
    java_range = "org.apache.kafka.clients.consumer.RangeAssignor"
    assert strategies_for_client(None, client="c", supported=supported,
                                 cooperative="supported") == ["range"]
    assert strategies_for_client(
        f"{java_range}, sticky", client="c", supported=supported, cooperative="supported"
    ) == ["range", "sticky"]
    # Java's default list is accepted (run eagerly: rebalance_protocol)
    assert strategies_for_client(
        "range,cooperative-sticky", client="c", supported=supported, cooperative="supported"
    ) == ["range", "cooperative-sticky"]
    with pytest.raises(UnknownStrategyError, match="needs cooperative rebalancing, which c does not have"):
        strategies_for_client("range,cooperative-sticky", client="c", supported=("range",),
                              cooperative="never")
    with pytest.raises(UnknownStrategyError, match="needs cooperative rebalancing, which c does not have"):
        strategies_for_client("cooperative-sticky", client="c", supported=("range",), cooperative="never")
    with pytest.raises(
        UnknownStrategyError, match="c has no assignor for strategy 'failover'; allowed: range"
    ):
        strategies_for_client("failover", client="c", supported=("range",), cooperative="never")
