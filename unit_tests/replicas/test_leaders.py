"""Leader balancing: reaches the best spread any leader choice allows, with few changes."""

from __future__ import annotations

import random
from itertools import product

from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.replicas.leaders import balance_leaders, greedy_leaders


def _spread(leaders: list[int], brokers: list[int]) -> int:
    counts = {b: 0 for b in brokers}
    for b in leaders:
        counts[b] += 1
    return max(counts.values()) - min(counts.values())


def test_changes_only_what_is_needed() -> None:
    sets = [[0, 1], [0, 2], [0, 3], [1, 2]]
    leaders = [0, 0, 0, 1]
    low, high = dict.fromkeys(range(4), 1), dict.fromkeys(range(4), 1)
    changed = balance_leaders(sets, leaders, low, high)
    assert sorted(leaders) == [0, 1, 2, 3]
    assert changed == 2  # broker 0 gives two partitions away: to 2 and to 3


def test_alternating_path_of_length_two() -> None:
    # Broker 0 leads both partitions it shares; only via partition 1 (0 -> 1) and partition 2
    # (1 -> 2) can broker 2 get a leadership.
    sets = [[0, 3], [0, 1], [1, 2], [3, 0]]
    leaders = [0, 0, 1, 3]
    low, high = dict.fromkeys(range(4), 1), dict.fromkeys(range(4), 1)
    balance_leaders(sets, leaders, low, high)
    assert sorted(leaders) == [0, 1, 2, 3]
    assert all(leader in replicas for leader, replicas in zip(leaders, sets, strict=True))


@given(seed=st.integers(0, 10**6))
def test_matches_brute_force_on_small_sets(seed: int) -> None:
    rnd = random.Random(seed)
    brokers = list(range(rnd.randint(2, 5)))
    rf = rnd.randint(1, len(brokers))
    sets = [rnd.sample(brokers, rf) for _ in range(rnd.randint(1, 6))]
    best = min(_spread(list(choice), brokers) for choice in product(*sets))
    each, extra = divmod(len(sets), len(brokers))
    low = {b: each for b in brokers}
    high = {b: each + (1 if extra else 0) for b in brokers}
    leaders = greedy_leaders(sets, high)
    balance_leaders(sets, leaders, low, high)
    assert all(leader in replicas for leader, replicas in zip(leaders, sets, strict=True))
    if best <= 1:  # the floor/ceil target is reachable: we must reach it
        assert _spread(leaders, brokers) == best
