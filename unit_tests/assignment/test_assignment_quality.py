"""Assignment metrics: KIP-54 balance score against its definition (pairwise), movement, locality."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.assignment import Member, TopicPartition
from kafka_placement.assignment.assignment_quality import (
    assignment_metrics,
    balance_score,
    partitions_moved,
    rack_local_fraction,
)

TP = TopicPartition


def _pairwise(sizes: list[int]) -> int:
    return sum(abs(a - b) for a, b in combinations(sizes, 2))


@given(st.lists(st.integers(0, 50), max_size=12))
def test_balance_score_is_sum_of_pairwise_differences(sizes: list[int]) -> None:
    assignment = {f"m{i}": [TP("t", p) for p in range(n)] for i, n in enumerate(sizes)}
    assert balance_score(assignment) == _pairwise(sizes)


def test_kip54_example_scores() -> None:
    # KIP-54 example 3 after C2 joins: range leaves C2 empty (sizes 2,2,0 → score 4);
    # sticky/roundrobin give sizes 2,1,1 (score 2)
    assert balance_score({"C0": [TP("t0", 0), TP("t1", 0)], "C1": [TP("t0", 1), TP("t1", 1)], "C2": []}) == 4
    assert balance_score({"C0": [TP("t0", 0), TP("t1", 0)], "C1": [TP("t0", 1)], "C2": [TP("t1", 1)]}) == 2


def test_moved_counts_owner_changes_only() -> None:
    before = {"a": [TP("t", 0), TP("t", 1)], "b": [TP("t", 2), TP("gone", 0)]}
    after = {"a": [TP("t", 0)], "b": [TP("t", 1), TP("t", 2)], "c": [TP("new", 0)]}
    assert partitions_moved(before, after) == 1


def test_rack_local_fraction_and_all_metrics() -> None:
    members = {"a": Member(["t"], rack="r1"), "b": Member(["t"], rack="r2"), "c": Member(["t"])}
    racks = {TP("t", 0): {"r1"}, TP("t", 1): {"r1"}, TP("t", 2): {"r2", "r1"}, TP("t", 3): set()}
    assignment = {"a": [TP("t", 0), TP("t", 3)], "b": [TP("t", 1), TP("t", 2)], "c": [TP("t", 4)]}
    # measured: a's 2 (1 local), b's 2 (1 local); c has no rack
    assert rack_local_fraction(assignment, members, racks) == 0.5
    m = assignment_metrics(assignment, previous={"a": [TP("t", 4)]}, members=members, partition_racks=racks)
    assert (m.min_size, m.max_size, m.balance_score, m.moved, m.rack_local_fraction) == (1, 2, 2, 1, 0.5)
    assert rack_local_fraction({"c": [TP("t", 0)]}, members, racks) is None
    empty = assignment_metrics({})
    assert (empty.min_size, empty.max_size, empty.balance_score, empty.moved) == (0, 0, 0, None)
