"""Compile the broker plugin (``java/io/kafkaplacement/broker``) for one Kafka version into a cached jar.

``javac --release 17`` (Kafka 4's brokers run on Java 17+) against that version's published
``kafka-group-coordinator-api``, ``kafka-clients`` and ``slf4j-api`` (:mod:`.maven`); the jar holds only
our classes (the broker supplies the rest) and is named for the version and a digest of the sources, so a
changed source or another version never reuses a stale jar.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from kafka_placement.broker_plugin.kafka_version import check_kafka_version
from kafka_placement.broker_plugin.maven import COMPILE, BrokerPluginUnavailable, cache_dir, resolve

#: Our plugin's sources (package ``io.kafkaplacement.broker``).
SOURCES = Path(__file__).with_name("java")
PACKAGE = "io.kafkaplacement.broker"
ASSIGNOR_CLASS = f"{PACKAGE}.FailoverServerAssignor"
REPLICA_SELECTOR_CLASS = f"{PACKAGE}.RackPriorityReplicaSelector"
#: The name members give in ``group.remote.assignor`` (``FailoverServerAssignor.NAME``).
ASSIGNOR_NAME = "failover"
#: A bound on compiling a handful of small classes.
JAVAC_TIMEOUT_S = 120


def sources() -> list[Path]:
    found = sorted(SOURCES.rglob("*.java"))
    if not found:  # an install without its package data
        raise BrokerPluginUnavailable(f"the broker plugin's Java sources are missing under {SOURCES}")
    return found


def jar_name(kafka_version: str) -> str:
    """``kafka-placement-broker-<version>-<digest>.jar``: the digest covers every source file."""
    digest = hashlib.sha256()
    for source in sources():
        digest.update(source.relative_to(SOURCES).as_posix().encode())
        digest.update(source.read_bytes())
    return f"kafka-placement-broker-{check_kafka_version(kafka_version)}-{digest.hexdigest()[:12]}.jar"


def build_jar(kafka_version: str) -> Path:
    """The plugin jar for ``kafka_version`` (compiled once; later calls return the cached file)."""
    out = cache_dir(kafka_version) / jar_name(kafka_version)
    if out.exists():
        return out
    javac = shutil.which("javac")
    if javac is None:
        raise BrokerPluginUnavailable("javac not found: install a JDK 17+ (Debian: openjdk-17-jdk-headless)")
    class_path = resolve(kafka_version, COMPILE)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".build-", dir=out.parent) as tmp:
        classes = Path(tmp, "classes")
        command = [javac, "--release", "17", "-Xlint:all", "-Werror", "-d", str(classes),
                   "-cp", os.pathsep.join(map(str, class_path)), *map(str, sources())]
        try:
            result = subprocess.run(command, capture_output=True, text=True, check=False,
                                    timeout=JAVAC_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise BrokerPluginUnavailable(f"javac took over {JAVAC_TIMEOUT_S} s") from None
        if result.returncode != 0:
            first = (result.stderr.strip().splitlines() or ["no output"])[0]
            raise BrokerPluginUnavailable(
                f"javac failed against Kafka {kafka_version}'s plugin API: {first[:300]}"
            )
        staged = Path(tmp, out.name)
        with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n"
                         f"Implementation-Title: kafka-placement broker plugin\r\n"
                         f"Implementation-Version: built for Apache Kafka {kafka_version}\r\n\r\n")
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
        os.replace(staged, out)  # whole or not at all: another process may build the same jar
    return out
