"""``partition_key`` (one record) and ``partition_keys`` (a whole batch, vectorized) over a named scheme."""

from __future__ import annotations

import random as _random

import numpy as np
import numpy.typing as npt

from kafka_placement.partitioning.keybatch import to_key_batch
from kafka_placement.partitioning.schemes import get_scheme
from kafka_placement.partitioning.validation import check_key, check_num_partitions


def partition_key(
    key: bytes | None, num_partitions: int, scheme: str = "murmur2", *, rng: _random.Random | None = None
) -> int:
    """Partition of one record with ``key`` under ``scheme`` (keyless records: uniformly random)."""
    n = check_num_partitions(num_partitions)
    sch = get_scheme(scheme)
    k = check_key(key)
    if sch.is_keyless(k):
        return (rng or _random).randrange(n)
    return sch.keyed_index(k, n)


def partition_keys(
    keys: object, num_partitions: int, scheme: str = "murmur2", *, rng: np.random.Generator | None = None
) -> npt.NDArray[np.int64]:
    """Partition of every key, vectorized; element i equals ``partition_key(keys[i], ...)`` for keyed records.

    ``keys``: a list/sequence of bytes-like or None, a numpy object or ``S`` array, or a pyarrow
    binary/large_binary/fixed_size_binary (chunked) array. Records the scheme treats as keyless get a
    uniformly random partition from ``rng`` (default: a fresh ``numpy.random.default_rng()``).
    """
    n = check_num_partitions(num_partitions)
    sch = get_scheme(scheme)
    batch = to_key_batch(keys)
    count = len(batch)
    if sch.always_random:
        return (rng or np.random.default_rng()).integers(0, n, size=count, dtype=np.int64)
    out = sch.batch_index(batch, n)
    keyless = None
    if sch.null_is_keyless and batch.nulls is not None:
        keyless = batch.nulls
    if sch.empty_is_keyless:
        empty = batch.lengths == 0
        keyless = empty if keyless is None else keyless | empty
    if keyless is not None and keyless.any():
        out[keyless] = (rng or np.random.default_rng()).integers(
            0, n, size=int(keyless.sum()), dtype=np.int64
        )
    return out
