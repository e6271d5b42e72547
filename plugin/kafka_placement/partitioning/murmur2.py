"""Kafka's ``Utils.murmur2`` (MurmurHash2, 32-bit), bit-exact, scalar.

Semantics: ``org.apache.kafka.common.utils.Utils.murmur2`` — seed ``0x9747b28c``, m ``0x5bd1e995``,
r 24, little-endian 4-byte blocks, a 1–3 byte tail, final ``h ^= h>>>13; h *= m; h ^= h>>>15``.
Java returns a signed 32-bit int; so does :func:`murmur2`. ``toPositive(h) = h & 0x7fffffff``.
librdkafka's ``rd_murmur2`` is the same function (its ``murmur2`` partitioners hash a NULL key as ``""``).
:func:`murmur2` and :func:`murmur2_unsigned` are C builtins when the accelerator is there (:mod:`.onekey`);
the definitions below stay the reference they hand every unusual call to (:func:`.onekey.reference`).
"""

from __future__ import annotations

import struct

from kafka_placement.errors import KeyTypeError
from kafka_placement.java import POSITIVE_MASK, to_int32
from kafka_placement.partitioning.onekey import one_key

SEED = 0x9747B28C
M = 0x5BD1E995
R = 24
MASK32 = 0xFFFFFFFF

_BLOCKS = [struct.Struct(f"<{n}I") for n in range(64)]


def _key_bytes(data: object) -> bytes:
    """Bytes-like and str (UTF-8) as every adapter reads them; None and others: KeyTypeError (Java's
    ``Utils.murmur2(null)`` throws too)."""
    from kafka_placement.partitioning.validation import check_key

    if data is None:
        raise KeyTypeError("murmur2 needs the key's bytes, got None (a keyless record is not hashed)")
    key = check_key(data)
    assert key is not None
    return key


@one_key
def murmur2_unsigned(data: bytes) -> int:
    """Murmur2 of ``data`` as an unsigned 32-bit value (0..2**32-1)."""
    if type(data) is not bytes:
        data = _key_bytes(data)
    length = len(data)
    h = (SEED ^ length) & MASK32
    nblocks = length >> 2
    if nblocks:
        if nblocks < 64:
            blocks: tuple[int, ...] = _BLOCKS[nblocks].unpack_from(data, 0)
        else:
            blocks = struct.unpack_from(f"<{nblocks}I", data, 0)
        m = M
        mask = MASK32
        for k in blocks:
            k = (k * m) & mask
            h = ((h * m) ^ ((k ^ (k >> 24)) * m)) & mask
    tail = length & 3
    if tail:
        base = length - tail
        if tail == 3:
            h ^= data[base + 2] << 16
        if tail >= 2:
            h ^= data[base + 1] << 8
        h ^= data[base]
        h = (h * M) & MASK32
    h ^= h >> 13
    h = (h * M) & MASK32
    h ^= h >> 15
    return h


@one_key
def murmur2(data: bytes) -> int:
    """Kafka ``Utils.murmur2(data)``: a signed 32-bit int, exactly as Java returns it."""
    return to_int32(murmur2_unsigned(data))


def to_positive(number: int) -> int:
    """Kafka ``Utils.toPositive``: ``number & 0x7fffffff`` (not ``abs``)."""
    return number & POSITIVE_MASK
