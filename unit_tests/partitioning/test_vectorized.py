"""Vectorized == scalar for every key, any length/bytes/layout; librdkafka helpers as oracle on 100k keys."""

from __future__ import annotations

import confluent_kafka
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.partitioning import crc32, fnv1a, murmur2, to_key_batch
from kafka_placement.partitioning.vectorized import crc32_batch, fnv1a_batch, murmur2_batch

keys_strategy = st.lists(st.binary(max_size=300), max_size=60)


def _random_keys(rng: np.random.Generator, count: int, max_len: int) -> list[bytes]:
    lengths = rng.integers(0, max_len + 1, size=count)
    blob = rng.bytes(int(lengths.sum()))
    out, pos = [], 0
    for ln in lengths.tolist():
        out.append(blob[pos : pos + ln])
        pos += ln
    return out


@given(keys_strategy)
def test_murmur2_batch_equals_scalar(keys: list[bytes]) -> None:
    got = murmur2_batch(to_key_batch(keys))
    assert got.tolist() == [murmur2(k) for k in keys]


@given(st.integers(0, 70), st.integers(1, 400))
def test_murmur2_fixed_length_path(length: int, count: int) -> None:
    rng = np.random.default_rng(length * 1000 + count)
    keys = [rng.bytes(length) for _ in range(count)]
    assert murmur2_batch(to_key_batch(keys)).tolist() == [murmur2(k) for k in keys]


@given(keys_strategy, st.integers(0, 5), st.integers(0, 5))
def test_arrow_slices_equal_scalar(keys: list[bytes], lo: int, cut: int) -> None:
    arr = pa.array(keys, type=pa.binary())
    sliced = arr.slice(min(lo, len(keys)), max(len(keys) - lo - cut, 0))
    expected = [murmur2(k) for k in sliced.to_pylist()]
    assert murmur2_batch(to_key_batch(sliced)).tolist() == expected


@given(keys_strategy)
def test_fnv1a_and_crc32_batch_equal_scalar(keys: list[bytes]) -> None:
    batch = to_key_batch(keys)
    assert fnv1a_batch(batch).tolist() == [fnv1a(k) for k in keys]
    assert crc32_batch(batch).tolist() == [crc32(k) for k in keys]


def test_keys_ending_exactly_at_buffer_end() -> None:
    # tails and blocks of the last key touch the final byte of the data buffer
    for tail_len in range(0, 9):
        keys = [b"0123456789abcdef", b"q" * 70, bytes(range(tail_len))]
        assert murmur2_batch(to_key_batch(keys)).tolist() == [murmur2(k) for k in keys]


def test_very_long_keys() -> None:
    rng = np.random.default_rng(7)
    # 256..1023 blocks: vectorized with a 16-bit sort key; a few huge keys: the scalar fallback,
    # and > 65535 blocks forces the 64-bit sort key
    keys = [rng.bytes(int(n)) for n in rng.integers(1024, 4096, size=40)]
    keys += [rng.bytes(n) for n in (5000, 300_000, 3, 0, 17)]
    assert murmur2_batch(to_key_batch(keys)).tolist() == [murmur2(k) for k in keys]


def test_against_librdkafka_helpers_100k_keys() -> None:
    rng = np.random.default_rng(20261121)
    keys = _random_keys(rng, 100_000, 200)
    batch = to_key_batch(pa.array(keys, type=pa.binary()))
    n = 1009
    mm = (murmur2_batch(batch).view(np.uint32) & np.uint32(0x7FFFFFFF)) % n
    crc = crc32_batch(batch) % n
    fnv = fnv1a_batch(batch) % n
    assert mm.tolist() == [confluent_kafka.murmur2(k, n) for k in keys]
    assert crc.tolist() == [confluent_kafka.consistent(k, n) for k in keys]
    assert fnv.tolist() == [confluent_kafka.fnv1a(k, n) for k in keys]


def test_multi_pass_equals_scalar(monkeypatch: pytest.MonkeyPatch) -> None:
    import kafka_placement.partitioning.vectorized as vectorized

    monkeypatch.setattr(vectorized, "_KEYS_PER_PASS", 97)  # many passes, the last one ragged
    rng = np.random.default_rng(13)
    keys = _random_keys(rng, 2000, 150)
    assert murmur2_batch(to_key_batch(keys)).tolist() == [murmur2(k) for k in keys]
