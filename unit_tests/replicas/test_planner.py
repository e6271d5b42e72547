"""Reassignment planner: goals reached, lower bound valid, moves close to it, REFERENCE numbers."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.errors import InvalidArgumentError, InvalidBrokerError, InvalidReplicationFactorError
from kafka_placement.replicas import Broker, assign_replicas_to_brokers
from kafka_placement.replicas.balanced import place_balanced
from kafka_placement.replicas.javarandom import JavaRandom
from kafka_placement.replicas.placement_quality import count_moves
from kafka_placement.replicas.planner import Plan, plan_reassignment
from kafka_placement.replicas.quotas import replica_quotas
from kafka_placement.replicas.striped import UsableBroker, place_striped
from kafka_placement.vocabulary import TopicPartition


def _topic(assignment: dict[int, list[int]], name: str = "t") -> dict[TopicPartition, list[int]]:
    return {TopicPartition(name, p): r for p, r in assignment.items()}


def _check_goals(plan: Plan, brokers: list[Broker], rf: int) -> None:
    by_topic: dict[str, int] = {}
    for tp in plan.target:
        by_topic[tp.topic] = by_topic.get(tp.topic, 0) + 1
    for topic, partitions in by_topic.items():
        metrics = plan.metrics[topic]
        _, bound = replica_quotas(brokers, partitions, rf)
        assert metrics.under_diverse == []
        assert metrics.replica_spread == bound.spread
        if bound.spread <= 1:
            assert metrics.leader_spread <= 1
    ids = {b.id for b in brokers}
    assert all(set(r) <= ids and len(set(r)) == rf for r in plan.target.values())
    # the bound is a true lower bound: a plan that meets the goals can never beat it
    assert plan.moves.replicas_added >= plan.lower_bound.replica_moves
    assert plan.moves.leader_changes >= plan.lower_bound.leader_changes


@pytest.mark.parametrize(("old", "new"), [(5, 6), (12, 13)])
def test_reference_adding_one_broker_moves_the_minimum(old: int, new: int) -> None:
    # kafka-reassign-partitions --generate moves ~50% (5->6) / ~77% (12->13) of replicas; the minimum
    # is 1/6 / 1/13.
    partitions, rf = old * new * 2, 3
    current = _topic(assign_replicas_to_brokers(range(old), partitions, rf, seed=11))
    brokers = [Broker(i) for i in range(new)]
    plan = plan_reassignment(current, brokers)
    _check_goals(plan, brokers, rf)
    total = partitions * rf
    assert plan.moves.replicas_added == plan.lower_bound.replica_moves == total // new
    generated = _topic(assign_replicas_to_brokers(range(new), partitions, rf, seed=11))
    from_scratch = count_moves(current, generated).replicas_added
    assert from_scratch >= 2.5 * plan.moves.replicas_added


def test_removing_a_broker_moves_exactly_its_replicas() -> None:
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    old = [Broker(b, r) for b, r in racks.items()]
    current = _topic(assign_replicas_to_brokers(old, 60, 3, 0))
    brokers = [b for b in old if b.id != 5] + [Broker(6, "rack1")]  # replace broker 5 in rack1
    plan = plan_reassignment(current, brokers)
    _check_goals(plan, brokers, 3)
    on_five = sum(5 in r for r in current.values())
    assert plan.moves.replicas_added == plan.lower_bound.replica_moves == on_five
    assert all(5 not in r for r in plan.target.values())


def test_rack_relabel_restores_diversity() -> None:
    brokers_before = [Broker(i, f"r{i % 3}") for i in range(9)]
    current = _topic(dict(enumerate(place_balanced(brokers_before, 45, 3))))
    relabelled = [Broker(i, "r0" if i in (0, 1) else f"r{i % 3}") for i in range(9)]
    plan = plan_reassignment(current, relabelled)
    _check_goals(plan, relabelled, 3)
    assert plan.lower_bound.diversity > 0


def test_already_balanced_plan_is_empty() -> None:
    brokers = [Broker(i, f"r{i % 3}") for i in range(9)]
    current = _topic(dict(enumerate(place_balanced(brokers, 50, 3))))
    plan = plan_reassignment(current, brokers)
    assert plan.changed == {} and plan.moves.replicas_added == 0 and plan.lower_bound.replica_moves == 0


def test_several_topics_and_bytes() -> None:
    brokers = [Broker(i) for i in range(4)]
    current = _topic(assign_replicas_to_brokers(range(3), 6, 2, 0), "a")
    current.update(_topic(assign_replicas_to_brokers(range(3), 9, 3, 0), "b"))
    sizes = {tp: 1000 for tp in current}
    plan = plan_reassignment(current, brokers, sizes=sizes)
    _check_goals_per_topic = {"a": 2, "b": 3}
    for topic, rf in _check_goals_per_topic.items():
        part = {tp: r for tp, r in plan.target.items() if tp.topic == topic}
        assert all(len(set(r)) == rf for r in part.values())
    assert plan.moves.bytes_moved == 1000 * plan.moves.replicas_added
    assert set(plan.metrics) == {"a", "b"}


@pytest.mark.parametrize(
    ("current", "brokers", "error", "text"),
    [
        (
            {("t", 0): [0, 1], ("t", 1): [1]},
            [Broker(0), Broker(1)],
            InvalidArgumentError,
            r"mixes replication factors \[1, 2\]",
        ),
        ({("t", 0): []}, [Broker(0)], InvalidArgumentError, "empty replica list"),
        ({("t", 0): [1, 1]}, [Broker(0), Broker(1)], InvalidArgumentError, r"lists a broker twice: \[1, 1\]"),
        (
            {("t", 0): [0, 1, 2]},
            [Broker(0), Broker(1)],
            InvalidReplicationFactorError,
            "Replication factor: 3 larger than available brokers: 2.",
        ),
        ({("t", 0): [0]}, [], InvalidBrokerError, "the broker list is empty"),
        ({("t", -1): [0]}, [Broker(0)], InvalidArgumentError, "partition key must be"),
    ],
)
def test_bad_input(current: dict, brokers: list[Broker], error: type[Exception], text: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(error, match=text):
        plan_reassignment(current, brokers)


@pytest.mark.parametrize(
    "change",
    ["decommission", "replace", "new rack", "two racks rf3"],
)
def test_common_cluster_changes_move_exactly_the_bound(change: str) -> None:
    old = [Broker(i, f"r{i % 3}") for i in range(12)]
    if change == "two racks rf3":
        old = [Broker(i, f"az{i % 2}") for i in range(12)]
        new = [*old, Broker(12, "az0"), Broker(13, "az1")]
    elif change == "decommission":
        new = [b for b in old if b.id != 7]
    elif change == "replace":
        new = [b for b in old if b.id != 7] + [Broker(12, old[7].rack)]
    else:
        new = old + [Broker(12 + k, "r-new") for k in range(3)]
    current = _topic(assign_replicas_to_brokers(old, 600, 3, seed=3))
    plan = plan_reassignment(current, new)
    _check_goals(plan, new, 3)
    assert plan.moves.replicas_added == plan.lower_bound.replica_moves
    assert plan.moves.leader_changes <= 1.1 * plan.lower_bound.leader_changes


def test_cluster_scope_balances_totals_of_many_small_topics() -> None:
    old = [Broker(i, f"r{i % 3}") for i in range(9)]
    new = [*old, Broker(9, "r0"), Broker(10, "r1"), Broker(11, "r2")]
    current: dict[TopicPartition, list[int]] = {}
    for t in range(40):
        current.update(_topic(assign_replicas_to_brokers(old, 4, 3, seed=t), f"t{t}"))
    per_topic = plan_reassignment(current, new)
    cluster = plan_reassignment(current, new, scope="cluster")
    metrics = cluster.metrics["rf=3"]
    _, bound = replica_quotas(new, len(current), 3)
    assert metrics.under_diverse == [] and metrics.replica_spread == bound.spread == 0
    assert metrics.leader_spread <= 1
    assert cluster.moves.replicas_added == cluster.lower_bound.replica_moves == 120  # 480 replicas / 12 x 3
    assert cluster.moves.replicas_added < per_topic.moves.replicas_added
    with pytest.raises(InvalidArgumentError, match="scope must be 'topic' or 'cluster', got 'rack'"):
        plan_reassignment(current, new, scope="rack")


def _scenario(
    rnd: random.Random, allow_removals: bool
) -> tuple[dict[TopicPartition, list[int]], list[Broker], int]:
    n = rnd.randint(2, 14)
    num_racks = rnd.randint(1, 4)
    racked = rnd.random() < 0.7
    old = [Broker(i, f"r{i % num_racks}" if racked else None) for i in range(n)]
    rf = rnd.randint(1, min(n, 4))
    partitions = rnd.randint(1, 150)
    kind = rnd.choice(["adminutils", "balanced", "striped"])
    seed = rnd.randint(0, 10**6)
    if kind == "adminutils":
        base = assign_replicas_to_brokers(old, partitions, rf, seed=seed)
    elif kind == "balanced":
        base = dict(enumerate(place_balanced(old, partitions, rf, seed=seed)))
    else:
        usable = [UsableBroker(b.id, b.rack) for b in old]
        base = dict(enumerate(place_striped(usable, partitions, rf, JavaRandom(seed))))
    removed = set(rnd.sample(range(n), rnd.randint(0, min(2, n - 1)))) if allow_removals else set()
    added = [
        Broker(n + k, f"r{rnd.randrange(num_racks)}" if racked else None) for k in range(rnd.randint(0, 3))
    ]
    brokers = [b for b in old if b.id not in removed] + added
    if len(brokers) < rf:
        brokers = old + added
    return _topic(base), brokers, rf


def test_moves_within_ten_percent_of_the_bound_on_random_clusters() -> None:
    """200 random clusters (even racks, placed by AdminUtils / striped / balanced), 0–3 brokers added."""
    rnd = random.Random(20261121)
    within = total_moves = total_bound = 0
    for _ in range(200):
        current, brokers, rf = _scenario(rnd, allow_removals=False)
        plan = plan_reassignment(current, brokers)
        _check_goals(plan, brokers, rf)
        moves, bound = plan.moves.replicas_added, plan.lower_bound.replica_moves
        total_moves += moves
        total_bound += bound
        within += moves <= 1.1 * bound
    assert within >= 195  # 1000-sample run: 996 within 1.1x, aggregate 1.0006 (misses: +1/+2 moves)
    assert total_moves <= 1.01 * total_bound


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32))
def test_goals_and_valid_bound_with_removals(seed: int) -> None:
    current, brokers, rf = _scenario(random.Random(seed), allow_removals=True)
    plan = plan_reassignment(current, brokers)
    _check_goals(plan, brokers, rf)
    assert plan.moves.replicas_added <= 2 * max(1, plan.lower_bound.replica_moves) + 2


@pytest.mark.full
def test_moves_ratio_large_sample() -> None:
    rnd = random.Random(7)
    ratios = []
    for _ in range(2000):
        current, brokers, rf = _scenario(rnd, allow_removals=False)
        plan = plan_reassignment(current, brokers)
        _check_goals(plan, brokers, rf)
        if plan.lower_bound.replica_moves:
            ratios.append(plan.moves.replicas_added / plan.lower_bound.replica_moves)
    assert sum(r <= 1.1 for r in ratios) >= 0.98 * len(ratios)


def test_rack_level_minimum_catches_forced_chains() -> None:
    # Live topic (13 partitions, RF 2) after removing broker 5 (rack1): broker 5's partitions all
    # pair it with rack3, so two of their slots must reach rack3 through a chain (+2 moves).
    current = {
        TopicPartition("t", p): r
        for p, r in enumerate(
            [
                [0, 3],
                [4, 2],
                [1, 5],
                [0, 3],
                [4, 2],
                [1, 5],
                [3, 2],
                [1, 5],
                [0, 4],
                [3, 2],
                [1, 5],
                [0, 4],
                [3, 0],
            ]
        )
    }
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2"}
    brokers = [Broker(b, r) for b, r in racks.items()]
    plan = plan_reassignment(current, brokers)
    _check_goals(plan, brokers, 2)
    assert (plan.lower_bound.over_quota, plan.lower_bound.diversity, plan.lower_bound.rack_level) == (4, 4, 6)
    assert plan.moves.replicas_added == plan.lower_bound.replica_moves == 6


def test_rack_level_minimum_small_cases() -> None:
    from kafka_placement.replicas.planner import rack_level_minimum

    a, b, c = "a", "b", "c"
    # Two partitions lacking rack c, rack c must hold both: 2 additions.
    assert rack_level_minimum([frozenset({a, b}), frozenset({a, b})], {a: 1, b: 1, c: 2}, 2) == 2
    # Already at the totals: nothing to add.
    assert rack_level_minimum([frozenset({a, b}), frozenset({b, c})], {a: 1, b: 2, c: 1}, 2) == 0
    # A partition that lost a replica (one rack left) must add one.
    assert rack_level_minimum([frozenset({a})], {a: 1, b: 1, c: 0}, 2) == 1


def test_a_quota_overshot_mid_fill_and_repaired_later_keeps_the_incremental_plan() -> None:
    """Found by hypothesis in stop 39's CI: 8 brokers on racks of 3/3/2, rf 4, 101 partitions. Broker 3's
    surplus used up the room brokers 0 and 1 had, so broker 2 briefly went above quota during the fill;
    later moves brought every broker back to quota, but the plan still fell back to a fresh placement
    (64 moves against a bound of 27). The final state decides now."""
    current, brokers, rf = _scenario(random.Random(10757590), allow_removals=True)
    assert (len(current), rf, len(brokers)) == (101, 4, 8)
    plan = plan_reassignment(current, brokers)
    _check_goals(plan, brokers, rf)
    assert plan.warnings == []
    assert plan.lower_bound.replica_moves == 27
    assert plan.moves.replicas_added <= 27 + 2
