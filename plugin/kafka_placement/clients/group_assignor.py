"""What every client's group assignor does, whatever the client: the one shared base of the adapters.

A client adapter (kafka-python, aiokafka; the confluent consumer runs the kafka-python one) only
converts its client's objects: its subscription metadata into :class:`Subscription`, our result into
its assignment type. Everything else is here, once:

* the member side, :class:`MemberState`: what a member keeps between rebalances (its last assignment,
  generation, rack and priority), the userData its strategy sends, looked up in the strategy table,
  and the one log line when an assignment's userData says something went wrong (a failover member
  assigned by someone other than a failover leader);
* the leader side, :func:`assign_group_for_sync`: subscriptions → members →
  :func:`kafka_placement.assignment.assign`, with each member's assignment userData;
* the config side, :func:`strategies_for_client`: Java's ``partition.assignment.strategy`` → the
  strategies a client can run, refusing what it cannot by name.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from kafka_placement.assignment import assign, strategy
from kafka_placement.assignment.failover_migration import advertised_rack, group_convertible
from kafka_placement.assignment.strategy_names import StrategyName, parse_strategies
from kafka_placement.assignment.userdata import DEFAULT_GENERATION
from kafka_placement.assignment.wire import clean_topics, member_from_subscription, subscription_user_data
from kafka_placement.clients.cluster_metadata import partitions_per_topic
from kafka_placement.errors import InvalidArgumentError, UnknownStrategyError
from kafka_placement.vocabulary import Member, TopicPartition, check_priority

log = logging.getLogger(__name__)

#: Replica racks of the given topics' partitions, read from a client's cluster metadata.
PartitionRacks = Callable[[Mapping[str, int]], dict[TopicPartition, frozenset[str]]]


def check_rack(rack: object) -> str | None:
    """Java's ``client.rack``: a str or None (an empty string means no rack, as in Java)."""
    if rack is None:
        return None
    if not isinstance(rack, str):
        raise InvalidArgumentError(f"rack must be a str (Kafka's client.rack) or None, got {rack!r}")
    return rack or None


class MemberState:
    """One member's side of a strategy: what it remembers between rebalances and what it sends.

    ``generation=None`` is for clients that never learn their generation (aiokafka): sticky userData
    then goes out as Java's V0, which has no generation field.
    """

    def __init__(
        self,
        strategy_name: StrategyName,
        *,
        rack: str | None = None,
        priority: int | None = None,
        generation: int | None = DEFAULT_GENERATION,
        migration_ready: bool = False,
    ) -> None:
        check_priority(priority)
        if not isinstance(migration_ready, bool):
            raise InvalidArgumentError(f"migration_ready must be True or False, got {migration_ready!r}")
        self.strategy: StrategyName = strategy_name
        self.rack = check_rack(rack)
        self.priority = priority
        self.generation = generation
        #: a failover member ready to move to the consumer protocol (docs/migration.md): its priority
        #: also rides in its subscription's rack id, and as the leader it lets the group convert once
        #: every member's priority is visible there
        self.migration_ready = migration_ready and strategy(strategy_name).name in MIGRATABLE
        self.assigned: list[TopicPartition] | None = None
        #: what the last assignment's userData said was wrong (None: nothing); logged once per change
        self.assignment_problem: str | None = None
        #: who made this migration-ready member's last assignment: our failover leader with ("leader") or
        #: without ("ready-leader", the group may convert) its userData, or the broker ("broker": Kafka
        #: converted the group; its SyncGroup assignment carries null userData)
        self.assigned_by: str | None = None
        #: a topic's partition count from the member's own cluster metadata, set by the client adapter
        #: (:func:`~kafka_placement.clients.kafka_python.partition_counts.watch_partition_counts`): lets a
        #: member assigned by the broker see that a topic was split, which a failover assignor never does
        self.partition_count: Callable[[str], int | None] | None = None

    def user_data(self) -> bytes | None:
        """This strategy's userData (None = null): the table row decides what goes in it."""
        return subscription_user_data(
            self.strategy, owned=self.assigned, generation=self.generation, priority=self.priority
        )

    def subscription_rack(self) -> str | None:
        """The rack id this member's classic subscription carries (:func:`advertised_rack`)."""
        return advertised_rack(self.rack, self.priority, self.migration_ready)

    def on_assignment(
        self, partitions: Iterable[Any], generation: int | None = None, user_data: object = b""
    ) -> None:
        """Remember the partitions (any objects with ``topic``/``partition``) and the generation; check
        the assignment's ``user_data`` as the strategy says and log one line when what it says changes.

        A migration-ready member expects empty userData once its group may convert: its failover leader
        saw every member's priority in their subscriptions' racks, or the broker (whose failover assignor
        reads those racks) assigns the converted group."""
        self.assigned = [TopicPartition(tp.topic, tp.partition) for tp in partitions]
        if generation is not None:
            self.generation = generation
        if self.migration_ready and not user_data:
            self._on_migration_assignment("broker" if user_data is None else "ready-leader", generation)
            return
        self.assigned_by = "leader" if self.migration_ready else None
        problem = strategy(self.strategy).check_assignment_user_data(user_data, self.priority)
        if problem != self.assignment_problem:
            if problem is not None:
                log.warning("%s (generation %s)", problem, generation)
            else:
                log.info(
                    "this %s member's assignment comes from a %s leader again (generation %s)",
                    self.strategy,
                    self.strategy,
                    generation,
                )
        self.assignment_problem = problem

    def _on_migration_assignment(self, by: str, generation: int | None) -> None:
        """A migration-ready member's assignment without failover userData: from our leader (empty) or the
        broker (null). One INFO line per change of who assigns; one ERROR line when the broker split a
        topic between members, which the failover assignor never does."""
        if by != self.assigned_by:
            line = CONVERTIBLE if by == "ready-leader" else BROKER_ASSIGNS
            log.info("%s (generation %s)", line, generation)
        self.assigned_by = by
        problem = self._split_topics() if by == "broker" else None
        if problem is not None and problem != self.assignment_problem:
            log.error("%s (generation %s)", problem, generation)
        self.assignment_problem = problem

    def _split_topics(self) -> str | None:
        if self.partition_count is None or not self.assigned:
            return None
        held: dict[str, int] = {}
        for tp in self.assigned:
            held[tp.topic] = held.get(tp.topic, 0) + 1
        split = []
        for topic, count in sorted(held.items()):
            total = self.partition_count(topic)
            if total is not None and count < total:
                split.append(f"{topic} ({count} of {total})")
        if not split:
            return None
        return (
            f"failover priorities are NOT honoured: the broker assigned this member part of topic(s) "
            f"{', '.join(split)}, so the converted group is assigned by another assignor than failover "
            "(a consumer-protocol member without group.remote.assignor=failover joined, or the brokers "
            "lack the kafka-placement plugin); make every consumer-protocol member set "
            "group.remote.assignor=failover, or remove it to return the group to the classic protocol"
        )


