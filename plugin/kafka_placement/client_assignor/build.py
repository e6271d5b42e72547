"""Compile the client-side failover assignor for one Kafka client version, and the consumer settings that use
it.

The same build as the broker plugin's (:class:`kafka_placement.java_build.JavaBuild`): ``javac --release 17``
against the published ``kafka-clients`` and ``slf4j-api`` of that version, only our classes in the jar (the
consumer's class path supplies Kafka's). The broker plugin's ``RackPriority`` (the ``client.rack`` parse) is
compiled in from its one source, so both read ``<rack>#priority=<n>`` by the same code.
"""

from __future__ import annotations

from pathlib import Path

from kafka_placement.assignment.rack_priority import encode_rack_priority
from kafka_placement.broker_plugin.build import SOURCES as BROKER_SOURCES
from kafka_placement.broker_plugin.kafka_version import check_kafka_version
from kafka_placement.errors import KafkaPlacementError
from kafka_placement.java_build import JavaBuild
from kafka_placement.vocabulary import check_priority

PACKAGE = "io.kafkaplacement.client"
ASSIGNOR_CLASS = f"{PACKAGE}.FailoverAssignor"
PRIORITY_ASSIGNOR_CLASS = f"{PACKAGE}.PriorityAssignor"
#: The consumer settings the assignor reads (``FailoverSettings.java``).
PRIORITY_CONFIG = "failover.priority"
MIGRATION_READY_CONFIG = "failover.migration.ready"
#: What the jar is compiled against; ``slf4j-simple`` joins them for the tests, which read the log lines.
COMPILE = ("kafka-clients", "slf4j-api")
TEST = (*COMPILE, "slf4j-simple")
#: Who refuses a Kafka version older than 4.0 (see :func:`check_kafka_version`).
NEEDS = "the client assignor is built for"


class ClientAssignorUnavailable(KafkaPlacementError, RuntimeError):
    """The jars, Maven or a JDK are missing, or the version is not published; the message says which."""


BUILD = JavaBuild(
    cache_name="client-assignor",
    jar_prefix="kafka-placement-client",
    title="client assignor",
    pom=Path(__file__).with_name("pom.xml"),
    source_root=Path(__file__).with_name("java"),
    compile_artifacts=COMPILE,
    anchor_artifact="kafka-clients",
    unavailable=ClientAssignorUnavailable,
    extra_sources=(BROKER_SOURCES / "io" / "kafkaplacement" / "broker" / "RackPriority.java",),
)


def build_jar(kafka_version: str) -> Path:
    """The assignor's jar for ``kafka_version`` (compiled once; later calls return the cached file)."""
    return BUILD.build_jar(check_kafka_version(kafka_version, needs=NEEDS))


def consumer_settings(
    priority: int | None,
    *,
    rack: str | None = None,
    migration_ready: bool = False,
    protocol_name: str = "failover",
) -> dict[str, str]:
    """A Java consumer's settings for a failover member (``.properties`` keys). ``migration_ready``: its
    ``client.rack`` carries the priority the way the broker's failover assignor reads it after a move to
    the consumer protocol (the Java consumer copies ``client.rack`` into its classic subscription; the
    assignor checks the two agree when the consumer is built)."""
    check_priority(priority)
    assignor = {"failover": ASSIGNOR_CLASS, "priority": PRIORITY_ASSIGNOR_CLASS}[protocol_name]
    settings = {"group.protocol": "classic", "partition.assignment.strategy": assignor}
    if priority is not None:
        settings[PRIORITY_CONFIG] = str(priority)
    if migration_ready:
        settings[MIGRATION_READY_CONFIG] = "true"
        if priority is not None:
            settings["client.rack"] = encode_rack_priority(rack, priority)
        elif rack:
            encode_rack_priority(rack, 0)  # the same rack check as with a priority
            settings["client.rack"] = rack
    elif rack:
        encode_rack_priority(rack, 0)
        settings["client.rack"] = rack
    return settings
