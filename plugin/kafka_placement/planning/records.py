"""One record of the input as the plan counts it: its key as Kafka's serializers send it and its bytes.

Both the Spark pipeline (:func:`kafka_placement.spark.pipeline.normalize`, in Spark SQL) and the Arrow
paths (here) follow the same rules, so every path gives the same figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kafka_placement.errors import InvalidArgumentError

if TYPE_CHECKING:
    import pyarrow as pa


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
    if pa.types.is_dictionary(t):  # e.g. a pandas categorical: its values are the keys
        key, t = key.cast(t.value_type), t.value_type
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
    size = value_sizes(table, value_column)
    record_bytes = pc.add(pc.binary_length(key_bin).cast(pa.int64()).fill_null(0), size)
    return pa.table({"key": key_bin, "bytes": record_bytes})


def value_sizes(table: pa.Table, value_column: str | None) -> pa.ChunkedArray:
    """Each record's value size in bytes (int64, never NULL): a binary/string value's byte length, a
    numeric column as a size (toward zero, as Spark's cast to bigint; NULL and negative count as 0), or 0
    for every record without a value column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if value_column is None:
        return pa.chunked_array([pa.array(np.zeros(len(table), np.int64))])
    check_column(value_column, "value", table.column_names)
    value = table.column(value_column)
    vt = value.type
    if pa.types.is_dictionary(vt):
        value, vt = value.cast(vt.value_type), vt.value_type
    if (
        pa.types.is_binary(vt)
        or pa.types.is_large_binary(vt)
        or pa.types.is_string(vt)
        or (pa.types.is_large_string(vt))
    ):
        return pc.binary_length(value).cast(pa.int64()).fill_null(0)
    if pa.types.is_integer(vt) or pa.types.is_floating(vt) or pa.types.is_decimal(vt):
        # Spark casts a numeric size to bigint (toward zero); negative and NULL count as 0
        whole = pc.trunc(value.cast(pa.float64())) if not pa.types.is_integer(vt) else value
        return pc.max_element_wise(whole.cast(pa.int64()).fill_null(0), 0)
    raise InvalidArgumentError(
        f"value column {value_column!r} has type {vt}; allowed: binary or string (its byte length) "
        "or a numeric size in bytes"
    )
