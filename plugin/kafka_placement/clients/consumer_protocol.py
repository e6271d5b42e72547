"""Client settings of a failover member on Kafka's consumer group protocol (KIP-848), per client.

On that protocol the broker assigns: a member names the assignor (``group.remote.assignor=failover``,
our broker plugin, see :mod:`kafka_placement.broker_plugin`) and carries its priority in ``client.rack``
(:mod:`kafka_placement.assignment.rack_priority`). Sans-I/O: dicts and text, no Kafka client imported.

- confluent-kafka / librdkafka (2.12+): :func:`confluent_failover_config`;
- Java ``KafkaConsumer`` (4.0+) and Kafka's tools (``--consumer.config`` / ``--command-config``):
  :func:`java_failover_properties`;
- kafka-python and aiokafka speak only the classic protocol: :func:`refuse_consumer_protocol` is the
  one line their adapters raise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_placement.broker_plugin.settings import member_settings, properties_text
from kafka_placement.errors import ConsumerConfigError

#: Classic-protocol settings that the consumer protocol moves to the broker (librdkafka and Java refuse
#: or ignore them there): giving one with ``group.protocol=consumer`` is a mistake we name.
CLASSIC_ONLY = ("partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms")


def is_consumer_protocol(config: Mapping[str, Any]) -> bool:
    """``group.protocol`` says ``consumer`` (case-insensitive, as librdkafka and Java read it)."""
    value = config.get("group.protocol")
    return isinstance(value, str) and value.strip().lower() == "consumer"


def confluent_failover_config(
    priority: int, rack: str | None = None, base: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``base`` (bootstrap servers, group id, security, ...) plus the failover member's settings."""
    config = dict(base or {})
    for key in CLASSIC_ONLY:
        if key in config:
            raise ConsumerConfigError(
                f"{key} is a classic-protocol setting; with group.protocol=consumer the broker decides it"
            )
    for key in ("group.protocol", "group.remote.assignor", "client.rack", "group.instance.id"):
        if key in config:
            raise ConsumerConfigError(
                f"{key}={config[key]!r} in base would be overwritten or defeat failover"
                + (
                    " (a static member keeps its partitions until its session times out)"
                    if key == "group.instance.id"
                    else ""
                )
            )
    config.update(member_settings(priority, rack))
    return config


def java_failover_properties(
    priority: int,
    rack: str | None = None,
    base: Mapping[str, str] | None = None,
    *,
    client_version: str | None = None,
) -> str:
    """The same as Java ``.properties`` text (what ``KafkaConsumer`` and ``--consumer.config`` read).

    ``client_version`` (the ``kafka-clients`` version the consumer runs): Kafka 4.0's Java consumer sends no
    rack id on the consumer protocol (it does from 4.1.0, KAFKA-17747), so the broker could not see the
    priority: a 4.0.x version is refused in one line."""
    if client_version is not None:
        parts = str(client_version).split(".")
        if len(parts) != 3 or not all(part.isdigit() for part in parts):
            raise ConsumerConfigError(
                f"client_version must look like 4.1.0 (MAJOR.MINOR.PATCH), got {client_version!r}"
            )
        if (int(parts[0]), int(parts[1])) < (4, 1):
            raise ConsumerConfigError(
                f"a Java KafkaConsumer {client_version} sends no client.rack on the consumer protocol (it "
                "does from 4.1.0, KAFKA-17747), so the broker could not see its failover priority: use "
                "kafka-clients 4.1.0 or newer, or keep this member classic with our Java client assignor"
            )
    return properties_text({k: str(v) for k, v in confluent_failover_config(priority, rack, base).items()})


def refuse_consumer_protocol(client: str) -> ConsumerConfigError:
    """The error kafka-python's and aiokafka's adapters raise for ``group_protocol='consumer'``."""
    return ConsumerConfigError(
        f"{client} speaks only the classic group protocol; for group.protocol=consumer use confluent-kafka "
        "(kafka_placement.clients.consumer_protocol.confluent_failover_config) or a Java consumer"
    )
