"""The partial selections the planner uses instead of full sorts, against full sorts; the wide
search's candidates are real replicas of the right brokers."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.replicas.loads import Goals
from kafka_placement.replicas.loads.fallback_candidates import NEAREST, WIDE, _nearest, wide_candidates
from kafka_placement.replicas.loads.goals import make_bands
from kafka_placement.replicas.loads.model import DISK, RESOURCES, broker_loads
from kafka_placement.replicas.loads.moves import _largest
from kafka_placement.replicas.loads.state import PlanState

# few distinct values, so ties are common
values = st.lists(st.sampled_from([0.0, 1.0, 2.5, 3.0, 7.0, -1.0, 1e9]), min_size=0, max_size=80)


@settings(max_examples=200)
@given(values, st.integers(1, 90))
def test_largest_is_the_head_of_a_full_sort(items: list[float], count: int) -> None:
    expected = sorted(range(len(items)), key=lambda i: (-items[i], i))[:count]
    assert _largest(np.array(items, dtype=np.float64), count).tolist() == expected


@settings(max_examples=200)
@given(values, st.sampled_from([0.0, 1.0, 2.0, 2.75, 5.0, 1e10]), st.integers(1, 90))
def test_nearest_is_the_head_of_a_full_sort(items: list[float], need: float, count: int) -> None:
    positive = [i for i, v in enumerate(items) if v > 0]
    expected = sorted(positive, key=lambda i: (abs(items[i] - need), i))[:count]
    assert _nearest(np.array(items, dtype=np.float64), need, count).tolist() == expected


def _state() -> PlanState:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    from rebalance_models import uneven_model

    model = uneven_model(12, 3000, seed=5)
    before = broker_loads(model)
    bands = make_bands(before, model.capacity, np.zeros(12, dtype=bool), Goals())
    return PlanState(model, bands, before, math.inf)


def test_wide_candidates_are_replicas_of_the_right_brokers() -> None:
    state = _state()
    for r in range(len(RESOURCES)):
        for b in range(state.model.num_brokers):
            for above in (True, False):
                partitions, source, destination = wide_candidates(state, b, r, above)
                assert len(partitions) <= max(NEAREST * 11, WIDE * 3)
                assert len(partitions) > 0
                for p, s, d in zip(partitions.tolist(), source.tolist(), destination.tolist(), strict=True):
                    row = state.replicas[p].tolist()
                    assert s in row and s != d
                    assert (s == b) if above else (d == b)
                    if r >= 2:  # leader resources: only the leader carries them
                        assert row[0] == s
                if r == DISK and not above:
                    # the partitions nearest the amount needed are the ones taken
                    need = float(state.bands.lower[b, r] - state.loads[b, r])
                    if need > 0:
                        sizes = state.model.size[np.unique(partitions)]
                        others = np.setdiff1d(np.arange(state.model.num_partitions), partitions)
                        worst_kept = np.abs(sizes - need).max()
                        assert (np.abs(state.model.size[others] - need) >= worst_kept - 1e-6).all()
