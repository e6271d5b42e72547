"""The balanced placer: rack diversity, optimal broker/leader spreads (brute force), pairs, seeds."""

from __future__ import annotations

from collections import Counter
from itertools import combinations, combinations_with_replacement, product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.errors import AdminOperationError, InvalidBrokerError, InvalidReplicationFactorError
from kafka_placement.replicas import Broker, MockRandom, UsableBroker, place_striped
from kafka_placement.replicas.balanced import place_balanced
from kafka_placement.replicas.placement_quality import placement_metrics
from kafka_placement.replicas.quotas import replica_quotas


def _valid_sets(brokers: list[Broker], rf: int) -> list[tuple[int, ...]]:
    racks = {b.rack for b in brokers}
    need = min(rf, len(racks)) if None not in racks else 1
    rack_of = {b.id: b.rack for b in brokers}
    return [
        combo
        for combo in combinations(sorted(rack_of), rf)
        if None in racks or len({rack_of[b] for b in combo}) == need
    ]


def _spread(counts: Counter[int], ids: list[int]) -> int:
    values = [counts.get(b, 0) for b in ids]
    return max(values) - min(values)


def brute_force(brokers: list[Broker], partitions: int, rf: int) -> tuple[int, int]:
    """(min replica spread, min leader spread) over every rack-diverse placement — no shortcuts."""
    ids = sorted(b.id for b in brokers)
    best_replicas = best_leaders = 10**9
    for placement in combinations_with_replacement(_valid_sets(brokers, rf), partitions):
        counts = Counter(b for s in placement for b in s)
        best_replicas = min(best_replicas, _spread(counts, ids))
        for leaders in product(*placement):
            best_leaders = min(best_leaders, _spread(Counter(leaders), ids))
    return best_replicas, best_leaders


# KAFKA-19507 shape: rack A has one broker, racks B and C five each.
LONE_RACK = [Broker(0, "A")] + [Broker(i, "B") for i in range(1, 6)] + [Broker(i, "C") for i in range(6, 11)]

SMALL_CASES = [
    # (racks of brokers 0.., partitions, rf)
    (["a", "b", "c"], 3, 2),
    (["a", "b", "b", "c"], 3, 2),
    (["a", "b", "b", "b"], 3, 2),  # lone rack a, rf == R: broker 0 is forced into every partition
    (["a", "b", "b", "b", "b"], 2, 2),
    (["a", "a", "b", "b", "c"], 3, 3),
    (["a", "b", "b", "c", "c"], 3, 2),  # KAFKA-19507 shape: lone-rack broker must not be overloaded
    (["a", "b", "b", "c", "c"], 3, 3),
    (["a", "a", "a", "b"], 3, 3),  # rf > R
    (["a", "a", "b", "b", "b"], 2, 4),
    ([None, None, None, None], 3, 3),
    ([None, None, None, None, None], 3, 2),
    (["x", "y"], 3, 1),
]


@pytest.mark.parametrize(("racks", "partitions", "rf"), SMALL_CASES)
def test_spreads_equal_brute_force_optimum(racks: list[str | None], partitions: int, rf: int) -> None:
    brokers = [Broker(i, r) for i, r in enumerate(racks)]
    best_replicas, best_leaders = brute_force(brokers, partitions, rf)
    result = place_balanced(brokers, partitions, rf, seed=3)
    metrics = placement_metrics(dict(enumerate(result)), brokers)
    assert metrics.under_diverse == []
    assert metrics.replica_spread == best_replicas
    assert metrics.leader_spread == best_leaders
    _, bound = replica_quotas(brokers, partitions, rf)
    assert bound.spread == best_replicas  # the computed feasibility bound is the true optimum


def test_kafka_19507_lone_rack_broker_is_not_overloaded() -> None:
    # Rack A has one broker, racks B and C five each; rf=2 < 3 racks, so nothing forces broker 0.
    brokers = LONE_RACK
    ours = placement_metrics(dict(enumerate(place_balanced(brokers, 110, 2))), brokers)
    assert ours.replicas_per_broker[0] == 20 and ours.replica_spread == 0
    assert ours.under_diverse == []
    striped = place_striped([UsableBroker(b.id, b.rack) for b in brokers], 110, 2, MockRandom())
    theirs = placement_metrics(dict(enumerate(striped)), brokers)
    assert theirs.replicas_per_broker[0] > 2 * ours.replicas_per_broker[0]  # Kafka's placer: ~2P/3


