"""confluent-kafka admin adapter: translation of DescribeCluster/DescribeTopics results."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

import pytest

from kafka_placement.clients.confluent import admin as cf_admin
from kafka_placement.errors import ClusterError, InvalidArgumentError, UnknownTopicError
from kafka_placement.vocabulary import Broker, TopicPartition


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


def _node(i: int, rack: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(id=i, rack=rack)


def _failed(code: int) -> Future[Any]:
    from confluent_kafka import KafkaError, KafkaException

    future: Future[Any] = Future()
    future.set_exception(KafkaException(KafkaError(code)))
    return future


class FakeAdmin:
    def __init__(self, unknown_for: int = 0) -> None:
        self.created: list[Any] = []
        self.unknown_for = unknown_for  # DescribeTopics calls answering UNKNOWN_TOPIC_OR_PART first
        self.describe_calls = 0

    def describe_cluster(self, request_timeout: float) -> Future[Any]:
        return _done(SimpleNamespace(nodes=[_node(1, "b"), _node(0, "a"), _node(2, "a")]))

    def list_topics(self, timeout: float) -> SimpleNamespace:
        return SimpleNamespace(topics={"t": None, "__consumer_offsets": None})

    def describe_topics(self, collection: Any, request_timeout: float) -> dict[str, Future[Any]]:
        from confluent_kafka import KafkaError

        names = list(collection.topic_names)
        self.describe_calls += 1
        if self.describe_calls <= self.unknown_for:
            return {n: _failed(KafkaError.UNKNOWN_TOPIC_OR_PART) for n in names}
        created = {t.topic: t for t in self.created}
        if names != ["t"]:
            (name,) = names
            replicas = created[name].replica_assignment
            return {
                name: _done(
                    SimpleNamespace(
                        partitions=[
                            SimpleNamespace(
                                id=p, leader=_node(r[0]), replicas=[_node(b) for b in r], isr=[_node(r[0])]
                            )
                            for p, r in enumerate(replicas)
                        ]
                    )
                )
            }
        partitions = [
            SimpleNamespace(id=0, leader=_node(1), replicas=[_node(1), _node(0)], isr=[_node(1)]),
            SimpleNamespace(id=1, leader=None, replicas=[_node(2), _node(1)], isr=[]),
        ]
        return {"t": _done(SimpleNamespace(partitions=partitions))}

    def create_topics(self, topics: list[Any], request_timeout: float) -> dict[str, Future[Any]]:
        self.created.extend(topics)
        return {t.topic: _done(None) for t in topics}


def test_snapshot_translation() -> None:
    snap = cf_admin.snapshot(FakeAdmin())
    assert snap.brokers == (Broker(0, "a"), Broker(1, "b"), Broker(2, "a"))
    assert snap.assignment() == {TopicPartition("t", 0): [1, 0], TopicPartition("t", 1): [2, 1]}
    assert snap.partitions[TopicPartition("t", 1)].leader is None
    assert snap.partitions[TopicPartition("t", 0)].isr == (1,)


def test_create_topic_checks_racks_then_sends_new_topic() -> None:
    admin = FakeAdmin()
    with pytest.raises(InvalidArgumentError, match="2 distinct racks are required"):
        cf_admin.create_topic(admin, "t2", [[0, 2]])
    cf_admin.create_topic(admin, "t2", [[0, 1], [1, 2]])
    assert [t.topic for t in admin.created] == ["t2"]
    assert admin.created[0].replica_assignment == [[0, 1], [1, 2]]


def test_create_topic_waits_until_every_partition_is_described_with_a_leader() -> None:
    admin = FakeAdmin(unknown_for=3)  # the brokers' metadata caches learn the topic late
    assert cf_admin.create_topic(admin, "t2", [[0, 1], [1, 2]]) == {0: [0, 1], 1: [1, 2]}
    assert admin.describe_calls == 4
    snap = cf_admin.snapshot(admin, ["t2"])
    assert snap.assignment() == {TopicPartition("t2", 0): [0, 1], TopicPartition("t2", 1): [1, 2]}


def test_create_topic_gives_up_with_a_clear_error() -> None:
    admin = FakeAdmin(unknown_for=10**6)
    with pytest.raises(ClusterError, match=r"'t2' was created but .* UNKNOWN_TOPIC_OR_PART .* 2 partitions"):
        cf_admin.create_topic(admin, "t2", [[0, 1], [1, 2]], timeout_s=0.3)


def test_create_topic_waits_for_leaders() -> None:
    class Leaderless(FakeAdmin):
        def describe_topics(self, collection: Any, request_timeout: float) -> dict[str, Future[Any]]:
            futures = super().describe_topics(collection, request_timeout)
            if self.describe_calls <= 2:
                for p in next(iter(futures.values())).result().partitions:
                    p.leader = None
            return futures

    admin = Leaderless()
    cf_admin.create_topic(admin, "t2", [[0, 1], [1, 2]])
    assert admin.describe_calls == 3
    with pytest.raises(ClusterError, match="0 with a leader"):
        cf_admin.wait_for_topic(Leaderless(), "t", 2, timeout_s=0)


def test_snapshot_retries_a_topic_not_yet_known_then_reports_it() -> None:
    admin = FakeAdmin(unknown_for=2)
    assert len(cf_admin.snapshot(admin, ["t"]).partitions) == 2
    assert admin.describe_calls == 3
    with pytest.raises(UnknownTopicError, match=r"Topic t not found\."):
        cf_admin.snapshot(FakeAdmin(unknown_for=10**6), ["t"], retry_s=0.3)
