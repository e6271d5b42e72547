"""Live: reading a group's committed offsets after its coordinator moved (kafka_python/group_reads.py;
the cause of run 17d's red bytes-out test).

The group's ``__consumer_offsets`` partition (Kafka's ``Utils.abs(group.hashCode()) % partitions``,
computed here independently of the code under test) gets its replica list reordered and a preferred
leader election, which moves the group's coordinator away from the broker the admin cached, as a
broker restart does. kafka-python 3.0.12's admin alone keeps asking that broker, which refuses with
NOT_COORDINATOR once it has applied the election (it may answer from its old state a moment longer):
shown first, so the test proves the case it covers. Then ``fetch_group_offsets`` reads the offsets
through the new coordinator. The original replica order and leader are restored afterwards."""

from __future__ import annotations

import contextlib
import time
import uuid
from typing import Any

import pytest

from kafka_placement.clients.kafka_python.group_reads import fetch_group_offsets

pytestmark = pytest.mark.integration


def _offsets_partition(group: str, partitions: int) -> int:
    """Kafka's ``Utils.abs(group.hashCode()) % partitions`` (``Utils.abs``: ``Math.abs``, with
    ``Integer.MIN_VALUE`` mapped to 0), for an ASCII group name."""
    h = 0
    for ch in group.encode("ascii"):
        h = (31 * h + ch) & 0xFFFFFFFF
    signed = h - (1 << 32) if h >= 1 << 31 else h
    return (0 if signed == -(1 << 31) else abs(signed)) % partitions


def _state(admin: Any, partition: int) -> tuple[list[int], int]:
    """The partition's replicas (in order) and leader."""
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
        if _state(admin, partition) == (replicas, replicas[0]):
            return
        time.sleep(0.5)
    raise AssertionError(f"__consumer_offsets-{partition}: {replicas[0]} did not become leader")


def test_offsets_are_read_through_the_new_coordinator_after_a_move(kafka_cluster: Any) -> None:
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.admin import NewTopic
    from kafka.errors import CoordinatorNotAvailableError, KafkaError, NoError, NotCoordinatorError
    from kafka.structs import OffsetAndMetadata

    tag = uuid.uuid4().hex[:8]
    topic, group = f"offsets-moved-{tag}", f"offsets-moved-{tag}"
    bootstrap = kafka_cluster.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="group-offsets-live")
    moved: list[int] = []
    partition = -1
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
        partition = _offsets_partition(group, len(topic_meta["partitions"]))
        replicas, _ = _state(admin, partition)
        expected = {group: {TopicPartition(topic, 0): committed}}
        # the admin now caches the coordinator (read with retries: on a cluster just started the
        # coordinator may still be loading the partition)
        assert fetch_group_offsets(admin, [group]) == expected
        cache = admin._manager.cluster._coordinators
        (key,) = [k for k in cache if k[1] == group]
        assert cache[key] in replicas, (cache[key], replicas)

        # a move: the group's partition gets a leader other than the cached coordinator
        moved = list(replicas)
        _lead_with(admin, partition, [*(b for b in replicas if b != cache[key]), cache[key]])
        old = cache[key]
        refused, deadline = False, time.monotonic() + 30
        while not refused and time.monotonic() < deadline:
            try:
                admin.list_group_offsets(group)
                time.sleep(0.2)
            except NotCoordinatorError:
                refused = True
        assert refused, ("the old coordinator still answered after 30 s", old, replicas)
        assert cache[key] == old
        # ours looks the coordinator up again; the new leader's first answers may predate the commit
        # (its high watermark catches up when the followers fetch from it: seen as {} under two CPU
        # hogs, 2 runs in 5), so it is read until current, at most 30 s
        answers, deadline = [], time.monotonic() + 30
        while time.monotonic() < deadline and (not answers or answers[-1] != expected):
            answers.append(fetch_group_offsets(admin, [group], pause_s=0.1))
            time.sleep(0.1 if answers[-1] != expected else 0)
        assert answers[-1] == expected, answers[-3:]
        assert cache[key] != old, (cache[key], replicas)
    finally:
        try:
            if moved:
                _lead_with(admin, partition, moved)
            with contextlib.suppress(KafkaError):
                admin.delete_groups([group])
                admin.delete_topics([topic])
        finally:
            admin.close()
