"""confluent-kafka's ConsumerGroupDescribe result (objects built with confluent-kafka's own classes) as
a described group: assignment and target assignment per member, priorities not visible."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from confluent_kafka import ConsumerGroupState, ConsumerGroupType, Node, TopicPartition
from confluent_kafka.admin import ConsumerGroupDescription, MemberAssignment, MemberDescription

from kafka_placement.clients.confluent.group_description import RACK_NOT_VISIBLE, describe_consumer_group
from kafka_placement.vocabulary import TopicPartition as TP


class StubAdmin:
    def __init__(self, description: ConsumerGroupDescription) -> None:
        self.description = description

    def describe_consumer_groups(self, group_ids: list[str], **kwargs: Any) -> dict[str, Future[Any]]:
        future: Future[Any] = Future()
        future.set_result(self.description)
        return {group_ids[0]: future}


def test_members_assignment_and_target_assignment() -> None:
    def parts(*ps: int) -> MemberAssignment:
        return MemberAssignment([TopicPartition("orders", p) for p in ps])

    members = [
        MemberDescription("m-1", "cp-p10", "/127.0.0.1", parts(0, 1), None, parts(0, 1, 2)),
        MemberDescription("m-2", "cp-p5", "/127.0.0.1", parts(2, 3), "static-2", parts(3)),
    ]
    description = ConsumerGroupDescription(
        "g",
        False,
        members,
        "uniform",
        ConsumerGroupState.STABLE,
        Node(0, "127.0.0.1", 9092),
        type=ConsumerGroupType.CONSUMER,
    )
    group = describe_consumer_group(StubAdmin(description), "g", {"orders": 4})
    assert (group.protocol, group.state, group.assignor) == ("consumer", "STABLE", "uniform")
    first, second = group.members
    assert first.assignment == (TP("orders", 0), TP("orders", 1))
    assert first.target_assignment == (TP("orders", 0), TP("orders", 1), TP("orders", 2))
    assert second.instance_id == "static-2" and second.target_assignment == (TP("orders", 3),)
    assert {m.priority_source for m in group.members} == {"not visible"}
    assert group.notes == (RACK_NOT_VISIBLE,) and group.partitions_per_topic == {"orders": 4}
