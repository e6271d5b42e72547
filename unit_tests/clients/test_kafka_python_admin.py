"""kafka-python admin adapter: translation of admin-API answers (shapes of KafkaAdminClient 3.0.12)."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_placement.clients.kafka_python import admin as kp_admin
from kafka_placement.errors import ClusterError, InvalidArgumentError, InvalidBrokerError, UnknownTopicError
from kafka_placement.vocabulary import Broker, TopicPartition

RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


class FakeAdmin:
    """Answers shaped like kafka-python's describe_cluster/describe_topics dicts."""

    def __init__(self, partitions: dict[tuple[str, int], list[int]], ongoing_polls: int = 0) -> None:
        self.partitions = dict(partitions)
        self.created: dict[str, Any] = {}
        self.altered: dict[Any, list[int]] = {}
        self.ongoing_polls = ongoing_polls
        self.elected: list[Any] = []

    def describe_cluster(self) -> dict[str, Any]:
        brokers = [
            {"broker_id": b, "host": "127.0.0.1", "port": 9092 + b, "rack": r, "is_fenced": False}
            for b, r in RACKS.items()
        ]
        brokers.append({"broker_id": 9, "host": "x", "port": 1, "rack": "rack9", "is_fenced": True})
        return {"cluster_id": "c", "controller_id": 0, "brokers": brokers}

    def describe_topics(self, topics: list[str] | None = None) -> list[dict[str, Any]]:
        names = sorted({t for t, _ in self.partitions} | {"__consumer_offsets"}) if topics is None else topics
        out = []
        for name in names:
            parts = [
                {"error_code": 0, "partition_index": p, "leader_id": r[0], "replica_nodes": r, "isr_nodes": r}
                for (t, p), r in sorted(self.partitions.items())
                if t == name
            ]
            out.append(
                {"error_code": 0, "name": name, "is_internal": name.startswith("__"), "partitions": parts}
            )
        return out

    def create_topics(self, spec: dict[str, Any], timeout_ms: int) -> None:
        self.created.update(spec)

    def wait_for_topics(self, topic_names: list[str], timeout_ms: int) -> None:
        from kafka.errors import KafkaTimeoutError

        self.waited_for = (topic_names, timeout_ms)
        if getattr(self, "metadata_never_arrives", False):
            raise KafkaTimeoutError(f"Timed out waiting for topics: {topic_names}")

    def alter_partition_reassignments(self, request: dict[Any, list[int]]) -> dict[Any, None]:
        self.altered = request
        return dict.fromkeys(request)

    def list_partition_reassignments(self, keys: list[Any]) -> dict[Any, dict[str, list[int]]]:
        if self.ongoing_polls > 0:
            self.ongoing_polls -= 1
            return {keys[0]: {"replicas": [], "adding_replicas": [], "removing_replicas": []}}
        for tp, replicas in self.altered.items():
            self.partitions[(tp.topic, tp.partition)] = list(replicas)
        return {}

    def elect_leaders(
        self, election_type: int, topic_partitions: dict[str, list[int]], raise_errors: bool
    ) -> None:
        self.elected.append(topic_partitions)


def test_snapshot_reads_racks_replicas_leaders() -> None:
    admin = FakeAdmin({("t", 0): [0, 3, 1], ("t", 1): [3, 1, 5]})
    snap = kp_admin.snapshot(admin)
    assert snap.brokers == tuple(Broker(b, r) for b, r in RACKS.items())  # fenced broker 9 left out
    assert snap.assignment() == {TopicPartition("t", 0): [0, 3, 1], TopicPartition("t", 1): [3, 1, 5]}
    assert snap.partitions[TopicPartition("t", 1)].leader == 3


def test_create_topic_validates_before_sending() -> None:
    admin = FakeAdmin({})
    with pytest.raises(InvalidArgumentError, match=r"partition 0 replicas \[1, 2\] span racks \['rack3'\]"):
        kp_admin.create_topic(admin, "bad", {0: [1, 2]})
    with pytest.raises(InvalidBrokerError, match="Unknown broker id 7 in partition 0"):
        kp_admin.create_topic(admin, "bad", [[7, 1]])
    assert admin.created == {}
    kp_admin.create_topic(admin, "ok", [[0, 3, 1], [3, 1, 5]])
    assert admin.created == {"ok": {"assignments": {0: [0, 3, 1], 1: [3, 1, 5]}}}
    assert admin.waited_for == (["ok"], 30000)


def test_create_topic_reports_metadata_that_never_arrives() -> None:
    admin = FakeAdmin({})
    admin.metadata_never_arrives = True  # type: ignore[attr-defined]
    with pytest.raises(ClusterError, match=r"'ok' was created but .* after 500 ms \(want 2 partitions"):
        kp_admin.create_topic(admin, "ok", [[0, 3, 1], [3, 1, 5]], timeout_ms=500)


def test_apply_waits_elects_and_verifies() -> None:
    admin = FakeAdmin({("t", 0): [0, 1], ("t", 1): [1, 2]}, ongoing_polls=2)
    seen: list[tuple[int, int]] = []
    result = kp_admin.apply_reassignment(
        admin, {TopicPartition("t", 0): [4, 1]}, progress=lambda d, t, s: seen.append((d, t)), poll_s=0.0
    )
    assert seen == [(0, 1), (0, 1), (1, 1)]
    assert result.ok and result.mismatches == {}
    assert admin.elected == [{"t": [0]}]


