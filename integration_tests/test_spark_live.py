"""Live proof of the Spark → Kafka writer and the Spark Kafka source on the rack-labelled cluster.

A DataFrame is written through Spark's Kafka sink with the ``partition`` column from our partitioner;
kafka-python reads every record back and each must sit in the partition our core predicts — and, for
``murmur2``, the one kafka-python's own ``murmur2`` (the Java formula) gives. Then ``plan`` reads the
topic through Spark's Kafka source and its per-partition counts equal what was consumed.

Against the shared dev cluster: ``KAFKA_PLACEMENT_REUSE=1 pytest integration_tests/test_spark_live.py``.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.spark]

RECORDS = 3000


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark")
    from kafka_placement.spark.session import ensure_kafka_connector, spark_session

    session = spark_session("local[2]", app_name="kafka-placement-live")
    ensure_kafka_connector(session)
    yield session


def create_topic(bootstrap: str, partitions: int) -> str:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    name = f"spark-{uuid.uuid4().hex[:10]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="spark-live")
    try:
        admin.create_topics([NewTopic(name, partitions, 2)])
    finally:
        admin.close()
    return name


def consume_all(bootstrap: str, topic: str, partitions: int, expected: int) -> list[tuple[int, bytes, bytes]]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=2000)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        got: list[tuple[int, bytes, bytes]] = []
        deadline = time.monotonic() + 60
        while len(got) < expected and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=1000, max_records=5000).values():
                got += [(r.partition, r.key, r.value) for r in records]
        return got
    finally:
        consumer.close()


@pytest.mark.parametrize(
    ("scheme", "partitions", "native"),
    [
        ("murmur2", 12, None),  # native: the sink's Java producer hashes the keys, NULL keys get a column
        ("murmur2", 12, False),  # the partition column for every record
        ("fnv1a", 7, None),  # native: our Java partitioner in the sink's producer
        ("jump", 16, None),
        ("jump", 16, False),  # the partition column through a Python worker
        ("consistent_random", 5, None),
        ("murmur2_random", 9, None),  # native: Java's own partitioner, keyless records sticky
    ],
)
def test_writer_puts_every_record_in_its_predicted_partition(
    kafka_cluster: Any, spark: Any, scheme: str, partitions: int, native: bool | None
) -> None:
    from kafka.partitioner.default import murmur2 as kafka_python_murmur2

    from kafka_placement.partitioning import get_scheme, partition_key
    from kafka_placement.spark.kafka_io import write_to_kafka
    from kafka_placement.spark.sample import SampleSpec, sample_dataframe

    bootstrap = kafka_cluster.bootstrap_servers
    topic = create_topic(bootstrap, partitions)
    keyed = sample_dataframe(spark, SampleSpec(RECORDS - 100, distinct_keys=400, seed=9)).selectExpr(
        "key", "CAST(CONCAT('v-', CAST(value_size AS STRING)) AS BINARY) AS value"
    )
    null_keys = spark.range(100).selectExpr(
        "CAST(NULL AS BINARY) AS key", "CAST(CONCAT('null-', CAST(id AS STRING)) AS BINARY) AS value"
    )
    df = keyed.unionByName(null_keys)
    # a small batch.size makes the producer's own keyless stickiness switch partitions every ~25 NULL-key
    # records: NULL keys it placed itself could not all land on the one partition murmur2 gives them
    write_to_kafka(
        df, bootstrap, topic, partitions, scheme=scheme, native=native, options={"kafka.batch.size": "512"}
    )
    if native is None and scheme not in ("murmur2", "murmur2_random"):  # really our Java partitioner
        from kafka_placement.spark.partitioner_jar import add_java_partitioner

        assert isinstance(add_java_partitioner(spark), Path)

    got = consume_all(bootstrap, topic, partitions, RECORDS)
    assert len(got) == RECORDS
    keyless = get_scheme(scheme).is_keyless  # NULL keys: random or sticky there, no one partition
    placed = [(p, k) for p, k, _ in got if not keyless(k)]
    assert len(placed) == RECORDS - (100 if keyless(None) else 0)
    wrong = [(p, k) for p, k in placed if p != partition_key(k, partitions, scheme)]
    assert wrong == []
    if scheme == "murmur2":  # kafka-python's murmur2, NULL hashed like b"" as librdkafka's murmur2 does
        assert all(p == (kafka_python_murmur2(k or b"") & 0x7FFFFFFF) % partitions for p, k in placed)
    assert len({p for p, _, _ in got}) > partitions // 2  # the data really spread


def test_plan_reads_the_topic_through_spark_kafka_source(
    kafka_cluster: Any, spark: Any, tmp_path: Any
) -> None:
    from kafka_placement.planning.scenarios import scenario_grid
    from kafka_placement.spark.kafka_io import read_topic, write_to_kafka
    from kafka_placement.spark.pipeline import plan
    from kafka_placement.spark.sample import SampleSpec, sample_dataframe

    bootstrap = kafka_cluster.bootstrap_servers
    topic = create_topic(bootstrap, 6)
    df = sample_dataframe(spark, SampleSpec(1500, distinct_keys=100, seed=2)).selectExpr(
        "key", "CAST(REPEAT('x', CAST(value_size AS INT)) AS BINARY) AS value"
    )
    write_to_kafka(df, bootstrap, topic, 6)
    consumed = consume_all(bootstrap, topic, 6, 1500)
    source = read_topic(spark, bootstrap, topic)
    assert source.count() == 1500
    result = plan(spark, source, scenario_grid([6, 8]), value_column="value")
    observed = Counter(p for p, _, _ in consumed)
    got = result.partitions[result.partitions["partitioning"] == "murmur2/6"]
    assert got["records"].tolist() == [observed.get(p, 0) for p in range(6)]
    assert result.totals["bytes"] == sum(len(k) + len(v) for _, k, v in consumed)


def test_writer_refuses_a_wrong_partition_count(kafka_cluster: Any, spark: Any) -> None:
    from kafka_placement.errors import InvalidArgumentError, UnknownTopicError
    from kafka_placement.spark.kafka_io import write_to_kafka

    bootstrap = kafka_cluster.bootstrap_servers
    topic = create_topic(bootstrap, 5)
    df = spark.createDataFrame([(b"k", b"v")], "key binary, value binary")
    with pytest.raises(InvalidArgumentError, match=f"topic '{topic}' has 5 partitions, not 6"):
        write_to_kafka(df, bootstrap, topic, 6)
    with pytest.raises(UnknownTopicError, match="does not exist"):
        write_to_kafka(df, bootstrap, f"{topic}-missing", 5)
