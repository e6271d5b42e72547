"""Our Java partitioner for Spark's Kafka sink: compiled on the driver against the session's kafka-clients,
and called through the driver's JVM — the same partition as :func:`partition_key` (itself checked
against librdkafka and Kafka's Java producer elsewhere) for every keyed record of every scheme it places.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from kafka_placement.partitioning import get_scheme, partition_key
from kafka_placement.spark import partitioner_jar

pytestmark = pytest.mark.spark


def _keys() -> list[bytes]:
    rng = random.Random(20)
    keys = [b"", b"a", b"alice", "émile".encode(), "北京".encode(), b"x" * 300, b"\x00" * 7, b"\xff" * 5]
    keys += [rng.randbytes(rng.randrange(1, 40)) for _ in range(400)]
    return keys


def _java_partitioner(spark: Any, scheme: str) -> Any:
    from kafka_placement.spark.session import ensure_kafka_connector

    ensure_kafka_connector(spark)
    jar = partitioner_jar.add_java_partitioner(spark)
    assert isinstance(jar, Path), jar  # a JDK is part of this project's test machine
    jvm = spark._jvm
    loader = spark._jsparkSession.sharedState().jarClassLoader()
    cls = jvm.java.lang.Class.forName(partitioner_jar.CLASS_NAME, True, loader)
    partitioner = cls.newInstance()  # py4j passes no varargs: the no-argument constructor
    configs = jvm.java.util.HashMap()
    configs.put(partitioner_jar.SCHEME_PROPERTY, scheme)
    partitioner.configure(configs)
    return partitioner


@pytest.mark.parametrize("scheme", sorted(partitioner_jar.SCHEMES))
def test_every_keyed_record_lands_where_partition_key_puts_it(spark: Any, scheme: str) -> None:
    partitioner = _java_partitioner(spark, scheme)
    described = get_scheme(scheme)
    for n in (1, 7, 12, 1000):
        for key in _keys():
            got = partitioner.partition(bytearray(key), n)
            if described.is_keyless(key):
                assert 0 <= got < n
            else:
                assert got == partition_key(key, n, scheme), (scheme, key, n)


@pytest.mark.parametrize("scheme", sorted(partitioner_jar.SCHEMES))
def test_null_keys_follow_the_scheme(spark: Any, scheme: str) -> None:
    partitioner = _java_partitioner(spark, scheme)
    got = {partitioner.partition(None, 16) for _ in range(300)}
    if get_scheme(scheme).null_is_keyless:  # uniformly random: 300 draws cover most of 16 partitions
        assert len(got) >= 12 and got <= set(range(16))
    else:  # hashed like b""
        assert got == {partition_key(None, 16, scheme)}


def test_the_jar_is_compiled_against_the_sessions_kafka_clients_once(
    spark: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import zipfile

    from kafka_placement.spark.session import ensure_kafka_connector

    ensure_kafka_connector(spark)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # nothing built before: javac runs here
    clients = partitioner_jar.kafka_clients_jar(spark)
    assert clients.is_file() and "kafka-clients" in clients.name
    jar = partitioner_jar.build_jar(clients)
    assert jar.parent == tmp_path / "kafka-placement" / "spark-partitioner"
    assert "io/kafkaplacement/spark/SchemePartitioner.class" in zipfile.ZipFile(jar).namelist()
    assert [p.name for p in jar.parent.iterdir()] == [jar.name]  # no staging left behind
    built = jar.stat().st_mtime_ns
    assert partitioner_jar.build_jar(clients) == jar and jar.stat().st_mtime_ns == built  # cached


def test_a_missing_source_or_a_hung_javac_is_a_reason_not_a_crash(
    spark: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import subprocess

    from kafka_placement.spark.session import ensure_kafka_connector

    ensure_kafka_connector(spark)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    clients = partitioner_jar.kafka_clients_jar(spark)
    monkeypatch.setattr(partitioner_jar, "SOURCE", tmp_path / "absent" / "SchemePartitioner.java")
    with pytest.raises(partitioner_jar.PartitionerUnavailable, match="source is missing"):
        partitioner_jar.build_jar(clients)
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    def hung(*args: Any, **kwargs: Any) -> Any:
        raise subprocess.TimeoutExpired(args[0], kwargs["timeout"])

    monkeypatch.setattr(partitioner_jar.subprocess, "run", hung)
    with pytest.raises(partitioner_jar.PartitionerUnavailable, match="javac took over 120 s"):
        partitioner_jar.build_jar(clients)


def test_spark_refusing_the_jar_is_a_reason_too(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    class Refusing:
        sparkContext = spark.sparkContext
        _jsparkSession = spark._jsparkSession
        _jvm = spark._jvm

        def sql(self, query: str) -> None:
            raise RuntimeError("Permission denied: jars are not allowed here\nat ...")

    from kafka_placement.spark.session import ensure_kafka_connector

    ensure_kafka_connector(spark)
    monkeypatch.setattr(partitioner_jar, "_added", {})
    reason = partitioner_jar.add_java_partitioner(Refusing())  # type: ignore[arg-type]
    assert isinstance(reason, str) and reason.endswith("failed: Permission denied: jars are not allowed here")


def test_a_scheme_it_does_not_place_is_refused_by_name(spark: Any) -> None:
    with pytest.raises(Exception, match=r"murmur2_random.*not a scheme this partitioner places"):
        _java_partitioner(spark, "murmur2_random")


def test_without_javac_it_says_why_and_the_writer_falls_back(
    spark: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from kafka_placement.spark.session import ensure_kafka_connector

    ensure_kafka_connector(spark)  # not left to an earlier test (alone, or under xdist, none ran)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # no jar built before
    monkeypatch.setattr(partitioner_jar.shutil, "which", lambda _name: None)
    with pytest.raises(partitioner_jar.PartitionerUnavailable, match="javac not found"):
        partitioner_jar.build_jar(partitioner_jar.kafka_clients_jar(spark))
    monkeypatch.setattr(partitioner_jar, "_added", {})
    assert "javac not found" in str(partitioner_jar.add_java_partitioner(spark))
    from kafka_placement.errors import ClusterError
    from kafka_placement.spark.kafka_io import write_to_kafka

    df = spark.createDataFrame([(b"k", b"v")], "key binary, value binary")
    unavailable = "native=True: our Java partitioner for 'jump' is unavailable: javac"
    with pytest.raises(ClusterError, match=unavailable):
        write_to_kafka(df, "127.0.0.1:1", "t", 3, scheme="jump", native=True, check_topic=False)
    # left to choose, it says why and takes the partition column instead
    from kafka_placement.spark import kafka_io

    class ColumnTaken(Exception):
        pass

    def column_path(*args: Any, **kwargs: Any) -> Any:
        raise ColumnTaken(args[1:4])

    monkeypatch.setattr(kafka_io, "with_partition_column", column_path)
    with (
        pytest.warns(RuntimeWarning, match=r"Java partitioner is unavailable \(javac not found"),
        pytest.raises(ColumnTaken, match=r"\(3, 'jump', 'key'\)"),
    ):
        write_to_kafka(df, "127.0.0.1:1", "t", 3, scheme="jump", check_topic=False)


def test_the_java_class_places_every_scheme_but_javas_own_default() -> None:
    """A scheme added in Python and not in Java would reach executors as a ConfigException: caught here."""
    from kafka_placement.partitioning.schemes import SCHEMES

    assert set(SCHEMES) - {"murmur2_random"} == partitioner_jar.SCHEMES
    java = partitioner_jar.SOURCE.read_text()
    assert all(f'case "{name}":' in java for name in partitioner_jar.SCHEMES)
