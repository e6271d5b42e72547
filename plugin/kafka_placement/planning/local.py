"""The single-process plan: pyarrow and numpy in one thread, no Spark — the same figures as the Spark job.

Records are normalised as the Spark pipeline does (:func:`record_table`), grouped by key with pyarrow,
and the distinct keys go through the same :class:`~kafka_placement.planning.key_loads.KeyLoadReducer`
and :func:`~kafka_placement.planning.result.plan_result`. It is the yardstick the Spark benchmark is
measured against, and a way to plan inputs that fit in memory without starting a JVM.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.planning.key_loads import KeyLoadReducer, merge_partials, partitionings_of
from kafka_placement.planning.result import PlanResult, plan_result
from kafka_placement.planning.scenarios import Scenario

if TYPE_CHECKING:
    import pyarrow as pa

_BATCH = 1 << 16  # distinct keys per reducer batch


def check_column(name: str, role: str, available: Sequence[str]) -> None:
    """:class:`InvalidArgumentError` naming a missing ``role`` column and the ones there are (both paths)."""
    if name not in available:
        raise InvalidArgumentError(
            f"{role} column {name!r} is not in the input; "
            f"available columns: {', '.join(available) or '(none)'}"
        )


def record_table(table: pa.Table, key_column: str = "key", value_column: str | None = None) -> pa.Table:
    """``(key binary, bytes int64)`` per record: the key as Kafka's serializers send it (strings as UTF-8,
    ints as big-endian two's complement of their width) and ``len(key) + value size``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def column(name: str, role: str) -> pa.ChunkedArray:
        check_column(name, role, table.column_names)
        return table.column(name)

    key = column(key_column, "key")
    t = key.type
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        key_bin = key.cast(pa.binary())
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        key_bin = key.cast(pa.string()).cast(pa.binary())
    elif pa.types.is_integer(t):
        width = t.bit_width // 8
        values = key.combine_chunks()
        raw = np.asarray(values.fill_null(0).to_numpy(zero_copy_only=False)).astype(f">i{width}")
        fixed = pa.FixedSizeBinaryArray.from_buffers(
            pa.binary(width), len(raw), [None, pa.py_buffer(raw.tobytes())]
        )
        key_bin = pc.if_else(values.is_null(), pa.scalar(None, pa.binary()), fixed.cast(pa.binary()))
    else:
        raise InvalidArgumentError(
            f"key column {key_column!r} has type {t}; allowed: binary, string (UTF-8 bytes), "
            "int8/16/32/64 (big-endian bytes, as Kafka's serializers)"
        )
    size = pa.chunked_array([pa.array(np.zeros(len(table), np.int64))])
    if value_column is not None:
        value = column(value_column, "value")
        vt = value.type
        if (
            pa.types.is_binary(vt)
            or pa.types.is_large_binary(vt)
            or pa.types.is_string(vt)
            or (pa.types.is_large_string(vt))
        ):
            size = pc.binary_length(value).cast(pa.int64()).fill_null(0)
        elif pa.types.is_integer(vt) or pa.types.is_floating(vt) or pa.types.is_decimal(vt):
            # Spark casts a numeric size to bigint (toward zero); negative and NULL count as 0
            whole = pc.trunc(value.cast(pa.float64())) if not pa.types.is_integer(vt) else value
            size = pc.max_element_wise(whole.cast(pa.int64()).fill_null(0), 0)
        else:
            raise InvalidArgumentError(
                f"value column {value_column!r} has type {vt}; allowed: binary or string (its byte length) "
                "or a numeric size in bytes"
            )
    record_bytes = pc.add(pc.binary_length(key_bin).cast(pa.int64()).fill_null(0), size)
    return pa.table({"key": key_bin, "bytes": record_bytes})


def plan_table(
    table: pa.Table,
    scenarios: Sequence[Scenario],
    *,
    key_column: str = "key",
    value_column: str | None = None,
    top_keys: int = 20,
) -> PlanResult:
    """Every scenario over an in-memory Arrow table, in this process (same result as the Spark plan)."""
    partitionings = partitionings_of(scenarios, top_keys)
    records = record_table(table, key_column, value_column)
    by_key = records.group_by("key", use_threads=False).aggregate([("bytes", "count"), ("bytes", "sum")])
    names = {"bytes_count": "records", "bytes_sum": "bytes"}
    by_key = by_key.rename_columns([names.get(c, c) for c in by_key.column_names])
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
) -> PlanResult:
    """:func:`plan_table` over a Parquet file or directory, read with one thread."""
    import pyarrow.parquet as pq

    columns = [key_column] + ([value_column] if value_column else [])
    table = pq.read_table(path, columns=columns, use_threads=False)
    return plan_table(table, scenarios, key_column=key_column, value_column=value_column, top_keys=top_keys)