def test_forced_spread_is_reported() -> None:
    brokers = LONE_RACK
    quotas, bound = replica_quotas(brokers, 110, 3)
    assert quotas[0] == 110 and bound.spread == 110 - 22
    assert "rack 'A'" in bound.forced_racks["A"]


def test_reference_rack_map_seven_partitions() -> None:
    brokers = [
        Broker(b, r)
        for b, r in {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}.items()
    ]
    metrics = placement_metrics(dict(enumerate(place_balanced(brokers, 7, 3))), brokers)
    assert metrics.under_diverse == [] and metrics.replica_spread <= 1 and metrics.leader_spread <= 1


def test_deterministic_for_a_seed() -> None:
    brokers = [Broker(i, f"r{i % 3}") for i in range(9)]
    assert place_balanced(brokers, 50, 3, seed=5) == place_balanced(brokers, 50, 3, seed=5)


@pytest.mark.parametrize(
    ("brokers", "partitions", "rf", "error", "text"),
    [
        ([], 3, 1, InvalidBrokerError, "the broker list is empty"),
        ([Broker(1), Broker(1)], 3, 1, InvalidBrokerError, "duplicate broker id 1"),
        ([Broker(1, "a"), Broker(2)], 3, 1, AdminOperationError, r"Brokers without a rack: \[2\]"),
        (
            [Broker(1), Broker(2)],
            3,
            3,
            InvalidReplicationFactorError,
            "Replication factor: 3 larger than available brokers: 2.",
        ),
        ([Broker(1), Broker(2)], 0, 1, Exception, "Number of partitions must be larger than 0."),
        (
            [Broker(1), Broker(2)],
            2,
            0,
            InvalidReplicationFactorError,
            "Replication factor must be larger than 0.",
        ),
    ],
)
def test_bad_input(
    brokers: list[Broker], partitions: int, rf: int, error: type[Exception], text: str
) -> None:
    with pytest.raises(error, match=text):
        place_balanced(brokers, partitions, rf)


@settings(max_examples=40)
@given(
    rack_sizes=st.lists(st.integers(1, 5), min_size=1, max_size=5),
    unracked=st.booleans(),
    partitions=st.integers(1, 80),
    rf_pick=st.integers(0, 100),
    seed=st.integers(0, 10**6),
)
def test_goals_on_random_clusters(
    rack_sizes: list[int], unracked: bool, partitions: int, rf_pick: int, seed: int
) -> None:
    racks = [None if unracked else f"r{r}" for r, size in enumerate(rack_sizes) for _ in range(size)]
    brokers = [Broker(i, rack) for i, rack in enumerate(racks)]
    rf = 1 + rf_pick % min(len(brokers), 5)
    result = place_balanced(brokers, partitions, rf, seed=seed)
    metrics = placement_metrics(dict(enumerate(result)), brokers)
    quotas, bound = replica_quotas(brokers, partitions, rf)
    assert all(len(set(r)) == rf for r in result)
    assert metrics.under_diverse == []
    # same loads as the bound's vector (which broker of a rack takes a +1 depends on the seed)
    assert sorted(metrics.replicas_per_broker.values()) == sorted(quotas.values())
    assert metrics.replica_spread == bound.spread
    # Every broker's replica quota is at least floor(P/N), so leaders can always be spread to <= 1
    # (also when racks force an uneven replica spread; a 3,000-cluster sweep found no exception).
    assert metrics.leader_spread <= 1
    lows = {b: min(partitions // len(brokers), q) for b, q in quotas.items()}
    assert all(metrics.leaders_per_broker[b] >= lows[b] for b in quotas)


def test_pairs_are_even_on_a_symmetric_cluster() -> None:
    brokers = [Broker(i, f"r{i % 3}") for i in range(9)]  # 27 cross-rack pairs
    metrics = placement_metrics(dict(enumerate(place_balanced(brokers, 270, 3))), brokers)
    # 270 partitions x 3 pairs each over 27 eligible pairs = 30 per pair on average.
    assert metrics.pair_spread <= 2
