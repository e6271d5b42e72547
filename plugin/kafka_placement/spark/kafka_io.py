"""Spark ⇄ Kafka: read a topic with Spark's Kafka source; write a DataFrame with Spark's Kafka sink.

The writer computes an explicit ``partition`` column with our partitioners
(:func:`kafka_placement.partitioning.partition_keys` on Arrow batches of the keys: a scalar Arrow UDF on
PySpark 4.1+, ``mapInArrow`` before); Spark's sink
honours it, so Spark-produced records land exactly where a Java producer (``murmur2``) or
librdkafka (``consistent_random``, ``fnv1a``…) with the same key would put them.

Both take the cluster as a bootstrap address or as :class:`~kafka_placement.clients.connection.
ConnectionSettings` (TLS/SASL): Spark's Java client gets every setting as a ``kafka.``-prefixed option.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_placement.clients.connection import ConnectionSettings
from kafka_placement.errors import InvalidArgumentError, UnknownTopicError
from kafka_placement.planning.scenarios import Partitioning
from kafka_placement.spark.pipeline import with_partitions
from kafka_placement.spark.session import ensure_kafka_connector

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

    ``native`` (default: yes for ``murmur2_random``): the sink's own Java producer places the records —
    its default partitioner *is* ``murmur2_random`` (``toPositive(murmur2(key)) % n``, keyless records
    sticky), so no partition column and no Python pass over the data are needed. Other schemes always
    get the partition column.
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
    if native is None:
        native = scheme == "murmur2_random"
    elif native and scheme != "murmur2_random":
        raise InvalidArgumentError(
            f"native=True needs scheme='murmur2_random' (the Java producer's own partitioner), got {scheme!r}"
        )
    if key_column not in fields:
        raise InvalidArgumentError(
            f"key column {key_column!r} is not in the DataFrame; "
            f"available columns: {', '.join(sorted(fields))}"
        )
    ensure_kafka_connector(df.sparkSession)
    if native:
        records = df.selectExpr(
            f"CAST(`{key_column}` AS BINARY) AS key", f"CAST(`{value_column}` AS BINARY) AS value"
        )
    else:
        keyed = with_partition_column(df.select(key_column, value_column), num_partitions, scheme, key_column)
        records = keyed.selectExpr("key", f"CAST(`{value_column}` AS BINARY) AS value", "partition")
    writer = (
        records.write.format("kafka")
        .options(**settings.spark_options())
        .option("topic", topic)
    )
    for key, value in (options or {}).items():
        writer = writer.option(key, value)
    writer.save()
