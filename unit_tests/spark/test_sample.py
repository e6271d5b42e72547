"""The sample generator: deterministic per row, Zipf-shaped, independent of how rows are split."""

from __future__ import annotations

import numpy as np
import pytest

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.spark.sample import SampleSpec, key_bytes, sample_arrays, sample_batch

SPEC = SampleSpec(50_000, distinct_keys=1000, exponent=1.1, mean_value_size=200, min_value_size=10, seed=3)


def test_rows_do_not_depend_on_batching() -> None:
    whole = sample_arrays(SPEC, np.arange(0, 5000))
    parts = [sample_arrays(SPEC, np.arange(a, a + 1000)) for a in range(0, 5000, 1000)]
    assert np.array_equal(whole[0], np.concatenate([p[0] for p in parts]))
    assert np.array_equal(whole[1], np.concatenate([p[1] for p in parts]))


def test_seed_changes_the_sample() -> None:
    other = SampleSpec(50_000, distinct_keys=1000, seed=4)
    assert not np.array_equal(
        sample_arrays(SPEC, np.arange(1000))[0], sample_arrays(other, np.arange(1000))[0]
    )


def test_zipf_frequencies_follow_the_law() -> None:
    ranks, _ = sample_arrays(SPEC, np.arange(SPEC.records))
    assert ranks.min() >= 1 and ranks.max() <= 1000
    counts = np.bincount(ranks, minlength=1001)[1:]
    harmonic = (np.arange(1, 1001, dtype=float) ** -1.1).sum()
    for rank in (1, 2, 5, 10):
        expected = SPEC.records * rank**-1.1 / harmonic
        assert abs(counts[rank - 1] - expected) < 5 * np.sqrt(expected), (rank, counts[rank - 1], expected)


def test_value_sizes_exponential_above_minimum() -> None:
    _, sizes = sample_arrays(SPEC, np.arange(SPEC.records))
    assert sizes.min() >= 10
    assert abs(sizes.mean() - 200) < 5  # exponential mean (min + (mean - min)), floor loses ~0.5


def test_batch_keys_are_user_rank_bytes() -> None:
    index = np.arange(100, 200)
    batch = sample_batch(SPEC, index)
    ranks, sizes = sample_arrays(SPEC, index)
    assert batch.column(0).to_pylist() == key_bytes(ranks) == [f"user-{r}".encode() for r in ranks]
    assert batch.column(1).to_pylist() == sizes.tolist()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"records": 0}, "sample size must be an int in [1, 1,000,000,000], got 0"),
        ({"records": 10, "exponent": -1.0}, "Zipf exponent must be in [0, 10], got -1.0"),
        ({"records": 10, "mean_value_size": 5, "min_value_size": 10}, "0 <= min (10) <= mean (5)"),
    ],
)
def test_bad_specs(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        SampleSpec(**kwargs)  # type: ignore[arg-type]
    assert message in str(info.value)
