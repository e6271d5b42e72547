"""The planning pipeline on Spark: one pass over the input for every scenario.

Input: any DataFrame with a key column (binary; strings are taken as their UTF-8 bytes, as Kafka's
StringSerializer sends them; ints/longs as 4/8 big-endian bytes, as Integer/LongSerializer send
them) and optionally a value column (binary/string: its byte length; numeric: a size in bytes).
A record's bytes are ``len(key) + value size`` (a NULL or negative numeric size counts as 0).

One Spark job: the JVM aggregates records and bytes per distinct key (the NULL key is the keyless
group); each task hands its keys, as Arrow batches, to a
:class:`~kafka_placement.planning.key_loads.KeyLoadReducer`, which hashes them for every partitioning
at once and reduces them to per-partition loads, keys moved between partitionings and hot-key
candidates. Only those small partials reach the driver, where
:func:`~kafka_placement.planning.result.plan_result` derives broker, rack and consumer loads, skew and
the rest. Null keys follow the scheme (see :mod:`kafka_placement.planning.key_loads`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.planning.key_loads import PARTIAL_DDL, merge_partials, partitionings_of
from kafka_placement.planning.records import check_column
from kafka_placement.planning.result import PlanResult, plan_result
from kafka_placement.planning.scenarios import Partitioning, Scenario

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

KEY = "key"
BYTES = "bytes"


def _check_column(df: DataFrame, name: str, role: str) -> Any:
    fields = {f.name: f for f in df.schema.fields}
    check_column(name, role, list(fields))
    return fields[name].dataType


def normalize(df: DataFrame, key_column: str = "key", value_column: str | None = None) -> DataFrame:
    """``(key binary, bytes bigint)`` per record, validating column names and types."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    key_type = _check_column(df, key_column, "key")
    key = F.col(key_column)
    if isinstance(key_type, T.BinaryType):
        key_bin = key
    elif isinstance(key_type, T.StringType):
        key_bin = key.cast("binary")
    elif isinstance(key_type, T.IntegerType | T.LongType | T.ShortType | T.ByteType):
        # Two's complement, big-endian, fixed width: what Kafka's Integer/Long/Short serializers send.
        width = {T.LongType: 8, T.IntegerType: 4, T.ShortType: 2, T.ByteType: 1}[type(key_type)]
        unsigned = key.cast("bigint")
        if width < 8:
            unsigned = unsigned.bitwiseAND(F.lit((1 << (8 * width)) - 1))
        key_bin = F.unhex(F.lpad(F.hex(unsigned), 2 * width, "0"))
    else:
        raise InvalidArgumentError(
            f"key column {key_column!r} has type {key_type.simpleString()}; allowed: binary, string "
            "(UTF-8 bytes), int/bigint/smallint/tinyint (big-endian bytes, as Kafka's serializers)"
        )
    if value_column is None:
        size = F.lit(0).cast("bigint")
    else:
        value_type = _check_column(df, value_column, "value")
        value = F.col(value_column)
        if isinstance(value_type, T.BinaryType | T.StringType):
            size = F.coalesce(F.octet_length(value), F.lit(0)).cast("bigint")
        elif isinstance(value_type, T.NumericType):
            size = F.greatest(F.coalesce(value, F.lit(0)).cast("bigint"), F.lit(0).cast("bigint"))
        else:
            raise InvalidArgumentError(
                f"value column {value_column!r} has type {value_type.simpleString()}; allowed: binary or "
                "string (its byte length) or a numeric size in bytes"
            )
    record_bytes = F.coalesce(F.octet_length(key_bin), F.lit(0)).cast("bigint") + size
    return df.select(key_bin.alias(KEY), record_bytes.alias(BYTES))


