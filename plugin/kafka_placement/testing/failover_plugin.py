"""The embedded cluster's brokers run our failover assignor (consumer group protocol, KIP-848).

Every broker gets the plugin jar (:mod:`kafka_placement.broker_plugin`, built for the cluster's Kafka
version, by default the pinned one) mounted into ``/opt/kafka/libs`` — on the class path of the official
``apache/kafka`` image (``kafka-run-class.sh`` lists ``libs/*``) and of the offline image (``-cp libs/*``)
alike — and the settings that load it: ``group.consumer.assignors=uniform,range,<ours>`` (Kafka's default
stays first, so other groups are unaffected) and the rack-stripping ``replica.selector.class``.

Consumer-protocol groups here fail over in seconds: the broker's session timeout (and its minimum) is
:data:`SESSION_TIMEOUT_MS` instead of Kafka's 45 s default, the heartbeat interval
:data:`HEARTBEAT_INTERVAL_MS` instead of 5 s. Classic-protocol groups are untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kafka_placement.broker_plugin.settings import broker_settings
from kafka_placement.errors import KafkaPlacementError
from kafka_placement.versions import KAFKA_VERSION

#: Where the jar appears inside each broker container.
LIBS_MOUNT = "/opt/kafka/libs/kafka-placement-broker.jar"
#: A consumer-protocol member that dies is fenced after this long (Kafka's default is 45,000).
SESSION_TIMEOUT_MS = 6000
#: Members heartbeat this often (Kafka's default 5,000): a closed member's partitions move within it.
HEARTBEAT_INTERVAL_MS = 1000


def failover_broker_properties() -> dict[str, str]:
    """The broker properties the embedded cluster adds when the plugin is loaded."""
    return broker_settings(session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS)


def plugin_jar(log: Callable[[str], None], kafka_version: str = KAFKA_VERSION) -> Path | None:
    """The jar for ``kafka_version`` (the brokers' own: the group-coordinator API it compiles against differs
    between minors), or None (logged once) where it cannot be built here."""
    from kafka_placement.broker_plugin.build import build_jar

    try:
        return build_jar(kafka_version)
    except KafkaPlacementError as exc:
        log(f"brokers run without the failover assignor (consumer protocol): {exc}")
        return None
