"""The partitions a cooperative member claims when it joins: what its consumer holds now.

KIP-429's subscription carries the partitions a member owns; the cooperative leader keeps them with it
and takes a partition from a member only by revoking it first. Java's ``ConsumerCoordinator`` fills that
field from its subscription state, which ``onPartitionsLost`` empties when the member's generation is
lost (fenced, session expired, UNKNOWN_MEMBER_ID), so a member rejoining after a loss claims nothing.
kafka-python asks the assignor's ``metadata()`` instead, and an assignor only remembers its last
assignment: a member rejoining after a loss claims partitions that the group has since given to others,
and the leader, seeing two claims, withholds them from both (the gap kafka-python's own
``CooperativeStickyAssignor`` has too). :func:`claim_current_assignment` points our cooperative assignors
at the consumer's ``assignment()``, which kafka-python empties on a loss as Java does.
"""

from __future__ import annotations

from typing import Any

__all__ = ["claim_current_assignment"]


def claim_current_assignment(consumer: Any) -> None:
    """Make our cooperative-sticky assignors in ``consumer`` (a ``kafka.KafkaConsumer``) claim, when it
    joins, the partitions ``consumer.assignment()`` holds then. Our ``KafkaConsumer`` and confluent
    ``Consumer`` call it; call it on a plain ``kafka.KafkaConsumer`` that runs our
    ``CooperativeStickyAssignor``."""
    from kafka_placement.clients.kafka_python.assignors import CooperativeStickyAssignor

    configured = list(consumer.config.get("partition_assignment_strategy") or ())
    # kafka-python instantiates the assignor classes it was given: those instances live in its coordinator
    instantiated = list(getattr(getattr(consumer, "_coordinator", None), "_assignors", {}).values())
    for assignor in {id(a): a for a in configured + instantiated}.values():
        if isinstance(assignor, CooperativeStickyAssignor):
            assignor.owned_now = consumer.assignment
