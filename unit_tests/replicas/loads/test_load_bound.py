"""The lower bound on bytes copied, against sums worked by hand."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kafka_placement.replicas.loads import Goals, broker_loads, parse_loads, plan_rebalance
from kafka_placement.replicas.loads.bound import disk_lower_bound
from kafka_placement.replicas.loads.goals import make_bands


def test_bound_by_hand() -> None:
    # disks 600, 300, 300 (mean 400, band ±10% → [360, 440]): 160 above, 60 + 60 below → 160
    doc = {
        "brokers": [{"id": i} for i in range(3)],
        "partitions": [
            {"topic": "t", "partition": p, "replicas": [b], "size": s}
            for p, (b, s) in enumerate([(0, 300), (0, 300), (1, 300), (2, 300)])
        ],
    }
    model = parse_loads(json.dumps(doc))
    loads = broker_loads(model)
    bands = make_bands(loads, model.capacity, np.zeros(3, dtype=bool), Goals())
    bound = disk_lower_bound(loads, bands)
    assert (bound.above, bound.below, bound.bytes) == pytest.approx((160, 120, 160))
    # removing broker 2: its 300 must leave; staying mean 600 → band [540, 660]: 0 above on 0,
    # 240 below on broker 1 → max(300, 240) = 300
    removed = np.array([False, False, True])
    bound = disk_lower_bound(loads, make_bands(loads, model.capacity, removed, Goals()))
    assert (bound.above, bound.below, bound.bytes) == pytest.approx((300, 240, 300))
    # no plan reaching the band copies less
    plan = plan_rebalance(model)
    assert plan.bytes_moved >= 160 or not plan.goal_status()["disk"]["met"]
