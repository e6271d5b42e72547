"""The aiokafka rebootstrap mend (``clients/aiokafka/rebootstrap.py``, KIP-899): a metadata update no
known broker answered starts again from the bootstrap servers; the private name it wraps is checked
against the installed aiokafka."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from aiokafka.client import AIOKafkaClient
from aiokafka.errors import KafkaConnectionError

from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer
from kafka_placement.clients.aiokafka.rebootstrap import Rebootstraps, mend_rebootstrap


class ScriptedClient:
    """What the mend uses of ``AIOKafkaClient``: ``_metadata_update`` answers from ``answers`` (whether a
    known broker answered); ``bootstrap()`` raises ``bootstrap_error`` or records the call."""

    def __init__(self, answers: list[bool], bootstrap_error: BaseException | None = None) -> None:
        self.answers = answers
        self.bootstrap_error = bootstrap_error
        self.calls: list[str] = []

    async def _metadata_update(self, cluster_metadata: Any, topics: Any) -> bool:
        self.calls.append(f"update {sorted(topics)}")
        return self.answers.pop(0)

    async def bootstrap(self) -> None:
        self.calls.append("bootstrap")
        if self.bootstrap_error is not None:
            raise self.bootstrap_error


def _update(client: ScriptedClient) -> bool:
    return asyncio.run(client._metadata_update(object(), {"orders"}))


def test_the_wrapped_private_update_and_the_public_bootstrap_are_there() -> None:
    update = AIOKafkaClient._metadata_update
    assert inspect.iscoroutinefunction(update)
    assert list(inspect.signature(update).parameters) == ["self", "cluster_metadata", "topics"]
    assert inspect.iscoroutinefunction(AIOKafkaClient.bootstrap)
    assert list(inspect.signature(AIOKafkaClient.bootstrap).parameters) == ["self"]


def test_without_the_mend_an_update_no_known_broker_answered_just_fails() -> None:
    client = ScriptedClient([False])
    assert _update(client) is False
    assert client.calls == ["update ['orders']"]


def test_an_update_no_known_broker_answered_rebootstraps_and_asks_again() -> None:
    client = ScriptedClient([False, True])
    record = mend_rebootstrap(client)
    assert _update(client) is True
    assert client.calls == ["update ['orders']", "bootstrap", "update ['orders']"]
    assert record.outcomes == ["answered"]


def test_an_update_a_known_broker_answered_does_not_rebootstrap() -> None:
    client = ScriptedClient([True])
    record = mend_rebootstrap(client)
    assert _update(client) is True
    assert client.calls == ["update ['orders']"] and record.outcomes == []


def test_a_rebootstrap_that_fails_leaves_the_update_failed_for_aiokafkas_own_retry() -> None:
    client = ScriptedClient([False], bootstrap_error=KafkaConnectionError("Unable to bootstrap"))
    record = mend_rebootstrap(client)
    assert _update(client) is False
    assert client.calls == ["update ['orders']", "bootstrap"]
    assert record.outcomes == ["failed: KafkaConnectionError: KafkaConnectionError: Unable to bootstrap"]


def test_the_mend_is_applied_once() -> None:
    client = ScriptedClient([False, False, True])
    first = mend_rebootstrap(client)
    assert mend_rebootstrap(client) is first
    assert _update(client) is False  # bootstrap once, the update once more (not twice)
    assert client.calls == ["update ['orders']", "bootstrap", "update ['orders']"]


def test_our_producer_is_mended() -> None:
    async def build() -> AIOKafkaProducer:
        return AIOKafkaProducer(bootstrap_servers="127.0.0.1:1")

    producer = asyncio.run(build())
    assert isinstance(producer.rebootstraps, Rebootstraps)
    assert mend_rebootstrap(producer.client) is producer.rebootstraps
