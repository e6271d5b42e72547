"""Spark ⇄ Kafka: read a topic with Spark's Kafka source; write a DataFrame with Spark's Kafka sink.

The writer places every record where a Java producer (``murmur2``) or librdkafka (``consistent_random``,
``fnv1a``…) with the same key would put it. Inside the sink's own Java producer when it can: its default
partitioner for ``murmur2``/``murmur2_random`` (the same function), our Java partitioner
(:mod:`kafka_placement.spark.partitioner_jar`) for the other schemes. Otherwise (no JDK on the driver,
``native=False``) it computes an explicit ``partition`` column with
:func:`kafka_placement.partitioning.partition_keys` on Arrow batches of the keys (a scalar Arrow UDF on
PySpark 4.1+, ``mapInArrow`` before), which Spark's sink honours.

Both take the cluster as a bootstrap address or as :class:`~kafka_placement.clients.connection.
ConnectionSettings` (TLS/SASL): Spark's Java client gets every setting as a ``kafka.``-prefixed option.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from kafka_placement.clients.connection import ConnectionSettings
from kafka_placement.errors import ClusterError, InvalidArgumentError, UnknownTopicError
from kafka_placement.partitioning import partition_key
from kafka_placement.planning.scenarios import Partitioning
from kafka_placement.spark.partitioner_jar import CLASS_NAME as PARTITIONER_CLASS
from kafka_placement.spark.partitioner_jar import SCHEME_PROPERTY, add_java_partitioner
from kafka_placement.spark.pipeline import with_partitions
from kafka_placement.spark.session import ensure_kafka_connector

#: schemes whose keyed records the Java producer's default partitioner places exactly as we do
_NATIVE_SCHEMES = frozenset({"murmur2", "murmur2_random"})
#: sink options that replace or change that partitioner
_PARTITIONER_OPTIONS = frozenset({"kafka.partitioner.class", "kafka.partitioner.ignore.keys"})

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def _as_settings(cluster: str | ConnectionSettings) -> ConnectionSettings:
    return cluster if isinstance(cluster, ConnectionSettings) else ConnectionSettings(cluster)


def read_topic(
    spark: SparkSession,
    bootstrap_servers: str | ConnectionSettings,
    topic: str,
    *,
    starting_offsets: str = "earliest",
    ending_offsets: str = "latest",
    options: dict[str, str] | None = None,
) -> DataFrame:
    """A batch read of ``topic``: Spark's Kafka source schema (key, value, topic, partition, offset…)."""
    ensure_kafka_connector(spark)
    reader = (
        spark.read.format("kafka")
        .options(**_as_settings(bootstrap_servers).spark_options())
        .option("subscribe", topic)
        .option("startingOffsets", starting_offsets)
        .option("endingOffsets", ending_offsets)
    )
    for key, value in (options or {}).items():
        reader = reader.option(key, value)
    return reader.load()


def with_partition_column(
    df: DataFrame, num_partitions: int, scheme: str = "murmur2", key_column: str = "key"
) -> DataFrame:
    """``df`` plus an int ``partition`` column computed by our partitioner from the binary key."""
    from pyspark.sql import types as T

    fields = {f.name: f.dataType for f in df.schema.fields}
    if key_column not in fields:
        raise InvalidArgumentError(
            f"key column {key_column!r} is not in the DataFrame; available columns: {', '.join(fields)}"
        )
    if not isinstance(fields[key_column], T.BinaryType):
        df = df.withColumn(key_column, df[key_column].cast("binary"))
    if key_column != "key" and "key" in fields:
        raise InvalidArgumentError(
            "the DataFrame already has a 'key' column; drop it or use it as the key column"
        )
    df = df.drop("partition") if "partition" in fields else df
    df = df.withColumnRenamed(key_column, "key")
    column = _partition_udf(num_partitions, scheme)
    if column is not None:  # PySpark 4.1+: only the key column goes through Python
        return df.withColumn("partition", column(df["key"]))
    out = with_partitions(df, [Partitioning(num_partitions, scheme)])  # the whole row goes through Python
    return out.withColumnRenamed("p0", "partition")


def _partition_udf(num_partitions: int, scheme: str) -> Any:
    """A scalar Arrow UDF (PySpark 4.1+) from binary keys to our partitions, or None before 4.1."""
    from pyspark.sql import functions as F

    arrow_udf = getattr(F, "arrow_udf", None)
    if arrow_udf is None:
        return None
    Partitioning(num_partitions, scheme)  # checked here, on the driver, not in a task

    def partitions(keys: Any) -> Any:
        import numpy as np
        import pyarrow as pa

        from kafka_placement.partitioning import partition_keys

        return pa.array(np.asarray(partition_keys(keys, num_partitions, scheme), dtype=np.int32))

    import pyarrow as pa

    partitions.__annotations__ = {"keys": pa.Array, "return": pa.Array}  # how PySpark tells a scalar UDF
    return arrow_udf(partitions, "int")


