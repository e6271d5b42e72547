"""murmur2: Java's published test vectors for Utils.murmur2 (Kafka's ``UtilsTest.testMurmur2``, and the
Java results in librdkafka's ``unittest_murmur2``) and kafka-python's pure-Python murmur2 as oracle."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from kafka_placement.partitioning import murmur2, murmur2_unsigned, to_positive

REFERENCE_SIGNED = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
]
REFERENCE_UNSIGNED = [(b"kafka", 0xD067CF64), (b"", 0x106E08D9)]


@pytest.mark.parametrize(("data", "expected"), REFERENCE_SIGNED)
def test_reference_vectors_signed(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


@pytest.mark.parametrize(("data", "expected"), REFERENCE_UNSIGNED)
def test_reference_vectors_unsigned(data: bytes, expected: int) -> None:
    assert murmur2_unsigned(data) == expected
    assert murmur2(data) & 0xFFFFFFFF == expected


def test_to_positive_is_mask_not_abs() -> None:
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(-(2**31)) == 0
    assert to_positive(5) == 5


@given(st.binary(max_size=600))
def test_equals_kafka_python(data: bytes) -> None:
    assert murmur2_unsigned(data) == kafka_python_murmur2(data)
    signed = murmur2(data)
    assert -(2**31) <= signed < 2**31


def test_long_key_beyond_struct_cache() -> None:
    data = bytes(range(256)) * 3  # 192 blocks: the uncached struct path
    assert murmur2_unsigned(data) == kafka_python_murmur2(data)
