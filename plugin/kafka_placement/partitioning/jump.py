"""Jump consistent hash (Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm", 2014).

Maps a 64-bit key to one of ``n`` buckets so that growing ``n`` to ``n+1`` moves only ≈1/(n+1) of the keys
(modulo hashing moves ≈n/(n+1)). Our ``jump`` scheme feeds it the unsigned murmur2 of the key bytes.
Not a Kafka or librdkafka partitioner: producers of other clients will not agree with it.
:func:`jump_hash` is a C builtin when the accelerator is there (:mod:`.onekey`); the definition below
stays the reference it hands every unusual call to (:func:`.onekey.reference`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning.onekey import one_key
from kafka_placement.partitioning.validation import check_num_partitions

_LCG = 2862933555777941757
_MASK64 = (1 << 64) - 1


@one_key
def jump_hash(key: int, num_buckets: int) -> int:
    """The bucket in [0, num_buckets) of a 64-bit unsigned ``key`` (the paper's reference loop)."""
    num_buckets = check_num_partitions(num_buckets, "num_buckets")
    if isinstance(key, bool) or not isinstance(key, int):
        raise InvalidArgumentError(f"jump_hash key must be an int (64-bit), got {type(key).__name__}")
    key &= _MASK64
    b, j = -1, 0
    while j < num_buckets:
        b = j
        key = (key * _LCG + 1) & _MASK64
        j = int((b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b


def jump_hash_array(keys: npt.NDArray[np.uint64], num_buckets: int) -> npt.NDArray[np.int64]:
    """Vectorized :func:`jump_hash`; identical result per key (same float64 arithmetic)."""
    num_buckets = check_num_partitions(num_buckets, "num_buckets")
    key = keys.astype(np.uint64, copy=True)
    b = np.full(key.shape, -1, dtype=np.int64)
    j = np.zeros(key.shape, dtype=np.int64)
    active = np.arange(key.size)
    lcg = np.uint64(_LCG)
    two31 = float(1 << 31)
    while active.size:
        ka = key[active]
        ja = j[active]
        b[active] = ja
        ka = ka * lcg + np.uint64(1)
        key[active] = ka
        nj = (
            (ja + 1).astype(np.float64) * (two31 / ((ka >> np.uint64(33)).astype(np.float64) + 1.0))
        ).astype(np.int64)
        j[active] = nj
        active = active[nj < num_buckets]
    return b
