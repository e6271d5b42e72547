"""KIP-794 availability tracking on a fake clock."""

from __future__ import annotations

import pytest

from kafka_placement.errors import InvalidArgumentError
from kafka_placement.partitioning.availability import PartitionAvailability
from kafka_placement.partitioning.topicview import TopicView


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_partition_stalls_only_while_records_wait_past_the_timeout() -> None:
    clock = Clock()
    tracker = PartitionAvailability(1.0, clock=clock)
    view = TopicView("t", (0, 1, 2), (0, 1, 2), {})
    tracker.sent("t", 0)
    tracker.sent("t", 0)
    clock.now += 0.9
    assert tracker.stalled("t") == frozenset()
    clock.now += 0.2  # 1.1 s without progress
    assert tracker.stalled("t") == {0} and tracker.filter(view).available == (1, 2)
    tracker.delivered("t", 0)  # one of two reported: progress, the clock restarts
    assert tracker.stalled("t") == frozenset()
    clock.now += 1.5
    assert tracker.stalled("t") == {0}
    tracker.delivered("t", 0)  # nothing waits any more
    clock.now += 10
    assert tracker.stalled("t") == frozenset() and tracker.filter(view) is view
    assert tracker.stalled("other") == frozenset()


def test_when_every_available_partition_stalls_the_view_is_kept() -> None:
    clock = Clock()
    tracker = PartitionAvailability(0.5, clock=clock)
    view = TopicView("t", (0, 1), (0, 1), {})
    tracker.sent("t", 0)
    tracker.sent("t", 1)
    clock.now += 1
    assert tracker.filter(view) is view


def test_zero_is_off_and_bad_timeouts_are_named() -> None:
    off = PartitionAvailability(0)
    off.sent("t", 0)
    assert off.stalled("t") == frozenset()
    for bad in (-1, 3601, "1", True):
        with pytest.raises(
            InvalidArgumentError, match=r"availability timeout must be in \[0, 3600\] seconds"
        ):
            PartitionAvailability(bad)  # type: ignore[arg-type]
