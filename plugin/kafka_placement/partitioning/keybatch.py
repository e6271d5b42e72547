"""A batch of keys as one contiguous byte buffer plus offsets (Arrow's binary layout).

Accepted inputs: a sequence of ``bytes``/``bytearray``/``memoryview``/``str`` (UTF-8)/``None`` (each key
as :func:`~kafka_placement.partitioning.validation.check_key` reads it, like every adapter), a numpy
object array of those, a numpy ``S`` array (element values, i.e. numpy's trailing-NUL stripping
applies), or a pyarrow ``binary``/``large_binary``/``fixed_size_binary``/``string``/``large_string``
array or chunked array (nulls = NULL keys). A pyarrow Table, RecordBatch or Scalar is refused by name.
A pyarrow array is used in place (its offsets and data buffers), nothing is copied per key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from kafka_placement.errors import KeyTypeError
from kafka_placement.partitioning.validation import check_key


@dataclass(frozen=True)
class KeyBatch:
    """``data``: all key bytes back to back; key i is ``data[offsets[i]:offsets[i+1]]``.

    ``nulls`` marks NULL keys (their length is 0), or is None when no key is NULL.
    """

    data: npt.NDArray[np.uint8]
    offsets: npt.NDArray[np.int64] | npt.NDArray[np.int32]
    nulls: npt.NDArray[np.bool_] | None

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    @cached_property
    def lengths(self) -> npt.NDArray[np.int64] | npt.NDArray[np.int32]:
        return np.subtract(self.offsets[1:], self.offsets[:-1])

    def key(self, i: int) -> bytes | None:
        if self.nulls is not None and self.nulls[i]:
            return None
        return self.data[int(self.offsets[i]) : int(self.offsets[i + 1])].tobytes()


def _bad_key(index: int, key: object) -> KeyTypeError:
    return KeyTypeError(
        f"key at index {index} must be bytes-like, str (UTF-8) or None, got {type(key).__name__}: "
        f"{key!r:.80}; serialize keys first"
    )


def _from_arrow(arr: Any) -> KeyBatch:
    import pyarrow as pa

    if isinstance(arr, pa.Table | pa.RecordBatch):
        raise KeyTypeError(
            f"keys must be one column, got a pyarrow {type(arr).__name__} with columns "
            f"{arr.column_names[:10]}; pass e.g. table.column('key')"
        )
    if isinstance(arr, pa.Scalar):
        raise KeyTypeError(
            f"keys must be a collection of keys, not a single pyarrow {type(arr).__name__}; wrap it in a list"
        )
    if not isinstance(arr, pa.Array | pa.ChunkedArray):
        raise KeyTypeError(f"pyarrow keys must be an Array or ChunkedArray, got {type(arr).__name__}")
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        # same layout as binary; the UTF-8 bytes are the keys, as for a Python str key
        arr = arr.cast(pa.binary() if pa.types.is_string(arr.type) else pa.large_binary())
    typ = arr.type
    n = len(arr)
    if pa.types.is_fixed_size_binary(typ):
        width = typ.byte_width
        buf = arr.buffers()[1]
        data = np.frombuffer(buf, dtype=np.uint8)[arr.offset * width : (arr.offset + n) * width]
        offsets = np.arange(0, (n + 1) * width, width, dtype=np.int64)
    elif pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
        odt = np.int32 if pa.types.is_binary(typ) else np.int64
        raw: Any = np.frombuffer(arr.buffers()[1], dtype=odt)[arr.offset : arr.offset + n + 1]
        base = int(raw[0]) if n else 0
        offsets = np.subtract(raw, base, dtype=odt) if base else raw  # int32 offsets stay int32
        end = int(raw[-1]) if n else 0
        dbuf = arr.buffers()[2]
        data = np.frombuffer(dbuf, dtype=np.uint8)[base:end] if dbuf is not None else np.zeros(0, np.uint8)
    else:
        raise KeyTypeError(
            f"pyarrow key array must be binary, large_binary, fixed_size_binary, string or large_string, "
            f"got {typ}"
        )
    nulls = None
    if arr.null_count:
        nulls = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if nulls.any():
            lengths = np.diff(offsets)
            if (lengths[nulls] != 0).any():  # Arrow allows non-empty null slots; NULL keys have no bytes
                keep = np.where(nulls, 0, lengths)
                starts = offsets[:-1][~nulls]
                pieces = [
                    data[int(s) : int(s) + int(ln)] for s, ln in zip(starts, lengths[~nulls], strict=True)
                ]
                data = np.concatenate(pieces) if pieces else np.zeros(0, np.uint8)
                offsets = np.concatenate(([0], np.cumsum(keep))).astype(np.int64)
    return KeyBatch(np.ascontiguousarray(data), offsets, nulls)


def _from_sequence(keys: Sequence[Any]) -> KeyBatch:
    n = len(keys)
    try:
        joined = b"".join(keys)
        lengths = np.fromiter(map(len, keys), dtype=np.int64, count=n)
        nulls = None
    except TypeError:
        nulls = np.zeros(n, dtype=bool)
        parts: list[bytes] = []
        lens = np.zeros(n, dtype=np.int64)
        for i, k in enumerate(keys):
            if k is None:
                nulls[i] = True
            elif isinstance(k, bytes | bytearray | memoryview | str):
                b = check_key(k)
                assert b is not None
                parts.append(b)
                lens[i] = len(b)
            else:
                raise _bad_key(i, k) from None
        joined = b"".join(parts)
        lengths = lens
        if not nulls.any():
            nulls = None
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.frombuffer(joined, dtype=np.uint8)
    if data.size != int(offsets[-1]):  # a memoryview with itemsize > 1 has len() != byte count
        return _from_sequence([check_key(k) for k in keys])
    return KeyBatch(data, offsets, nulls)


def to_key_batch(keys: object) -> KeyBatch:
    """Turn any accepted key collection into a :class:`KeyBatch` (see module docstring)."""
    if isinstance(keys, KeyBatch):
        return keys
    mod = type(keys).__module__
    if mod.startswith("pyarrow"):
        return _from_arrow(keys)
    if isinstance(keys, np.ndarray):
        if keys.ndim != 1:
            raise KeyTypeError(f"key array must be 1-dimensional, got shape {keys.shape}")
        if keys.dtype.kind == "S":  # numpy strips trailing NULs per element; follow the element values
            return _from_sequence(keys.tolist())
        if keys.dtype.kind == "O":
            return _from_sequence(keys.tolist())
        raise KeyTypeError(
            f"key array must have dtype object (bytes/None) or a fixed-width bytes dtype, got {keys.dtype}"
        )
    if isinstance(keys, bytes | bytearray | str):
        raise KeyTypeError(
            f"keys must be a collection of keys, not a single {type(keys).__name__}; wrap it in a list"
        )
    if isinstance(keys, Sequence):
        return _from_sequence(keys)
    try:
        return _from_sequence(list(keys))  # type: ignore[call-overload]
    except TypeError:
        raise KeyTypeError(f"keys must be a sequence of bytes, got {type(keys).__name__}") from None
