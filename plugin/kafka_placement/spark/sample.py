"""Zipf-skewed sample records, so planning needs no download.

Every row is a pure function of ``(seed, row index)`` (a counter-based SplitMix64 stream), so the
same sample comes out of numpy directly (:func:`sample_arrays`) and out of Spark however the rows
are split into tasks (:func:`sample_dataframe`). Key ranks follow a bounded Zipf law
(``P(rank k) ∝ 1 / k**exponent`` over ``distinct_keys`` ranks); keys are ``b"user-<rank>"``;
value sizes are exponential around ``mean_value_size`` (at least ``min_value_size``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from kafka_placement.errors import InvalidArgumentError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _splitmix64(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def _uniform(seed: int, stream: int, index: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    base = np.uint64((seed * 0x632BE59BD9B4E019 + stream * 0x8CB92BA72F3D8DD7) & 0xFFFFFFFFFFFFFFFF)
    with np.errstate(over="ignore"):
        bits = _splitmix64(index.astype(np.uint64) * np.uint64(2) + base)
    return ((bits >> np.uint64(11)).astype(np.float64) + 0.5) / float(1 << 53)


#: The largest generated sample (a bound on the work; plan real data with --input or --topic).
MAX_SAMPLE_RECORDS = 1_000_000_000


@dataclass(frozen=True)
class SampleSpec:
    """How to draw the sample; validated on construction."""

    records: int
    distinct_keys: int = 0  # 0 = max(100, records // 20)
    exponent: float = 1.1
    mean_value_size: int = 512
    min_value_size: int = 16
    seed: int = 42

    def __post_init__(self) -> None:
        if (
            isinstance(self.records, bool)
            or not isinstance(self.records, int)
            or not 1 <= self.records <= MAX_SAMPLE_RECORDS
        ):
            raise InvalidArgumentError(
                f"sample size must be an int in [1, {MAX_SAMPLE_RECORDS:,}], got {self.records!r}"
            )
        if self.distinct_keys < 0:
            raise InvalidArgumentError(
                f"distinct keys must be >= 0 (0 = automatic), got {self.distinct_keys}"
            )
        if not 0.0 <= self.exponent <= 10.0:
            raise InvalidArgumentError(f"Zipf exponent must be in [0, 10], got {self.exponent}")
        if self.min_value_size < 0 or self.mean_value_size < self.min_value_size:
            raise InvalidArgumentError(
                f"value sizes need 0 <= min ({self.min_value_size}) <= mean ({self.mean_value_size})"
            )

    @property
    def key_count(self) -> int:
        return self.distinct_keys or max(100, self.records // 20)

    def cumulative(self) -> npt.NDArray[np.float64]:
        ranks = np.arange(1, self.key_count + 1, dtype=np.float64)
        weights = ranks ** (-self.exponent)
        cdf: npt.NDArray[np.float64] = np.cumsum(weights)
        cdf /= cdf[-1]
        return cdf


def sample_arrays(
    spec: SampleSpec, index: npt.NDArray[np.int64], cdf: npt.NDArray[np.float64] | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Key ranks (1-based) and value sizes of the rows numbered ``index``."""
    table = spec.cumulative() if cdf is None else cdf
    ranks = np.searchsorted(table, _uniform(spec.seed, 1, index), side="left").astype(np.int64) + 1
    np.minimum(ranks, spec.key_count, out=ranks)
    extra = spec.mean_value_size - spec.min_value_size
    sizes = spec.min_value_size + np.floor(-np.log(_uniform(spec.seed, 2, index)) * extra).astype(np.int64)
    return ranks, sizes


def key_bytes(ranks: npt.NDArray[np.int64]) -> list[bytes]:
    """The key of each rank, ``b"user-<rank>"`` (what a StringSerializer would send)."""
    return [b"user-%d" % r for r in ranks.tolist()]


def sample_batch(
    spec: SampleSpec, index: npt.NDArray[np.int64], cdf: npt.NDArray[np.float64] | None = None
) -> pa.RecordBatch:
    """The rows numbered ``index`` as an Arrow batch ``(key: binary, value_size: int64)``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ranks, sizes = sample_arrays(spec, index, cdf)
    keys = pc.binary_join_element_wise(pa.scalar("user-"), pc.cast(pa.array(ranks), pa.string()), "")
    return pa.RecordBatch.from_arrays([keys.cast(pa.binary()), pa.array(sizes)], names=["key", "value_size"])


def sample_dataframe(spark: SparkSession, spec: SampleSpec, num_slices: int | None = None) -> DataFrame:
    """The sample as a Spark DataFrame ``(key binary, value_size bigint)``, generated on executors."""
    slices = num_slices or max(1, min(64, spec.records // 250_000 + 1))
    cdf = spec.cumulative()

    def generate(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows:
                yield sample_batch(spec, batch.column(0).to_numpy().astype(np.int64), cdf)

    ids = spark.range(0, spec.records, 1, slices)
    return ids.mapInArrow(generate, "key binary, value_size bigint")
