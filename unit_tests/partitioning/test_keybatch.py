"""Key batch layouts: lists, numpy, pyarrow (sliced, nulls, chunked, large/fixed binary), and refusals."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from kafka_placement.errors import KeyTypeError
from kafka_placement.partitioning import to_key_batch

KEYS = [b"a", None, b"", b"hello world", bytes(range(256)), None, b"xyz"]


def _as_list(batch: object) -> list[bytes | None]:
    b = to_key_batch(batch)
    return [b.key(i) for i in range(len(b))]


def test_list_roundtrip() -> None:
    assert _as_list(KEYS) == KEYS


def test_bytes_like_accepted() -> None:
    assert _as_list([bytearray(b"ab"), memoryview(b"cd")]) == [b"ab", b"cd"]


def test_numpy_object_and_fixed_width() -> None:
    assert _as_list(np.array(KEYS, dtype=object)) == KEYS
    arr = np.array([b"ab", b"abc"])  # S3: numpy's element b"ab" (NUL stripped) is the key
    assert _as_list(arr) == [b"ab", b"abc"]


@pytest.mark.parametrize("typ", [pa.binary(), pa.large_binary()])
def test_arrow_binary_sliced_with_nulls(typ: pa.DataType) -> None:
    arr = pa.array(KEYS, type=typ)
    assert _as_list(arr) == KEYS
    assert _as_list(arr.slice(2, 4)) == KEYS[2:6]


def test_arrow_chunked_and_fixed_size() -> None:
    chunked = pa.chunked_array([pa.array(KEYS[:3], type=pa.binary()), pa.array(KEYS[3:], type=pa.binary())])
    assert _as_list(chunked) == KEYS
    fixed = pa.array([b"abcd", None, b"efgh"], type=pa.binary(4))
    assert _as_list(fixed) == [b"abcd", None, b"efgh"]
    assert _as_list(fixed.slice(1)) == [None, b"efgh"]


def test_str_keys_are_their_utf8_bytes_and_other_types_are_refused() -> None:
    assert _as_list(to_key_batch([b"a", "b\u00e9", None])) == [b"a", "b\u00e9".encode(), None]
    with pytest.raises(KeyTypeError, match=r"index 1 must be bytes-like, str \(UTF-8\) or None, got float"):
        to_key_batch([b"a", 1.5])
    with pytest.raises(KeyTypeError, match="got int"):
        to_key_batch([1])
    assert _as_list(to_key_batch(pa.array(["a", None]))) == [b"a", None]  # string arrays: UTF-8 bytes
    with pytest.raises(KeyTypeError, match="binary"):
        to_key_batch(pa.array([1]))
    with pytest.raises(KeyTypeError, match=r"one column, got a pyarrow Table with columns \['k'\]"):
        to_key_batch(pa.table({"k": [b"a"]}))
    with pytest.raises(KeyTypeError, match="one column, got a pyarrow RecordBatch"):
        to_key_batch(pa.RecordBatch.from_pydict({"k": [b"a"]}))
    with pytest.raises(KeyTypeError, match="not a single pyarrow BinaryScalar"):
        to_key_batch(pa.scalar(b"a"))
    with pytest.raises(KeyTypeError, match="single bytes"):
        to_key_batch(b"abc")
    with pytest.raises(KeyTypeError, match="dtype"):
        to_key_batch(np.arange(3))


def test_arrow_null_slot_with_bytes_is_a_null_key() -> None:
    # Arrow allows a null slot to span bytes; a NULL key has none
    offsets = pa.py_buffer(np.array([0, 2, 5, 7], dtype=np.int32).tobytes())
    data = pa.py_buffer(b"abXYZcd")
    validity = pa.py_buffer(bytes([0b101]))
    arr = pa.Array.from_buffers(pa.binary(), 3, [validity, offsets, data], null_count=1)
    assert arr.to_pylist() == [b"ab", None, b"cd"]
    assert _as_list(arr) == [b"ab", None, b"cd"]
