"""Creating a ready test topic: which failures are retried on a fresh admin client and which are not."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.errors import InvalidReplicationFactorError, TopicAlreadyExistsError, UnknownBrokerIdError

from kafka_placement.testing.topics import create_topic


class FakeAdmin:
    """Answers create_topics from a script of outcomes; describe_topics reports a led topic once created."""

    def __init__(self, outcomes: list[BaseException | None], shared: dict[str, int]) -> None:
        self.outcomes = outcomes
        self.topics = shared
        self.closed = False

    def create_topics(self, new_topics: list[Any]) -> None:
        outcome = self.outcomes.pop(0) if self.outcomes else None
        if outcome is not None:
            raise outcome
        for topic in new_topics:
            self.topics[topic.name] = topic.num_partitions

    def describe_topics(self, names: list[str]) -> list[dict[str, Any]]:
        count = self.topics.get(names[0], 0)
        partitions = [{"partition_index": p, "leader_id": 1} for p in range(count)]
        return [{"topic": names[0], "partitions": partitions}]

    def close(self) -> None:
        self.closed = True


def test_a_stale_controller_is_retried_on_a_fresh_client_which_is_closed() -> None:
    topics: dict[str, int] = {}
    stale = FakeAdmin([UnknownBrokerIdError(2)], topics)
    fresh: list[FakeAdmin] = []

    def fresh_admin() -> FakeAdmin:
        fresh.append(FakeAdmin([UnknownBrokerIdError(2)] if not fresh else [], topics))
        return fresh[-1]

    create_topic(stale, "t", 4, 1, fresh_admin=fresh_admin, timeout_s=10)
    assert topics == {"t": 4}
    assert len(fresh) == 2 and all(client.closed for client in fresh)
    assert not stale.closed  # the caller's client stays the caller's


def test_already_exists_on_a_retry_means_the_first_attempt_got_through() -> None:
    topics: dict[str, int] = {"t": 2}  # the lost first answer had in fact created it
    stale = FakeAdmin([UnknownBrokerIdError(2)], topics)
    create_topic(stale, "t", 2, 1, fresh_admin=lambda: FakeAdmin([TopicAlreadyExistsError()], topics))


def test_already_exists_on_the_first_attempt_and_bad_requests_are_raised_at_once() -> None:
    def no_retry() -> FakeAdmin:
        raise AssertionError("must not retry")

    with pytest.raises(TopicAlreadyExistsError):
        create_topic(FakeAdmin([TopicAlreadyExistsError()], {}), "t", 2, 1, fresh_admin=no_retry)
    with pytest.raises(InvalidReplicationFactorError):
        create_topic(FakeAdmin([InvalidReplicationFactorError()], {}), "t", 2, 9, fresh_admin=no_retry)


def test_a_cluster_that_never_answers_fails_with_the_topic_and_the_last_error() -> None:
    def always_stale() -> FakeAdmin:
        return FakeAdmin([UnknownBrokerIdError(7)] * 10, {})

    with pytest.raises(TimeoutError, match=r"could not create topic 't'.*UnknownBrokerIdError"):
        create_topic(
            FakeAdmin([UnknownBrokerIdError(7)], {}), "t", 2, 1, fresh_admin=always_stale, timeout_s=1
        )


class FakeManager:
    """kafka-python's connection manager, per broker: ``lag[b]`` answers without the topic before broker
    b lists it; a broker in ``down`` fails to connect."""

    def __init__(self, topic: str, partitions: int, lag: dict[int, int], down: set[int]) -> None:
        self.topic, self.partitions, self.lag, self.down = topic, partitions, dict(lag), down
        self.asked: list[int] = []

    async def send(self, request: Any, node_id: int) -> Any:
        from kafka.errors import KafkaConnectionError

        self.asked.append(node_id)
        if node_id in self.down:
            raise KafkaConnectionError(f"broker {node_id} is down")
        knows = self.lag.get(node_id, 0) <= 0
        self.lag[node_id] = self.lag.get(node_id, 0) - 1
        return FakeMetadata(self.topic, self.partitions if knows else 0)

    def run(self, coro: Any, *args: Any) -> Any:
        import asyncio

        return asyncio.run(coro(*args))


class FakeMetadata:
    def __init__(self, topic: str, partitions: int) -> None:
        self.topic, self.partitions = topic, partitions

    def to_dict(self) -> dict[str, Any]:
        if not self.partitions:
            return {"topics": [{"name": self.topic, "error_code": 3, "partitions": []}]}
        parts = [{"partition_index": p, "leader_id": p % 3} for p in range(self.partitions)]
        return {"topics": [{"name": self.topic, "error_code": 0, "partitions": parts}]}


def test_every_broker_that_answers_must_list_the_topic_before_it_is_ready() -> None:
    import time

    from kafka_placement.clients.kafka_python.topic_visibility import wait_for_every_broker

    admin = FakeAdmin([], {"t": 4})
    admin._manager = FakeManager("t", 4, lag={1: 3, 2: 1}, down={5})  # type: ignore[attr-defined]
    admin.describe_cluster = lambda: {"brokers": [{"broker_id": b} for b in (0, 1, 2, 5)]}  # type: ignore[attr-defined]
    wait_for_every_broker(admin, "t", 4, deadline=time.monotonic() + 10)
    asked = admin._manager.asked  # type: ignore[attr-defined]
    assert asked.count(1) == 4 and asked.count(2) == 2 and asked.count(0) == 1 and asked.count(5) == 1


def test_a_broker_that_never_lists_the_topic_is_named_in_the_timeout() -> None:
    import time

    from kafka_placement.clients.kafka_python.topic_visibility import wait_for_every_broker

    admin = FakeAdmin([], {"t": 4})
    admin._manager = FakeManager("t", 4, lag={2: 10**6}, down=set())  # type: ignore[attr-defined]
    admin.describe_cluster = lambda: {"brokers": [{"broker_id": b} for b in (0, 2)]}  # type: ignore[attr-defined]
    with pytest.raises(TimeoutError, match=r"brokers \[2\] did not list it with 4 led partitions"):
        wait_for_every_broker(admin, "t", 4, deadline=time.monotonic() + 0.3)
