"""Scheme semantics per librdkafka: NULL vs empty keys, and agreement with confluent_kafka helpers."""

from __future__ import annotations

import confluent_kafka
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.errors import UnknownSchemeError
from kafka_placement.partitioning import SCHEMES, get_scheme, partition_key, partition_keys

ORACLE = {
    "murmur2": confluent_kafka.murmur2,
    "murmur2_random": confluent_kafka.murmur2,
    "consistent": confluent_kafka.consistent,
    "consistent_random": confluent_kafka.consistent,
    "fnv1a": confluent_kafka.fnv1a,
    "fnv1a_random": confluent_kafka.fnv1a,
}


@pytest.mark.parametrize("name", sorted(ORACLE))
@given(key=st.binary(min_size=1, max_size=100), n=st.integers(1, 3000))
def test_keyed_matches_librdkafka(name: str, key: bytes, n: int) -> None:
    assert partition_key(key, n, name) == ORACLE[name](key, n)


def test_null_and_empty_keys_follow_librdkafka() -> None:
    n = 97
    # murmur2: NULL hashed like "" ; consistent: crc32("") = 0 ; fnv1a: NULL hashed like ""
    assert partition_key(None, n, "murmur2") == confluent_kafka.murmur2(b"", n)
    assert partition_key(None, n, "consistent") == 0 == confluent_kafka.consistent(b"", n)
    assert partition_key(None, n, "fnv1a") == confluent_kafka.fnv1a(b"", n)
    # *_random: NULL keyless; b"" hashed, except consistent_random where keylen == 0 is keyless
    assert get_scheme("murmur2_random").is_keyless(None)
    assert not get_scheme("murmur2_random").is_keyless(b"")
    assert partition_key(b"", n, "murmur2_random") == confluent_kafka.murmur2(b"", n)
    assert partition_key(b"", n, "fnv1a_random") == confluent_kafka.fnv1a(b"", n)
    assert get_scheme("consistent_random").is_keyless(b"")
    assert get_scheme("consistent_random").is_keyless(None)
    assert not get_scheme("consistent").is_keyless(b"")
    assert get_scheme("random").is_keyless(b"key")


def test_keyless_batch_records_are_random_and_in_range() -> None:
    keys = [None] * 4000 + [b""] * 4000
    got = partition_keys(keys, 8, "consistent_random", rng=np.random.default_rng(1))
    assert set(got.tolist()) == set(range(8))
    counts = np.bincount(got, minlength=8)
    assert counts.min() > 800  # 1000 expected each
    got = partition_keys(keys, 8, "murmur2_random", rng=np.random.default_rng(2))
    assert len(set(got[:4000].tolist())) == 8  # NULLs random
    assert set(got[4000:].tolist()) == {partition_key(b"", 8, "murmur2")}  # empty keys hashed


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_batch_equals_scalar_for_hashed_keys(name: str) -> None:
    if name == "random":
        got = partition_keys([b"a", None], 5, name, rng=np.random.default_rng(0))
        assert all(0 <= p < 5 for p in got.tolist())
        return
    rng = np.random.default_rng(3)
    keys = [rng.bytes(int(n)) for n in rng.integers(1, 90, size=500)]
    assert partition_keys(keys, 31, name).tolist() == [partition_key(k, 31, name) for k in keys]


def test_unknown_scheme_lists_known_ones() -> None:
    with pytest.raises(
        UnknownSchemeError, match=r"unknown partitioning scheme 'murmur3'; known schemes: murmur2"
    ):
        partition_keys([b"a"], 3, "murmur3")
    with pytest.raises(UnknownSchemeError):
        partition_key(b"a", 3, "")
