"""Fraction of keys moved when partitions grow (computed: 12→13 modulo 92.3%, jump 7.7%; 12→16 75% / 25%)."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning import keys_moved_fraction


@pytest.fixture(scope="module")
def keys() -> list[bytes]:
    rng = np.random.default_rng(5)
    return [rng.bytes(16) for _ in range(60_000)]


@pytest.mark.parametrize(
    ("scheme", "old", "new", "expected"),
    [
        ("murmur2", 12, 13, 12 / 13),
        ("murmur2", 12, 16, 0.75),
        ("consistent", 12, 13, 12 / 13),
        ("jump", 12, 13, 1 / 13),
        ("jump", 12, 16, 0.25),
    ],
)
def test_moved_fraction(keys: list[bytes], scheme: str, old: int, new: int, expected: float) -> None:
    assert keys_moved_fraction(keys, old, new, scheme) == pytest.approx(expected, abs=0.01)


def test_same_count_moves_nothing(keys: list[bytes]) -> None:
    assert keys_moved_fraction(keys, 12, 12) == 0.0


def test_refuses_random_and_keyless_samples() -> None:
    with pytest.raises(InvalidArgumentError, match="random"):
        keys_moved_fraction([b"a"], 3, 4, "random")
    with pytest.raises(InvalidArgumentError, match="no hashed keys"):
        keys_moved_fraction([None, None], 3, 4, "murmur2_random")
