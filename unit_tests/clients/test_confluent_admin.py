"""confluent-kafka admin adapter: translation of DescribeCluster/DescribeTopics results."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

import pytest

from kafka_placement.clients.confluent import admin as cf_admin
from kafka_placement.errors import InvalidArgumentError
from kafka_placement.vocabulary import Broker, TopicPartition


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


def _node(i: int, rack: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(id=i, rack=rack)


class FakeAdmin:
    def __init__(self) -> None:
        self.created: list[Any] = []

    def describe_cluster(self, request_timeout: float) -> Future[Any]:
        return _done(SimpleNamespace(nodes=[_node(1, "b"), _node(0, "a"), _node(2, "a")]))

    def list_topics(self, timeout: float) -> SimpleNamespace:
        return SimpleNamespace(topics={"t": None, "__consumer_offsets": None})

    def describe_topics(self, collection: Any, request_timeout: float) -> dict[str, Future[Any]]:
        assert list(collection.topic_names) == ["t"]
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
