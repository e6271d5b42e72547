"""aiokafka 0.14 group assignors backed by :mod:`kafka_placement.assignment`.

aiokafka speaks ConsumerProtocol v0 only (topics + userData) and has no cooperative rebalancing,
so this adapter offers ``range``, ``roundrobin``, ``sticky`` and ``failover``/``priority``::

    AIOKafkaConsumer(..., partition_assignment_strategy=[FailoverAssignor(priority=10)])

Without a RackId field in v0 there is no rack-aware assignment here. aiokafka does not pass the
generation to ``on_assignment``, so sticky userData is sent as Java's V0 (no generation).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment, ConsumerProtocolMemberMetadata

from kafka_placement.assignment import assign
from kafka_placement.assignment.strategy_names import StrategyName, parse_strategies
from kafka_placement.assignment.wire import member_from_subscription, subscription_user_data
from kafka_placement.clients.cluster_metadata import partitions_per_topic
from kafka_placement.errors import UnknownStrategyError
from kafka_placement.vocabulary import TopicPartition, check_priority, group_by_topic

log = logging.getLogger(__name__)

__all__ = [
    "FailoverAssignor",
    "PriorityAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
    "assignors_from_config",
]


class _Assignor(AbstractPartitionAssignor):  # type: ignore[misc]
    name = "kafka-placement"
    strategy: StrategyName = "range"
    version = 0

    def __init__(self) -> None:
        self.member_assignment: list[TopicPartition] | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def _user_data(self) -> bytes | None:
        return None

    def metadata(self, topics: Iterable[str]) -> Any:  # type: ignore[override]
        return ConsumerProtocolMemberMetadata(self.version, sorted(topics), self._user_data() or b"")

    def on_assignment(self, assignment: Any) -> None:  # type: ignore[override]
        self.member_assignment = [TopicPartition(tp.topic, tp.partition) for tp in assignment.partitions()]

    def assign(self, cluster: Any, members: Mapping[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        topics = {
            topic
            for metadata in members.values()
            for topic in (getattr(metadata, "subscription", None) or ())
            if isinstance(topic, str)
        }
        counts = partitions_per_topic(cluster, sorted(topics))
        parsed = {
            member_id: member_from_subscription(
                self.strategy,
                member_id,
                getattr(metadata, "subscription", None),
                getattr(metadata, "user_data", None),
                existing=counts,
            )
            for member_id, metadata in members.items()
        }
        result = assign(self.strategy, counts, parsed)
        return {
            member_id: ConsumerProtocolMemberAssignment(
                self.version, sorted(group_by_topic(partitions).items()), b""
            )
            for member_id, partitions in result.items()
        }


class RangeAssignor(_Assignor):
    """Java ``RangeAssignor`` (``range``)."""

    name = "range"
    strategy: StrategyName = "range"


class RoundRobinAssignor(_Assignor):
    """Java ``RoundRobinAssignor`` (``roundrobin``)."""

    name = "roundrobin"
    strategy: StrategyName = "roundrobin"


class StickyAssignor(_Assignor):
    """Java ``StickyAssignor`` (``sticky``); previous assignment in Java-compatible userData V0."""

    name = "sticky"
    strategy: StrategyName = "sticky"

    def _user_data(self) -> bytes | None:
        return subscription_user_data("sticky", owned=self.member_assignment, generation=None)


class FailoverAssignor(_Assignor):
    """Failover/priority with ``priority`` as a 4-byte big-endian int in userData."""

    name = "failover"
    strategy: StrategyName = "failover"

    def __init__(self, priority: int | None = None) -> None:
        check_priority(priority)
        super().__init__()
        self.priority = priority

    def __repr__(self) -> str:
        return f"{type(self).__name__}(priority={self.priority!r})"

    def _user_data(self) -> bytes | None:
        return subscription_user_data("failover", priority=self.priority)


class PriorityAssignor(FailoverAssignor):
    """The failover assignor under its alias name ``priority``."""

    name = "priority"
    strategy: StrategyName = "priority"


_BY_NAME: dict[str, type[_Assignor]] = {
    "range": RangeAssignor,
    "roundrobin": RoundRobinAssignor,
    "sticky": StickyAssignor,
    "failover": FailoverAssignor,
    "priority": PriorityAssignor,
}


def assignors_from_config(
    config: str | Iterable[str] | None = None, *, priority: int | None = None
) -> list[_Assignor]:
    """Assignor instances for aiokafka's ``partition_assignment_strategy`` from a Java-style
    ``partition.assignment.strategy`` (Kafka names, Java class names, ``failover``), in its order of
    preference. aiokafka has no cooperative rebalancing: ``cooperative-sticky`` is refused, and None
    gives ``range`` (Java's default without its cooperative part). ``priority`` goes to failover/priority."""
    names: list[StrategyName] = ["range"] if config is None else parse_strategies(config)
    out: list[_Assignor] = []
    for name in names:
        cls = _BY_NAME.get(name)
        if cls is None:
            raise UnknownStrategyError(
                f"assignment strategy {name!r} needs cooperative rebalancing, which aiokafka does not have; "
                "allowed here: range, roundrobin, sticky, failover (alias priority)"
            )
        out.append(cls(priority) if issubclass(cls, FailoverAssignor) else cls())
    return out
