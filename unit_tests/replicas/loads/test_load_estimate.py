"""Loads from Admin API observations, worked by hand."""

from __future__ import annotations

import pytest

from kafka_placement.replicas.loads.estimate import PartitionObservation, estimate_partitions


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
