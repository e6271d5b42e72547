"""``reassign apply --one-replica-at-a-time``: the rounds, worked by hand."""

from __future__ import annotations

from kafka_placement.cli.reassign.stepwise import StepwiseMove, rounds_of
from kafka_placement.vocabulary import TopicPartition as TP


def _move() -> StepwiseMove:
    current = {TP("a", 0): [0, 3], TP("a", 1): [1, 4], TP("b", 0): [2, 5]}
    target = {TP("a", 0): [1, 2], TP("a", 1): [4, 1], TP("b", 0): [2, 0]}
    return StepwiseMove(target, current, {}, {}, {})


def test_rounds_take_every_partitions_kth_step() -> None:
    # a-0: 1 replaces 3, then 2 replaces 0 (the leader, last) → [0,1], [1,2]
    # a-1: a reorder → [4,1]; b-0: 0 replaces 5 → [2,0]
    assert rounds_of(_move()) == [
        {TP("a", 0): (0, 1), TP("a", 1): (4, 1), TP("b", 0): (2, 0)},
        {TP("a", 0): (1, 2)},
    ]


def test_a_partition_at_its_target_has_no_step() -> None:
    move = StepwiseMove({TP("a", 0): [0, 3]}, {TP("a", 0): [0, 3]}, {}, {}, {})
    assert rounds_of(move) == []
