"""crc32/fnv1a against librdkafka itself (confluent_kafka.consistent / fnv1a helpers)."""

from __future__ import annotations

import confluent_kafka
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.partitioning import crc32, fnv1a
from kafka_placement.partitioning.librdkafka_hashes import fnv1a_raw


@given(st.binary(max_size=300), st.integers(1, 5000))
def test_crc32_matches_librdkafka_consistent(key: bytes, n: int) -> None:
    assert crc32(key) % n == confluent_kafka.consistent(key, n)


@given(st.binary(max_size=300), st.integers(1, 5000))
def test_fnv1a_matches_librdkafka(key: bytes, n: int) -> None:
    assert fnv1a(key) % n == confluent_kafka.fnv1a(key, n)


def test_fnv1a_is_abs_of_signed() -> None:
    # librdkafka rdfnv1a.c unit-test keys; "kafka" has the high bit set in plain FNV-1a
    raw = fnv1a_raw(b"kafka")
    signed = raw - 2**32 if raw & 0x80000000 else raw
    assert fnv1a(b"kafka") == abs(signed)
    for n in (7, 100, 2**31 - 1):
        assert fnv1a(b"kafka") % n == confluent_kafka.fnv1a(b"kafka", n)
