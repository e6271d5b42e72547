"""Where the Java reference jars live and which Kafka versions they come from.

``scripts/fetch-java-reference.sh`` resolves them with Maven (``pom.xml`` beside this file) into
:func:`cache_dir`; this module only finds them. Run ``python -m kafka_placement.conformance.jars
--env`` for the shell variables the script reads.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kafka_placement.cache import cache_root
from kafka_placement.errors import KafkaPlacementError
from kafka_placement.versions import KAFKA_VERSION

#: ``org.apache.kafka.admin.AdminUtils`` (``assignReplicasToBrokers``) was deleted from Kafka after
#: 4.0 together with the ZooKeeper-era topic commands; 4.0.2 is the newest kafka-server-common that
#: still ships it. It is loaded in a child class loader on top of the pinned version's jars.
ADMIN_UTILS_KAFKA_VERSION = "4.0.2"

#: Environment variable that overrides the cache directory.
CACHE_ENV = "KAFKA_PLACEMENT_JAVA_CACHE"

#: Directory (inside this package) of our own Java helper sources, compiled at run time.
JAVA_SOURCES = Path(__file__).with_name("java")


class JavaReferenceUnavailable(KafkaPlacementError, RuntimeError):
    """The Java reference jars, a JDK or JPype are missing; the message says how to get them."""


def cache_dir() -> Path:
    """``$KAFKA_PLACEMENT_JAVA_CACHE``, or ``java/<KAFKA_VERSION>`` under the project's cache root
    (``~/.cache/kafka-placement`` unless ``$XDG_CACHE_HOME`` says otherwise)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    return cache_root() / "java" / KAFKA_VERSION


def _jars(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.jar")) if directory.is_dir() else []


def fetch_instructions() -> str:
    """How to get the jars: the script in a source checkout, or the same Maven calls on the shipped pom."""
    pom = Path(__file__).with_name("pom.xml")
    return (
        "run scripts/fetch-java-reference.sh from a source checkout, or with Maven: "
        f"mvn -q -f {pom} -Dkafka.version={KAFKA_VERSION} dependency:copy-dependencies "
        f"-DincludeScope=runtime -DoutputDirectory={cache_dir() / 'lib'} && mvn -q -f {pom} dependency:copy "
        f"-Dartifact=org.apache.kafka:kafka-server-common:{ADMIN_UTILS_KAFKA_VERSION} "
        f"-DoutputDirectory={cache_dir() / 'adminutils'}"
    )


def class_path() -> list[Path]:
    """The pinned version's jars and their runtime dependencies."""
    jars = _jars(cache_dir() / "lib")
    names = {jar.name for jar in jars}
    missing = [
        f"{artifact}-{KAFKA_VERSION}.jar"
        for artifact in ("kafka-clients", "kafka-server-common", "kafka-metadata")
        if f"{artifact}-{KAFKA_VERSION}.jar" not in names
    ]
    if missing:
        raise JavaReferenceUnavailable(
            f"Java reference jars missing in {cache_dir() / 'lib'}: {', '.join(missing)}; "
            + fetch_instructions()
        )
    return jars


def admin_utils_jars() -> list[Path]:
    """kafka-server-common :data:`ADMIN_UTILS_KAFKA_VERSION`, the last one holding AdminUtils."""
    jars = _jars(cache_dir() / "adminutils")
    if not jars:
        raise JavaReferenceUnavailable(
            f"kafka-server-common {ADMIN_UTILS_KAFKA_VERSION} (AdminUtils) missing in "
            f"{cache_dir() / 'adminutils'}; {fetch_instructions()}"
        )
    return jars


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", action="store_true", help="print shell variable assignments")
    args = parser.parse_args(argv)
    if args.env:
        print(f"ADMIN_UTILS_KAFKA_VERSION={ADMIN_UTILS_KAFKA_VERSION}")
        print(f"JAVA_CACHE={cache_dir()}")
    else:
        print(cache_dir())
    return 0


if __name__ == "__main__":
    sys.exit(main())
