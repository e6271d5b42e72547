"""A group's leader and members as kafka-python sees them, without a broker: each member's
subscription encoded and decoded by kafka-python's own ConsumerProtocol codecs, the leader's assign()
decoded back, and the assignments delivered to the members."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka.structs import TopicPartition as KTP

from kafka_placement.assignment import TopicPartition

TP = TopicPartition
JoinMember = namedtuple("JoinMember", "member_id group_instance_id metadata")
Broker = namedtuple("Broker", "node_id host port rack")


class FakeCluster:
    """The part of kafka-python's ClusterMetadata an assignor may use."""

    def __init__(
        self,
        ppt: dict[str, int],
        replicas: dict[TP, list[int]] | None = None,
        broker_racks: dict[int, str | None] | None = None,
    ) -> None:
        self.ppt = ppt
        self.replicas = replicas or {}
        self.broker_racks = broker_racks or {}

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return set(range(self.ppt[topic])) if topic in self.ppt else None

    def brokers(self) -> list[Broker]:
        return [Broker(b, "127.0.0.1", 9092 + b, r) for b, r in self.broker_racks.items()]

    def is_replica_node(self, tp: KTP, node_id: int) -> Broker | None:
        if node_id in self.replicas.get(TP(tp.topic, tp.partition), []):
            return Broker(node_id, "127.0.0.1", 9092, self.broker_racks.get(node_id))
        return None


def join(
    assignors: dict[str, Any], topics: dict[str, list[str]], instance: dict[str, str] | None = None
) -> list[Any]:
    """What the leader receives: each member's subscription encoded and decoded on the wire."""
    out = []
    for member_id, assignor in assignors.items():
        raw = assignor.metadata(set(topics[member_id])).encode()
        out.append(
            JoinMember(member_id, (instance or {}).get(member_id), ConsumerProtocolSubscription.decode(raw))
        )
    return out


def run_leader(leader: Any, cluster: FakeCluster, members: list[Any]) -> dict[str, list[TP]]:
    raw = leader.assign(cluster, members)
    result = {}
    for member_id, assignment in raw.items():
        decoded = ConsumerProtocolAssignment.decode(assignment.encode())
        result[member_id] = sorted(TP(tp.topic, tp.partition) for tp in decoded.partitions())
    return result


def deliver(assignors: dict[str, Any], result: dict[str, list[TP]], generation: int) -> None:
    for member_id, parts in result.items():
        by_topic: dict[str, list[int]] = {}
        for tp in parts:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        assignors[member_id].on_assignment(
            ConsumerProtocolAssignment(
                version=0, assigned_partitions=sorted(by_topic.items()), user_data=b""
            ),
            generation,
        )
