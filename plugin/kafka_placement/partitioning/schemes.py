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
from kafka_placement.java import POSITIVE_MASK
from kafka_placement.partitioning.jump import jump_hash, jump_hash_array
from kafka_placement.partitioning.keybatch import KeyBatch
from kafka_placement.partitioning.librdkafka_hashes import crc32, fnv1a
from kafka_placement.partitioning.native import HashKind, hash_batch, hash_remainder, murmur2_u32

I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]


def _murmur2_index(key: bytes, n: int) -> int:
    return (murmur2_u32(key) & POSITIVE_MASK) % n


def _crc_index(key: bytes, n: int) -> int:
    return crc32(key) % n


def _fnv_index(key: bytes, n: int) -> int:
    return fnv1a(key) % n


def _jump_index(key: bytes, n: int) -> int:
    return jump_hash(murmur2_u32(key), n)


def _murmur2_from_hash(h: U32, n: int) -> I64:
    """``toPositive(murmur2) % n`` from murmur2 hashes (uint32 bits of Java's int)."""
    return hash_remainder(h, POSITIVE_MASK, n)


def _unsigned_mod(h: U32, n: int) -> I64:
    """``h % n`` for unsigned 32-bit hashes (crc32, librdkafka's abs'd fnv1a), as int64."""
    return hash_remainder(h, 0xFFFFFFFF, n)


def _jump_from_hash(h: U32, n: int) -> I64:
    return jump_hash_array(h.astype(np.uint64), n)


@dataclass(frozen=True)
class Scheme:
    """One named scheme.

    ``index(key, n)`` computes one key's partition index; ``hash_kind`` names the batch hash
    (:func:`~kafka_placement.partitioning.native.hash_batch`, C or numpy) and ``from_hash(hashes, n)`` turns
    those hashes into partition indices; ``null_is_keyless`` / ``empty_is_keyless`` say when a record is
    instead keyless (random / the keyless strategy); ``always_random`` ignores keys entirely.
    ``index_mask``/``jump`` say the same as ``from_hash`` in numbers, for the C record router: the index
    is ``(hash & index_mask) % n``, or the jump bucket of the unsigned hash.
    """

    name: str
    index: Callable[[bytes, int], int]
    hash_kind: HashKind
    from_hash: Callable[[U32, int], I64]
    null_is_keyless: bool
    empty_is_keyless: bool = False
    always_random: bool = False
    source: str = ""
    index_mask: int = 0xFFFFFFFF
    jump: bool = False

    def is_keyless(self, key: bytes | None) -> bool:
        """True if a record with this key is placed by the keyless strategy under this scheme."""
        if self.always_random:
            return True
        if key is None:
            return self.null_is_keyless
        return self.empty_is_keyless and len(key) == 0

    def batch_index(self, batch: KeyBatch, n: int) -> I64:
        """Keyed partition index of every key of ``batch`` (NULL hashed like b"")."""
        return self.from_hash(hash_batch(self.hash_kind, batch), n)

    def keyed_index(self, key: bytes | None, n: int) -> int:
        """Hash index for a key this scheme hashes (NULL hashed like b"")."""
        return self.index(b"" if key is None else key, n)


def _random_index(key: bytes, n: int) -> int:  # pragma: no cover - never called: always_random
    raise AssertionError("random scheme has no keyed index")


def _random_from_hash(h: U32, n: int) -> I64:  # pragma: no cover - never called: always_random
    raise AssertionError("random scheme has no keyed index")


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        Scheme(
            "murmur2",
            _murmur2_index,
            "murmur2",
            _murmur2_from_hash,
            null_is_keyless=False,
            source="librdkafka murmur2 (NULL hashed like empty)",
            index_mask=POSITIVE_MASK,
        ),
        Scheme(
            "murmur2_random",
            _murmur2_index,
            "murmur2",
            _murmur2_from_hash,
            null_is_keyless=True,
            source="librdkafka murmur2_random = Java DefaultPartitioner/BuiltInPartitioner keyed",
            index_mask=POSITIVE_MASK,
        ),
        Scheme(
            "consistent",
            _crc_index,
            "crc32",
            _unsigned_mod,
            null_is_keyless=False,
            source="librdkafka consistent (CRC32)",
        ),
        Scheme(
            "consistent_random",
            _crc_index,
            "crc32",
            _unsigned_mod,
            null_is_keyless=True,
            empty_is_keyless=True,
            source="librdkafka consistent_random (librdkafka's default)",
        ),
        Scheme(
            "fnv1a",
            _fnv_index,
            "fnv1a",
            _unsigned_mod,
            null_is_keyless=False,
            source="librdkafka fnv1a (Sarama NewHashPartitioner)",
        ),
        Scheme(
            "fnv1a_random",
            _fnv_index,
            "fnv1a",
            _unsigned_mod,
            null_is_keyless=True,
            source="librdkafka fnv1a_random",
        ),
        Scheme(
            "random",
            _random_index,
            "murmur2",
            _random_from_hash,
            null_is_keyless=True,
            always_random=True,
            source="librdkafka random",
        ),
        Scheme(
            "jump",
            _jump_index,
            "murmur2",
            _jump_from_hash,
            null_is_keyless=True,
            source="jump consistent hash (Lamping & Veach 2014) over unsigned murmur2",
            jump=True,
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
