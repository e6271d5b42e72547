"""Placement metrics and move counting on hand-checked examples."""

from __future__ import annotations

from kafka_placement.replicas.placement_quality import count_moves, placement_metrics
from kafka_placement.vocabulary import Broker, TopicPartition

BROKERS = [Broker(0, "a"), Broker(1, "a"), Broker(2, "b"), Broker(3, "b")]


def test_counts_and_spreads() -> None:
    m = placement_metrics({0: [0, 2], 1: [2, 1], 2: [0, 1]}, BROKERS)
    assert m.replicas_per_broker == {0: 2, 1: 2, 2: 2, 3: 0}
    assert m.leaders_per_broker == {0: 2, 1: 0, 2: 1, 3: 0}
    assert m.replicas_per_rack == {"a": 4, "b": 2} and m.leaders_per_rack == {"a": 2, "b": 1}
    assert (m.replica_spread, m.leader_spread, m.rack_replica_spread, m.rack_leader_spread) == (2, 2, 2, 1)
    assert m.rack_diversity == {2: 2, 1: 1} and m.under_diverse == [2]
    # rf 2 <= 2 racks: only cross-rack pairs are eligible: (0,2)=1 (0,3)=0 (1,2)=1 (1,3)=0
    assert m.pair_counts == {(0, 2): 1, (1, 2): 1, (0, 1): 1} and m.pair_spread == 1


def test_actual_leaders_override_and_offline() -> None:
    m = placement_metrics({0: [0, 2], 1: [2, 1]}, BROKERS, leaders={0: 2, 1: -1})
    assert m.leaders_per_broker == {0: 0, 1: 0, 2: 1, 3: 0}


def test_no_racks_and_repeated_broker() -> None:
    brokers = [Broker(0), Broker(1)]
    m = placement_metrics({0: [0, 0]}, brokers)
    assert m.under_diverse == [0] and m.rack_diversity == {1: 1}


def test_count_moves_with_bytes() -> None:
    t = TopicPartition
    current = {t("x", 0): [0, 1], t("x", 1): [1, 2], t("x", 2): [2, 0]}
    target = {t("x", 0): [1, 0], t("x", 1): [1, 3], t("x", 2): [3, 4]}
    moves = count_moves(current, target, sizes={t("x", 1): 100, t("x", 2): 10})
    assert moves.summary() == {
        "replicas_added": 3,
        "replicas_removed": 3,
        "partitions_moved": 2,
        "leader_changes": 2,
        "bytes_moved": 100 + 2 * 10,
    }
    assert count_moves(current, target).bytes_moved is None
