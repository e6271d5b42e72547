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
