"""The input of ``kafka-placement plan``: a generated sample, files (Parquet/CSV/JSON) or a live topic.

Each is checked before Spark starts where it can be (the path exists, the format is known, the topic
exists); Parquet files the executors can read themselves are handed on as a path (see
:mod:`kafka_placement.spark.parquet_plan`), everything else as a DataFrame.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_placement.cli.connection_options import settings_from_args
from kafka_placement.cli.progress import Activity, warning
from kafka_placement.clients.connection import ConnectionSettings, check_connection
from kafka_placement.errors import InvalidArgumentError, UnknownTopicError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

FORMATS = ("parquet", "csv", "json")


def check_topic(settings: ConnectionSettings, topic: str) -> None:
    """The cluster answers (bounded, one clear line otherwise) and ``topic`` exists
    (:class:`UnknownTopicError` naming the known topics)."""
    from confluent_kafka.admin import AdminClient

    check_connection(settings)
    metadata = AdminClient(settings.confluent()).list_topics(timeout=settings.timeout_s)
    known = sorted(t for t in metadata.topics if not t.startswith("__"))
    if topic not in known:
        shown = ", ".join(known[:20]) + (" …" if len(known) > 20 else "")
        raise UnknownTopicError(
            f"topic {topic!r} does not exist at {settings.bootstrap_servers}; known topics: {shown}"
        )


def parquet_in_place(args: argparse.Namespace) -> bool:
    """Whether the input is Parquet files read as they are — by this process or by Spark's executors
    (:mod:`kafka_placement.spark.parquet_plan`): a string or binary key column (and the value column) in
    the files themselves, no ``--value-size-column``. Reads the files' footers: asked once per plan."""
    if args.input is None or args.value_size_column is not None:
        return False
    path = Path(args.input)
    if (args.format or infer_format(path)) != "parquet":
        return False
    from kafka_placement.spark.parquet_plan import executors_can_read

    return executors_can_read(path, args.key_column, args.value_column)


def load_input(
    spark: SparkSession, args: argparse.Namespace, in_place: bool
) -> tuple[DataFrame | Path, str, str | None]:
    """The input — a DataFrame, or (``in_place``: :func:`parquet_in_place`) the path of Parquet files the
    executors read themselves — a description of it, and the value column to use. ``args`` passed
    :func:`kafka_placement.cli.plan.check_input_args` (one input, an existing path, a topic with a
    cluster)."""
    if args.sample is not None:
        from kafka_placement.spark.sample import SampleSpec, sample_dataframe

        spec = SampleSpec(
            args.sample, args.distinct_keys, args.zipf, args.value_size, min(16, args.value_size), args.seed
        )
        desc = (
            f"sample: {spec.records:,} records, {spec.key_count:,} keys, "
            f"Zipf {spec.exponent}, seed {spec.seed}"
        )
        return sample_dataframe(spark, spec), desc, args.value_column or "value_size"
    if args.input is not None:
        path = Path(args.input)
        fmt = args.format or infer_format(path)
        if in_place:
            return path, f"{fmt}: {path}", args.value_column
        with Activity(f"reading {fmt}: {path}"):
            reader = spark.read
            if fmt == "csv":
                reader = reader.option("header", "true")
            df = reader.format(fmt).load(str(path))
            if args.value_size_column:
                df = with_size_column(df, args.value_size_column)
                return df, f"{fmt}: {path}", args.value_size_column
            if fmt == "csv" and args.value_column:
                _warn_if_sizes(df, args.value_column)
        return df, f"{fmt}: {path}", args.value_column
    settings = settings_from_args(args)
    from kafka_placement.cli.spark_start import load_connector
    from kafka_placement.spark.kafka_io import read_topic

    load_connector(spark)
    with Activity(f"reading topic {args.topic}"):
        df = read_topic(spark, settings, args.topic)
    return df, f"topic {args.topic} @ {settings.bootstrap_servers}", args.value_column or "value"


def with_size_column(df: DataFrame, column: str) -> DataFrame:
    """``column`` as a bigint size in bytes; a value that is not a whole number is refused by name."""
    from pyspark.sql import functions as F

    if column not in df.columns:
        raise InvalidArgumentError(
            f"--value-size-column {column!r} is not in the input; available columns: {', '.join(df.columns)}"
        )
    size = F.col(column).try_cast("bigint")  # null instead of an ANSI-mode cast error
    bad = df.filter(F.col(column).isNotNull() & size.isNull()).select(column).limit(1).collect()
    if bad:
        raise InvalidArgumentError(
            f"--value-size-column {column!r} must hold whole numbers of bytes, got {bad[0][0]!r:.60}"
        )
    return df.withColumn(column, size)


def _warn_if_sizes(df: DataFrame, column: str) -> None:
    """CSV gives every column as text: a value column of digits is probably a size, not the value."""
    if column not in df.columns:
        return  # the pipeline names the missing column
    head = [row[0] for row in df.select(column).limit(1000).collect() if row[0] is not None]
    if head and all(isinstance(v, str) and v.isdigit() for v in head):
        warning(
            f"CSV column {column!r} holds only digits; it is counted as text of that length. "
            f"If it is a size in bytes, use --value-size-column {column}"
        )


def infer_format(path: Path) -> str:
    candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for candidate in candidates:
        suffix = candidate.suffix.lower().lstrip(".")
        if suffix in FORMATS:
            return suffix
        if suffix in ("jsonl", "ndjson"):
            return "json"
    raise InvalidArgumentError(f"cannot tell the format of {str(path)!r}; pass --format {'/'.join(FORMATS)}")
