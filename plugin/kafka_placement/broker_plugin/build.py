"""Compile the broker plugin (``java/io/kafkaplacement/broker``) for one Kafka version into a cached jar.

``javac --release 17`` (Kafka 4's brokers run on Java 17+) against that version's published
``kafka-group-coordinator-api``, ``kafka-clients`` and ``slf4j-api`` (:mod:`.maven`); the jar holds only
our classes (the broker supplies the rest) and is named for the version and a digest of the sources, so a
changed source or another version never reuses a stale jar (:class:`kafka_placement.java_build.JavaBuild`).
"""

from __future__ import annotations

from pathlib import Path

from kafka_placement.broker_plugin.maven import BUILD, COMPILE, resolve

#: Our plugin's sources (package ``io.kafkaplacement.broker``).
SOURCES = BUILD.source_root
PACKAGE = "io.kafkaplacement.broker"
ASSIGNOR_CLASS = f"{PACKAGE}.FailoverServerAssignor"
REPLICA_SELECTOR_CLASS = f"{PACKAGE}.RackPriorityReplicaSelector"
#: The name members give in ``group.remote.assignor`` (``FailoverServerAssignor.NAME``).
ASSIGNOR_NAME = "failover"


def sources() -> list[Path]:
    return BUILD.sources()


def jar_name(kafka_version: str) -> str:
    """``kafka-placement-broker-<version>-<digest>.jar``: the digest covers every source file."""
    return BUILD.jar_name(kafka_version)


def build_jar(kafka_version: str) -> Path:
    """The plugin jar for ``kafka_version`` (compiled once; later calls return the cached file)."""
    return BUILD.build_jar(kafka_version, lambda: resolve(kafka_version, COMPILE))
