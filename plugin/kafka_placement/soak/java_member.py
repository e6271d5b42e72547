"""The soak's Java members: ``SoakMember.java`` (beside this module, in ``java/``) compiled once per Kafka
version by the build the broker plugin and the client assignor use
(:class:`~kafka_placement.java_build.JavaBuild`: ``javac --release 17`` against the published
``kafka-clients``, fetched by Maven), and the command line and ``.properties`` of one member.

Two kinds, by protocol (the ``client`` column of :data:`~kafka_placement.soak.members.GROUPS`):
``java-consumer`` — a ``KafkaConsumer`` on the consumer group protocol whose settings are
:func:`~kafka_placement.clients.consumer_protocol.java_failover_properties` (the broker's failover
assignor decides); ``java-classic`` — one on the classic protocol with our Java client assignor
(:func:`~kafka_placement.client_assignor.build.consumer_settings`, its jar on the class path).

Only the full profile runs Java members: a JVM per member is ~150 MB and seconds of startup, and the
quick profile stays what CI runs. Where Java cannot be built (no JDK, no Maven, offline) a full run
stops before its cluster starts, with that reason (:class:`JavaMemberUnavailable`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from kafka_placement.errors import KafkaPlacementError
from kafka_placement.java_build import JavaBuild
from kafka_placement.versions import KAFKA_VERSION

__all__ = ["JAVA_CLIENTS", "JavaMemberUnavailable", "class_path", "java_command", "member_properties"]

#: The member kinds run by this module (the rest are Python processes).
JAVA_CLIENTS = ("java-consumer", "java-classic")
MAIN_CLASS = "io.kafkaplacement.soak.SoakMember"


class JavaMemberUnavailable(KafkaPlacementError, RuntimeError):
    """No JDK, Maven or Kafka's jars for the soak's Java members; the message says which."""


BUILD = JavaBuild(
    cache_name="soak-member",
    jar_prefix="kafka-placement-soak-member",
    title="soak member",
    # the client assignor's pom: the same two artifacts (kafka-clients, slf4j-api) of a Kafka version
    pom=Path(__file__).parent.parent / "client_assignor" / "pom.xml",
    source_root=Path(__file__).with_name("java"),
    compile_artifacts=("kafka-clients", "slf4j-api"),
    anchor_artifact="kafka-clients",
    unavailable=JavaMemberUnavailable,
)


def class_path(kafka_version: str = KAFKA_VERSION) -> str:
    """The members' class path: Kafka's client jars (with ``slf4j-simple``, whose WARN lines go to the
    member's stderr), our client assignor's jar and the soak member's (each built once, then cached)."""
    from kafka_placement.client_assignor.build import BUILD as ASSIGNOR_BUILD
    from kafka_placement.client_assignor.build import TEST, ClientAssignorUnavailable, build_jar

    try:
        jars = ASSIGNOR_BUILD.resolve(kafka_version, TEST)  # one copy of Kafka's jars for both builds
        assignor = build_jar(kafka_version)
        member = BUILD.build_jar(kafka_version, class_path=lambda: jars)
    except ClientAssignorUnavailable as exc:
        raise JavaMemberUnavailable(str(exc)) from None
    return os.pathsep.join(map(str, [*jars, assignor, member]))


def member_properties(
    client: str, priority: int, connection: Mapping[str, str], session_timeout_ms: int
) -> str:
    """The ``.properties`` text of a Java member: the cluster's Java client settings (``connection``)
    and its failover settings; on the classic protocol also the session (the consumer protocol's is
    the broker's)."""
    from kafka_placement.broker_plugin.settings import properties_text
    from kafka_placement.client_assignor.build import consumer_settings
    from kafka_placement.clients.consumer_protocol import java_failover_properties
    from kafka_placement.soak.member_events import REBALANCE_TIMEOUT_MS

    base = {k: str(v) for k, v in connection.items()}
    if client == "java-consumer":
        return java_failover_properties(priority, base=base)
    if client != "java-classic":
        raise ValueError(f"not a Java member kind: {client!r} (one of {', '.join(JAVA_CLIENTS)})")
    session = {
        "session.timeout.ms": str(session_timeout_ms),
        "heartbeat.interval.ms": str(max(300, session_timeout_ms // 6)),
        "max.poll.interval.ms": str(REBALANCE_TIMEOUT_MS),
    }
    return properties_text({**base, **consumer_settings(priority), **session})


def java_command(
    cp: str, properties: Path, group: str, name: str, topic: str, log: Path, session_timeout_ms: int
) -> list[str]:
    """The member's command line (``java`` from ``JAVA_HOME`` when set); a small heap: it only consumes."""
    java = str(Path(os.environ["JAVA_HOME"], "bin", "java")) if os.environ.get("JAVA_HOME") else "java"
    return [
        java,
        "-Xmx192m",
        "-XX:+UseSerialGC",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-cp",
        cp,
        MAIN_CLASS,
        str(properties),
        group,
        name,
        topic,
        str(log),
        str(session_timeout_ms),
    ]
