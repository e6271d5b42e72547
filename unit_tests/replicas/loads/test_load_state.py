"""The planner's incremental bookkeeping against recomputation from scratch: after the phases of a
plan ran on a random cluster, the plain-list twins of the load and violation rows, the per-broker
worst band term, the cached hosted arrays and the plain-Python recheck agree with what numpy
computes afresh from the replica lists."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.replicas.loads import Goals
from kafka_placement.replicas.loads.drain import drain_brokers
from kafka_placement.replicas.loads.goals import make_bands
from kafka_placement.replicas.loads.leadership import balance_leadership
from kafka_placement.replicas.loads.model import BrokerSpec, PartitionSpec, broker_loads, build_model
from kafka_placement.replicas.loads.moves import balance_replicas
from kafka_placement.replicas.loads.state import PlanState


@st.composite
def states(draw: Any) -> PlanState:
    """A plan's state after its phases ran: 3..9 brokers in 0..3 racks, 1..60 partitions of RF 1..3,
    maybe one broker being removed and a budget."""
    n = draw(st.integers(3, 9))
    racks = draw(st.integers(0, 3))
    brokers = [BrokerSpec(id=10 + i, rack=f"r{i % racks}" if racks else None) for i in range(n)]
    partitions = []
    for p in range(draw(st.integers(1, 60))):
        rf = draw(st.integers(1, 3))
        chosen = draw(st.permutations(range(n)))[:rf]
        partitions.append(
            PartitionSpec(
                topic="t",
                partition=p,
                replicas=tuple(10 + b for b in chosen),
                size=float(draw(st.integers(0, 10**9))),
                bytes_in=float(draw(st.integers(0, 10**6))),
                bytes_out=float(draw(st.integers(0, 3 * 10**6))),
            )
        )
    model = build_model(brokers, partitions)
    removed = np.zeros(n, dtype=bool)
    if draw(st.booleans()) and n > 3:
        removed[draw(st.integers(0, n - 1))] = True
    before = broker_loads(model)
    bands = make_bands(before, model.capacity, removed, Goals(band=draw(st.sampled_from([0.05, 0.1, 0.3]))))
    budget = draw(st.sampled_from([math.inf, 0.0, 2e9]))
    state = PlanState(model, bands, before, budget)
    drain_brokers(state, np.flatnonzero(removed).tolist())
    balance_leadership(state)
    balance_replicas(state)
    balance_leadership(state)
    return state


@settings(max_examples=20, deadline=None)
@given(states())
def test_twins_agree_with_recomputation(state: PlanState) -> None:
    bands = state.bands
    everyone = np.arange(state.model.num_brokers)
    # the plain lists are the numpy rows, float for float
    assert state.load_rows == state.loads.tolist()
    assert state.term_rows == state.terms.tolist()
    # and the rows are what the replica lists give, recomputed from scratch
    assert np.allclose(state.loads, broker_loads(state.model, state.replicas), rtol=1e-9, atol=1e-6)
    assert state.terms.tolist() == bands.terms(state.loads, everyone).tolist()
    assert state.band_terms.tolist() == (bands.band_violation(state.loads) * bands.weight).tolist()
    staying = np.flatnonzero(~bands.removed)
    assert state.allowance()[1] == float(state.band_terms[staying].max())
    for b in everyone.tolist():
        held = sorted(p for p in range(state.model.num_partitions) if b in state.replicas[p].tolist())
        assert state.hosted_array(b).tolist() == held
        assert sorted(state.hosted[b]) == held


@settings(max_examples=20, deadline=None)
@given(states(), st.data())
def test_plain_recheck_agrees_with_numpy_scoring(state: PlanState, data: Any) -> None:
    """:meth:`PlanState.evaluate_one` (plain Python) and :meth:`PlanState.evaluate` (numpy) give the
    same verdict and gain for the same change."""
    n = state.model.num_brokers
    for _ in range(10):
        p = data.draw(st.integers(0, state.model.num_partitions - 1))
        row = state.replicas[p, : int(state.model.rf[p])].tolist()
        source = data.draw(st.sampled_from(row))
        destination = data.draw(st.sampled_from([b for b in range(n) if b != source]))
        change = state.change_of(p, row[0] == source)
        plain = state.evaluate_one(source, destination, change)
        gain, ok = state.evaluate(source, destination, np.array([change]))
        assert (plain is not None) == bool(ok[0])
        if plain is not None:
            assert plain == pytest.approx(float(gain[0]), abs=1e-9)
        # the broadcast form (one source, one destination) and the gathered form agree exactly
        gathered, gathered_ok = state.evaluate(
            np.array([source]), np.array([destination]), np.array([change])
        )
        assert gathered.tolist() == gain.tolist() and gathered_ok.tolist() == ok.tolist()
