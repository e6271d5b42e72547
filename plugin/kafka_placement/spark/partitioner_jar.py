"""Our schemes as a Java producer partitioner for Spark's Kafka sink, compiled on the driver on first use.

Spark's sink runs a Java ``KafkaProducer`` per executor; given ``partitioner.class`` it places every
record in that JVM, so the writer needs no partition column from a Python worker (the keys never leave
the JVM). The class (``java/io/kafkaplacement/spark/SchemePartitioner.java`` in this package) is
compiled with ``javac`` against the very ``kafka-clients`` jar the session's Kafka connector loaded,
packed into a jar cached under ``~/.cache/kafka-placement/spark-partitioner/`` and added to the
session with ``ADD JAR`` (Spark serves it to the executors, on a cluster too).

Without a JDK on the driver (only a JRE) :func:`add_java_partitioner` says why and the writer keeps the
partition column.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_placement.cache import cache_root

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The partitioner's class and the producer property naming the scheme (a sink option ``kafka.`` + it).
CLASS_NAME = "io.kafkaplacement.spark.SchemePartitioner"
SCHEME_PROPERTY = "kafka-placement.scheme"
#: Schemes the class places (``murmur2_random`` is Java's own default partitioner, stickiness included).
SCHEMES = frozenset({"murmur2", "consistent", "consistent_random", "fnv1a", "fnv1a_random", "random", "jump"})

SOURCE = Path(__file__).with_name("java") / "io" / "kafkaplacement" / "spark" / "SchemePartitioner.java"
_PARTITIONER_INTERFACE = "org.apache.kafka.clients.producer.Partitioner"
#: A bound on compiling one small class (it takes a second or two).
JAVAC_TIMEOUT_S = 120

_added: dict[tuple[int, str], Path | str] = {}


class PartitionerUnavailable(Exception):
    """Why the Java partitioner cannot be built here (no JDK, no kafka-clients jar in the session)."""


def cache_dir() -> Path:
    return cache_root() / "spark-partitioner"


def kafka_clients_jar(spark: SparkSession) -> Path:
    """The local jar the session loads Kafka's ``Partitioner`` interface from (the connector's)."""
    jvm: Any = spark._jvm
    try:
        loader = spark._jsparkSession.sharedState().jarClassLoader()
        cls = jvm.java.lang.Class.forName(_PARTITIONER_INTERFACE, False, loader)
        location = str(cls.getProtectionDomain().getCodeSource().getLocation().toString())
    except Exception as exc:
        raise PartitionerUnavailable(f"the session cannot load {_PARTITIONER_INTERFACE}: {exc}") from None
    if not location.startswith("file:") or not location.endswith(".jar"):
        raise PartitionerUnavailable(f"{_PARTITIONER_INTERFACE} comes from {location}, not a local jar")
    return Path(jvm.java.net.URI(location).getPath())


def build_jar(clients_jar: Path) -> Path:
    """Compile the partitioner against ``clients_jar`` (once per source and jar) and return its jar."""
    try:
        digest = hashlib.sha256(SOURCE.read_bytes())
    except OSError as exc:  # an install without its package data
        raise PartitionerUnavailable(f"the partitioner's source is missing: {exc}") from None
    digest.update(clients_jar.name.encode())
    out = cache_dir() / f"kafka-placement-partitioner-{digest.hexdigest()[:16]}.jar"
    if out.exists():
        return out
    javac = shutil.which("javac")
    if javac is None:
        raise PartitionerUnavailable("javac not found (the driver has a JRE, not a JDK)")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".build-", dir=out.parent) as tmp:  # same file system as out
        classes = Path(tmp, "classes")
        try:
            command = [javac, "--release", "17", "-nowarn", "-d", str(classes), "-cp", str(clients_jar)]
            result = subprocess.run(
                [*command, str(SOURCE)], capture_output=True, text=True, check=False, timeout=JAVAC_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            raise PartitionerUnavailable(f"javac took over {JAVAC_TIMEOUT_S} s") from None
        if result.returncode != 0:
            raise PartitionerUnavailable(f"javac failed: {result.stderr.strip()[:2000]}")
        staged = Path(tmp, out.name)
        with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
        os.replace(staged, out)  # whole or not at all: another process may build the same jar
    return out


def add_java_partitioner(spark: SparkSession) -> Path | str:
    """Add the partitioner's jar to ``spark`` (once per session): its path, or why it is unavailable.

    Needs Spark's Kafka connector in the session first (its ``kafka-clients`` is compiled against)."""
    from kafka_placement.spark.session import session_key

    key = session_key(spark)
    if key not in _added:
        try:
            jar = build_jar(kafka_clients_jar(spark))
        except PartitionerUnavailable as exc:
            _added[key] = str(exc)
            return _added[key]
        try:
            spark.sql(f"ADD JAR '{jar}'")
        except Exception as exc:  # Spark's own error (py4j/Analysis): a reason, and the column instead
            first_line = (str(exc).splitlines() or [type(exc).__name__])[0]
            _added[key] = f"ADD JAR {jar} failed: {first_line}"
            return _added[key]
        _added[key] = jar
    return _added[key]
