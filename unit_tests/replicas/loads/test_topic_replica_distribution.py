"""Cruise Control's TopicReplicaDistributionGoal as a placement goal: its limits against values worked
out by hand from the goal's documented formula, its acceptance against Cruise Control's rule written
out here, and plans whose per-topic counts and disk loads are recounted from the replica lists."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.replicas.loads import Goals, parse_goals, plan_rebalance
from kafka_placement.replicas.loads.model import BrokerSpec, PartitionSpec, build_model
from kafka_placement.replicas.loads.topic_replica_distribution import TopicReplicaDistribution, topic_limits


@pytest.mark.parametrize(
    ("total", "brokers", "threshold", "min_gap", "max_gap", "expected"),
    [
        # average 100, margin (3 − 1) × 0.9 = 1.8: upper ceil(280) capped at 100 + 40; lower
        # floor(100 × max(0, −0.8)) = 0 raised to 100 − 40
        (3000, 30, 3.0, 2, 40, (60, 140)),
        # threshold 1: the limits are the average, widened to the min gap either side
        (3000, 30, 1.0, 2, 40, (98, 102)),
        # average 2.5, threshold 3: upper ceil(2.5 × 2.8) = 7 (within [3 + 2, 3 + 40]); lower 0
        (10, 4, 3.0, 2, 40, (0, 7)),
        # average 2.5, threshold 1, no gaps: floor and ceil of the average
        (10, 4, 1.0, 0, 40, (2, 3)),
        # average 10, threshold 1.5: margin 0.45, upper ceil(14.5) = 15, lower floor(5.5) = 5
        (100, 10, 1.5, 2, 40, (5, 15)),
    ],
)
def test_limits_follow_cruise_control(
    total: int, brokers: int, threshold: float, min_gap: int, max_gap: int, expected: tuple[int, int]
) -> None:
    lower, upper = topic_limits(np.array([total]), brokers, threshold, min_gap, max_gap)
    assert (int(lower[0]), int(upper[0])) == expected


@settings(max_examples=200, deadline=None)
@given(
    counts=st.lists(st.integers(0, 12), min_size=3, max_size=3),
    lower=st.integers(0, 6),
    width=st.integers(0, 6),
    source=st.integers(0, 2),
    destination=st.integers(0, 2),
)
def test_acceptance_and_gain_against_cruise_controls_rule(
    counts: list[int], lower: int, width: int, source: int, destination: int
) -> None:
    """One topic on three brokers: a move is acceptable exactly when Cruise Control's
    actionAcceptance says so (destination + 1 <= upper, source − 1 >= lower), in both the vector and
    the plain form; the gain is the total violation recounted after the move minus before."""
    if source == destination or counts[source] == 0:
        return
    upper = lower + width
    brokers = [BrokerSpec(id=b) for b in range(3)]
    partitions: list[PartitionSpec] = []
    for b, count in enumerate(counts):
        for _ in range(count):
            partitions.append(PartitionSpec("t", len(partitions), (b,)))
    model = build_model(brokers, partitions)
    bound = TopicReplicaDistribution().bind(model, np.zeros(3, dtype=bool))
    bound.lower[:], bound.upper[:] = lower, upper
    p = next(i for i, spec in enumerate(partitions) if spec.replicas == (source,))
    rule = counts[destination] + 1 <= upper and counts[source] - 1 >= lower
    one = np.array([p])
    assert bool(bound.allowed(one, source, destination)[0]) == rule
    assert bound.allowed_one(p, source, destination) == rule

    def total(values: list[int]) -> int:
        return sum(max(lower - c, 0) + max(c - upper, 0) for c in values)

    after = list(counts)
    after[source] -= 1
    after[destination] += 1
    gain = bound.gain(one, np.array([source]), np.array([destination]))
    assert int(gain[0]) == bound.gain_one(p, source, destination) == total(after) - total(counts)


def _counts(
    model_doc: list[PartitionSpec], changed: dict[tuple[str, int], list[int]]
) -> dict[str, dict[int, int]]:
    counts: dict[str, dict[int, int]] = {}
    for spec in model_doc:
        for b in changed.get((spec.topic, spec.partition), list(spec.replicas)):
            counts.setdefault(spec.topic, {}).setdefault(b, 0)
            counts[spec.topic][b] += 1
    return counts


def test_plan_spreads_each_topic_with_the_fewest_moves() -> None:
    """Topic a on brokers 0 and 1 only, topic b on 2 and 3 (4 partitions each, RF 1, equal sizes):
    disk is even, the topics are not. With threshold 1 and no gaps every broker must hold exactly 2
    of each. The violations sum to 16 and one move removes at most 2, so 8 moves are the fewest."""
    brokers = [BrokerSpec(id=b) for b in range(4)]
    partitions = [
        PartitionSpec(topic, i, (owner,), size=100.0)
        for topic, owners in (("a", (0, 1)), ("b", (2, 3)))
        for i, owner in enumerate(o for o in owners for _ in range(4))
    ]
    goal = TopicReplicaDistribution(threshold=1.0, min_gap=0)
    goals = Goals(soft=("disk",), band=0.3, placement=(goal,))
    plan = plan_rebalance(build_model(brokers, partitions), goals)
    changed = {(tp.topic, tp.partition): reps for tp, reps in plan.changed().items()}
    counts = _counts(partitions, changed)
    assert counts == {"a": dict.fromkeys(range(4), 2), "b": dict.fromkeys(range(4), 2)}
    assert len(changed) == 8
    disk = {b: 0.0 for b in range(4)}
    for spec in partitions:
        for b in changed.get((spec.topic, spec.partition), list(spec.replicas)):
            disk[b] += spec.size
    assert all(280 <= d <= 520 for d in disk.values())  # mean 400 × (1 ± 0.3)
    status = plan.goal_status()["topic_replicas"]
    assert (status["met_before"], status["met"], status["worst_before"], status["worst_after"]) == (
        False,
        True,
        2,
        0,
    )
    assert (status["widest_spread_before"], status["widest_spread_after"]) == (4, 0)


def test_moves_of_other_goals_respect_it() -> None:
    """Disk alone would move a big replica of topic a from broker 0 onto broker 1; with the topic
    goal (limits [1, 1] per broker: 2 replicas over 2 brokers, threshold 1, no gaps) broker 1 may
    not take a second replica of a, so the disk goal stays unmet rather than break it."""
    brokers = [BrokerSpec(id=0), BrokerSpec(id=1)]
    partitions = [
        PartitionSpec("a", 0, (0,), size=900.0),
        PartitionSpec("a", 1, (1,), size=100.0),
    ]
    model = build_model(brokers, partitions)
    free = plan_rebalance(model, Goals(soft=("disk",)))
    assert free.changed() == {}  # one replica each: no single move evens 900 against 100
    goal = TopicReplicaDistribution(threshold=1.0, min_gap=0)
    held = plan_rebalance(model, Goals(soft=("disk",), placement=(goal,)))
    assert held.goal_status()["topic_replicas"]["met"]
    counts = _counts(partitions, {(tp.topic, tp.partition): r for tp, r in held.changed().items()})
    assert counts == {"a": {0: 1, 1: 1}}


def test_goal_names_and_settings() -> None:
    assert parse_goals("disk,topic_replicas") == ("disk", "topic_replicas")
    goals = Goals(soft=("disk",), placement=(TopicReplicaDistribution(threshold=1.2),))
    assert goals.soft == ("disk", "topic_replicas")
    assert goals.placement_goals() == (TopicReplicaDistribution(threshold=1.2),)
    assert Goals(soft=("topic_replicas",)).placement_goals() == (TopicReplicaDistribution(),)
    assert Goals().placement_goals() == ()
    with pytest.raises(InvalidArgumentError, match=r"threshold must be a number >= 1, got 0\.5"):
        TopicReplicaDistribution(threshold=0.5)
    with pytest.raises(InvalidArgumentError, match="min gap 5 must not exceed the max gap 3"):
        TopicReplicaDistribution(min_gap=5, max_gap=3)


@settings(max_examples=200, deadline=None)
@given(
    counts=st.lists(st.integers(0, 6), min_size=4, max_size=4),
    topics=st.tuples(st.integers(0, 1), st.integers(0, 1)),
    lower=st.integers(0, 4),
    width=st.integers(0, 3),
)
def test_swap_judged_as_both_moves_together(
    counts: list[int], topics: tuple[int, int], lower: int, width: int
) -> None:
    """Topics 0 and 1 on brokers 0 and 1 (``counts``: t0@b0, t0@b1, t1@b0, t1@b1): a swap of a
    replica of topic ``topics[0]`` from broker 0 with one of ``topics[1]`` from broker 1 is
    acceptable exactly when no (topic, broker) distance outside [lower, upper] grows once both moved."""
    cells = {(0, 0): counts[0], (0, 1): counts[1], (1, 0): counts[2], (1, 1): counts[3]}
    tp, tq = topics
    if cells[(tp, 0)] == 0 or cells[(tq, 1)] == 0:
        return
    partitions: list[PartitionSpec] = []
    for (t, b), count in cells.items():
        for _ in range(count):
            partitions.append(PartitionSpec(f"t{t}", len(partitions), (b,)))
    model = build_model([BrokerSpec(id=0), BrokerSpec(id=1)], partitions)
    bound = TopicReplicaDistribution().bind(model, np.zeros(2, dtype=bool))
    upper = lower + width
    bound.lower[:], bound.upper[:] = lower, upper
    p = next(i for i, s in enumerate(partitions) if s.topic == f"t{tp}" and s.replicas == (0,))
    q = next(i for i, s in enumerate(partitions) if s.topic == f"t{tq}" and s.replicas == (1,))
    after = dict(cells)
    after[(tp, 0)] -= 1
    after[(tp, 1)] += 1
    after[(tq, 1)] -= 1
    after[(tq, 0)] += 1

    def outside(c: int) -> int:
        return max(lower - c, 0) + max(c - upper, 0)

    expected = all(outside(after[k]) <= outside(cells[k]) for k in cells)
    assert bool(bound.swap_allowed(np.array([p]), np.array([q]), 0, 1)[0]) == expected