def _partition_columns(partitionings: Sequence[Partitioning]) -> Any:
    """A ``mapInArrow`` function adding ``p0..pk`` (int) for each partitioning to a key batch."""
    specs = [(p.partitions, p.scheme) for p in partitionings]

    def add_partitions(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import numpy as np
        import pyarrow as pa

        from kafka_placement.partitioning import partition_keys

        for batch in batches:
            keys = batch.column(0)
            columns = list(batch.columns)
            names = list(batch.schema.names)
            for i, (n, scheme) in enumerate(specs):
                columns.append(pa.array(np.asarray(partition_keys(keys, n, scheme), dtype=np.int32)))
                names.append(f"p{i}")
            yield pa.RecordBatch.from_arrays(columns, names=names)

    return add_partitions


def with_partitions(df: DataFrame, partitionings: Sequence[Partitioning], key_column: str = KEY) -> DataFrame:
    """``df`` (its first column the binary key) plus ``p0..pk`` from our partitioners (vectorized)."""
    from pyspark.sql import types as T

    first = df.schema.fields[0]
    if first.name != key_column or not isinstance(first.dataType, T.BinaryType):
        df = df.select(key_column, *[c for c in df.columns if c != key_column])
    schema = T.StructType(
        [
            *df.schema.fields,
            *[T.StructField(f"p{i}", T.IntegerType(), False) for i in range(len(partitionings))],
        ]
    )
    return df.mapInArrow(_partition_columns(partitionings), schema)


def partition_counts(
    df: DataFrame,
    num_partitions: int,
    scheme: str = "murmur2",
    key_column: str = "key",
    *,
    distinct_first: bool = False,
) -> list[int]:
    """Records per partition of ``df``'s keys (NULL keys skipped): the fast path, no per-key rows.

    Each Arrow batch is hashed by :func:`kafka_placement.partitioning.partition_keys` and reduced to
    ``num_partitions`` counts inside the Python worker, so only counts travel back to the JVM. With
    ``distinct_first`` the JVM first counts records per distinct key and each distinct key is hashed
    once (weighted by its count) — much less Arrow traffic when keys repeat (skewed data); ignored
    for schemes that place every record at random.
    """
    from pyspark.sql import functions as F

    part = Partitioning(num_partitions, scheme)
    keys = normalize(df, key_column).select(KEY).where(F.col(KEY).isNotNull())
    weighted = distinct_first and not part.per_record
    if weighted:
        keys = keys.groupBy(KEY).agg(F.count(F.lit(1)).alias("records"))

    def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import numpy as np
        import pyarrow as pa

        from kafka_placement.partitioning import partition_keys

        ids = pa.array(np.arange(part.partitions, dtype=np.int32))
        for batch in batches:
            if batch.num_rows:
                partitions = partition_keys(batch.column(0), part.partitions, part.scheme)
                weights = batch.column(1).to_numpy() if weighted else None
                counts = np.bincount(partitions, weights=weights, minlength=part.partitions)
                yield pa.RecordBatch.from_arrays(
                    [ids, pa.array(np.rint(counts).astype(np.int64))], names=["partition", "records"]
                )

    rows = (
        keys.mapInArrow(count, "partition int, records bigint").groupBy("partition").sum("records").collect()
    )
    out = [0] * part.partitions
    for row in rows:
        out[int(row[0])] = int(row[1])
    return out


def plan(
    spark: SparkSession,
    df: DataFrame,
    scenarios: Sequence[Scenario],
    *,
    key_column: str = "key",
    value_column: str | None = None,
    top_keys: int = 20,
) -> PlanResult:
    """Run every scenario over ``df`` and return the aggregates (see the module docstring)."""
    from pyspark.sql import functions as F

    partitionings = partitionings_of(scenarios, top_keys)
    records = normalize(df, key_column, value_column)
    by_key = records.groupBy(KEY).agg(F.count(F.lit(1)).alias("records"), F.sum(BYTES).alias(BYTES))
    partials = by_key.mapInArrow(_reducer(partitionings, top_keys), PARTIAL_DDL).toArrow()
    return plan_result(merge_partials(partials, partitionings, top_keys), scenarios, top_keys)


def _reducer(partitionings: Sequence[Partitioning], top_keys: int) -> Any:
    """The ``mapInArrow`` function of one task: all its key batches → one partial."""

    def reduce_keys(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from kafka_placement.planning.key_loads import KeyLoadReducer

        reducer = KeyLoadReducer(partitionings, top_keys)
        for batch in batches:
            reducer.add(batch)
        yield reducer.partial()

    return reduce_keys
