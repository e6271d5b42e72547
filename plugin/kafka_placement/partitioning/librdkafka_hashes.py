"""librdkafka's other key hashes, scalar: CRC-32 (``consistent``) and FNV-1a (``fnv1a``).

- ``rd_crc32`` is the standard reflected CRC-32 (polynomial 0xEDB88320), i.e. :func:`zlib.crc32`;
  librdkafka's ``consistent`` partitioner is ``rd_crc32(key) % partition_cnt`` (unsigned).
- ``rd_fnv1a`` (librdkafka ``src/rdfnv1a.c``) runs FNV-1a-32 (offset 0x811C9DC5, prime 0x01000193) in a
  *signed* int32 and then takes the absolute value "to match the Sarama NewHashPartitioner", returning it
  as uint32 (so INT32_MIN stays 0x80000000). The partition is that value ``% partition_cnt``.

:func:`crc32` and :func:`fnv1a` are C builtins when the accelerator is there (:mod:`.onekey`); the
definitions below stay the reference they hand every unusual call to (:func:`.onekey.reference`).
"""

from __future__ import annotations

import zlib

from kafka_placement.partitioning.onekey import one_key

FNV_OFFSET = 0x811C9DC5
FNV_PRIME = 0x01000193
MASK32 = 0xFFFFFFFF


@one_key
def crc32(data: bytes) -> int:
    """Unsigned CRC-32 of ``data`` (librdkafka ``rd_crc32``)."""
    return zlib.crc32(data) & MASK32


def fnv1a_raw(data: bytes) -> int:
    """Plain FNV-1a-32 of ``data`` as unsigned 32-bit."""
    h = FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & MASK32
    return h


@one_key
def fnv1a(data: bytes) -> int:
    """librdkafka ``rd_fnv1a``: ``abs(int32(fnv1a_32(data)))`` as uint32 (Sarama-compatible)."""
    h = fnv1a_raw(data)
    if h & 0x80000000:
        h = (0x100000000 - h) & MASK32  # -h in two's complement; INT32_MIN maps to itself
    return h
