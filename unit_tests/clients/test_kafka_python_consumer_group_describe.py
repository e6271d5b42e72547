"""ConsumerGroupDescribe (API key 69) through kafka-python with Kafka's own schema from the kafka-clients jar.

The responses here are built and encoded by kafka-python's classes declared from that schema (no byte
of protocol written by us), decoded back from the bytes, and read into our vocabulary. Expected values
are what the test put into the response.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.clients.kafka_python.consumer_group_describe import (
    consumer_group,
    consumer_member,
    message_classes,
)
from kafka_placement.clients.kafka_python.group_description import GroupNotFoundError
from kafka_placement.errors import GroupDescribeError
from kafka_placement.vocabulary import TopicPartition

REQUEST, RESPONSE = message_classes()
GROUP = RESPONSE.DescribedGroup
MEMBER = GROUP.Member
ASSIGNMENT = MEMBER.Assignment
TOPIC = ASSIGNMENT.TopicPartitions


def assignment(topics: dict[str, list[int]]) -> Any:
    return ASSIGNMENT(
        topic_partitions=[
            TOPIC(topic_id=uuid.uuid4(), topic_name=name, partitions=parts) for name, parts in topics.items()
        ]
    )


def member(
    member_id: str,
    rack: str | None,
    *,
    owned: dict[str, list[int]] | None = None,
    target: dict[str, list[int]] | None = None,
    topics: tuple[str, ...] = ("orders",),
    regex: str | None = None,
    member_type: int = 1,
    client_id: str = "c",
) -> Any:
    return MEMBER(
        member_id=member_id,
        instance_id=None,
        rack_id=rack,
        member_epoch=5,
        client_id=client_id,
        client_host="/127.0.0.1",
        subscribed_topic_names=list(topics),
        subscribed_topic_regex=regex,
        assignment=assignment(owned or {}),
        target_assignment=assignment(target or {}),
        member_type=member_type,
    )


def wire(
    members: list[Any],
    version: int = 1,
    *,
    error_code: int = 0,
    message: str | None = None,
    group_id: str = "billing",
) -> Any:
    """The response encoded by kafka-python at ``version`` and decoded back from those bytes."""
    response = RESPONSE(
        throttle_time_ms=0,
        groups=[
            GROUP(
                error_code=error_code,
                error_message=message,
                group_id=group_id,
                group_state="Stable",
                group_epoch=7,
                assignment_epoch=7,
                assignor_name="failover",
                members=members,
                authorized_operations=-(2**31),
            )
        ],
    )
    return RESPONSE.decode(response.encode(version=version), version=version)


def test_request_and_response_come_from_kafkas_schema() -> None:
    assert (REQUEST.API_KEY, RESPONSE.API_KEY) == (69, 69)
    assert REQUEST.max_version >= 1  # Kafka 4.4's schema: versions 0-1 (1 adds MemberType, KIP-1099)
    encoded = REQUEST(group_ids=["billing"], include_authorized_operations=False).encode(version=0)
    # flexible version 0: compact array of 1 (0x02), compact string "billing" (0x08 + 7 bytes),
    # bool false, empty tagged fields — the layout of Kafka's flexible-versions protocol guide
    assert bytes(encoded) == b"\x02\x08billing\x00\x00"


@pytest.mark.parametrize("version", [0, 1])
def test_failover_group_members_with_priorities_in_client_rack(version: int) -> None:
    response = wire(
        [
            member(
                "m-10",
                "az1#priority=10",
                owned={"orders": [0, 1]},
                target={"orders": [0, 1]},
                client_id="p10",
            ),
            member("m-5", "#priority=5", client_id="p5"),
        ],
        version,
    )
    group = consumer_group(response, "billing")
    assert (group.protocol, group.state, group.assignor) == ("consumer", "Stable", "failover")
    high, low = group.members
    assert (high.member_id, high.client_id, high.host) == ("m-10", "p10", "/127.0.0.1")
    assert (high.rack, high.priority, high.priority_source) == ("az1", 10, "client.rack")
    assert (low.rack, low.priority, low.priority_source) == (None, 5, "client.rack")
    assert high.topics == ("orders",) and low.topics == ("orders",)
    assert high.assignment == (TopicPartition("orders", 0), TopicPartition("orders", 1))
    assert high.target_assignment == high.assignment
    assert low.assignment == () and low.target_assignment == ()
    assert high.problems == () and low.problems == ()


def test_rack_without_priority_and_unusable_priority() -> None:
    plain, bad, nothing = (
        wire([member("a", "rack2"), member("b", "rack2#priority=ten"), member("c", None)]).groups[0].members
    )
    assert consumer_member(plain).rack == "rack2" and consumer_member(plain).priority_source == "none"
    unusable = consumer_member(bad)
    assert (unusable.rack, unusable.priority, unusable.priority_source) == ("rack2", None, "client.rack")
    assert "'ten' is not an integer" in unusable.problems[0]
    assert consumer_member(nothing).rack is None and consumer_member(nothing).priority_source == "none"


def test_regex_subscription_and_classic_member() -> None:
    regex, classic = (
        wire([member("r", None, topics=(), regex="orders.*"), member("k", None, member_type=0)])
        .groups[0]
        .members
    )
    assert consumer_member(regex).topics is None  # the regex's matches are not listed: unknown
    assert "classic-protocol member" in consumer_member(classic).problems[0]


def test_a_topic_without_a_name_is_left_out_and_said() -> None:
    [raw] = wire([member("m", None, owned={"": [0, 1], "orders": [2]})]).groups[0].members
    described = consumer_member(raw)
    assert described.assignment == (TopicPartition("orders", 2),)
    assert described.problems == ("assignment: 2 partition(s) of a topic without a name (deleted?) left out",)


def test_errors_are_typed() -> None:
    with pytest.raises(GroupNotFoundError, match="GroupIdNotFound"):
        consumer_group(wire([], error_code=69, message="Group billing not found."), "billing")
    with pytest.raises(GroupDescribeError, match="code 30"):
        consumer_group(wire([], error_code=30), "billing")  # GROUP_AUTHORIZATION_FAILED
    with pytest.raises(GroupDescribeError, match="no entry for group 'other'"):
        consumer_group(wire([]), "other")


@settings(max_examples=60, deadline=None)
@given(
    rack=st.one_of(st.none(), st.text(max_size=80)),
    topic=st.text(max_size=20),
    parts=st.lists(st.integers(-(2**31), 2**31 - 1), max_size=20),
    regex=st.one_of(st.none(), st.text(max_size=10)),
)
def test_hostile_member_data_never_raises(
    rack: str | None, topic: str, parts: list[int], regex: str | None
) -> None:
    raw = (
        wire(
            [member("m", rack, owned={topic: parts}, target={topic: parts[:3]}, topics=(topic,), regex=regex)]
        )
        .groups[0]
        .members[0]
    )
    described = consumer_member(raw)
    assert described.member_id == "m"
    assert all(tp.partition >= 0 for tp in described.assignment)
