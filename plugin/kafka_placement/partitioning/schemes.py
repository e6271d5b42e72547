"""Keyed partitioning schemes by name: librdkafka's partitioners, exactly, plus ``jump``.

=================  ==========================================  =========================================
name               keyed record                                NULL key (None) / empty key (b"")
=================  ==========================================  =========================================
murmur2            ``(murmur2(key) & 0x7fffffff) % n``         NULL hashed like b""; b"" hashed
murmur2_random     same (= Java DefaultPartitioner keyed)      NULL → keyless (random); b"" hashed
consistent         ``crc32(key) % n``                          NULL and b"" → crc32(b"") = 0 → 0
consistent_random  ``crc32(key) % n``                          NULL *and* b"" → keyless (random)
fnv1a              ``abs(int32 fnv1a(key)) % n`` (Sarama)      NULL hashed like b""
fnv1a_random       same                                        NULL → keyless (random); b"" hashed
random             every record random                         random
jump               jump consistent hash of unsigned murmur2    NULL → keyless (random)
=================  ==========================================  =========================================

Source: librdkafka ``src/rdkafka_msg.c`` (``rd_kafka_msg_partitioner_*``): ``consistent_random`` tests
``keylen == 0``, the ``*_random`` murmur2/fnv1a variants test ``!key``. Java's producer (``murmur2_random``)
hashes ``toPositive(Utils.murmur2(keyBytes)) % numPartitions`` over all partitions and treats a null key as
keyless. In librdkafka a keyless record goes to the sticky partition (``sticky.partitioning.linger.ms``);
in a batch (:func:`partition_keys`) "keyless" means uniformly random.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kafka_placement.errors import UnknownSchemeError
from kafka_placement.partitioning.hashes import crc32, fnv1a
from kafka_placement.partitioning.jump import jump_hash, jump_hash_array
from kafka_placement.partitioning.keybatch import KeyBatch
from kafka_placement.partitioning.murmur2 import murmur2_unsigned
from kafka_placement.partitioning.vectorized import crc32_batch, fnv1a_batch, murmur2_batch

I64 = npt.NDArray[np.int64]


def _murmur2_index(key: bytes, n: int) -> int:
    return (murmur2_unsigned(key) & 0x7FFFFFFF) % n


def _crc_index(key: bytes, n: int) -> int:
    return crc32(key) % n


def _fnv_index(key: bytes, n: int) -> int:
    return fnv1a(key) % n


def _jump_index(key: bytes, n: int) -> int:
    return jump_hash(murmur2_unsigned(key), n)


def _murmur2_batch_index(batch: KeyBatch, n: int) -> I64:
    h = murmur2_batch(batch).view(np.uint32)
    h &= np.uint32(0x7FFFFFFF)
    out = np.empty(h.size, dtype=np.int64)
    np.remainder(h, np.uint32(n), out=out, casting="unsafe")
    return out


def _crc_batch_index(batch: KeyBatch, n: int) -> I64:
    return (crc32_batch(batch).astype(np.int64)) % n


def _fnv_batch_index(batch: KeyBatch, n: int) -> I64:
    return (fnv1a_batch(batch).astype(np.int64)) % n


def _jump_batch_index(batch: KeyBatch, n: int) -> I64:
    return jump_hash_array(murmur2_batch(batch).view(np.uint32).astype(np.uint64), n)


@dataclass(frozen=True)
class Scheme:
    """One named scheme.

    ``index(key, n)``/``batch_index(batch, n)`` compute the keyed partition index; ``null_is_keyless`` /
    ``empty_is_keyless`` say when a record is instead keyless (random / the keyless strategy);
    ``always_random`` ignores keys entirely.
    """

    name: str
    index: Callable[[bytes, int], int]
    batch_index: Callable[[KeyBatch, int], I64]
    null_is_keyless: bool
    empty_is_keyless: bool = False
    always_random: bool = False
    source: str = ""

    def is_keyless(self, key: bytes | None) -> bool:
        """True if a record with this key is placed by the keyless strategy under this scheme."""
        if self.always_random:
            return True
        if key is None:
            return self.null_is_keyless
        return self.empty_is_keyless and len(key) == 0

    def keyed_index(self, key: bytes | None, n: int) -> int:
        """Hash index for a key this scheme hashes (NULL hashed like b"")."""
        return self.index(b"" if key is None else key, n)


def _random_index(key: bytes, n: int) -> int:  # pragma: no cover - never called: always_random
    raise AssertionError("random scheme has no keyed index")


def _random_batch(batch: KeyBatch, n: int) -> I64:  # pragma: no cover - never called: always_random
    raise AssertionError("random scheme has no keyed index")


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        Scheme(
            "murmur2",
            _murmur2_index,
            _murmur2_batch_index,
            null_is_keyless=False,
            source="librdkafka murmur2 (NULL hashed like empty)",
        ),
        Scheme(
            "murmur2_random",
            _murmur2_index,
            _murmur2_batch_index,
            null_is_keyless=True,
            source="librdkafka murmur2_random = Java DefaultPartitioner/BuiltInPartitioner keyed",
        ),
        Scheme(
            "consistent",
            _crc_index,
            _crc_batch_index,
            null_is_keyless=False,
            source="librdkafka consistent (CRC32)",
        ),
        Scheme(
            "consistent_random",
            _crc_index,
            _crc_batch_index,
            null_is_keyless=True,
            empty_is_keyless=True,
            source="librdkafka consistent_random (librdkafka's default)",
        ),
        Scheme(
            "fnv1a",
            _fnv_index,
            _fnv_batch_index,
            null_is_keyless=False,
            source="librdkafka fnv1a (Sarama NewHashPartitioner)",
        ),
        Scheme(
            "fnv1a_random",
            _fnv_index,
            _fnv_batch_index,
            null_is_keyless=True,
            source="librdkafka fnv1a_random",
        ),
        Scheme(
            "random",
            _random_index,
            _random_batch,
            null_is_keyless=True,
            always_random=True,
            source="librdkafka random",
        ),
        Scheme(
            "jump",
            _jump_index,
            _jump_batch_index,
            null_is_keyless=True,
            source="jump consistent hash (Lamping & Veach 2014) over unsigned murmur2",
        ),
    )
}


def get_scheme(name: object) -> Scheme:
    """The scheme called ``name``; :class:`UnknownSchemeError` lists the known names otherwise."""
    if isinstance(name, Scheme):
        return name
    scheme = SCHEMES.get(name) if isinstance(name, str) else None
    if scheme is None:
        raise UnknownSchemeError(f"unknown partitioning scheme {name!r}; known schemes: {', '.join(SCHEMES)}")
    return scheme
