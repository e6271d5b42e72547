"""Partition planning on PySpark and a Spark → Kafka writer that uses our partitioners.

Quick start::

    from kafka_placement.spark import spark_session, sample_dataframe, SampleSpec, plan, scenario_grid
    spark = spark_session("local[*]")
    df = sample_dataframe(spark, SampleSpec(100_000))
    result = plan(spark, df, scenario_grid([12, 16], ["murmur2", "jump"]), value_column="value_size")

PySpark, pyarrow, pandas and matplotlib come with the ``spark`` extra; they are imported lazily.

An adapter: Spark in, the planning core's results out; no algorithm of its own.
"""

from kafka_placement.planning.report import write_report, write_results
from kafka_placement.planning.result import PlanResult
from kafka_placement.planning.scenarios import (
    PLACERS,
    SCHEMES,
    Group,
    Partitioning,
    Placement,
    Scenario,
    parse_brokers,
    scenario_grid,
)
from kafka_placement.planning.skew import Skew, skew
from kafka_placement.spark.kafka_io import read_topic, with_partition_column, write_to_kafka
from kafka_placement.spark.parquet_counts import partition_counts_parquet
from kafka_placement.spark.pipeline import normalize, partition_counts, plan, with_partitions
from kafka_placement.spark.sample import SampleSpec, sample_arrays, sample_batch, sample_dataframe
from kafka_placement.spark.session import ensure_kafka_connector, spark_session

__all__ = [
    "PLACERS",
    "SCHEMES",
    "Group",
    "Partitioning",
    "Placement",
    "PlanResult",
    "SampleSpec",
    "Scenario",
    "Skew",
    "ensure_kafka_connector",
    "normalize",
    "parse_brokers",
    "partition_counts",
    "partition_counts_parquet",
    "plan",
    "read_topic",
    "sample_arrays",
    "sample_batch",
    "sample_dataframe",
    "scenario_grid",
    "skew",
    "spark_session",
    "with_partition_column",
    "with_partitions",
    "write_report",
    "write_results",
    "write_to_kafka",
]
