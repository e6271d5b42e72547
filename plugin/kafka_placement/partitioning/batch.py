"""``partition_key`` (one record) and ``partition_keys`` (a whole batch, vectorized) over a named scheme.

``partition_key`` is a C builtin when the accelerator is there (:mod:`.onekey`); the definition below
stays the reference it hands every unusual call (and a keyless record with an ``rng``) to
(:func:`.onekey.reference`).
"""

from __future__ import annotations

import random as _random

import numpy as np
import numpy.typing as npt

from kafka_placement.partitioning.keybatch import to_key_batch
from kafka_placement.partitioning.native import hash_list
from kafka_placement.partitioning.onekey import one_key, register_schemes
from kafka_placement.partitioning.schemes import SCHEMES, get_scheme
from kafka_placement.partitioning.validation import check_key, check_num_partitions

register_schemes(SCHEMES)


@one_key
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
    if isinstance(keys, np.ndarray) and keys.ndim == 1 and keys.dtype.kind == "O":
        keys = keys.tolist()  # an object array's items are the keys: same as a list of them
    nulls: npt.NDArray[np.bool_] | None
    empties: npt.NDArray[np.bool_] | None
    fast = None if sch.always_random else hash_list(sch.hash_kind, keys)
    if fast is not None:  # list/tuple of bytes/None hashed in C straight from the objects
        hashes, nulls, empties = fast
        count = int(hashes.size)
        out = sch.from_hash(hashes, n)
    else:
        batch = to_key_batch(keys)
        count = len(batch)
        if sch.always_random:
            return (rng or np.random.default_rng()).integers(0, n, size=count, dtype=np.int64)
        out = sch.batch_index(batch, n)
        nulls = batch.nulls
        empties = batch.lengths == 0 if sch.empty_is_keyless else None
    keyless = None
    if sch.null_is_keyless and nulls is not None:
        keyless = nulls
    if sch.empty_is_keyless and empties is not None:
        keyless = empties if keyless is None else keyless | empties
    if keyless is not None and keyless.any():
        out[keyless] = (rng or np.random.default_rng()).integers(
            0, n, size=int(keyless.sum()), dtype=np.int64
        )
    return out
