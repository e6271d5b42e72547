"""The shared vocabulary: TopicPartition, Member, Broker and their checks."""

from __future__ import annotations

import pytest

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.vocabulary import Broker, Member, TopicPartition, check_priority, group_by_topic


def test_group_by_topic_keeps_first_seen_order() -> None:
    tps = [TopicPartition("b", 2), TopicPartition("a", 1), TopicPartition("b", 0), TopicPartition("a", 0)]
    grouped = group_by_topic(tps)
    assert list(grouped.items()) == [("b", [2, 0]), ("a", [1, 0])]
    assert group_by_topic([]) == {}


@pytest.mark.parametrize("bad", [True, 1.5, "10", 2**31, -(2**31) - 1])
def test_priority_outside_int32_or_not_int_is_refused_naming_the_value(bad: object) -> None:
    with pytest.raises(InvalidArgumentError, match="2147483647"):
        check_priority(bad)
    with pytest.raises(InvalidArgumentError, match="priority"):
        Member(["t"], priority=bad)  # type: ignore[arg-type]


def test_priority_bounds_and_none_are_accepted() -> None:
    assert check_priority(None) is None
    assert check_priority(2**31 - 1) == 2**31 - 1
    assert check_priority(-(2**31)) == -(2**31)


def test_member_normalizes_topics_and_owned() -> None:
    member = Member(["b", "a", "b"], owned=[("a", 1)], generation=3, rack="r1")
    assert member.topics == ("a", "b")
    assert member.owned == (TopicPartition("a", 1),)
    with pytest.raises(InvalidArgumentError, match="single string 'orders'"):
        Member("orders")
    with pytest.raises(InvalidArgumentError, match="owned partition"):
        Member(["a"], owned=[("a", "1")])  # type: ignore[list-item]


def test_broker_ids_are_non_negative_ints() -> None:
    assert Broker(3, "rack2").rack == "rack2"
    for bad in (-1, True, "1"):
        with pytest.raises(InvalidArgumentError, match="broker id"):
            Broker(bad)  # type: ignore[arg-type]


def test_equal_subscriptions_share_one_tuple_and_the_sharing_is_bounded() -> None:
    from kafka_placement import vocabulary

    a = Member(["b", "a", "b"])
    b = Member(("a", "b"))
    assert a.topics == ("a", "b") and a.topics is b.topics
    assert Member(["a"]).topics is not a.topics
    for i in range(vocabulary._SUBSCRIPTIONS_LIMIT + 10):
        Member([f"topic-{i}"])
    assert len(vocabulary._SUBSCRIPTIONS) <= vocabulary._SUBSCRIPTIONS_LIMIT
    assert Member(["a", "b"]).topics == ("a", "b")  # after starting over: equal, shared again from now
