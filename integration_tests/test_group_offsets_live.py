"""Live: reading a group's committed offsets after its coordinator moved (kafka_python/group_offsets.py).

The group's ``__consumer_offsets`` partition (Kafka's ``Utils.abs(groupId.hashCode()) % partitions``,
computed here independently of the code under test) gets its replica list reordered and its preferred
leader elected, which moves the group's coordinator to another broker, as a broker restart does.
kafka-python 3.0.12's admin alone keeps asking the old coordinator and fails with NOT_COORDINATOR
(shown first, so the test proves the case it covers); ``fetch_group_offsets`` reads the offsets.
The original replica order and leader are restored afterwards."""

from __future__ import annotations

import contextlib
import time
import uuid
from typing import Any

import pytest

from kafka_placement.clients.kafka_python.group_offsets import fetch_group_offsets

pytestmark = pytest.mark.integration


def _java_hash(text: str) -> int:
    """``String.hashCode()`` of an ASCII string, signed 32-bit (the name below is ASCII)."""
    h = 0
    for ch in text.encode("ascii"):
        h = (31 * h + ch) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _replicas_and_leader(admin: Any, partition: int) -> tuple[list[int], int]:
    (topic,) = admin.describe_topics(["__consumer_offsets"])
    (state,) = [p for p in topic["partitions"] if p["partition_index"] == partition]
    return list(state["replica_nodes"]), int(state["leader_id"])


def _lead_with(admin: Any, partition: int, replicas: list[int]) -> None:
    """Reorder the partition's replicas, then elect the first one leader; wait until it leads."""
    from kafka import TopicPartition

    tp = TopicPartition("__consumer_offsets", partition)
    admin.alter_partition_reassignments({tp: replicas})
    deadline = time.monotonic() + 60
    while admin.list_partition_reassignments([tp]) and time.monotonic() < deadline:
        time.sleep(0.5)
    while time.monotonic() < deadline:
        admin.elect_leaders(0, {"__consumer_offsets": [partition]}, raise_errors=False)
        if _replicas_and_leader(admin, partition) == (replicas, replicas[0]):
            return
        time.sleep(0.5)
    raise AssertionError(f"__consumer_offsets-{partition}: {replicas[0]} did not become leader")


def test_offsets_are_read_from_the_coordinator_the_group_moved_to(kafka_cluster: Any) -> None:
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.admin import NewTopic
    from kafka.errors import CoordinatorNotAvailableError, KafkaError, NoError, NotCoordinatorError
    from kafka.structs import OffsetAndMetadata

    tag = uuid.uuid4().hex[:8]
    topic, group = f"offsets-moved-{tag}", f"offsets-moved-{tag}"
    bootstrap = kafka_cluster.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="group-offsets-live")
    moved: tuple[int, list[int]] | None = None
    try:
        admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
        deadline = time.monotonic() + 60
        # a cluster just started creates __consumer_offsets on the first lookup, and a commit to a
        # topic its coordinator does not know yet is refused per partition
        answer: Any = None
        committed = OffsetAndMetadata(42, "", -1)
        while time.monotonic() < deadline:
            try:
                answer = admin.alter_group_offsets(group, {TopicPartition(topic, 0): committed})
            except CoordinatorNotAvailableError as e:
                answer = e
            if isinstance(answer, dict) and all(error is NoError for error in answer.values()):
                break
            time.sleep(0.5)
        assert isinstance(answer, dict) and all(error is NoError for error in answer.values()), answer
        (topic_meta,) = admin.describe_topics(["__consumer_offsets"])
        partition = (_java_hash(group) & 0x7FFFFFFF) % len(topic_meta["partitions"])
        original, leader = _replicas_and_leader(admin, partition)
        assert len(original) > 1, original
        expected = {group: {TopicPartition(topic, 0): committed}}
        # the admin now caches the coordinator, the partition's leader (read with retries: on a cluster
        # just started the coordinator may still be loading the partition)
        assert fetch_group_offsets(admin, [group]) == expected

        others = [b for b in original if b != leader]
        moved = (partition, original)
        _lead_with(admin, partition, [*others, leader])

        with pytest.raises(NotCoordinatorError):  # kafka-python 3.0.12 on its own
            admin.list_group_offsets(group)
        assert fetch_group_offsets(admin, [group]) == expected
    finally:
        try:
            if moved is not None:
                _lead_with(admin, *moved)
            with contextlib.suppress(KafkaError):
                admin.delete_groups([group])
                admin.delete_topics([topic])
        finally:
            admin.close()
