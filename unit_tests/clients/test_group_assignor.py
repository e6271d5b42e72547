"""The client-neutral assignor base: member state and userData, the leader's reading of
subscriptions, and Java's strategy list for a client."""

from __future__ import annotations

import logging
import struct

import pytest
from cluster_stub import PartitionCounts  # this directory is on sys.path

from kafka_placement.assignment import TopicPartition
from kafka_placement.clients.group_assignor import (
    MemberState,
    Subscription,
    SyncAssignment,
    assign_group,
    assign_group_for_sync,
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
    assert strategies_for_client(None, client="c", supported=supported, cooperative="supported") == ["range"]
    assert strategies_for_client(
        f"{java_range}, sticky", client="c", supported=supported, cooperative="supported"
    ) == ["range", "sticky"]
    # Java's default list is accepted (run eagerly: rebalance_protocol)
    assert strategies_for_client(
        "range,cooperative-sticky", client="c", supported=supported, cooperative="supported"
    ) == ["range", "cooperative-sticky"]
    with pytest.raises(UnknownStrategyError, match="needs cooperative rebalancing, which c does not have"):
        strategies_for_client(
            "range,cooperative-sticky", client="c", supported=("range",), cooperative="never"
        )
    with pytest.raises(UnknownStrategyError, match="needs cooperative rebalancing, which c does not have"):
        strategies_for_client("cooperative-sticky", client="c", supported=("range",), cooperative="never")
    with pytest.raises(
        UnknownStrategyError, match="c has no assignor for strategy 'failover'; allowed: range"
    ):
        strategies_for_client("failover", client="c", supported=("range",), cooperative="never")


def test_failover_leader_sends_every_member_non_empty_assignment_user_data() -> None:
    # Kafka refuses to convert a classic group to the consumer protocol while a member's assignment
    # userData is non-empty (KAFKA-18134): a failover leader's never is, standbys' included.
    subscriptions = [
        Subscription("active", ["t"], struct.pack(">i", 10)),
        Subscription("standby", ["t"], struct.pack(">i", 5)),
        Subscription("none", ["t"], None),
        Subscription("garbage", ["t"], b"\x01\x02"),
    ]
    result = assign_group_for_sync("failover", FakeCluster({"t": 2}), subscriptions)
    assert result == {
        "active": SyncAssignment([TP("t", 0), TP("t", 1)], bytes([0, 0, 1, 0, 0, 0, 10])),
        "standby": SyncAssignment([], bytes([0, 0, 1, 0, 0, 0, 5])),
        "none": SyncAssignment([], bytes(7)),
        "garbage": SyncAssignment([], bytes(7)),
    }
    assert assign_group_for_sync("priority", FakeCluster({"t": 1}), subscriptions[:1])["active"].user_data


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_java_strategies_send_empty_assignment_user_data_like_java(strategy: str) -> None:
    # Java's Range/RoundRobin/Sticky/CooperativeSticky assignors leave the assignment userData empty,
    # which keeps such groups convertible to the consumer protocol (Kafka's documented migration).
    subscriptions = [Subscription(m, ["t"], None) for m in ("a", "b")]
    result = assign_group_for_sync(strategy, FakeCluster({"t": 3}), subscriptions)  # type: ignore[arg-type]
    assert {m: sync.user_data for m, sync in result.items()} == {"a": b"", "b": b""}


def test_failover_member_logs_one_line_when_no_failover_leader_assigned_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="kafka_placement.clients.group_assignor")
    state = MemberState("failover", priority=5)
    state.on_assignment([], 3, bytes([0, 0, 1, 0, 0, 0, 5]))
    assert state.assignment_problem is None and caplog.records == []
    # the broker assigns a converted group: the assignment carries no userData
    state.on_assignment([TP("t", 0)], 4, b"")
    state.on_assignment([TP("t", 0)], 5, None)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "no failover userData" in warnings[0].getMessage()
    assert "consumer protocol" in warnings[0].getMessage()
    state.on_assignment([], 6, bytes([0, 0, 1, 0, 0, 0, 5]))
    assert state.assignment_problem is None
    assert [r.levelno for r in caplog.records] == [logging.WARNING, logging.INFO]


@pytest.mark.parametrize(
    ("user_data", "problem"),
    [
        (bytes(7), "ranked this member last (no usable priority), but its priority is 5"),
        (bytes([0, 0, 1, 0, 0, 0, 9]), "ranked this member with priority 9, but its priority is 5"),
        (b"\x00", "unreadable"),
    ],
)
def test_failover_member_notices_a_leader_that_misread_its_priority(user_data: bytes, problem: str) -> None:
    state = MemberState("failover", priority=5)
    state.on_assignment([], 1, user_data)
    assert state.assignment_problem is not None and problem in state.assignment_problem


def test_other_strategies_accept_any_assignment_user_data() -> None:
    state = MemberState("range")
    state.on_assignment([TP("t", 0)], 1, b"")
    state.on_assignment([TP("t", 0)], 2, b"whatever")
    assert state.assignment_problem is None
