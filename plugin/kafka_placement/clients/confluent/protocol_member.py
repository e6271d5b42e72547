"""Building a consumer-protocol (KIP-848) member: librdkafka's own consumer, after the preflight that
keeps it from spreading or failing a failover group, with the guard that stops it consuming when the
broker has likely fenced it (:mod:`.fencing_guard`). ``Consumer.for_consumer_protocol`` is its public
face."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import confluent_kafka

from kafka_placement.clients.confluent.fencing_guard import FencingGuard
from kafka_placement.clients.confluent.join_preflight import consumer_protocol_preflight
from kafka_placement.clients.consumer_protocol import is_consumer_protocol
from kafka_placement.errors import ConsumerConfigError

__all__ = ["consumer_protocol_member"]


def consumer_protocol_member(
    config: Mapping[str, Any], preflight: bool, fencing_guard: FencingGuard | bool
) -> confluent_kafka.Consumer:
    """See ``Consumer.for_consumer_protocol``."""
    if not is_consumer_protocol(config):
        raise ConsumerConfigError(
            "Consumer.for_consumer_protocol() needs group.protocol=consumer, got group.protocol="
            f"{config.get('group.protocol', 'classic')!r}; use Consumer(config) for classic"
        )
    if fencing_guard is True:
        fencing_guard = FencingGuard()
    elif not (fencing_guard is False or isinstance(fencing_guard, FencingGuard)):
        raise ConsumerConfigError(
            f"fencing_guard must be a FencingGuard, True or False, got {fencing_guard!r}"
        )
    if preflight:
        consumer_protocol_preflight(config)
    if fencing_guard is False:
        return confluent_kafka.Consumer(dict(config))
    consumer = confluent_kafka.Consumer(fencing_guard.settings(config))
    fencing_guard.watch(consumer)
    return consumer