def test_apply_rejects_empty_and_failed() -> None:
    with pytest.raises(InvalidArgumentError, match="the reassignment is empty"):
        kp_admin.apply_reassignment(FakeAdmin({}), {})

    class Rejecting(FakeAdmin):
        def alter_partition_reassignments(self, request: dict[Any, list[int]]) -> dict[Any, Any]:
            from kafka.errors import InvalidReplicationAssignmentError

            return dict.fromkeys(request, InvalidReplicationAssignmentError)

    # Kafka's tool: "Error reassigning partition(s):" then "t-0: <the broker's error>"
    with pytest.raises(
        ClusterError, match=r"Error reassigning partition\(s\): t-0: InvalidReplicationAssignmentError"
    ):
        kp_admin.apply_reassignment(Rejecting({("t", 0): [0]}), {TopicPartition("t", 0): [1]})


def test_unknown_topic_is_typed() -> None:
    class Unknown(FakeAdmin):
        def describe_topics(self, topics: list[str] | None = None) -> list[dict[str, Any]]:
            return [{"error_code": 3, "name": "nope", "partitions": []}]

    with pytest.raises(UnknownTopicError, match=r"Topic nope not found\."):
        kp_admin.snapshot(Unknown({}), ["nope"], retry_s=0)


def test_partition_sizes_take_the_largest_replica_and_skip_future_logs() -> None:
    class WithLogDirs(FakeAdmin):
        def describe_log_dirs(self, topics: list[str] | None = None) -> list[dict[str, Any]]:
            part = {"partition_index": 0, "offset_lag": 0}
            return [
                {
                    "broker": 0,
                    "log_dirs": [
                        {
                            "error_code": 0,
                            "log_dir": "/d",
                            "topics": [
                                {
                                    "name": "t",
                                    "partitions": [{**part, "partition_size": 100, "is_future_key": False}],
                                },
                                {
                                    "name": "u",
                                    "partitions": [{**part, "partition_size": 7, "is_future_key": False}],
                                },
                            ],
                        }
                    ],
                },
                {
                    "broker": 1,
                    "log_dirs": [
                        {
                            "error_code": 0,
                            "log_dir": "/d",
                            "topics": [
                                {
                                    "name": "t",
                                    "partitions": [
                                        {**part, "partition_size": 120, "is_future_key": False},
                                        {**part, "partition_size": 999, "is_future_key": True},
                                    ],
                                }
                            ],
                        }
                    ],
                },
                {"broker": 2, "log_dirs": [{"error_code": 57, "log_dir": "/bad", "topics": []}]},
            ]

    assert kp_admin.partition_sizes(WithLogDirs({}), ["t"]) == {TopicPartition("t", 0): 120}


def test_verify_reports_mismatch() -> None:
    admin = FakeAdmin({("t", 0): [0, 1]})
    mismatches, _ = kp_admin.verify(admin, {TopicPartition("t", 0): [1, 0]})
    assert mismatches == {TopicPartition("t", 0): ([1, 0], [0, 1])}


def test_verify_waits_for_a_lagging_broker_to_drop_the_removed_replica() -> None:
    """The reassignment left the controller's list, but the broker answering still shows the adding
    state (target + removing) for two reads: verify re-reads instead of reporting a mismatch."""

    class Lagging(FakeAdmin):
        stale_reads = 2

        def describe_topics(self, topics: list[str] | None = None) -> list[dict[str, Any]]:
            if self.stale_reads:
                self.stale_reads -= 1
                return FakeAdmin({("t", 0): [2, 1, 0]}).describe_topics(topics)
            return super().describe_topics(topics)

    admin = Lagging({("t", 0): [2, 1]})
    assert kp_admin.verify(admin, {TopicPartition("t", 0): [2, 1]}, settle_s=5.0) == ({}, [])
    assert admin.stale_reads == 0
    # without a settle window the first (stale) read is reported, as Kafka's tool would
    assert kp_admin.verify(Lagging({("t", 0): [2, 1]}), {TopicPartition("t", 0): [2, 1]}) == (
        {TopicPartition("t", 0): ([2, 1], [2, 1, 0])},
        [],
    )


def test_a_settled_snapshot_gives_up_on_a_real_mismatch_after_its_window() -> None:
    import time

    started = time.monotonic()
    snap = kp_admin.settled_snapshot(
        FakeAdmin({("t", 0): [0, 1]}), {TopicPartition("t", 0): [1, 0]}, settle_s=0.6
    )
    assert snap.partitions[TopicPartition("t", 0)].replicas == (0, 1)
    assert 0.5 <= time.monotonic() - started < 5
    # a partition still moving is not waited for
    started = time.monotonic()
    kp_admin.settled_snapshot(
        FakeAdmin({("t", 0): [0, 1]}),
        {TopicPartition("t", 0): [1, 0]},
        moving=[TopicPartition("t", 0)],
        settle_s=5.0,
    )
    assert time.monotonic() - started < 1
