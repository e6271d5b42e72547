"""The published Kafka jars a broker plugin is compiled against, fetched from Maven Central with ``mvn``.

``pom.xml`` beside this file names them; :func:`resolve` copies one subset (no transitive dependencies)
into ``<cache>/broker-plugin/<version>/<subset>/`` once; a second call finds them there. Maven itself
keeps its local repository (``~/.m2``), so nothing is downloaded twice either way. The work is
:class:`kafka_placement.java_build.JavaBuild`'s, shared with the client-side assignor's build.
"""

from __future__ import annotations

from pathlib import Path

from kafka_placement.errors import KafkaPlacementError
from kafka_placement.java_build import MAVEN_TIMEOUT_S, JavaBuild

__all__ = [
    "COMPILE",
    "MAVEN_TIMEOUT_S",
    "POM",
    "REFERENCE",
    "BrokerPluginUnavailable",
    "cache_dir",
    "resolve",
]

POM = Path(__file__).with_name("pom.xml")
#: What the plugin is compiled against (all of it is on every broker's class path already).
COMPILE = ("kafka-group-coordinator-api", "kafka-clients", "slf4j-api")
#: Kafka's own assignors and GroupSpec, for the differential test and the benchmark.
REFERENCE = (*COMPILE, "kafka-group-coordinator", "kafka-coordinator-common", "kafka-server-common")


class BrokerPluginUnavailable(KafkaPlacementError, RuntimeError):
    """The jars, Maven or a JDK are missing, or the version is not published; the message says which."""


BUILD = JavaBuild(
    cache_name="broker-plugin",
    jar_prefix="kafka-placement-broker",
    title="broker plugin",
    pom=POM,
    source_root=Path(__file__).with_name("java"),
    compile_artifacts=COMPILE,
    anchor_artifact="kafka-group-coordinator-api",
    unavailable=BrokerPluginUnavailable,
)


def cache_dir(kafka_version: str) -> Path:
    return BUILD.cache_dir(kafka_version)


def resolve(kafka_version: str, artifacts: tuple[str, ...] = COMPILE) -> list[Path]:
    """The jars of ``artifacts`` for ``kafka_version`` (fetched on first use)."""
    return BUILD.resolve(kafka_version, artifacts)
