"""Records and bytes per distinct key of a piece of the input, and such pieces merged.

The first step of a plan is a group-by on the key. Parquet readers can hand a string or binary column
over dictionary-encoded (each row group's distinct values once, and an index per record): then the
records and bytes of each distinct value are two ``bincount``s over the indices, and only the distinct
values — not every record — go through a hash group-by when pieces are merged. Other key types (integers)
take the record-by-record path of :func:`~kafka_placement.planning.records.record_table`.

A totals table has columns ``key`` (binary; NULL is the keyless group), ``records`` and ``bytes``
(int64). :func:`key_totals` may list a key more than once (one row per dictionary chunk);
:func:`merge_key_totals` lists each key once — what :class:`~kafka_placement.planning.key_loads.
KeyLoadReducer` expects.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from kafka_placement.planning.records import check_column, record_table, value_sizes

if TYPE_CHECKING:
    import pyarrow as pa

#: Sums a float64 ``bincount`` keeps exact (integers below 2^53).
_EXACT_FLOAT_SUM = 1 << 53
#: Totals rows held unmerged before they are merged (memory follows the distinct keys, not the pieces).
MERGE_ROWS = 1 << 22


def totals_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([("key", pa.binary()), ("records", pa.int64()), ("bytes", pa.int64())])


def dictionary_keys(key_type: pa.DataType) -> bool:
    """Whether a key column of this type can be read dictionary-encoded and totalled by index."""
    import pyarrow as pa

    if pa.types.is_dictionary(key_type):
        key_type = key_type.value_type
    return bool(
        pa.types.is_string(key_type)
        or pa.types.is_large_string(key_type)
        or pa.types.is_binary(key_type)
        or pa.types.is_large_binary(key_type)
    )


def key_totals(table: pa.Table, key_column: str = "key", value_column: str | None = None) -> pa.Table:
    """Records and bytes (``len(key) + value size``) per key of ``table`` (see the module docstring)."""
    import pyarrow as pa

    check_column(key_column, "key", table.column_names)
    key = table.column(key_column)
    if not (pa.types.is_dictionary(key.type) and dictionary_keys(key.type)):
        return merge_key_totals([_record_totals(table, key_column, value_column)])
    sizes = value_sizes(table, value_column)
    pieces: list[pa.Table] = []
    offset = 0
    for chunk in key.chunks:
        chunk_sizes = sizes.slice(offset, len(chunk))
        offset += len(chunk)
        pieces.append(_dictionary_totals(chunk, chunk_sizes))
    return pa.concat_tables(pieces) if pieces else totals_schema().empty_table()


def _record_totals(table: pa.Table, key_column: str, value_column: str | None) -> pa.Table:
    import pyarrow as pa

    records = record_table(table, key_column, value_column)
    ones = pa.chunked_array([pa.array(np.ones(len(records), np.int64))])
    return pa.table({"key": records.column("key"), "records": ones, "bytes": records.column("bytes")})


def _dictionary_totals(chunk: pa.DictionaryArray, sizes: pa.ChunkedArray) -> pa.Table:
    """One dictionary chunk: a row per used dictionary value, and one for its NULL keys if any."""
    import pyarrow as pa
    import pyarrow.compute as pc

    dictionary = chunk.dictionary.cast(pa.binary())
    indices = chunk.indices
    size = np.asarray(sizes.to_numpy(), dtype=np.int64)
    valid = indices.is_valid().to_numpy(zero_copy_only=False)
    index = np.asarray(indices.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.intp)
    key_len = np.asarray(pc.binary_length(dictionary).cast(pa.int64()).fill_null(0).to_numpy(), np.int64)
    if not valid.all():
        null_records, null_bytes = int((~valid).sum()), int(size[~valid].sum())
        index, size = index[valid], size[valid]
    else:
        null_records = null_bytes = 0
    record_bytes = key_len[index] + size
    records = np.bincount(index, minlength=len(dictionary)).astype(np.int64)
    if int(record_bytes.sum()) < _EXACT_FLOAT_SUM:
        nbytes = np.rint(np.bincount(index, weights=record_bytes, minlength=len(dictionary))).astype(np.int64)
    else:  # float sums would round: add exactly (slower)
        nbytes = np.zeros(len(dictionary), np.int64)
        np.add.at(nbytes, index, record_bytes)
    used = np.flatnonzero(records)
    keys = dictionary.take(pa.array(used))
    records, nbytes = records[used], nbytes[used]
    if null_records:
        keys = pa.concat_arrays([keys, pa.array([None], pa.binary())])
        records = np.append(records, null_records)
        nbytes = np.append(nbytes, null_bytes)
    return pa.table({"key": keys, "records": records, "bytes": nbytes}, schema=totals_schema())


def merge_as_they_come(pieces: Iterable[pa.Table]) -> pa.Table:
    """:func:`merge_key_totals` of ``pieces`` that arrive one by one (row groups as they are read), merging
    whenever more than :data:`MERGE_ROWS` rows are held."""
    held: list[pa.Table] = []
    rows = 0
    for piece in pieces:
        held.append(piece)
        rows += piece.num_rows
        if rows > MERGE_ROWS:
            held = [merge_key_totals(held)]
            rows = held[0].num_rows
    return merge_key_totals(held)


def merge_key_totals(pieces: Iterable[pa.Table | pa.RecordBatch]) -> pa.Table:
    """Totals tables (keys possibly repeated within and across them) → each key once, summed."""
    import pyarrow as pa

    tables = [p if isinstance(p, pa.Table) else pa.Table.from_batches([p]) for p in pieces]
    if not tables:
        return totals_schema().empty_table()
    merged = (
        pa.concat_tables(tables)
        .group_by("key", use_threads=False)
        .aggregate([("records", "sum"), ("bytes", "sum")])
    )
    return pa.table(
        {
            "key": merged.column("key"),
            "records": merged.column("records_sum"),
            "bytes": merged.column("bytes_sum"),
        },
        schema=totals_schema(),
    )
