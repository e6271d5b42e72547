"""Skew of a load vector: max/mean, coefficient of variation, Gini. Pure numpy, no Spark."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Skew:
    entities: int
    total: float
    max: float
    mean: float
    max_over_mean: float
    cv: float
    gini: float


def skew(loads: Iterable[float]) -> Skew:
    """Skew of non-negative loads, one per entity (include the idle ones as 0).

    ``max_over_mean`` is 1 for a perfect spread; ``cv`` is the population standard deviation over the
    mean; ``gini`` is ``Σ|xi - xj| / (2 n² mean)`` (0 = equal, (n-1)/n = one entity takes all).
    All three are 0 when every load is 0.
    """
    x = np.asarray(list(loads), dtype=np.float64)
    if x.size == 0:
        return Skew(0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if (x < 0).any():
        raise ValueError(f"loads must be >= 0, got minimum {x.min()}")
    total = float(x.sum())
    mean = total / x.size
    if total == 0.0:
        return Skew(int(x.size), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    ordered = np.sort(x)
    ranks = np.arange(1, x.size + 1, dtype=np.float64)
    gini = float((2.0 * (ranks * ordered).sum()) / (x.size * total) - (x.size + 1.0) / x.size)
    return Skew(
        entities=int(x.size),
        total=total,
        max=float(x.max()),
        mean=mean,
        max_over_mean=float(x.max() / mean),
        cv=float(x.std() / mean),
        gini=max(0.0, gini),
    )
