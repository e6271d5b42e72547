"""The argument behind both lower bounds of this package (replica and leader moves of the count
planner, :mod:`.planner.bounds`; bytes copied by the load planner, :mod:`.loads.bound`).

Whatever moves — a replica, a leadership, a replica's bytes — leaves one broker and arrives at
another. So a plan that ends with every broker's amount within ``[lower, upper]`` moves at least the
total excess above the upper ends away, and at least the total shortfall below the lower ends in:
at least the larger of the two.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def excess_and_shortfall(
    amounts: Sequence[float] | np.ndarray,
    lower: Sequence[float] | np.ndarray | float,
    upper: Sequence[float] | np.ndarray | float,
) -> tuple[float, float]:
    """(Σ max(0, amount − upper), Σ max(0, lower − amount)) over the brokers given."""
    values = np.asarray(amounts, dtype=np.float64)
    excess = float(np.maximum(values - np.asarray(upper, dtype=np.float64), 0.0).sum())
    shortfall = float(np.maximum(np.asarray(lower, dtype=np.float64) - values, 0.0).sum())
    return excess, shortfall
