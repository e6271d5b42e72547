"""Which batch hashing kernel runs: the optional C accelerator or pure numpy (the fallback and cross-check).

``kafka_placement.partitioning._native`` (``_native.c``) is compiled by ``pip install`` when a C compiler
is present (``setup.py``, ``optional=True``: without one the install still succeeds). It is used when
importable; ``KAFKA_PLACEMENT_NO_NATIVE=1`` in the environment forces the numpy path (read at import),
and :func:`numpy_only` does so for a block of code. Both paths return identical hashes for every input
(property-tested against each other, the scalar functions, kafka-python and librdkafka's helpers).

- :func:`hash_batch` hashes a :class:`KeyBatch` (one buffer + offsets; a pyarrow array in place). On
  x86-64 CPUs with AVX2 (checked at run time) murmur2 runs eight keys side by side, and keys of one
  length stored back to back (fixed_size_binary, equal-length binary) are loaded sixteen bytes at a time
  and transposed; :func:`simd_off` switches that off for a block (tests compare both).
- :func:`murmur2_u32` hashes one key (the scalar record path of the client adapters); the record router
  of :mod:`~kafka_placement.partitioning.routing` is in the same module (:func:`native_module`).
- :func:`hash_remainder` turns hashes into partition indices (C: a multiply by a precomputed
  reciprocal instead of a division per key).
- :func:`hash_list` hashes a Python list/tuple of ``bytes``/``None`` straight from the objects (no join,
  no per-key ``len()`` in Python), or a numpy ``S`` array straight from its buffer; it returns ``None``
  when the native module is off or an item is neither ``bytes`` nor ``None`` — the caller then takes the
  general :func:`to_key_batch` path.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from kafka_placement.accelerators import native_allowed
from kafka_placement.partitioning.keybatch import KeyBatch
from kafka_placement.partitioning.murmur2 import murmur2_unsigned
from kafka_placement.partitioning.onekey import set_enabled as _one_key_enabled
from kafka_placement.partitioning.vectorized import crc32_batch, fnv1a_batch, murmur2_batch

try:
    from kafka_placement.partitioning import _native
except ImportError:  # not compiled (no C compiler at install time): numpy only
    _native = None  # type: ignore[assignment]

HashKind = Literal["murmur2", "crc32", "fnv1a"]
U32 = npt.NDArray[np.uint32]

_ALGO: dict[str, int] = (
    {"murmur2": _native.MURMUR2, "crc32": _native.CRC32, "fnv1a": _native.FNV1A}
    if _native is not None
    else {}
)
_enabled = _native is not None and native_allowed()


def native_available() -> bool:
    """True if the C accelerator was compiled and imports (whether or not it is switched off)."""
    return _native is not None


def native_enabled() -> bool:
    """True if batch hashing currently runs in C."""
    return _enabled


@contextmanager
def numpy_only() -> Iterator[None]:
    """Run the block with the pure-numpy kernels and the pure-Python one-key functions (process-wide switch;
    for tests and benchmarks)."""
    global _enabled
    previous = _enabled
    previous_one_key = _one_key_enabled(False)
    _enabled = False
    try:
        yield
    finally:
        _enabled = previous
        _one_key_enabled(previous_one_key)


def native_module() -> Any:
    """The C accelerator module while it is enabled (see :func:`native_enabled`) and has the record
    router of this source, else None."""
    return _native if _enabled and _has("Router") else None


def algo_code(kind: HashKind) -> int:
    """The C accelerator's number for a hash kind (``MURMUR2``, ``CRC32``, ``FNV1A``)."""
    _check_kind(kind)
    return _ALGO[kind]


def _has(name: str) -> bool:
    """The compiled module has ``name`` (a build older than this source lacks the newer entry points)."""
    return _native is not None and hasattr(_native, name)


def simd_enabled() -> bool:
    """True if murmur2 batches run on the eight-lane AVX2 kernel (C accelerator on an AVX2 CPU)."""
    return _has("simd") and bool(_native.simd())


