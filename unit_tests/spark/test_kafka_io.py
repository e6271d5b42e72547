"""The Spark → Kafka writer's partition column: the same partition as every other adapter for the same
key, whether the column holds binary keys or strings (sent as their UTF-8 bytes)."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_placement.partitioning import partition_key
from kafka_placement.spark.kafka_io import with_partition_column

pytestmark = pytest.mark.spark

KEYS = ["alice", "bob", "émile", "", "北京", "x" * 300, "\U0001f600"]


@pytest.mark.parametrize("scheme", ["murmur2", "murmur2_random", "consistent", "fnv1a"])
def test_partition_column_equals_partition_key_for_binary_and_string_keys(spark: Any, scheme: str) -> None:
    from pyspark.sql import types as T

    as_binary = spark.createDataFrame(
        [(k.encode(),) for k in KEYS], T.StructType([T.StructField("key", T.BinaryType())])
    )
    as_string = spark.createDataFrame([(k,) for k in KEYS], "key string")
    expected = {k.encode(): partition_key(k.encode(), 13, scheme) for k in KEYS}
    for frame in (as_binary, as_string):
        rows = with_partition_column(frame, 13, scheme).collect()
        assert {bytes(r["key"]): r["partition"] for r in rows} == expected


def test_native_writing_refuses_a_partitioner_of_the_users_own_and_bad_columns(spark: Any) -> None:
    from kafka_placement.errors import InvalidArgumentError
    from kafka_placement.spark.kafka_io import write_to_kafka

    df = spark.createDataFrame([(b"k", b"v")], "key binary, value binary")
    with pytest.raises(InvalidArgumentError, match=r"options set kafka\.partitioner\.class"):
        write_to_kafka(
            df,
            "127.0.0.1:1",
            "t",
            3,
            native=True,
            check_topic=False,
            options={"kafka.partitioner.class": "org.example.Mine"},
        )
    with pytest.raises(InvalidArgumentError, match="key column 'id' is not in the DataFrame"):
        write_to_kafka(df, "127.0.0.1:1", "t", 3, key_column="id", check_topic=False)


def test_the_partition_column_takes_only_the_keys_through_python_where_pyspark_can(spark: Any) -> None:
    from pyspark.sql import functions as F

    from kafka_placement.spark.kafka_io import _partition_udf

    column = _partition_udf(5, "jump")
    assert (column is not None) == hasattr(F, "arrow_udf")  # PySpark 4.1+: a scalar Arrow UDF
