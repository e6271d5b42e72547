"""Scenario generators for key → partition: single keys and key batches."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class KeyScenario:
    key: bytes
    num_partitions: int


def key_scenario(rng: random.Random) -> KeyScenario:
    """A key of 0–300 random bytes (short lengths over-weighted: every tail length 0–3 and the
    first block boundaries) and a partition count in [1, 10000]."""
    length = rng.randint(0, 12) if rng.random() < 0.5 else rng.randint(0, 300)
    key = rng.randbytes(length)
    num_partitions = rng.choice((1, 2, 3, 6, 12, 13, 16)) if rng.random() < 0.3 else rng.randint(1, 10_000)
    return KeyScenario(key, num_partitions)


@dataclass(frozen=True)
class KeyBatchScenario:
    keys: tuple[bytes, ...]
    num_partitions: int


def key_batch_scenario(rng: random.Random) -> KeyBatchScenario:
    """1–40 keys drawn like :func:`key_scenario` (mixed lengths in one batch exercise the
    vectorized paths that group keys by length) and one partition count."""
    first = key_scenario(rng)
    keys = [first.key] + [key_scenario(rng).key for _ in range(rng.randint(0, 39))]
    return KeyBatchScenario(tuple(keys), first.num_partitions)
