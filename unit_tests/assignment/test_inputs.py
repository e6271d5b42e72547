"""Bad input to assign(): typed errors naming the bad value and the allowed range."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_placement.assignment import STRATEGIES, Member, TopicPartition, assign
from kafka_placement.errors import InvalidArgumentError, UnknownStrategyError


def test_unknown_strategy_names_allowed() -> None:
    with pytest.raises(UnknownStrategyError) as info:
        assign("Range", {"t": 1}, {"a": Member(["t"])})
    text = str(info.value)
    assert "'Range'" in text
    for name in ("range", "roundrobin", "sticky", "cooperative-sticky", "failover", "priority"):
        assert name in text
    with pytest.raises(UnknownStrategyError):
        assign(None, {}, {})  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)
    assert set(STRATEGIES) == {"range", "roundrobin", "sticky", "cooperative-sticky", "failover", "priority"}


@pytest.mark.parametrize(
    ("ppt", "message"),
    [
        ({"t": -1}, r"partition count of topic 't' is -1, allowed range is \[0, 2147483647\]"),
        ({"t": "3"}, r"partition count of topic 't' must be an int"),
        ({"t": True}, r"must be an int"),
        ({1: 3}, "topic names must be str"),
        ([("t", 1)], "partitions_per_topic must be a mapping"),
    ],
)
def test_bad_partition_counts(ppt: Any, message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        assign("range", ppt, {"a": Member(["t"])})


def test_bad_members_and_racks() -> None:
    with pytest.raises(InvalidArgumentError, match=r"member 'a' must be a kafka_placement\.assignment\.Mem"):
        assign("range", {"t": 1}, {"a": ["t"]})  # type: ignore[dict-item]
    with pytest.raises(InvalidArgumentError, match="member ids must be str"):
        assign("range", {"t": 1}, {1: Member(["t"])})  # type: ignore[dict-item]
    with pytest.raises(InvalidArgumentError, match="not the single string 'r1'"):
        assign("range", {"t": 1}, {"a": Member(["t"])}, partition_racks={TopicPartition("t", 0): "r1"})
    with pytest.raises(InvalidArgumentError, match="priority must be an int"):
        Member(["t"], priority="10")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="out of range"):
        Member(["t"], priority=2**31)
    with pytest.raises(InvalidArgumentError, match="group_instance_id must be a str"):
        Member(["t"], group_instance_id=5)  # type: ignore[arg-type]
