"""Loads from Admin API observations, worked by hand."""

from __future__ import annotations

import pytest

from kafka_placement.replicas.loads.estimate import (
    PartitionObservation,
    committed_growth,
    committed_regressions,
    estimate_partitions,
)


def test_rates_from_offsets_and_sizes() -> None:
    # 1,000 records on disk in 2,000,000 bytes → 2,000 B/record; 300 records in the 60 s window
    # → 5 records/s → 10,000 B/s in; consumers committed 600 records in a 10 s sample → 120,000 B/s;
    # two followers fetch the bytes in → + 20,000 B/s.
    o = PartitionObservation(
        "t",
        0,
        (1, 2, 3),
        {1: 2_000_000, 2: 1_999_000},
        latest=1500,
        earliest_local=500,
        window_start=1200,
        committed_growth=600,
    )
    (spec,), notes = estimate_partitions([o], window_s=60, sample_s=10)
    assert spec.size == 2_000_000
    assert spec.bytes_in == pytest.approx(10_000)
    assert spec.bytes_out == pytest.approx(120_000 + 20_000)
    assert notes == []


def test_idle_and_unknown() -> None:
    idle = PartitionObservation("t", 1, (1,), {}, latest=10, earliest_local=10, window_start=None)
    (spec,), notes = estimate_partitions([idle], window_s=60, sample_s=0)
    assert (spec.size, spec.bytes_in, spec.bytes_out) == (0, 0, 0)
    assert "no log-dir size for 1 partitions" in notes[0]


def test_committed_growth_per_group_and_partition() -> None:
    # g1 and g2 read p0: 100 + 40; g1 reads p1: 0 (no progress)
    first = {("g1", "p0"): 1000, ("g2", "p0"): 500, ("g1", "p1"): 70}
    second = {("g1", "p0"): 1100, ("g2", "p0"): 540, ("g1", "p1"): 70}
    assert committed_growth(first, second) == {"p0": 140, "p1": 0}


def test_a_first_commit_between_the_reads_is_not_growth() -> None:
    # g3 commits p0 at offset 5,000 for the first time between the reads (a new group starting from
    # the earliest offset, say): none of its 5,000 records were read during the sample as far as the
    # reads can tell, so p0 grows by g1's 100 only, not 100 + 5,000; a group gone by the second read
    # (deleted) counts nothing either
    first = {("g1", "p0"): 1000, ("gone", "p0"): 9000}
    second = {("g1", "p0"): 1100, ("g3", "p0"): 5000}
    assert committed_growth(first, second) == {"p0": 100}


def test_an_offset_reset_backwards_does_not_cancel_another_groups_reading() -> None:
    # g2 is reset from 800 back to 0 while g1 reads 300 records: p0 served 300 records' worth, not
    # max(0, 300 − 800) = 0
    first = {("g1", "p0"): 1000, ("g2", "p0"): 800}
    second = {("g1", "p0"): 1300, ("g2", "p0"): 0}
    assert committed_growth(first, second) == {"p0": 300}


def test_offsets_that_went_backwards_or_vanished_are_named() -> None:
    # g2 reset 800 → 0, g1's p1 gone from the second answer (a coordinator just moved answered from
    # before the commit, or the offset was deleted); g1's p0 grew and g3's first commit has no
    # starting point: neither is a regression
    first = {("g1", "p0"): 1000, ("g2", "p0"): 800, ("g1", "p1"): 70}
    second = {("g1", "p0"): 1300, ("g2", "p0"): 0, ("g3", "p0"): 5}
    assert committed_regressions(first, second) == [("g2", "p0"), ("g1", "p1")]
    assert committed_regressions(second, second) == []
