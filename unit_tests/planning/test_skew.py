"""Skew metrics against their textbook definitions (pairwise Gini, population CV)."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.planning.skew import skew


def pairwise_gini(x: list[float]) -> float:
    n = len(x)
    mean = sum(x) / n
    return sum(abs(a - b) for a in x for b in x) / (2 * n * n * mean)


@given(st.lists(st.integers(min_value=0, max_value=10**9), min_size=1, max_size=60))
def test_matches_definitions(values: list[int]) -> None:
    s = skew(values)
    assert s.entities == len(values)
    if sum(values) == 0:
        assert (s.max_over_mean, s.cv, s.gini) == (0.0, 0.0, 0.0)
        return
    mean = sum(values) / len(values)
    assert s.max_over_mean == pytest.approx(max(values) / mean)
    assert s.cv == pytest.approx(statistics.pstdev(values) / mean, rel=1e-9, abs=1e-12)
    assert s.gini == pytest.approx(pairwise_gini([float(v) for v in values]), rel=1e-9, abs=1e-12)


def test_known_values() -> None:
    even = skew([5, 5, 5, 5])
    assert (even.max_over_mean, even.cv, even.gini) == (1.0, 0.0, 0.0)
    one_takes_all = skew([0, 0, 0, 8])
    assert one_takes_all.max_over_mean == 4.0
    assert one_takes_all.gini == pytest.approx(3 / 4)  # (n-1)/n
    assert one_takes_all.cv == pytest.approx(3**0.5)


def test_negative_rejected() -> None:
    with pytest.raises(ValueError, match="loads must be >= 0"):
        skew([1, -1])
