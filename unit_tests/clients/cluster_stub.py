"""A stand-in for a client's cluster metadata where an assignor only asks partition counts."""

from __future__ import annotations


class PartitionCounts:
    """``partitions_for_topic`` as kafka-python's and aiokafka's ClusterMetadata answer it."""

    def __init__(self, ppt: dict[str, int]) -> None:
        self.ppt = ppt

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return set(range(self.ppt[topic])) if topic in self.ppt else None
