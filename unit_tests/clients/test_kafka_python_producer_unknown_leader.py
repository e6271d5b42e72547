"""The sender's unknown-leader mend, on kafka-python's own producer, ``Sender`` and ``ClusterMetadata``
(no broker: its bootstrap address refuses; the metadata is a Metadata answer built with kafka-python's
own response class, naming a leader its broker list lacks, as a KRaft broker answers while that leader
is fenced)."""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Iterator
from typing import Any

import kafka
import pytest
from kafka import errors as kafka_errors
from kafka.producer.sender import Sender
from kafka.protocol.metadata import MetadataResponse

from kafka_placement.clients.kafka_python.producer import KafkaProducer
from kafka_placement.clients.kafka_python.producer_unknown_leader import mend_sender_unknown_leader

TOPIC = "fenced-leader"
FENCED = 3


def _answer_naming_a_fenced_leader() -> Any:
    broker = MetadataResponse.MetadataResponseBroker
    partition = MetadataResponse.MetadataResponseTopic.MetadataResponsePartition
    topic = MetadataResponse.MetadataResponseTopic
    return MetadataResponse(
        version=1,
        brokers=[broker(0, "127.0.0.1", 9, None, version=1)],  # broker 3 left out: fenced
        controller_id=0,
        topics=[
            topic(
                error_code=0,
                name=TOPIC,
                is_internal=False,
                partitions=[partition(0, 0, FENCED, [FENCED, 0], [FENCED], version=1)],
                version=1,
            )
        ],
    )


@pytest.fixture
def sender_errors() -> Iterator[list[logging.LogRecord]]:
    """What kafka-python's sender logs as an uncaught error in its I/O thread."""
    records: list[logging.LogRecord] = []

    class Tap(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "Uncaught error in kafka producer I/O thread" in record.getMessage():
                records.append(record)

    tap, logger = Tap(), logging.getLogger("kafka.producer.sender")
    logger.addHandler(tap)
    try:
        yield records
    finally:
        logger.removeHandler(tap)


def _producer(cls: Any) -> Any:
    # not idempotent: the sender would first wait 30 s for a producer id from the absent broker
    return cls(
        bootstrap_servers="127.0.0.1:9", api_version=(4, 0), enable_idempotence=False, max_block_ms=2000
    )


def _close(producer: Any) -> None:
    producer._sender.force_close()  # the record can go nowhere: failed, not flushed
    producer._sender.join(10)
    producer.close(timeout=1)


def _send_to_the_fenced_leader(producer: Any) -> None:
    producer._metadata.update_metadata(_answer_naming_a_fenced_leader())
    producer.send(TOPIC, b"record", partition=0)
    time.sleep(1.0)  # the sender's loop turns


def test_kafka_pythons_sender_fails_every_turn_on_a_leader_without_broker_metadata(
    sender_errors: list[logging.LogRecord],
) -> None:
    """The bug itself (kafka-python 3.0.12): if this fails, kafka-python changed it and the mend can go."""
    assert "self._client.maybe_connect(node, wakeup=False)" in inspect.getsource(Sender._send_producer_data)
    producer = _producer(kafka.KafkaProducer)
    try:
        with pytest.raises(kafka_errors.UnknownBrokerIdError):
            producer._sender._client.maybe_connect(FENCED)
        _send_to_the_fenced_leader(producer)
        assert len(sender_errors) >= 5  # again and again, about every 30 ms
        assert sender_errors[-1].exc_info is not None
        assert isinstance(sender_errors[-1].exc_info[1], kafka_errors.UnknownBrokerIdError)
    finally:
        _close(producer)


def test_our_producers_sender_waits_for_that_leader_and_asks_for_metadata(
    sender_errors: list[logging.LogRecord],
) -> None:
    producer = _producer(KafkaProducer)
    try:
        client = producer._sender._client
        assert client.maybe_connect(FENCED) is None
        assert client.ready(FENCED) is False
        _send_to_the_fenced_leader(producer)
        assert sender_errors == []
        assert producer._metadata._need_update  # a refresh is asked for: the leader moves or comes back
    finally:
        _close(producer)


def test_mended_once_and_only_with_a_sender() -> None:
    producer = _producer(kafka.KafkaProducer)
    try:
        assert mend_sender_unknown_leader(producer)
        assert not mend_sender_unknown_leader(producer)
        assert not mend_sender_unknown_leader(object())
    finally:
        _close(producer)
