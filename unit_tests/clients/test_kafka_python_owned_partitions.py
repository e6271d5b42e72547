"""A cooperative member rejoining after its membership was lost claims no partitions (Java's rule).

Java's ``ConsumerCoordinator`` builds the subscription's owned partitions from its subscription state, and
``onJoinPrepare`` empties that state (``onPartitionsLost``) when the generation is lost (KIP-429; Javadoc of
``ConsumerRebalanceListener.onPartitionsLost``). These tests drive kafka-python's own coordinator through a
cooperative join and a loss and read what the next JoinGroup's subscription would claim.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import kafka
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from kafka_placement.clients.kafka_python import CooperativeStickyAssignor, KafkaConsumer
from kafka_placement.clients.kafka_python.owned_partitions import claim_current_assignment


def _joined(consumer: Any, generation: int, partitions: list[int]) -> None:
    """kafka-python's own SyncGroup handling of an assignment of topic ``t``'s ``partitions``."""
    assignment = ConsumerProtocolAssignment(
        version=0, assigned_partitions=[("t", partitions)], user_data=b""
    ).encode()
    asyncio.run(
        consumer._coordinator._on_join_complete_async(generation, "m-1", "cooperative-sticky", assignment)
    )


def _lost(consumer: Any) -> None:
    """kafka-python's handling of a lost membership: the generation reset (UNKNOWN_MEMBER_ID, a fenced or
    expired session), then the next join's preparation, which drops every partition as lost."""
    consumer._coordinator.reset_generation()
    asyncio.run(consumer._coordinator._on_join_prepare_async(-1, ""))


def _claimed(consumer: Any) -> list[tuple[str, list[int]]]:
    """The owned partitions the next JoinGroup's subscription carries."""
    (assignor,) = consumer._coordinator._assignors.values()
    return [(e.topic, list(e.partitions)) for e in assignor.metadata({"t"}).owned_partitions]


def _consumer(factory: type[Any], strategy: Any, clients: Callable[..., Any]) -> Any:
    consumer = factory(
        bootstrap_servers="127.0.0.1:1",
        api_version=(4, 0),
        group_id="g",
        partition_assignment_strategy=[strategy],
        kafka_client=clients,
    )
    consumer.subscribe(["t"])
    return consumer


def test_our_kafka_consumer_claims_nothing_after_a_loss(kafka_python_clients: Callable[..., Any]) -> None:
    """Given as a class (kafka-python instantiates it): held partitions are claimed across a normal
    rejoin, and none once the membership was lost."""
    consumer = _consumer(KafkaConsumer, CooperativeStickyAssignor, kafka_python_clients)
    try:
        _joined(consumer, 7, [0, 1, 2])
        assert _claimed(consumer) == [("t", [0, 1, 2])]
        _joined(consumer, 8, [0, 2])  # the leader moved partition 1 away: revoked, no longer claimed
        assert _claimed(consumer) == [("t", [0, 2])]
        _lost(consumer)
        assert consumer.assignment() == set()
        assert _claimed(consumer) == []
    finally:
        consumer.close()


def test_a_plain_kafka_consumer_needs_claim_current_assignment(
    kafka_python_clients: Callable[..., Any],
) -> None:
    """On ``kafka.KafkaConsumer`` our assignor instance remembers its last assignment (as kafka-python's
    own cooperative assignor does) until :func:`claim_current_assignment` points it at the consumer."""
    coop = CooperativeStickyAssignor()
    consumer = _consumer(kafka.KafkaConsumer, coop, kafka_python_clients)
    try:
        _joined(consumer, 3, [4, 5])
        _lost(consumer)
        assert _claimed(consumer) == [("t", [4, 5])]  # the stale claim this module fixes
        claim_current_assignment(consumer)
        assert _claimed(consumer) == []
        _joined(consumer, 5, [5])
        assert _claimed(consumer) == [("t", [5])]
    finally:
        consumer.close()
