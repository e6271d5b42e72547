"""Replica quotas: the water-filling bound, forced racks, preferences, and the realisability claim."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.errors import AdminOperationError, InvalidBrokerError
from kafka_placement.replicas.quotas import leader_quotas, rack_bounds, rack_layout, replica_quotas
from kafka_placement.vocabulary import Broker


def _brokers(sizes: list[int]) -> list[Broker]:
    racks = [f"r{i}" for i, size in enumerate(sizes) for _ in range(size)]
    return [Broker(b, r) for b, r in enumerate(racks)]


def column_fill(brokers: list[Broker], quotas: dict[int, int], partitions: int) -> list[list[int]]:
    """The construction from the module docstring: brokers' replicas laid out rack by rack in one
    sequence of length rf*P; partition i takes positions i, i+P, i+2P, ..."""
    sequence = [b.id for b in sorted(brokers, key=lambda b: (str(b.rack), b.id)) for _ in range(quotas[b.id])]
    rf = len(sequence) // partitions
    return [[sequence[i + k * partitions] for k in range(rf)] for i in range(partitions)]


def test_no_racks_is_floor_and_ceil() -> None:
    quotas, bound = replica_quotas([Broker(i) for i in range(7)], 10, 3)
    assert sorted(quotas.values()) == [4] * 5 + [5] * 2
    assert (bound.min_load, bound.max_load, bound.forced_racks) == (4, 5, {})


def test_lone_rack_not_forced_when_rf_below_racks() -> None:
    quotas, bound = replica_quotas(_brokers([1, 5, 5]), 110, 2)
    assert set(quotas.values()) == {20} and bound.spread == 0


def test_lone_rack_forced_when_rf_reaches_racks() -> None:
    quotas, bound = replica_quotas(_brokers([1, 5, 5]), 110, 3)
    assert quotas[0] == 110 and set(quotas[b] for b in range(1, 11)) == {22}
    # rf == R: the lone rack must hold P replicas, the big racks may hold no more than P.
    assert "must hold a replica of each of the 110 partitions" in bound.forced_racks["r0"]
    assert "may hold at most one replica of each of the 110 partitions" in bound.forced_racks["r1"]


def test_big_rack_capped_when_rf_below_racks() -> None:
    # rf 2 on racks of 1, 1 and 10 brokers: the big rack may hold at most P replicas.
    quotas, bound = replica_quotas(_brokers([1, 1, 10]), 60, 2)
    assert quotas[0] == quotas[1] == 30 and set(quotas[b] for b in range(2, 12)) == {6}
    assert "may hold at most one replica" in bound.forced_racks["r2"]


def test_plus_ones_go_to_brokers_holding_most() -> None:
    brokers = [Broker(i) for i in range(4)]
    quotas, _ = replica_quotas(brokers, 5, 1, current={2: 3, 3: 1})
    assert quotas == {0: 1, 1: 1, 2: 2, 3: 1}


def test_rack_bounds() -> None:
    layout = rack_layout(_brokers([2, 3]))
    assert rack_bounds(layout, 10, 1) == {"r0": (0, 10), "r1": (0, 10)}
    assert rack_bounds(layout, 10, 2) == {"r0": (10, 10), "r1": (10, 10)}
    assert rack_bounds(layout, 10, 3) == {"r0": (10, 20), "r1": (10, 30)}


def test_leader_quotas_ranges() -> None:
    low, high = leader_quotas({0: 5, 1: 5, 2: 1}, 7)
    assert low == {0: 2, 1: 2, 2: 1} and high == {0: 3, 1: 3, 2: 1}


def test_layout_errors() -> None:
    with pytest.raises(InvalidBrokerError, match="empty"):
        rack_layout([])
    with pytest.raises(AdminOperationError, match=r"Brokers without a rack: \[1\]"):
        rack_layout([Broker(0, "a"), Broker(1)])


@given(
    sizes=st.lists(st.integers(1, 4), min_size=1, max_size=5),
    partitions=st.integers(1, 40),
    rf_pick=st.integers(0, 50),
)
def test_quotas_are_realised_by_the_column_fill(sizes: list[int], partitions: int, rf_pick: int) -> None:
    """Every quota vector we return is realisable: the column fill gives rf distinct brokers on
    min(rf, R) distinct racks per partition, with exactly the quotas."""
    brokers = _brokers(sizes)
    rf = 1 + rf_pick % min(len(brokers), 5)
    quotas, bound = replica_quotas(brokers, partitions, rf)
    assert sum(quotas.values()) == partitions * rf
    rack_of = {b.id: b.rack for b in brokers}
    placement = column_fill(brokers, quotas, partitions)
    for replicas in placement:
        assert len(set(replicas)) == rf
        assert len({rack_of[b] for b in replicas}) == min(rf, len(sizes))
    assert Counter(b for r in placement for b in r) == Counter({b: q for b, q in quotas.items() if q})
    assert bound.spread == max(quotas.values()) - min(quotas.values())