#: Strategies whose members can be migration-ready (the ones with a priority).
MIGRATABLE = frozenset({"failover", "priority"})
#: What a migration-ready member logs (INFO) when its assignment carries no failover userData.
CONVERTIBLE = (
    "this migration-ready failover member's assignment carries no failover userData: every member's "
    "priority is visible in its subscription's rack id, so the group may move to the consumer protocol "
    "(a failover leader of ours left it convertible, or the broker assigns the converted group; "
    "`kafka-placement group describe` shows which and whether the broker's assignor is failover)"
)
#: What a migration-ready member logs (INFO) when the broker assigns it (Kafka converted the group).
BROKER_ASSIGNS = (
    "this migration-ready failover member's assignment carries null userData: the broker assigns the "
    "group (Kafka converted it to the consumer protocol; its failover assignor ranks this member by the "
    "priority in its subscription's rack id), or a failover leader that is not kafka-placement's leads"
)


@dataclass(frozen=True)
class Subscription:
    """One member's subscription as its client decoded it; fields the client's protocol version
    lacks keep their defaults. Values are untrusted (another member sent them)."""

    member_id: str
    topics: object
    user_data: object
    owned_partitions: Sequence[tuple[str, int]] = ()
    generation_id: object = DEFAULT_GENERATION
    rack_id: object = None
    group_instance_id: object = None


class SyncAssignment(NamedTuple):
    """What the leader sends one member in SyncGroup: its partitions and the assignment userData."""

    partitions: list[TopicPartition]
    user_data: bytes


def assign_group(
    strategy_name: StrategyName,
    cluster: Any,
    subscriptions: Iterable[Subscription],
    *,
    partition_racks: PartitionRacks | None = None,
) -> dict[str, list[TopicPartition]]:
    """The partitions of :func:`assign_group_for_sync`, without the userData."""
    result = assign_group_for_sync(strategy_name, cluster, subscriptions, partition_racks=partition_racks)
    return {member_id: sync.partitions for member_id, sync in result.items()}


