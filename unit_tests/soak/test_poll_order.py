"""Jepsen's consumer invariants (nonmonotonic poll, poll skip, inconsistent offsets) on hand-built logs:
each log holds exactly the anomaly it is named for (or none), so the expected finding is known by
construction."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_placement.soak.events import Ack, Consumed, Fault, Ownership
from kafka_placement.soak.invariants import close_at_deaths
from kafka_placement.soak.poll_order import (
    InconsistentOffset,
    inconsistent_offsets,
    log_offsets,
    ownership_periods,
    poll_anomalies,
)

FOREVER = [Ownership("g", "m", 1, (0,), 0.0, None)]


def acks(partition: int, n: int) -> list[Ack]:
    """Producer "p" wrote records 0..n-1 to ``partition`` at offsets 0..n-1."""
    return [Ack("p", s, None, None, partition, s, float(s)) for s in range(n)]


def reads(
    offsets: list[int], t0: float = 1.0, member: str = "m", partition: int = 0, group: str = "g"
) -> list[Consumed]:
    """``member`` read ``offsets`` in this order, one per 0.1 s from ``t0`` (record s sits at offset s)."""
    return [Consumed(group, member, partition, o, "p", o, t0 + i / 10) for i, o in enumerate(offsets)]


def found(consumed: list[Consumed], owns: list[Ownership], n: int = 10) -> list[tuple[str, tuple[int, int]]]:
    offsets = log_offsets(acks(0, n), consumed)
    return [(a.kind, a.offsets) for a in poll_anomalies(consumed, owns, offsets)]


# ---------------------------------------------------------------- nonmonotonic poll
def test_reading_the_log_in_order_is_clean() -> None:
    assert found(reads(list(range(10))), FOREVER) == []


def test_going_back_within_one_holding_is_nonmonotonic() -> None:
    # 2 → 4 passes over 3, which it read already: no skip, the step back is the one anomaly
    assert found(reads([0, 1, 2, 3, 2, 4]), FOREVER) == [("nonmonotonic", (3, 2))]
    # forward again past what it had read is a skip of the unread part only
    assert found(reads([0, 1, 2, 3, 2, 6]), FOREVER) == [("nonmonotonic", (3, 2)), ("skip", (2, 6))]


def test_reading_one_offset_twice_in_a_row_is_nonmonotonic_too() -> None:
    # Jepsen: a delta below 1, the same record delivered again without a reassignment
    assert found(reads([0, 1, 1, 2]), FOREVER) == [("nonmonotonic", (1, 1))]


def test_after_a_release_and_a_new_acquisition_the_member_may_start_again_at_the_committed_offset() -> None:
    owns = [Ownership("g", "m", 1, (0,), 0.0, 5.0), Ownership("g", "m", 2, (0,), 6.0, None)]
    consumed = reads([0, 1, 2, 3, 4, 5]) + reads([3, 4, 5, 6], t0=6.5)  # committed 3 before the revoke
    assert found(consumed, owns) == []
    # ... but inside the new period it must move forward
    assert found([*consumed, *reads([5], t0=8.0)], owns) == [("nonmonotonic", (6, 5))]


def test_a_holding_kept_across_an_incremental_reassignment_is_one_period() -> None:
    # cooperative: partition 1 added at 5.0 (release and acquisition carry the same instant); partition 0
    # was never given up, so its position may not go back
    owns = [Ownership("g", "m", 1, (0,), 0.0, 5.0), Ownership("g", "m", 2, (0, 1), 5.0, None)]
    assert [p for p in ownership_periods(owns)] == [("g", "m", 0), ("g", "m", 1)]
    assert ownership_periods(owns)[("g", "m", 0)] == [(0.0, float("inf"))]
    consumed = reads([0, 1, 2, 3]) + reads([2, 3], t0=5.5)
    assert found(consumed, owns) == [("nonmonotonic", (3, 2))]


def test_a_killed_member_restarted_reads_again_from_the_commit_without_an_anomaly() -> None:
    # killed at 4.0 with its holding open (a killed process logs no release); the new process holds
    # partition 0 from 9.0 and starts at the committed offset 2
    owns = close_at_deaths(
        [Ownership("g", "m", 1, (0,), 0.0, None), Ownership("g", "m", 1, (0,), 9.0, None)],
        [Fault("member-kill", "m", 4.0)],
    )
    consumed = reads([0, 1, 2, 3, 4]) + reads([2, 3, 4, 5], t0=9.5)
    assert found(consumed, owns) == []
    assert found(consumed, [Ownership("g", "m", 1, (0,), 0.0, None)]) == [("nonmonotonic", (4, 2))]


def test_members_groups_and_partitions_are_judged_apart() -> None:
    owns = [
        Ownership("g", "a", 1, (0, 1), 0.0, None),
        Ownership("g", "b", 1, (0,), 0.0, None),
        Ownership("h", "a", 1, (0,), 0.0, None),
    ]
    consumed = (
        reads([0, 1, 2, 3], member="a")
        + reads([0, 1], member="b")
        + reads([1, 2], group="h", member="a")
        + reads([0, 1], member="a", partition=1)
    )
    assert poll_anomalies(consumed, owns, log_offsets(acks(0, 10) + acks(1, 10), consumed)) == []


# ---------------------------------------------------------------- poll skip
def test_jumping_over_records_the_log_holds_is_a_skip_naming_them() -> None:
    consumed = reads([0, 1, 2, 5, 6])
    [skip] = poll_anomalies(consumed, FOREVER, log_offsets(acks(0, 10), consumed))
    assert (skip.kind, skip.offsets, skip.skipped, skip.skipped_count) == ("skip", (2, 5), (3, 4), 2)
    assert (skip.group, skip.member, skip.partition, skip.t) == ("g", "m", 0, 1.3)


def test_a_gap_no_source_knows_a_record_in_is_no_skip() -> None:
    # offsets 3 and 4 hold nothing anyone acknowledged, read or read back: not a record to miss
    written = [a for a in acks(0, 10) if a.offset not in (3, 4)]
    consumed = reads([0, 1, 2, 5, 6])
    assert poll_anomalies(consumed, FOREVER, log_offsets(written, consumed)) == []
    # the topic read back after the run knows offset 4: now it was skipped
    readback = {("q", 0): (0, 4)}
    [skip] = poll_anomalies(consumed, FOREVER, log_offsets(written, consumed, readback))
    assert (skip.offsets, skip.skipped) == ((2, 5), (4,))


def test_a_new_period_may_start_past_what_was_read_before() -> None:
    # another member committed up to 7 meanwhile: the new period starts there
    owns = [Ownership("g", "m", 1, (0,), 0.0, 2.0), Ownership("g", "m", 2, (0,), 3.0, None)]
    assert found(reads([0, 1, 2]) + reads([7, 8], t0=3.5), owns) == []
    assert found(reads([0, 1, 2]) + reads([7, 8], t0=3.5), FOREVER) == [("skip", (2, 7))]


@settings(max_examples=200, deadline=None)
@given(offsets=st.lists(st.integers(0, 29), min_size=1, max_size=40))
def test_any_read_order_on_a_dense_log_gives_exactly_its_backward_steps_and_jumps(offsets: list[int]) -> None:
    """On a log whose offsets 0..29 all hold records, consecutive reads (a, b) are nonmonotonic when
    b <= a, and skip the offsets between them not read yet (everything above the highest read so far)."""
    expected = []
    highest = offsets[0]
    for a, b in itertools.pairwise(offsets):
        if b <= a:
            expected.append(("nonmonotonic", (a, b), 0))
        elif b - max(a, highest) > 1:
            expected.append(("skip", (a, b), b - max(a, highest) - 1))
        highest = max(highest, b)
    consumed = reads(offsets)
    got = poll_anomalies(consumed, FOREVER, log_offsets(acks(0, 30), consumed))
    assert [(x.kind, x.offsets, x.skipped_count) for x in got] == expected


@settings(max_examples=100, deadline=None)
@given(
    first=st.lists(st.integers(0, 29), min_size=1, max_size=15),
    second=st.lists(st.integers(0, 29), min_size=1, max_size=15),
)
def test_no_read_is_ever_compared_with_one_from_another_period(first: list[int], second: list[int]) -> None:
    owns = [Ownership("g", "m", 1, (0,), 0.0, 100.0), Ownership("g", "m", 2, (0,), 200.0, None)]
    both = reads(first) + reads(second, t0=201.0)
    offsets = log_offsets(acks(0, 30), both)
    alone = poll_anomalies(reads(first), owns, offsets) + poll_anomalies(
        reads(second, t0=201.0), owns, offsets
    )
    assert poll_anomalies(both, owns, offsets) == alone


# ---------------------------------------------------------------- inconsistent offsets
def test_every_source_agreeing_on_each_offset_is_consistent() -> None:
    consumed = reads(list(range(10)))
    readback = {("p", s): (0, s) for s in range(10)}
    assert inconsistent_offsets(acks(0, 10), consumed + reads(list(range(5)), member="x"), readback) == []


def test_an_offset_read_holding_another_record_than_acknowledged_there_is_inconsistent() -> None:
    odd = Consumed("g", "m", 0, 4, "q", 7, 2.0)  # record q/7 read at offset 4, where p/4 was acknowledged
    assert inconsistent_offsets(acks(0, 10), [odd]) == [InconsistentOffset(0, 4, (("p", 4), ("q", 7)))]


def test_the_topic_read_back_is_a_source_too_and_offsetless_acks_are_none() -> None:
    readback = {("p", s): (0, s) for s in range(10) if s != 6} | {("r", 1): (0, 6)}
    assert inconsistent_offsets(acks(0, 10), [], readback) == [InconsistentOffset(0, 6, (("p", 6), ("r", 1)))]
    untold = [Ack("p", 6, None, None, 0, None, 1.0)]  # librdkafka's duplicate-sequence ack: no offset
    assert inconsistent_offsets(untold, [], readback) == []
    # the same offset of another partition is another place
    assert inconsistent_offsets([*acks(0, 3), Ack("q", 0, None, None, 1, 2, 1.0)], []) == []
