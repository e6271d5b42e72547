"""How many keys change partition when a topic's partition count changes.

Modulo hashing (Kafka's default) moves ≈ 1 - gcd-ish share of keys: 12→13 moves ≈92.3% (12/13),
12→16 moves 75%; jump consistent hash moves the minimum, ≈1 - old/new (7.7% and 25%).
"""

from __future__ import annotations

import numpy as np

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning.batch import partition_keys
from kafka_placement.partitioning.keybatch import to_key_batch
from kafka_placement.partitioning.schemes import get_scheme
from kafka_placement.partitioning.validation import check_num_partitions


def keys_moved_fraction(
    keys: object, old_partitions: int, new_partitions: int, scheme: str = "murmur2"
) -> float:
    """Fraction of ``keys`` whose partition differs between ``old_partitions`` and ``new_partitions``.

    Only keys the scheme hashes are counted (keyless/random records have no stable partition); a
    scheme that hashes nothing (``random``) is refused.
    """
    check_num_partitions(old_partitions)
    check_num_partitions(new_partitions)
    sch = get_scheme(scheme)
    if sch.always_random:
        raise InvalidArgumentError(
            f"scheme {sch.name!r} places every record at random; no key has a partition"
        )
    batch = to_key_batch(keys)
    before = partition_keys(batch, old_partitions, sch.name)
    after = partition_keys(batch, new_partitions, sch.name)
    hashed = np.ones(len(batch), dtype=bool)
    if sch.null_is_keyless and batch.nulls is not None:
        hashed &= ~batch.nulls
    if sch.empty_is_keyless:
        hashed &= batch.lengths != 0
    total = int(hashed.sum())
    if total == 0:
        raise InvalidArgumentError("no hashed keys in the sample (all NULL/keyless under this scheme)")
    return float((before[hashed] != after[hashed]).sum()) / total
