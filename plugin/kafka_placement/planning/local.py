"""The single-process plan: pyarrow and numpy in one thread, no Spark — the same figures as the Spark job.

Records are totalled per key (:mod:`~kafka_placement.planning.key_totals`: Parquet keys read
dictionary-encoded, one row group at a time), and the distinct keys go through the same
:class:`~kafka_placement.planning.key_loads.KeyLoadReducer` and
:func:`~kafka_placement.planning.result.plan_result`. It is the yardstick the Spark benchmark is measured
against, and a way to plan inputs that fit in memory without starting a JVM.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.planning.key_loads import KeyLoadReducer, merge_partials, partitionings_of
from kafka_placement.planning.key_totals import key_totals, merge_as_they_come, merge_key_totals
from kafka_placement.planning.parquet_row_groups import RowGroup, RowGroupReader, row_groups
from kafka_placement.planning.result import PlanResult, plan_result
from kafka_placement.planning.scenarios import Partitioning, Scenario

if TYPE_CHECKING:
    import pyarrow as pa

_BATCH = 1 << 16  # distinct keys per reducer batch
_MAX_THREADS = 1024


def plan_table(
    table: pa.Table,
    scenarios: Sequence[Scenario],
    *,
    key_column: str = "key",
    value_column: str | None = None,
    top_keys: int = 20,
) -> PlanResult:
    """Every scenario over an in-memory Arrow table, in this process (same result as the Spark plan)."""
    partitionings = partitionings_of(scenarios, top_keys)  # bad arguments fail before any work
    by_key = merge_key_totals([key_totals(table, key_column, value_column)])
    return _plan_totals(by_key, partitionings, scenarios, top_keys)


def _plan_totals(
    by_key: pa.Table, partitionings: list[Partitioning], scenarios: Sequence[Scenario], top_keys: int
) -> PlanResult:
    reducer = KeyLoadReducer(partitionings, top_keys)
    for batch in by_key.to_batches(max_chunksize=_BATCH):
        reducer.add(batch)
    loads = merge_partials([reducer.partial()], partitionings, top_keys)
    return plan_result(loads, scenarios, top_keys)


def plan_parquet(
    path: str | Path,
    scenarios: Sequence[Scenario],
    *,
    key_column: str = "key",
    value_column: str | None = None,
    top_keys: int = 20,
    threads: int = 1,
) -> PlanResult:
    """:func:`plan_table` over a Parquet file or directory, one row group at a time (string/binary keys
    dictionary-encoded, so memory follows the distinct keys, not the records), read by ``threads``
    threads (pyarrow's reading and numpy's counting run outside the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    partitionings = partitionings_of(scenarios, top_keys)  # bad arguments fail before any work
    if not 1 <= threads <= _MAX_THREADS:
        raise InvalidArgumentError(f"threads must be in [1, {_MAX_THREADS}], got {threads}")
    units = row_groups(path, key_column, value_column)
    window = 4 * threads  # a bounded number of row groups in flight
    per_thread = threading.local()
    readers: list[RowGroupReader] = []

    def totals(unit: RowGroup) -> pa.Table:
        reader = getattr(per_thread, "reader", None)
        if reader is None:
            reader = per_thread.reader = RowGroupReader()
            readers.append(reader)
        return reader.key_totals(unit)

    try:
        with ThreadPoolExecutor(threads) as pool:
            pieces = (
                piece
                for start in range(0, len(units), window)
                for piece in pool.map(totals, units[start : start + window])
            )
            by_key = merge_as_they_come(pieces)
    finally:
        for reader in readers:
            reader.close()
    return _plan_totals(by_key, partitionings, scenarios, top_keys)
