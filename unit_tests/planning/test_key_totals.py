"""Records and bytes per key, by dictionary index or record by record, against a direct count."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.planning.key_totals import key_totals, merge_key_totals

keys_strategy = st.lists(st.one_of(st.none(), st.binary(max_size=4)), max_size=60)


def direct(keys: list[bytes | None], sizes: list[int]) -> dict[bytes | None, tuple[int, int]]:
    records: Counter[bytes | None] = Counter()
    nbytes: Counter[bytes | None] = Counter()
    for k, s in zip(keys, sizes, strict=True):
        records[k] += 1
        nbytes[k] += len(k or b"") + s
    return {k: (records[k], nbytes[k]) for k in records}


def as_dict(table: pa.Table) -> dict[bytes | None, tuple[int, int]]:
    rows = table.to_pylist()
    assert len({r["key"] for r in rows}) == len(rows), "a key listed twice after the merge"
    return {r["key"]: (r["records"], r["bytes"]) for r in rows}


@settings(max_examples=150, deadline=None)
@given(keys=keys_strategy, cut=st.integers(0, 60), data=st.data())
def test_dictionary_chunks_and_plain_records_give_the_direct_totals(
    keys: list[bytes | None], cut: int, data: st.DataObject
) -> None:
    sizes = data.draw(st.lists(st.integers(0, 10_000), min_size=len(keys), max_size=len(keys)))
    cut = min(cut, len(keys))
    # two chunks, each with its own dictionary (as two Parquet row groups or pages give)
    chunks = [pa.array(part, pa.binary()).dictionary_encode() for part in (keys[:cut], keys[cut:])]
    encoded = pa.table({"k": pa.chunked_array(chunks), "v": pa.array(sizes, pa.int64())})
    plain = pa.table({"k": pa.array(keys, pa.binary()), "v": pa.array(sizes, pa.int64())})
    expected = direct(keys, sizes)
    assert as_dict(merge_key_totals([key_totals(encoded, "k", "v")])) == expected
    assert as_dict(merge_key_totals([key_totals(plain, "k", "v")])) == expected
    halves = [key_totals(plain.slice(0, cut), "k", "v"), key_totals(encoded.slice(cut), "k", "v")]
    assert as_dict(merge_key_totals(halves)) == expected


def test_a_dictionary_with_repeated_and_unused_values() -> None:
    # Parquet does not promise unique dictionary values; unused ones must not appear as keys
    dictionary = pa.array([b"a", b"b", b"a", b"unused"], pa.binary())
    column = pa.DictionaryArray.from_arrays(pa.array([0, 2, 1, None, 0], pa.int32()), dictionary)
    table = pa.table({"k": column, "v": pa.array([b"xx", b"", None, b"yyy", b"z"])})
    assert as_dict(merge_key_totals([key_totals(table, "k", "v")])) == {
        b"a": (3, 3 + 2 + 0 + 1),
        b"b": (1, 1 + 0),
        None: (1, 3),
    }


def test_string_keys_count_their_utf8_bytes_and_int_keys_their_serialized_width() -> None:
    strings = pa.table({"key": pa.array(["é", "é", "ab"]).dictionary_encode()})
    assert as_dict(merge_key_totals([key_totals(strings)])) == {"é".encode(): (2, 4), b"ab": (1, 2)}
    ints = pa.table({"key": pa.array([1, 1, None], pa.int32())})
    assert as_dict(merge_key_totals([key_totals(ints)])) == {b"\x00\x00\x00\x01": (2, 8), None: (1, 0)}


def test_byte_sums_beyond_float_precision_stay_exact() -> None:
    big = (1 << 53) + 1  # a float64 bincount would round this sum
    table = pa.table({"k": pa.array([b"k", b"k"]).dictionary_encode(), "v": pa.array([big, 2], pa.int64())})
    assert as_dict(merge_key_totals([key_totals(table, "k", "v")])) == {b"k": (2, big + 2 + 2)}


def test_a_missing_key_column_is_named() -> None:
    from kafka_placement.errors import InvalidArgumentError

    expected = "key column 'user' is not in the input; available columns: k$"
    with pytest.raises(InvalidArgumentError, match=expected):
        key_totals(pa.table({"k": [b"x"]}), "user")
