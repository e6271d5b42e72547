"""The planner's incremental bookkeeping against recomputation from scratch: after the phases of a
plan ran on a random cluster, the plain-list twins of the load and violation rows, the per-broker
worst band term, the cached hosted arrays and the plain-Python recheck agree with what numpy
computes afresh from the replica lists; and every numpy/plain-Python twin of ``PlanState`` gives the
same answer for the same random move."""

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
from kafka_placement.replicas.loads.placement_phase import balance_placement
from kafka_placement.replicas.loads.state import PlanState
from kafka_placement.replicas.loads.topic_replica_distribution import (
    BoundTopicReplicaDistribution,
    TopicReplicaDistribution,
    replica_counts,
)


@st.composite
def states(draw: Any) -> PlanState:
    """A plan's state after its phases ran: 3..9 brokers in 0..3 racks, 1..60 partitions of RF 1..3
    in 1..3 topics, maybe one broker being removed, a budget, and the topic replica goal."""
    n = draw(st.integers(3, 9))
    racks = draw(st.integers(0, 3))
    brokers = [BrokerSpec(id=10 + i, rack=f"r{i % racks}" if racks else None) for i in range(n)]
    partitions = []
    topics = draw(st.integers(1, 3))
    for p in range(draw(st.integers(1, 60))):
        rf = draw(st.integers(1, 3))
        chosen = draw(st.permutations(range(n)))[:rf]
        partitions.append(
            PartitionSpec(
                topic=f"t{p % topics}",
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
    threshold = draw(st.sampled_from([None, 1.0, 1.5]))
    placement = [] if threshold is None else [TopicReplicaDistribution(threshold, 0).bind(model, removed)]
    state = PlanState(model, bands, before, budget, placement)
    drain_brokers(state, np.flatnonzero(removed).tolist())
    balance_leadership(state)
    for goal in placement:
        balance_placement(state, goal)
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
    for goal in state.placement:  # the topic goal's counts, kept in step by each move
        assert isinstance(goal, BoundTopicReplicaDistribution)
        assert goal.counts.tolist() == replica_counts(state.model, state.replicas).tolist()


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


@settings(max_examples=20, deadline=None)
@given(states(), st.data())
def test_numpy_and_plain_twins_agree(state: PlanState, data: Any) -> None:
    """For random moves (a held replica to any other broker): the copy cost, the rack rule and
    placement goals, and the loads a replica or a leadership carries are the same from the numpy
    form (one candidate in an array) and the plain-Python form."""
    n = state.model.num_brokers
    for _ in range(10):
        p = data.draw(st.integers(0, state.model.num_partitions - 1))
        row = state.replicas[p, : int(state.model.rf[p])].tolist()
        source = data.draw(st.sampled_from(row))
        destination = data.draw(st.sampled_from([b for b in range(n) if b != source]))
        one = np.array([p])
        assert float(state.copy_cost(one, source, destination)[0]) == state.cost_of(p, source, destination)
        assert bool(state.placement_ok(one, source, destination)[0]) == state.move_allowed(
            p, source, destination
        )
        leading = row[0] == source
        assert state.deltas(one, np.array([leading]))[0].tolist() == state.change_of(p, leading)
        assert state.leadership(one)[0].tolist() == state.leadership_of(p)
        # what leadership carries is the leader's load less a follower's
        difference = np.array(state.change_of(p, True)) - np.array(state.change_of(p, False))
        assert difference.tolist() == state.leadership_of(p)
        for goal in state.placement:
            assert bool(goal.allowed(one, source, destination)[0]) == goal.allowed_one(p, source, destination)
            vector = goal.gain(one, np.array([source]), np.array([destination]))
            assert int(vector[0]) == goal.gain_one(p, source, destination)
