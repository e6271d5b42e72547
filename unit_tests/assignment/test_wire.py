"""Subscription fields → Member per strategy, and the userData each strategy sends."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.assignment import TopicPartition
from kafka_placement.assignment.userdata import encode_sticky_user_data
from kafka_placement.assignment.wire import member_from_subscription, subscription_user_data

TP = TopicPartition


def test_sticky_reads_user_data_not_owned_partitions() -> None:
    data = encode_sticky_user_data([TP("t", 1), TP("t", 0)], 4)
    m = member_from_subscription(
        "sticky",
        "m",
        ["t"],
        data,
        owned_partitions=[("t", 2)],
        generation_id=9,
        rack_id="r",
        existing={"t": 3},
    )
    assert (m.owned, m.generation, m.rack) == ((TP("t", 1), TP("t", 0)), 4, "r")


def test_sticky_drops_claims_on_vanished_topics_and_duplicates() -> None:
    data = encode_sticky_user_data([TP("gone", 0), TP("t", 7), TP("t", 1), TP("t", 1)], 2)
    m = member_from_subscription("sticky", "m", ["t"], data, existing={"t": 3})
    assert m.owned == (TP("t", 1),)


def test_cooperative_uses_subscription_fields_then_user_data() -> None:
    m = member_from_subscription(
        "cooperative-sticky", "m", ["t"], struct.pack(">i", 3), owned_partitions=[("t", 0)], generation_id=8
    )
    assert (m.owned, m.generation) == ((TP("t", 0),), 8)
    m = member_from_subscription(
        "cooperative-sticky", "m", ["t"], struct.pack(">i", 3), owned_partitions=[("t", 0)], generation_id=-1
    )
    assert m.generation == 3
    m = member_from_subscription("cooperative-sticky", "m", ["t"], b"\x01", generation_id=-1)
    assert m.generation == -1
    m = member_from_subscription("cooperative-sticky", "m", ["t"], None, owned_partitions=[("t", "x"), 5])
    assert m.owned == ()


def test_failover_priority_and_hostile_priority() -> None:
    assert member_from_subscription("failover", "m", ["t"], struct.pack(">i", 10)).priority == 10
    assert member_from_subscription("priority", "m", ["t"], b"\x00\x01").priority is None
    assert member_from_subscription("failover", "m", ["t"], None).priority is None


def test_hostile_fields_never_raise() -> None:
    m = member_from_subscription(
        "range", "m", ["t", None, 3], b"", rack_id=5, group_instance_id=7, generation_id="x"
    )
    assert (m.topics, m.rack, m.group_instance_id) == (("t",), None, None)
    assert member_from_subscription("range", "m", 42, None).topics == ()
    assert member_from_subscription("range", "m", None, None, rack_id="").rack is None


@given(
    st.sampled_from(["range", "roundrobin", "sticky", "cooperative-sticky", "failover", "priority"]),
    st.one_of(st.none(), st.binary(max_size=64)),
    st.lists(st.tuples(st.one_of(st.text(max_size=3), st.none()), st.integers(-5, 5))),
    st.one_of(st.integers(-(2**40), 2**40), st.none(), st.text(max_size=2)),
)
def test_never_raises_on_garbage(strategy: str, data: bytes | None, owned: list[object], gen: object) -> None:
    member_from_subscription(
        strategy, "m", ["t"], data, owned_partitions=owned, generation_id=gen, existing={"t": 3}
    )


def test_subscription_user_data_per_strategy() -> None:
    assert subscription_user_data("range") is None
    assert subscription_user_data("sticky") is None  # before the first assignment: null (Java)
    assert subscription_user_data("sticky", owned=[TP("t", 0)], generation=5) == encode_sticky_user_data(
        [TP("t", 0)], 5
    )
    assert subscription_user_data("cooperative-sticky", generation=6) == struct.pack(">i", 6)
    assert subscription_user_data("failover", priority=10) == b"\x00\x00\x00\x0a"
    assert subscription_user_data("failover") is None
