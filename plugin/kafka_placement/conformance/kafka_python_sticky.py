"""kafka-python's own sticky assignor (its ``StickyAssignmentExecutor``) as an independent reference.

Not Java, so not an exactness oracle: the unit tests use it as a property oracle for balance and
stickiness (ours is never dominated by it), the benchmarks as the speed to compare with. kafka-python
is imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kafka_placement.vocabulary import Member, TopicPartition

KafkaPythonStickyRun = Callable[[], dict[str, list[TopicPartition]]]


def prepare_kafka_python_sticky(
    ppt: Mapping[str, int], members: Mapping[str, Member]
) -> KafkaPythonStickyRun:
    """kafka-python's inputs built now (kept out of a benchmark's timing); the returned call runs
    its algorithm: executor, initial assignment, balance, as its ``StickyPartitionAssignor.assign``."""
    from kafka.coordinator.assignors.sticky.sticky_assignor import (
        StickyAssignmentExecutor,
        StickyAssignorMemberMetadataV1,
    )
    from kafka.structs import TopicPartition as KafkaTopicPartition

    counts = dict(ppt)

    class Cluster:
        def topics(self) -> set[str]:
            return set(counts)

        def partitions_for_topic(self, topic: str) -> set[int] | None:
            return set(range(counts[topic])) if topic in counts else None

    metadata: dict[str, Any] = {
        member_id: StickyAssignorMemberMetadataV1(
            subscription=[t for t in member.topics if t in counts],
            partitions=[KafkaTopicPartition(tp.topic, tp.partition) for tp in member.owned],
            generation=member.generation,
        )
        for member_id, member in members.items()
    }

    def run() -> dict[str, list[TopicPartition]]:
        executor = StickyAssignmentExecutor(Cluster(), metadata)
        executor.perform_initial_assignment()
        executor.balance()
        return {
            member_id: [
                TopicPartition(t, p) for t, parts in executor.get_final_assignment(member_id) for p in parts
            ]
            for member_id in metadata
        }

    return run


def kafka_python_sticky(
    ppt: Mapping[str, int], members: Mapping[str, Member]
) -> dict[str, list[TopicPartition]]:
    """kafka-python's sticky assignment of ``members``, each member's partitions sorted."""
    return {m: sorted(parts) for m, parts in prepare_kafka_python_sticky(ppt, members)().items()}
