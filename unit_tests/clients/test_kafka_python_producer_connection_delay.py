"""The sender's connection-delay mend, on kafka-python's own ``KafkaNetClient`` and ``Sender`` (no broker:
a client that never connected, its reconnect backoff set the way a refused connection sets it)."""

from __future__ import annotations

import inspect
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.net.compat import KafkaNetClient
from kafka.producer.sender import Sender

from kafka_placement.clients.kafka_python.producer_connection_delay import (
    mend_sender_connection_delay,
    sender_connection_delay_ms,
)

BACKOFF_MS = 400  # kafka-python adds +-20 % jitter to the first backoff


def _client() -> Any:
    return KafkaNetClient(bootstrap_servers="127.0.0.1:9", reconnect_backoff_ms=BACKOFF_MS)


def _producer(client: Any, request_timeout_ms: int = 30_000) -> Any:
    return SimpleNamespace(
        _sender=SimpleNamespace(_client=client), config={"request_timeout_ms": request_timeout_ms}
    )


def test_kafka_python_answers_seconds_where_its_sender_reads_milliseconds() -> None:
    """The bug itself (kafka-python 3.0.12): if this fails, kafka-python changed it and the mend can go."""
    client = _client()
    try:
        client._manager.update_backoff(3)  # what a failed connect to node 3 does
        delay = client.connection_delay(3)
        assert 0.8 * BACKOFF_MS / 1000 <= delay <= 1.2 * BACKOFF_MS / 1000  # seconds
        assert client.connection_delay(4) == 0  # never tried: 0, and 0 again while connecting
        source = inspect.getsource(Sender._send_producer_data)
        assert "node_delay_ms = self._client.connection_delay(node)" in source
        assert "not_ready_timeout_ms = min(not_ready_timeout_ms, node_delay_ms)" in source
    finally:
        client.close()


def test_the_mended_sender_client_answers_javas_delay_in_milliseconds() -> None:
    client = _client()
    try:
        assert mend_sender_connection_delay(_producer(client, request_timeout_ms=15_000))
        client._manager.update_backoff(3)
        assert 0.8 * BACKOFF_MS - 1 <= client.connection_delay(3) <= 1.2 * BACKOFF_MS  # the backoff left, ms
        assert client.connection_delay(4) == 15_000  # not connected, no backoff: until an event, bounded
        client._manager.reset_backoff(3)
        assert client.connection_delay(3) == 15_000
    finally:
        client.close()


def test_mended_once_and_only_with_a_sender() -> None:
    client = _client()
    try:
        producer = _producer(client)
        assert mend_sender_connection_delay(producer)
        assert not mend_sender_connection_delay(producer)  # a second call changes nothing
        assert not mend_sender_connection_delay(SimpleNamespace(_sender=None, config={}))
    finally:
        client.close()


@pytest.mark.parametrize(
    ("backoff_s", "expected"),
    [(0.05, 50.0), (1.5, 1500.0), (0.0, 30_000.0), (-0.0, 30_000.0)],
)
def test_delay_by_javas_rule(backoff_s: float, expected: float) -> None:
    assert sender_connection_delay_ms(backoff_s, ceiling_ms=30_000.0) == pytest.approx(expected)
