"""Jump consistent hash: published vectors (go-jump / the paper's reference), monotonicity, vector==scalar."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.partitioning import jump_hash, jump_hash_array, murmur2_unsigned, partition_key


@pytest.mark.parametrize(
    ("key", "buckets", "expected"),
    [(1, 1, 0), (42, 57, 43), (0xDEAD10CC, 1, 0), (0xDEAD10CC, 666, 361), (256, 1024, 520)],
)
def test_reference_vectors(key: int, buckets: int, expected: int) -> None:
    assert jump_hash(key, buckets) == expected
    assert jump_hash_array(np.array([key], dtype=np.uint64), buckets).tolist() == [expected]


@given(st.integers(0, 2**64 - 1), st.integers(1, 5000))
def test_growing_moves_only_to_the_new_bucket(key: int, n: int) -> None:
    before, after = jump_hash(key, n), jump_hash(key, n + 1)
    assert 0 <= before < n
    assert after in (before, n)


@given(st.lists(st.integers(0, 2**64 - 1), max_size=50), st.integers(1, 10_000))
def test_vector_equals_scalar(keys: list[int], n: int) -> None:
    got = jump_hash_array(np.array(keys, dtype=np.uint64), n).tolist()
    assert got == [jump_hash(k, n) for k in keys]


def test_jump_scheme_uses_unsigned_murmur2() -> None:
    assert partition_key(b"user-42", 16, "jump") == jump_hash(murmur2_unsigned(b"user-42"), 16)
