"""One replica at a time: expected step lists worked by hand; invariants (every step a valid list,
each step holds at most one replica more than the list before it while it runs, the last step is the
target) checked in plain set arithmetic over arbitrary lists."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.replicas.reassignment_steps import one_replica_steps


def test_nothing_to_do() -> None:
    assert one_replica_steps([1, 2, 3], [1, 2, 3]) == []


def test_a_reorder_is_one_step() -> None:
    assert one_replica_steps([1, 2, 3], [3, 1, 2]) == [(3, 1, 2)]


def test_one_change_is_one_step() -> None:
    assert one_replica_steps([1, 2, 3], [1, 2, 4]) == [(1, 2, 4)]


def test_three_new_replicas_take_three_steps_leader_last() -> None:
    # old 2 then 3 are replaced in place, the leader 1 last; the last step is the target's order
    assert one_replica_steps([1, 2, 3], [4, 5, 6]) == [(1, 4, 3), (1, 4, 5), (4, 5, 6)]


def test_a_kept_leader_stays_first_until_the_target_reorders() -> None:
    assert one_replica_steps([0, 3], [4, 0]) == [(4, 0)]
    assert one_replica_steps([0, 3, 5], [4, 1, 0]) == [(0, 4, 5), (4, 1, 0)]


def test_same_rack_replaced_first() -> None:
    racks = {1: "a", 2: "b", 3: "c", 4: "c", 5: "b"}
    # 4 (rack c) replaces 3 (rack c), 5 (rack b) replaces 2 (rack b): racks a, b, c at every step
    assert one_replica_steps([1, 2, 3], [1, 4, 5], racks) == [(1, 2, 4), (1, 4, 5)]
    # without racks, in order: 4 replaces 2, then 5 replaces 3
    assert one_replica_steps([1, 2, 3], [1, 4, 5]) == [(1, 4, 3), (1, 4, 5)]


def test_the_leader_goes_last_even_when_its_rack_pairs_it_first() -> None:
    racks = {1: "a", 2: "b", 3: "a", 4: "b"}
    assert one_replica_steps([1, 2], [3, 4], racks) == [(1, 4), (3, 4)]


def test_replication_factor_changes() -> None:
    assert one_replica_steps([1, 2], [1, 2, 3, 4]) == [(1, 2, 3), (1, 2, 3, 4)]
    # shrinking: the unpaired replica leaves first, then 4 replaces 2
    assert one_replica_steps([1, 2, 3], [1, 4]) == [(1, 2), (1, 4)]
    # the leader leaves in the last step
    assert one_replica_steps([1, 2, 3], [4]) == [(1, 2), (1, 4), (4,)]
    assert one_replica_steps([1, 2, 3], [2]) == [(1, 2), (2,)]


@pytest.mark.parametrize(
    ("current", "target", "needle"),
    [
        ([], [1], "1..1024 replicas, got 0"),
        ([1], [], "1..1024 replicas, got 0"),
        ([1, 1], [2], "names a broker twice"),
        ([1], [-1], "[0, 2147483647], got -1"),
        ([1], [True], "got True"),
        ([1], ["2"], "got '2'"),
        ([1], [2**31], "got 2147483648"),
        (list(range(1025)), [1], "got 1025"),
    ],
)
def test_bad_lists_are_refused(current: list[object], target: list[object], needle: str) -> None:
    with pytest.raises(InvalidArgumentError) as err:
        one_replica_steps(current, target)  # type: ignore[arg-type]
    assert needle in str(err.value)


_lists = st.lists(st.integers(0, 11), min_size=1, max_size=6, unique=True)


@settings(max_examples=300)
@given(
    current=_lists,
    target=_lists,
    racks=st.none() | st.dictionaries(st.integers(0, 11), st.sampled_from(["r1", "r2", "r3"])),
)
def test_every_step_valid_grows_by_one_at_most_and_ends_at_the_target(
    current: list[int], target: list[int], racks: dict[int, str] | None
) -> None:
    steps = one_replica_steps(current, target, racks)
    if current == target:
        assert steps == []
        return
    assert steps[-1] == tuple(target)
    prev = list(current)
    for step in steps:
        assert len(step) == len(set(step)) >= 1
        assert set(step) <= set(current) | set(target)
        # while a step runs Kafka holds prev ∪ step: at most one replica more than before it
        assert len(set(prev) | set(step)) <= len(set(prev)) + 1
        # and never more than the larger of the two lists plus one
        assert len(set(prev) | set(step)) <= max(len(current), len(target)) + 1
        prev = list(step)
    # no wasted step: each one copies one new replica or removes one (the last may also reorder)
    copies = len(set(target) - set(current))
    removals_alone = max(0, len(set(current) - set(target)) - copies)
    assert len(steps) == max(1, copies + removals_alone)


@settings(max_examples=300)
@given(
    current=_lists,
    target=_lists,
    racks=st.none() | st.dictionaries(st.integers(0, 11), st.sampled_from(["r1", "r2", "r3"])),
)
def test_the_preferred_leader_leads_every_step_but_the_last(
    current: list[int], target: list[int], racks: dict[int, str] | None
) -> None:
    steps = one_replica_steps(current, target, racks)
    assert all(step[0] == current[0] for step in steps[:-1])


@settings(max_examples=200)
@given(current=_lists, target=_lists, stop=st.integers(0, 6))
def test_resuming_from_any_step_reaches_the_target_in_the_steps_left(
    current: list[int], target: list[int], stop: int
) -> None:
    # an apply interrupted after some steps, run again: it starts from the lists it finds
    steps = one_replica_steps(current, target)
    if stop >= len(steps):
        return
    resumed = one_replica_steps(list(steps[stop - 1]) if stop else current, target)
    assert len(resumed) <= len(steps) - stop
    if resumed:
        assert resumed[-1] == tuple(target)
    else:
        assert steps[stop - 1] == tuple(target)