def _check_partition_count(settings: ConnectionSettings, topic: str, num_partitions: int) -> None:
    try:
        from kafka import KafkaConsumer
    except ImportError:  # kafka-python is optional; the sink itself rejects out-of-range partitions
        return
    consumer = KafkaConsumer(client_id="kafka-placement-writer", **settings.kafka_python())
    try:
        partitions = consumer.partitions_for_topic(topic)
    finally:
        consumer.close()
    if not partitions:
        raise UnknownTopicError(
            f"topic {topic!r} does not exist at {settings.bootstrap_servers}; create it first"
        )
    if len(partitions) != num_partitions:
        raise InvalidArgumentError(
            f"topic {topic!r} has {len(partitions)} partitions, not {num_partitions}: records would land "
            "elsewhere than producers put them; pass num_partitions="
            f"{len(partitions)}"
        )


def write_to_kafka(
    df: DataFrame,
    bootstrap_servers: str | ConnectionSettings,
    topic: str,
    num_partitions: int,
    *,
    scheme: str = "murmur2",
    key_column: str = "key",
    value_column: str = "value",
    options: dict[str, str] | None = None,
    check_topic: bool = True,
    native: bool | None = None,
) -> None:
    """Write ``df`` to ``topic`` through Spark's Kafka sink, each record in our partitioner's partition.

    ``num_partitions`` must be the topic's partition count: with ``check_topic`` (default) it is
    compared with the cluster's metadata through kafka-python first (a mismatch would silently put
    keys elsewhere than producers do). The value column may be binary or string. NULL keys follow
    ``scheme`` (``murmur2`` hashes them like b"" as librdkafka does; ``murmur2_random`` is Java's
    producer: keyless records sticky by ``batch.size``).

    ``native`` (default: yes whenever possible): the sink's own Java producer places the records, so no
    key goes through a Python worker. For ``murmur2_random`` and ``murmur2`` that is its default
    partitioner, which hashes a key exactly as both schemes do (``toPositive(murmur2(key)) % n``); for
    ``murmur2_random`` its keyless records are Java's too (sticky by ``batch.size``); for ``murmur2`` a
    NULL key is hashed like b"", one fixed partition, which a column computed in Spark itself gives them
    (NULL for every keyed record: Spark's sink then lets the producer choose). Every other scheme is
    placed by our Java partitioner (:mod:`kafka_placement.spark.partitioner_jar`, compiled on the driver
    with ``javac``); without a JDK there, the writer computes the partition column in Python instead
    (``native=True`` then raises, saying why). Not native when ``options`` set the producer's
    ``partitioner.class`` or ``partitioner.ignore.keys``.
    """
    fields = {f.name for f in df.schema.fields}
    if value_column not in fields:
        raise InvalidArgumentError(
            f"value column {value_column!r} is not in the DataFrame; "
            f"available columns: {', '.join(sorted(fields))}"
        )
    settings = _as_settings(bootstrap_servers)
    if check_topic:
        _check_partition_count(settings, topic, num_partitions)
    own_partitioner = sorted(set(options or {}) & _PARTITIONER_OPTIONS)
    if native and own_partitioner:
        raise InvalidArgumentError(
            f"native=True lets the Java producer place records with our scheme; options set "
            f"{', '.join(own_partitioner)}"
        )
    if key_column not in fields:
        raise InvalidArgumentError(
            f"key column {key_column!r} is not in the DataFrame; "
            f"available columns: {', '.join(sorted(fields))}"
        )
    Partitioning(num_partitions, scheme)  # the scheme and count checked here, before any Spark work
    ensure_kafka_connector(df.sparkSession)
    extra: dict[str, str] = {}
    use_ours = native is not False and not own_partitioner and scheme not in _NATIVE_SCHEMES
    jar = add_java_partitioner(df.sparkSession) if use_ours else None
    if isinstance(jar, str) and native:
        raise ClusterError(f"native=True: our Java partitioner for {scheme!r} is unavailable: {jar}")
    if isinstance(jar, str):
        warnings.warn(
            f"kafka-placement's Java partitioner is unavailable ({jar}): the partition column is "
            "computed through Python workers instead",
            RuntimeWarning,
            stacklevel=2,
        )
    if native is False or own_partitioner or isinstance(jar, str):
        keyed = with_partition_column(df.select(key_column, value_column), num_partitions, scheme, key_column)
        records = keyed.selectExpr("key", f"CAST(`{value_column}` AS BINARY) AS value", "partition")
    else:
        records = df.selectExpr(
            f"CAST(`{key_column}` AS BINARY) AS key", f"CAST(`{value_column}` AS BINARY) AS value"
        )
        if jar is not None:
            extra = {"kafka.partitioner.class": PARTITIONER_CLASS, f"kafka.{SCHEME_PROPERTY}": scheme}
        elif scheme == "murmur2":  # NULL keys to murmur2(b"")'s partition; the producer places the others
            from pyspark.sql import functions as F

            null_key_partition = partition_key(None, num_partitions, scheme)
            records = records.withColumn(
                "partition", F.when(F.col("key").isNull(), F.lit(null_key_partition)).cast("int")
            )
    writer = records.write.format("kafka").options(**settings.spark_options()).option("topic", topic)
    for key, value in {**(options or {}), **extra}.items():
        writer = writer.option(key, value)
    writer.save()
