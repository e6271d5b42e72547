"""Uniform sticky (KIP-480/794) and rack-aware (KIP-1123) keyless strategies."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning import RackAwareSticky, TopicView, UniformSticky


def test_sticks_until_batch_size_bytes_then_switches() -> None:
    view = TopicView.of_count("t", 50)
    sticky = UniformSticky(batch_size=1000, rng=random.Random(3))
    got = [sticky.choose(view, 100) for _ in range(30)]
    runs = [got[i : i + 10] for i in range(0, 30, 10)]
    for run in runs:
        assert len(set(run)) == 1  # 10 records x 100 B = batch.size, then a new draw
    assert len({run[0] for run in runs}) >= 2


def test_draw_is_uniform_over_available() -> None:
    view = TopicView.build("t", range(8), [1, 3, 4, 6])
    sticky = UniformSticky(batch_size=1, rng=random.Random(9))
    counts = Counter(sticky.choose(view, 1) for _ in range(8000))
    assert set(counts) == {1, 3, 4, 6}
    assert min(counts.values()) > 1800


def test_no_available_partition_falls_back_to_all() -> None:
    view = TopicView.build("t", range(3), [])
    sticky = UniformSticky(batch_size=1, rng=random.Random(1))
    assert {sticky.choose(view, 1) for _ in range(200)} == {0, 1, 2}


def test_weighted_by_inverse_queue_size() -> None:
    view = TopicView.of_count("t", 3)
    sticky = UniformSticky(batch_size=1, rng=random.Random(4))
    sticky.set_queue_sizes("t", {0: 0, 1: 9, 2: 5})  # Java weights: max+1-size = 10, 1, 5
    counts = Counter(sticky.choose(view, 1) for _ in range(16000))
    assert counts[0] / 16000 == pytest.approx(10 / 16, abs=0.02)
    assert counts[1] / 16000 == pytest.approx(1 / 16, abs=0.01)
    assert counts[2] / 16000 == pytest.approx(5 / 16, abs=0.02)


def test_leaves_a_partition_that_lost_its_leader() -> None:
    sticky = UniformSticky(batch_size=10**9, rng=random.Random(2))
    full = TopicView.of_count("t", 4)
    first = sticky.choose(full, 10)
    degraded = TopicView.build("t", range(4), [p for p in range(4) if p != first])
    moved = sticky.choose(degraded, 10)
    assert moved != first
    assert all(sticky.choose(degraded, 10) == moved for _ in range(20))


def test_on_new_batch_uncounts_the_retried_record() -> None:
    view = TopicView.of_count("t", 20)
    sticky = UniformSticky(batch_size=300, rng=random.Random(5))
    p = sticky.choose(view, 100)
    assert sticky.choose(view, 100) == p
    # third record reaches batch.size → the next record would switch; the client retries it instead
    assert sticky.choose(view, 100) == p
    sticky.on_new_batch("t", p)
    assert sticky.choose(view, 100) == p  # same record, same partition, counted once


def test_rack_aware_prefers_local_leaders() -> None:
    racks = {0: "rack1", 1: "rack2", 2: "rack1", 3: "rack3"}
    view = TopicView.build("t", range(4), range(4), racks)
    sticky = RackAwareSticky("rack1", batch_size=1, rng=random.Random(6))
    assert {sticky.choose(view, 1) for _ in range(300)} == {0, 2}
    # no local leader available → every available partition
    remote = TopicView.build("t", range(4), [1, 3], racks)
    assert {sticky.choose(remote, 1) for _ in range(300)} == {1, 3}


def test_bad_arguments() -> None:
    with pytest.raises(InvalidArgumentError, match="batch_size must be an int >= 1, got 0"):
        UniformSticky(batch_size=0)
    with pytest.raises(InvalidArgumentError, match="rack must be a non-empty str"):
        RackAwareSticky("")