def assign_group_for_sync(
    strategy_name: StrategyName,
    cluster: Any,
    subscriptions: Iterable[Subscription],
    *,
    partition_racks: PartitionRacks | None = None,
    migration_ready: bool = False,
) -> dict[str, SyncAssignment]:
    """The leader's work: partition counts from the client's ``cluster`` metadata, each subscription
    read as its strategy reads it, then :func:`~kafka_placement.assignment.assign`; each member's
    assignment userData from the strategy's row (empty for Java's strategies). Partition racks are
    read only for a rack-aware strategy with at least one member that has a rack.

    ``migration_ready`` (a failover leader, docs/migration.md): the assignment userData is left empty,
    letting Kafka convert the group, only when every member's priority is visible to the broker in its
    subscription's rack id (:func:`~kafka_placement.assignment.failover_migration.group_convertible`)."""
    # each member's topics cleaned once, here (a hostile list is logged once): the counts need them
    cleaned = [(s, clean_topics(s.topics, s.member_id)) for s in subscriptions]
    counts = partitions_per_topic(cluster, sorted({topic for _, names in cleaned for topic in names}))
    members: dict[str, Member] = {
        s.member_id: member_from_subscription(
            strategy_name,
            s.member_id,
            names,
            s.user_data,
            owned_partitions=s.owned_partitions,
            generation_id=s.generation_id,
            rack_id=s.rack_id,
            group_instance_id=s.group_instance_id,
            existing=counts,
        )
        for s, names in cleaned
    }
    racks = None
    rack_aware = strategy(strategy_name).rack_aware and any(m.rack for m in members.values())
    if partition_racks is not None and rack_aware:
        racks = partition_racks(counts)
    result = assign(strategy_name, counts, members, partition_racks=racks)
    encode = strategy(strategy_name).encode_assignment_user_data
    if migration_ready and strategy(strategy_name).name in MIGRATABLE:
        blockers = group_convertible(
            (s.member_id, s.rack_id, members[s.member_id].priority) for s, _ in cleaned
        )
        if not blockers:
            return {member_id: SyncAssignment(partitions, b"") for member_id, partitions in result.items()}
        log.info(
            "failover group stays protected against conversion to the consumer protocol: %s",
            "; ".join(f"member {mid}: {why}" for mid, why in sorted(blockers.items())),
        )
    return {
        member_id: SyncAssignment(partitions, encode(members[member_id].priority))
        for member_id, partitions in result.items()
    }


#: Java's ``RebalanceProtocol`` in order of its ids (EAGER 0, COOPERATIVE 1).
RebalanceProtocolName = Literal["eager", "cooperative"]
PROTOCOLS: tuple[RebalanceProtocolName, ...] = ("eager", "cooperative")


def supported_protocols(name: StrategyName) -> tuple[RebalanceProtocolName, ...]:
    """Java's ``ConsumerPartitionAssignor.supportedProtocols()``: ``CooperativeStickyAssignor``
    supports EAGER and COOPERATIVE, every other assignor (and failover) EAGER only."""
    return PROTOCOLS if strategy(name).cooperative else ("eager",)


def rebalance_protocol(names: Iterable[StrategyName]) -> RebalanceProtocolName:
    """The rebalance protocol a consumer configured with ``names`` runs — Java's
    ``ConsumerCoordinator`` rule: the protocols every assignor supports, the highest of them. So
    ``cooperative-sticky`` alone is cooperative, and Java's default ``range, cooperative-sticky``
    (its documented upgrade path) is eager."""
    common = set(PROTOCOLS)
    for name in names:
        common &= set(supported_protocols(name))
    return max(common, key=PROTOCOLS.index)  # never empty: every strategy supports eager


def strategies_for_client(
    config: str | Iterable[str] | None,
    *,
    client: str,
    supported: Collection[StrategyName],
    cooperative: Literal["supported", "never"],
) -> list[StrategyName]:
    """Java's ``partition.assignment.strategy`` (Kafka names, Java class names, ``failover``) as the
    strategies ``client`` can run, in order of preference; None gives ``range``.

    The list runs the protocol Java would run (:func:`rebalance_protocol`): cooperative-sticky mixed
    with eager strategies runs eagerly, as in Java. ``cooperative="never"``: the client has no
    cooperative rebalancing and its subscriptions carry no owned partitions (aiokafka's
    ConsumerProtocol v0), so cooperative-sticky is refused there even in a list.
    """
    names: list[StrategyName] = ["range"] if config is None else parse_strategies(config)
    for name in names:
        if strategy(name).cooperative and cooperative == "never":
            allowed = ", ".join(s for s in supported)
            raise UnknownStrategyError(
                f"assignment strategy {name!r} needs cooperative rebalancing, which {client} does not have "
                f"(run eagerly in a list, as Java would, its leader still could not see the partitions "
                f"cooperative members own); allowed here: {allowed}"
            )
        if name not in supported:
            raise UnknownStrategyError(
                f"{client} has no assignor for strategy {name!r}; allowed: {', '.join(supported)}"
            )
    return names
