"""aiokafka 0.14 group assignors backed by :mod:`kafka_placement.assignment`.

aiokafka speaks ConsumerProtocol v0 only (topics + userData) and has no cooperative rebalancing,
so this adapter offers ``range``, ``roundrobin``, ``sticky`` and ``failover``/``priority``::

    AIOKafkaConsumer(..., partition_assignment_strategy=[FailoverAssignor(priority=10)])

Without a RackId field in v0 there is no rack-aware assignment here. aiokafka does not pass the
generation to ``on_assignment``, so sticky userData is sent as Java's V0 (no generation).

A migration-ready failover member (docs/migration.md) sends ``ConsumerProtocolSubscription`` v3 instead,
declared with aiokafka's own protocol types, so the broker sees its priority in the subscription's rack id
after a conversion. As the leader it cannot see the other members' rack ids (aiokafka decodes every
subscription as v0), so an aiokafka leader keeps the group protected against conversion and says so.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment, ConsumerProtocolMemberMetadata
from aiokafka.protocol.struct import Struct
from aiokafka.protocol.types import Array, Bytes, Int16, Int32, Schema, String

from kafka_placement.assignment.strategy_names import StrategyName
from kafka_placement.clients.consumer_protocol import refuse_consumer_protocol
from kafka_placement.clients.group_assignor import (
    MemberState,
    Subscription,
    assign_group_for_sync,
    strategies_for_client,
)
from kafka_placement.vocabulary import TopicPartition, group_by_topic

log = logging.getLogger(__name__)

__all__ = [
    "FailoverAssignor",
    "PriorityAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
    "assignors_from_config",
]


class SubscriptionV3(Struct):  # type: ignore[misc]
    """Kafka's ``ConsumerProtocolSubscription`` v3 (KIP-881: ``RackId``) in aiokafka's protocol types;
    aiokafka itself declares only v0. Fields as in Kafka's ``ConsumerProtocolSubscription.json``."""

    SCHEMA = Schema(
        ("version", Int16),
        ("subscription", Array(String("utf-8"))),
        ("user_data", Bytes),
        ("owned_partitions", Array(("topic", String("utf-8")), ("partitions", Array(Int32)))),
        ("generation_id", Int32),
        ("rack_id", String("utf-8")),
    )


#: Logged once by an aiokafka leader of a migration-ready failover group.
LEADER_CANNOT_SEE_RACKS = (
    "this migration-ready aiokafka failover member leads, and aiokafka decodes its members' subscriptions "
    "as v0, without their rack ids: it cannot tell whether the broker could see every priority, so it keeps "
    "the group protected against conversion to the consumer protocol (another member will lead once this "
    "one restarts; docs/migration.md)"
)


class _Assignor(AbstractPartitionAssignor):  # type: ignore[misc]
    """aiokafka's face of :mod:`kafka_placement.clients.group_assignor` (ConsumerProtocol v0)."""

    name = "kafka-placement"
    strategy: StrategyName = "range"
    version = 0

    def __init__(
        self, *, priority: int | None = None, rack: str | None = None, migration_ready: bool = False
    ) -> None:
        # aiokafka never tells an assignor its generation: sticky userData goes out as Java's V0.
        self.state = MemberState(
            self.strategy, priority=priority, rack=rack, generation=None, migration_ready=migration_ready
        )
        self._said_cannot_see = False

    @property
    def member_assignment(self) -> list[TopicPartition] | None:
        return self.state.assigned

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def metadata(self, topics: Iterable[str]) -> Any:  # type: ignore[override]
        if self.state.migration_ready:
            return SubscriptionV3(
                3, sorted(topics), self.state.user_data(), [], -1, self.state.subscription_rack()
            )
        return ConsumerProtocolMemberMetadata(self.version, sorted(topics), self.state.user_data() or b"")

    def on_assignment(self, assignment: Any) -> None:  # type: ignore[override]
        self.state.on_assignment(assignment.partitions(), user_data=getattr(assignment, "user_data", None))

    def assign(self, cluster: Any, members: Mapping[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        subscriptions = (
            Subscription(
                member_id=member_id,
                topics=getattr(metadata, "subscription", None),
                user_data=getattr(metadata, "user_data", None),
            )
            for member_id, metadata in members.items()
        )
        if self.state.migration_ready and not self._said_cannot_see:
            log.info(LEADER_CANNOT_SEE_RACKS)
            self._said_cannot_see = True
        result = assign_group_for_sync(self.strategy, cluster, subscriptions)
        return {
            member_id: ConsumerProtocolMemberAssignment(
                self.version, sorted(group_by_topic(sync.partitions).items()), sync.user_data
            )
            for member_id, sync in result.items()
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


class FailoverAssignor(_Assignor):
    """Failover/priority with ``priority`` as a 4-byte big-endian int in userData; ``migration_ready``
    (with an optional ``rack``): the priority also rides in a v3 subscription's rack id (module docstring)."""

    name = "failover"
    strategy: StrategyName = "failover"

    def __init__(
        self, priority: int | None = None, *, rack: str | None = None, migration_ready: bool = False
    ) -> None:
        super().__init__(priority=priority, rack=rack, migration_ready=migration_ready)

    @property
    def priority(self) -> int | None:
        return self.state.priority

    def __repr__(self) -> str:
        ready = ", migration_ready=True" if self.state.migration_ready else ""
        return f"{type(self).__name__}(priority={self.priority!r}{ready})"


class PriorityAssignor(FailoverAssignor):
    """The failover assignor under its alias name ``priority``."""

    name = "priority"
    strategy: StrategyName = "priority"


#: Our aiokafka assignor class of each strategy aiokafka can run.
ASSIGNOR_CLASSES: dict[StrategyName, type[_Assignor]] = {
    "range": RangeAssignor,
    "roundrobin": RoundRobinAssignor,
    "sticky": StickyAssignor,
    "failover": FailoverAssignor,
    "priority": PriorityAssignor,
}


def assignors_from_config(
    config: str | Iterable[str] | None = None, *, priority: int | None = None, group_protocol: str = "classic"
) -> list[_Assignor]:
    """Assignor instances for aiokafka's ``partition_assignment_strategy`` from a Java-style
    ``partition.assignment.strategy`` (Kafka names, Java class names, ``failover``), in its order of
    preference. aiokafka has no cooperative rebalancing: ``cooperative-sticky`` is refused, and None
    gives ``range`` (Java's default without its cooperative part). ``priority`` goes to failover/priority.
    aiokafka speaks only the classic protocol: ``group_protocol`` other than ``classic`` is refused."""
    if str(group_protocol).strip().lower() != "classic":
        raise refuse_consumer_protocol("aiokafka")
    names = strategies_for_client(config, client="aiokafka", supported=ASSIGNOR_CLASSES, cooperative="never")
    out: list[_Assignor] = []
    for name in names:
        cls = ASSIGNOR_CLASSES[name]
        out.append(cls(priority) if issubclass(cls, FailoverAssignor) else cls())
    return out