@contextmanager
def simd_off() -> Iterator[None]:
    """Run the block with the scalar C murmur2 loop instead of the AVX2 kernel (for tests, benchmarks)."""
    if not _has("simd"):
        yield
        return
    previous = bool(_native.simd())
    _native.simd(0)
    try:
        yield
    finally:
        _native.simd(1 if previous else 0)


def murmur2_u32(key: bytes) -> int:
    """Kafka murmur2 of one key as unsigned 32-bit: C when enabled, else the pure-Python reference."""
    if _enabled:
        return _native.murmur2(key) & 0xFFFFFFFF
    return murmur2_unsigned(key)


def _check_kind(kind: str) -> None:
    if kind not in ("murmur2", "crc32", "fnv1a"):
        raise ValueError(f"hash kind must be 'murmur2', 'crc32' or 'fnv1a', got {kind!r}")


def hash_batch(kind: HashKind, batch: KeyBatch) -> U32:
    """Hash of every key of ``batch`` as uint32 (murmur2: Java's signed int bits; NULL keys hash as b"")."""
    _check_kind(kind)
    if _enabled:
        out = np.empty(len(batch), dtype=np.uint32)
        _native.hash_offsets(
            _ALGO[kind], np.ascontiguousarray(batch.data), np.ascontiguousarray(batch.offsets), out
        )
        return out
    if kind == "murmur2":
        return murmur2_batch(batch).view(np.uint32)
    if kind == "crc32":
        return crc32_batch(batch)
    return fnv1a_batch(batch)


def hash_remainder(hashes: U32, mask: int, n: int) -> npt.NDArray[np.int64]:
    """``(hashes & mask) % n`` as int64 partition indices (unsigned 32-bit hashes, ``1 <= n``)."""
    out = np.empty(hashes.size, dtype=np.int64)
    if _enabled and n <= 0xFFFFFFFF:
        _native.remainder(np.ascontiguousarray(hashes, dtype=np.uint32), mask, n, out)
    elif n <= 0xFFFFFFFF:
        np.remainder(hashes & np.uint32(mask), np.uint32(n), out=out, casting="unsafe")
    else:  # every 32-bit value is its own remainder
        np.bitwise_and(hashes, np.uint32(mask), out=out, casting="unsafe")
    return out


def hash_list(
    kind: HashKind, keys: object
) -> tuple[U32, npt.NDArray[np.bool_] | None, npt.NDArray[np.bool_] | None] | None:
    """``(hashes, nulls, empties)`` of a list/tuple of ``bytes``/``None`` or a numpy ``S`` array via C, or
    None (not applicable).

    ``nulls`` marks ``None`` keys, ``empties`` keys of length 0 (``None`` and ``b""``); each is None when
    no key qualifies. A numpy ``S<w>`` array is hashed from its buffer, each item without its trailing NUL
    bytes (numpy's value of an ``S`` item), with no Python object per key.
    """
    _check_kind(kind)
    if not _enabled:
        return None
    if (
        isinstance(keys, np.ndarray)
        and keys.ndim == 1
        and keys.dtype.kind == "S"
        and keys.itemsize > 0
        and _has("hash_fixed")
    ):
        data = np.ascontiguousarray(keys).view(np.uint8)
        out = np.empty(keys.size, dtype=np.uint32)
        if _native.hash_fixed(_ALGO[kind], data, keys.itemsize, out) == 0:
            return out, None, None
        return out, None, keys == b""  # numpy compares S items without their trailing NULs
    if not isinstance(keys, list | tuple):
        return None
    n = len(keys)
    out = np.empty(n, dtype=np.uint32)
    flags = np.empty(n, dtype=np.uint8)
    bad, nones, empties = _native.hash_list(_ALGO[kind], keys, out, flags)
    if bad >= 0:
        return None
    nulls = flags == 1 if nones else None
    empty_flags = flags != 0 if nones or empties else None
    return out, nulls, empty_flags
