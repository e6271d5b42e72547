"""kafka-python 3.x group assignors backed by :mod:`kafka_placement.assignment`.

Use them in ``KafkaConsumer(partition_assignment_strategy=[...])`` as classes or, to pass
per-member settings, as instances::

    KafkaConsumer(..., partition_assignment_strategy=[FailoverAssignor(priority=10)])
    KafkaConsumer(..., partition_assignment_strategy=[RangeAssignor(rack="az1")])

kafka-python hands no consumer config to an assignor, so ``rack`` (Java's ``client.rack``) and
``priority`` are constructor arguments. Subscriptions are sent as ConsumerProtocolSubscription v3
(OwnedPartitions, GenerationId, RackId), readable by Java consumers and kafka-python alike. The
adapters only translate; every decision is made by :func:`kafka_placement.assignment.assign`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor, RebalanceProtocol
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from kafka_placement.assignment.strategy_names import StrategyName
from kafka_placement.assignment.userdata import DEFAULT_GENERATION
from kafka_placement.clients.consumer_protocol import refuse_consumer_protocol
from kafka_placement.clients.group_assignor import (
    MemberState,
    Subscription,
    SyncAssignment,
    assign_group_for_sync,
    check_rack,
    rebalance_protocol,
    strategies_for_client,
)
from kafka_placement.vocabulary import TopicPartition, group_by_topic

log = logging.getLogger(__name__)

__all__ = [
    "CooperativeStickyAssignor",
    "FailoverAssignor",
    "PriorityAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
    "assignors_from_config",
]

#: ConsumerProtocolSubscription version we send: v3 carries OwnedPartitions, GenerationId, RackId.
SUBSCRIPTION_VERSION = 3


def partition_racks(cluster: Any, counts: Mapping[str, int]) -> dict[TopicPartition, frozenset[str]]:
    """Replica racks of every partition, from the consumer's own cluster metadata.

    kafka-python keeps replica lists private but answers ``is_replica_node(tp, node_id)``;
    broker racks come from ``brokers()`` (MetadataResponse ``rack``).
    """
    from kafka.structs import TopicPartition as KafkaTopicPartition

    racked = [(b.node_id, b.rack) for b in cluster.brokers() if getattr(b, "rack", None) is not None]
    result: dict[TopicPartition, frozenset[str]] = {}
    if not racked:
        return result
    for topic, count in counts.items():
        for p in range(count):
            ktp = KafkaTopicPartition(topic, p)
            result[TopicPartition(topic, p)] = frozenset(
                rack for node_id, rack in racked if cluster.is_replica_node(ktp, node_id) is not None
            )
    return result


class _Assignor(AbstractPartitionAssignor):  # type: ignore[misc]
    """kafka-python's face of :mod:`kafka_placement.clients.group_assignor`: its subscription and
    assignment types in, ours out."""

    name = "kafka-placement"
    strategy: StrategyName = "range"
    version = SUBSCRIPTION_VERSION

    def __init__(
        self, *, rack: str | None = None, priority: int | None = None, migration_ready: bool = False
    ) -> None:
        self.state = MemberState(self.strategy, rack=rack, priority=priority, migration_ready=migration_ready)

    @property
    def rack(self) -> str | None:
        return self.state.rack

    @rack.setter
    def rack(self, rack: str | None) -> None:
        self.state.rack = check_rack(rack)

    @property
    def member_assignment(self) -> list[TopicPartition] | None:
        return self.state.assigned

    @property
    def generation(self) -> int:
        return self.state.generation if self.state.generation is not None else DEFAULT_GENERATION

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rack={self.rack!r})"

    # --- member side ------------------------------------------------------------------------
    def supported_protocols(self) -> list[RebalanceProtocol]:
        return [RebalanceProtocol.EAGER]

    def _owned_partitions(self) -> list[Any]:
        return []

    def metadata(self, topics: Iterable[str]) -> Any:
        return ConsumerProtocolSubscription(
            version=SUBSCRIPTION_VERSION,
            topics=sorted(topics),
            user_data=self.state.user_data(),
            owned_partitions=self._owned_partitions(),
            generation_id=self.generation,
            rack_id=self.state.subscription_rack(),
        )

    def on_assignment(self, assignment: Any, generation: int) -> None:
        self.state.on_assignment(assignment.partitions(), generation, getattr(assignment, "user_data", None))

    # --- leader side ------------------------------------------------------------------------
    def assign(self, cluster: Any, members: Sequence[Any]) -> dict[str, Any]:
        try:
            result = assign_group_for_sync(
                self.strategy,
                cluster,
                (_subscription(member) for member in members),
                partition_racks=lambda counts: partition_racks(cluster, counts),
                migration_ready=self.state.migration_ready,
            )
        except Exception:
            # kafka-python runs this inside its IO loop, where an exception may vanish silently
            # and leave the leader waiting forever: make it visible, then let it propagate.
            log.exception("%s assignment failed for %d members", self.name, len(members))
            raise
        return {member_id: _to_assignment(sync) for member_id, sync in result.items()}


def _subscription(member: Any) -> Subscription:
    metadata = member.metadata
    return Subscription(
        member_id=member.member_id,
        topics=getattr(metadata, "topics", None),
        user_data=getattr(metadata, "user_data", None),
        owned_partitions=[
            (entry.topic, partition)
            for entry in (getattr(metadata, "owned_partitions", None) or ())
            for partition in (entry.partitions or ())
        ],
        generation_id=getattr(metadata, "generation_id", DEFAULT_GENERATION),
        rack_id=getattr(metadata, "rack_id", None),
        group_instance_id=getattr(member, "group_instance_id", None),
    )


def _to_assignment(sync: SyncAssignment) -> Any:
    return ConsumerProtocolAssignment(
        version=0,
        assigned_partitions=sorted(group_by_topic(sync.partitions).items()),
        user_data=sync.user_data,
    )


class RangeAssignor(_Assignor):
    """Java ``RangeAssignor`` (``range``), rack-aware (KIP-881) when ``rack`` is given."""

    name = "range"
    strategy: StrategyName = "range"


class RoundRobinAssignor(_Assignor):
    """Java ``RoundRobinAssignor`` (``roundrobin``)."""

    name = "roundrobin"
    strategy: StrategyName = "roundrobin"


class StickyAssignor(_Assignor):
    """Java ``StickyAssignor`` (``sticky``, eager): previous assignment and generation travel in
    Java-compatible userData V1."""

    name = "sticky"
    strategy: StrategyName = "sticky"


class CooperativeStickyAssignor(_Assignor):
    """Java ``CooperativeStickyAssignor`` (``cooperative-sticky``, KIP-429): owned partitions in the
    subscription, partitions changing owner are revoked in one round and given in the next.

    Like Java's it supports both protocols: alone it runs COOPERATIVE; in a list with eager
    strategies (Java's default ``range, cooperative-sticky``, the upgrade path) the consumer runs
    EAGER — every partition revoked before each join, so none is sent as owned. kafka-python picks
    the protocol from the list, but tells no assignor: :func:`assignors_from_config` (and the
    confluent Consumer) set :attr:`rebalance_protocol` for it; build mixed lists with those."""

    name = "cooperative-sticky"
    strategy: StrategyName = "cooperative-sticky"

    def __init__(self, *, rack: str | None = None, priority: int | None = None) -> None:
        super().__init__(rack=rack, priority=priority)
        #: the protocol the consumer runs (Java's rule over its whole list); alone: COOPERATIVE
        self.rebalance_protocol = RebalanceProtocol.COOPERATIVE
        #: what the consumer holds now (its ``assignment``, emptied when its membership is lost), set by
        #: :func:`~kafka_placement.clients.kafka_python.owned_partitions.claim_current_assignment`;
        #: None: the last assignment, which a member rejoining after a loss must not claim
        self.owned_now: Callable[[], Iterable[Any] | None] | None = None

    def supported_protocols(self) -> list[RebalanceProtocol]:
        return [RebalanceProtocol.EAGER, RebalanceProtocol.COOPERATIVE]

    def _owned_partitions(self) -> list[Any]:
        if self.rebalance_protocol != RebalanceProtocol.COOPERATIVE:
            return []
        held = self.member_assignment if self.owned_now is None else self.owned_now()
        if not held:
            return []
        entry = ConsumerProtocolSubscription.TopicPartition
        by_topic = group_by_topic(TopicPartition(tp.topic, tp.partition) for tp in held)
        return [entry(topic=topic, partitions=sorted(parts)) for topic, parts in sorted(by_topic.items())]


class FailoverAssignor(_Assignor):
    """Failover/priority: the member with the highest ``priority`` consumes every
    partition of its topics; the others stand by. ``priority`` travels as a 4-byte big-endian
    int in userData; without one the member ranks below every number.

    ``migration_ready=True`` readies the member for a move of its group to the consumer protocol
    (docs/migration.md): its subscription's rack id also carries ``#priority=<n>``, where the broker's
    failover assignor reads it after a conversion, and as the leader it lets Kafka convert the group
    once every member's priority is visible there (:mod:`kafka_placement.assignment.failover_migration`)."""

    name = "failover"
    strategy: StrategyName = "failover"

    def __init__(
        self, priority: int | None = None, *, rack: str | None = None, migration_ready: bool = False
    ) -> None:
        super().__init__(rack=rack, priority=priority, migration_ready=migration_ready)

    @property
    def priority(self) -> int | None:
        return self.state.priority

    @property
    def migration_ready(self) -> bool:
        return self.state.migration_ready

    def __repr__(self) -> str:
        ready = ", migration_ready=True" if self.migration_ready else ""
        return f"{type(self).__name__}(priority={self.priority!r}, rack={self.rack!r}{ready})"


class PriorityAssignor(FailoverAssignor):
    """The failover assignor under its alias name ``priority``."""

    name = "priority"
    strategy: StrategyName = "priority"


#: Our kafka-python assignor class of each strategy (the confluent consumer runs these too).
ASSIGNOR_CLASSES: dict[StrategyName, type[_Assignor]] = {
    "range": RangeAssignor,
    "roundrobin": RoundRobinAssignor,
    "sticky": StickyAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
    "failover": FailoverAssignor,
    "priority": PriorityAssignor,
}


def assignors_from_config(
    config: str | Iterable[str] | None = None,
    *,
    rack: str | None = None,
    priority: int | None = None,
    group_protocol: str = "classic",
    migration_ready: bool = False,
) -> list[_Assignor]:
    """Assignor instances for kafka-python's ``partition_assignment_strategy`` from a Java-style
    ``partition.assignment.strategy`` (Kafka names, Java class names, ``failover``), in its order of
    preference. ``rack`` goes to every assignor (KIP-881, used by range and the sticky ones),
    ``priority`` and ``migration_ready`` to failover/priority.

    The consumer runs the rebalance protocol Java would (the highest all of them support): Java's
    default ``range, cooperative-sticky`` runs eagerly, ``cooperative-sticky`` alone cooperatively
    — kafka-python picks the same from the assignors' ``supported_protocols()``. None gives ``range``.
    ``group_protocol`` other than ``classic`` is refused in one line."""
    if str(group_protocol).strip().lower() != "classic":
        raise refuse_consumer_protocol("kafka-python")
    names = strategies_for_client(
        config, client="kafka-python", supported=ASSIGNOR_CLASSES, cooperative="supported"
    )
    return assignors_for(names, rack=rack, priority=priority, migration_ready=migration_ready)


def assignors_for(
    names: Sequence[StrategyName],
    *,
    rack: str | None = None,
    priority: int | None = None,
    migration_ready: bool = False,
) -> list[_Assignor]:
    """One assignor instance per strategy name; a cooperative-sticky one is told the protocol the
    whole list runs (Java's rule, :func:`~kafka_placement.clients.group_assignor.rebalance_protocol`)."""
    protocol = (
        RebalanceProtocol.COOPERATIVE
        if rebalance_protocol(names) == "cooperative"
        else RebalanceProtocol.EAGER
    )
    out: list[_Assignor] = []
    for name in names:
        cls = ASSIGNOR_CLASSES[name]
        if issubclass(cls, FailoverAssignor):
            assignor: _Assignor = cls(priority, rack=rack, migration_ready=migration_ready)
        else:
            assignor = cls(rack=rack)
        if isinstance(assignor, CooperativeStickyAssignor):
            assignor.rebalance_protocol = protocol
        out.append(assignor)
    return out
