"""Key → partition counts straight from Parquet files: hash each *distinct* key of a row group once.

Spark spreads the files' row groups (:mod:`kafka_placement.planning.parquet_row_groups`) over its tasks;
inside each task pyarrow reads the key column dictionary-encoded, the records of each distinct key are
counted from the indices (:func:`kafka_placement.planning.key_totals.key_totals`), and
:func:`kafka_placement.partitioning.partition_keys` hashes each distinct key once. Nothing per record
crosses the JVM ↔ Python boundary, which is what bounds the generic DataFrame path
(:func:`kafka_placement.spark.pipeline.partition_counts`).

Requirements: Parquet files readable by pyarrow from every executor (local or shared filesystem —
always true for ``local[*]``); a deterministic scheme (``random`` places records, not keys: use the
DataFrame path). String keys count as their UTF-8 bytes, binary keys as is, integer keys as Kafka's
serializers send them; NULL keys are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.planning.parquet_row_groups import RowGroupReader, row_groups
from kafka_placement.planning.scenarios import Partitioning

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession


def partition_counts_parquet(
    spark: SparkSession,
    path: str | Path,
    num_partitions: int,
    scheme: str = "murmur2",
    key_column: str = "key",
) -> list[int]:
    """Records per partition of the keys in ``key_column`` of the Parquet file(s) at ``path``."""
    part = Partitioning(num_partitions, scheme)
    if part.per_record:
        raise InvalidArgumentError(
            f"scheme {scheme!r} places every record at random; use partition_counts() on a DataFrame"
        )
    units = row_groups(path, key_column)
    if not units:
        return [0] * part.partitions
    slices = max(1, min(len(units), spark.sparkContext.defaultParallelism * 2))
    # Row-group numbers as a range split into ``slices`` tasks: no shuffle to spread the work.
    tasks = spark.range(0, len(units), 1, slices)

    def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import numpy as np
        import pyarrow as pa

        from kafka_placement.partitioning import partition_keys

        totals = np.zeros(part.partitions, dtype=np.int64)
        with RowGroupReader() as reader:  # a task's row groups are consecutive: mostly one file, opened once
            for batch in batches:
                for unit in batch.column(0).to_pylist():
                    per_key = reader.key_totals(units[unit])  # each distinct key of the row group once
                    keyed = per_key.filter(per_key.column("key").is_valid())
                    where = partition_keys(keyed.column("key"), part.partitions, part.scheme)
                    records = keyed.column("records").to_numpy()
                    totals += np.bincount(where, weights=records, minlength=part.partitions).astype(np.int64)
        yield pa.RecordBatch.from_arrays(
            [pa.array(np.arange(part.partitions, dtype=np.int32)), pa.array(totals)],
            names=["partition", "records"],
        )

    out = [0] * part.partitions
    for row in tasks.mapInArrow(count, "partition int, records bigint").collect():  # slices × n rows
        out[int(row[0])] += int(row[1])
    return out
