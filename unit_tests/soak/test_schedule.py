"""The schedule is a function of the seed, its faults never overlap and stay inside the window."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.soak.schedule import BROKER_KINDS, MEMBER_KINDS, fault_schedule

KW = {"brokers": [0, 1, 2, 3, 4, 5], "partitions": 12, "members": ["a", "b"], "interval_s": 15.0,
      "member_pause_s": 12.0}


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32), minutes=st.floats(1.0, 30.0))
def test_same_seed_same_faults_none_overlapping_all_inside_the_window(seed: int, minutes: float) -> None:
    duration = minutes * 60
    plan = fault_schedule(seed, duration, **KW)  # type: ignore[arg-type]
    assert plan == fault_schedule(seed, duration, **KW)  # type: ignore[arg-type]
    for fault, after in itertools.pairwise(plan):
        assert fault.at_s + fault.hold_s < after.at_s
    for fault in plan:
        assert fault.at_s >= 20.0 and fault.at_s + fault.hold_s <= duration - 20.0
        assert fault.kind in BROKER_KINDS + MEMBER_KINDS
        if fault.kind in MEMBER_KINDS:
            assert fault.target in KW["members"]  # type: ignore[operator]
        if fault.kind == "member-pause":
            assert fault.hold_s == 12.0


def test_three_minutes_hold_faults_of_every_kind_across_seeds_and_seeds_differ() -> None:
    plans = [fault_schedule(seed, 180.0, **KW) for seed in range(20)]  # type: ignore[arg-type]
    assert all(len(plan) >= 3 for plan in plans)
    assert {f.kind for plan in plans for f in plan} == set(BROKER_KINDS + MEMBER_KINDS)
    assert len({tuple(plan) for plan in plans}) == 20


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="must be > 0"):
        fault_schedule(1, 0.0, **KW)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="needs brokers"):
        fault_schedule(1, 60.0, **{**KW, "members": []})  # type: ignore[arg-type]
