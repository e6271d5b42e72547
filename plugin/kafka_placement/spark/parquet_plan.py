"""The plan of Parquet input on Spark: executors read the row groups themselves, no record enters the JVM.

Spark schedules; the work is Arrow and numpy in its Python workers, in two stages:

1. the row groups (:mod:`kafka_placement.planning.parquet_row_groups`) are spread over tasks; each task
   reads its row groups' key (dictionary-encoded) and value columns and totals records and bytes per
   key — so what leaves a task is one row per distinct key it saw, not one per record;
2. those totals are shuffled by key (each key to exactly one task), merged, and reduced by a
   :class:`~kafka_placement.planning.key_loads.KeyLoadReducer` to the small partials the driver merges.

The figures equal :func:`kafka_placement.spark.pipeline.plan` on the same files (the generic DataFrame
path, whose JVM group-by over every record is what this path avoids) and the single-process
:func:`kafka_placement.planning.local.plan_parquet`.

Requirements: the path is readable by pyarrow on every executor (a local path on ``local[*]``, a path
every worker has — as for Spark's own reader of a local path — on a cluster).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.planning.key_loads import PARTIAL_DDL, merge_partials, partitionings_of
from kafka_placement.planning.parquet_row_groups import RowGroup, RowGroupReader, parquet_files, row_groups
from kafka_placement.planning.result import PlanResult, plan_result
from kafka_placement.planning.scenarios import Partitioning, Scenario

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

TOTALS_DDL = "key binary, records bigint, bytes bigint"
_BATCH = 1 << 16  # rows per batch handed back to Spark / to the reducer


def plan_parquet(
    spark: SparkSession,
    path: str | Path,
    scenarios: Sequence[Scenario],
    *,
    key_column: str = "key",
    value_column: str | None = None,
    top_keys: int = 20,
) -> PlanResult:
    """Every scenario over the Parquet file(s) at ``path`` (see the module docstring)."""
    partitionings = partitionings_of(scenarios, top_keys)
    units = row_groups(path, key_column, value_column)
    parallelism = max(1, spark.sparkContext.defaultParallelism)
    if not units:
        return plan_result(merge_partials([], partitionings, top_keys), scenarios, top_keys)
    # Row-group numbers as a range cut into tasks: no shuffle to spread the reading.
    tasks = spark.range(0, len(units), 1, min(len(units), parallelism * 2))
    totals = tasks.mapInArrow(_read_totals(units), TOTALS_DDL)
    partials = totals.repartition(parallelism, "key").mapInArrow(
        _reduce_totals(partitionings, top_keys), PARTIAL_DDL
    )
    return plan_result(merge_partials(partials.toArrow(), partitionings, top_keys), scenarios, top_keys)


def executors_can_read(path: str | Path, key_column: str, value_column: str | None) -> bool:
    """Whether this path applies: Parquet files whose key is a string or binary column, with the key and
    value columns in the files themselves (not, say, Hive partition directories only Spark's reader knows).
    Anything else takes the generic DataFrame path."""
    import pyarrow.parquet as pq

    from kafka_placement.planning.key_totals import dictionary_keys

    try:
        files = parquet_files(path)
    except InvalidArgumentError:
        return False
    for file in files:
        schema = pq.read_schema(file)
        if key_column not in schema.names or (value_column and value_column not in schema.names):
            return False
        if not dictionary_keys(schema.field(key_column).type):
            return False
    return True


def _read_totals(units: Sequence[RowGroup]) -> Any:
    """Stage 1 (one task): its row groups → records and bytes per distinct key it saw."""

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from kafka_placement.planning.key_totals import merge_as_they_come

        with RowGroupReader() as reader:  # a task's row groups are consecutive: mostly one file, opened once
            pieces = (reader.key_totals(units[i]) for batch in batches for i in batch.column(0).to_pylist())
            yield from merge_as_they_come(pieces).to_batches(max_chunksize=_BATCH)

    return read


def _reduce_totals(partitionings: Sequence[Partitioning], top_keys: int) -> Any:
    """Stage 2 (one task): the totals of the keys shuffled to it → each key once → one partial."""

    def reduce(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from kafka_placement.planning.key_loads import KeyLoadReducer
        from kafka_placement.planning.key_totals import merge_key_totals

        reducer = KeyLoadReducer(partitionings, top_keys)
        for batch in merge_key_totals(batches).to_batches(max_chunksize=_BATCH):
            reducer.add(batch)
        yield reducer.partial()

    return reduce
