"""The rack rule's two forms (plain for one partition, numpy for many) against each other and against
the rule written out here: a partition should span min(rf, racks) distinct racks (KIP-36)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.replicas.rack_rule import rack_shortfall, rack_shortfalls, racks_wanted

rows = st.integers(1, 5).flatmap(
    lambda racks: st.tuples(
        st.just(racks),
        st.lists(st.lists(st.integers(0, racks - 1), min_size=1, max_size=5), min_size=1, max_size=30),
    )
)


@settings(max_examples=300, deadline=None)
@given(rows)
def test_numpy_and_plain_shortfalls_agree_with_the_rule(case: tuple[int, list[list[int]]]) -> None:
    racks, partitions = case
    width = max(len(p) for p in partitions)
    matrix = np.full((len(partitions), width), -1, dtype=np.int32)
    for i, p in enumerate(partitions):
        matrix[i, : len(p)] = p
    rf = np.array([len(p) for p in partitions], dtype=np.int16)
    vector = rack_shortfalls(matrix, rf, racks).tolist()
    plain = [rack_shortfall(p, len(p), racks) for p in partitions]
    # the rule, written out: how many racks short of min(rf, racks)
    expected = [max(0, min(len(p), racks) - len(set(p))) for p in partitions]
    assert vector == plain == expected
    assert racks_wanted(rf, racks).tolist() == [min(len(p), racks) for p in partitions]


def test_examples() -> None:
    assert rack_shortfall(["a", "a", "b"], 3, 3) == 1  # RF 3 on 3 racks wants all three
    assert rack_shortfall(["a", "a", "b", "b"], 4, 2) == 0  # RF 4 on 2 racks: both racks suffice
    assert rack_shortfall([None], 1, 1) == 0
    assert racks_wanted(5, 3) == 3 and racks_wanted(2, 3) == 2
