"""The excess/shortfall argument both lower bounds use, on values worked out by hand."""

from __future__ import annotations

import math

from kafka_placement.replicas.transfer_bound import excess_and_shortfall


def test_excess_and_shortfall() -> None:
    # amounts 10, 4, 7 within [5, 8]: 2 above (10 − 8), 1 below (5 − 4)
    assert excess_and_shortfall([10, 4, 7], 5, 8) == (2.0, 1.0)
    # per-broker ends: [0, 3] and [6, 6]
    assert excess_and_shortfall([5, 5], [0, 6], [3, 6]) == (2.0, 1.0)
    assert excess_and_shortfall([1, 2], [0, 0], math.inf) == (0.0, 0.0)
    assert excess_and_shortfall([], 0, 0) == (0.0, 0.0)
