"""Key → partition counts straight from Parquet files: hash each *distinct* key of a row group once.

Spark spreads the files' row groups over its tasks; inside each task pyarrow reads the key column
dictionary-encoded (``read_dictionary``), :func:`kafka_placement.partitioning.partition_keys` hashes
the dictionary (the distinct keys of that row group), and the per-row indices only count. Nothing
per record crosses the JVM ↔ Python boundary, which is what bounds the generic DataFrame path
(:func:`kafka_placement.spark.pipeline.partition_counts`).

Requirements: Parquet files readable by pyarrow from every executor (local or shared filesystem —
always true for ``local[*]``); a deterministic scheme (``random`` places records, not keys: use the
DataFrame path). String keys count as their UTF-8 bytes, binary keys as is; NULL keys are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.planning.parquet_row_groups import parquet_files
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
    import pyarrow.parquet as pq

    part = Partitioning(num_partitions, scheme)
    if part.per_record:
        raise InvalidArgumentError(
            f"scheme {scheme!r} places every record at random; use partition_counts() on a DataFrame"
        )
    units: list[tuple[str, int]] = []
    for file in parquet_files(path):
        meta = pq.ParquetFile(file)
        names = meta.schema_arrow.names
        if key_column not in names:
            raise InvalidArgumentError(
                f"key column {key_column!r} is not in {file}; available columns: {', '.join(names)}"
            )
        units += [(file, rg) for rg in range(meta.metadata.num_row_groups)]
    if not units:
        return [0] * part.partitions
    slices = max(1, min(len(units), spark.sparkContext.defaultParallelism * 2))
    # Row-group numbers as a range split into ``slices`` tasks: no shuffle to spread the work.
    tasks = spark.range(0, len(units), 1, slices)

    def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        from kafka_placement.partitioning import partition_keys

        totals = np.zeros(part.partitions, dtype=np.int64)
        for batch in batches:
            for unit in batch.column(0).to_pylist():
                file, row_group = units[unit]
                column = pq.ParquetFile(file, read_dictionary=[key_column]).read_row_group(
                    row_group, columns=[key_column]
                )[0]
                for chunk in column.chunks:
                    if not isinstance(chunk, pa.DictionaryArray):
                        chunk = pc.dictionary_encode(chunk)
                    indices = chunk.indices.drop_null().to_numpy()
                    dictionary = chunk.dictionary
                    if pa.types.is_string(dictionary.type) or pa.types.is_large_string(dictionary.type):
                        dictionary = dictionary.cast(pa.binary())
                    per_key = np.bincount(indices, minlength=len(dictionary))
                    where = partition_keys(dictionary, part.partitions, part.scheme)
                    totals += np.bincount(where, weights=per_key, minlength=part.partitions).astype(np.int64)
        yield pa.RecordBatch.from_arrays(
            [pa.array(np.arange(part.partitions, dtype=np.int32)), pa.array(totals)],
            names=["partition", "records"],
        )

    out = [0] * part.partitions
    for row in tasks.mapInArrow(count, "partition int, records bigint").collect():  # slices × n rows
        out[int(row[0])] += int(row[1])
    return out
