"""A group as the broker describes it (DescribeGroups, ConsumerGroupDescribe, ListGroups), in our vocabulary.

Members' data is untrusted (any client sent it): the adapters fill these types with what they could
read and a ``problem`` text for what they could not, never raising for a member's bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from kafka_placement.vocabulary import TopicPartition

#: Kafka's group types (ListGroups ``GroupType``, KIP-848/KIP-932) and ours for "the broker did not say".
Protocol = Literal["classic", "consumer", "share", "streams", "unknown"]
#: Where a member's priority was read: our failover userData (classic), ``client.rack`` (consumer
#: protocol, ``rack_priority``), or nowhere.
PrioritySource = Literal["userData", "client.rack", "none", "not visible"]
#: What a classic member's *assignment* userData is: ours (failover, so Kafka refuses to convert the
#: group to the consumer protocol), empty (convertible), another assignor's bytes, or not applicable.
AssignmentUserData = Literal["failover", "empty", "other", "n/a"]
#: The group protocol a member speaks (a consumer-protocol group can hold classic members mid-migration).
MemberProtocol = Literal["classic", "consumer"]


@dataclass(frozen=True)
class DescribedMember:
    """One member. ``topics`` is ``None`` when the describe API does not give the subscription;
    ``target_assignment`` is the consumer protocol's (``None`` elsewhere)."""

    member_id: str
    client_id: str
    host: str
    instance_id: str | None = None
    rack: str | None = None
    priority: int | None = None
    priority_source: PrioritySource = "none"
    topics: tuple[str, ...] | None = None
    assignment: tuple[TopicPartition, ...] = ()
    target_assignment: tuple[TopicPartition, ...] | None = None
    assignment_user_data: AssignmentUserData = "n/a"
    #: what could not be read from this member's data (its priority, subscription or assignment)
    problems: tuple[str, ...] = ()
    #: the protocol this member speaks (None: the describe API did not say)
    member_protocol: MemberProtocol | None = None
    #: a classic failover member: why the broker would not see its priority after a conversion (its
    #: subscription's rack id lacks ``#priority=<n>``, docs/migration.md); None when it would
    migration_problem: str | None = None

    def summary(self) -> dict[str, Any]:
        """JSON-ready fields (partitions as ``"topic-partition"`` strings, sorted)."""
        return {
            "member_id": self.member_id,
            "client_id": self.client_id,
            "host": self.host,
            "instance_id": self.instance_id,
            "rack": self.rack,
            "priority": self.priority,
            "priority_source": self.priority_source,
            "topics": None if self.topics is None else sorted(self.topics),
            "assignment": partition_names(self.assignment),
            "target_assignment": (
                None if self.target_assignment is None else partition_names(self.target_assignment)
            ),
            "assignment_user_data": self.assignment_user_data,
            "problems": list(self.problems),
            "member_protocol": self.member_protocol,
            "migration_problem": self.migration_problem,
        }


@dataclass(frozen=True)
class DescribedGroup:
    """One group: its protocol (group type), state, assignor (classic: the protocol name the group
    chose; consumer: the server assignor), members, partition counts of the topics in play (for the
    failover check), and what the describe API could not tell (``notes``)."""

    group_id: str
    protocol: Protocol
    state: str
    assignor: str | None
    members: tuple[DescribedMember, ...] = ()
    partitions_per_topic: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def topics(self) -> list[str]:
        """Every topic a member subscribes to, is assigned or is targeted (sorted)."""
        names: set[str] = set()
        for m in self.members:
            names.update(m.topics or ())
            names.update(tp.topic for tp in m.assignment)
            names.update(tp.topic for tp in m.target_assignment or ())
        return sorted(names)


def partition_names(partitions: tuple[TopicPartition, ...] | list[TopicPartition]) -> list[str]:
    """``["orders-0", "orders-1", …]`` sorted by (topic, partition), as Kafka's tools print them."""
    return [f"{tp.topic}-{tp.partition}" for tp in sorted(partitions)]
