"""The soak's load: what a producer thread counts (its clients run in the live tests)."""

from __future__ import annotations

import json

from kafka_placement.soak.events import Ack, Event
from kafka_placement.soak.load import PRODUCERS, ProducerThread, record_identity


def _thread(written: list[Event]) -> ProducerThread:
    return ProducerThread(PRODUCERS[0], "t", 24, 10.0, {}, written.append)


def test_failed_records_are_counted_by_the_reason_the_client_gave() -> None:
    thread = _thread([])
    for reason in ("KafkaTimeoutError", "OutOfOrderSequenceNumber", "KafkaTimeoutError"):
        thread._failed(reason)
    assert thread.failed == 3
    assert thread.failed_by.most_common() == [("KafkaTimeoutError", 2), ("OutOfOrderSequenceNumber", 1)]


def test_an_acknowledgement_is_written_as_the_record_it_names() -> None:
    written: list[Event] = []
    thread = _thread(written)
    key, value, predicted = thread._record(1000)
    thread._ack(1000, key, predicted, 5, 42)
    assert thread.acked == 1 and thread.failed_by == {}
    (ack,) = written
    assert isinstance(ack, Ack)
    assert (ack.producer, ack.sequence, ack.key, ack.partition, ack.offset) == (
        "kp-java-keyed",
        1000,
        "key-3",  # 1000 % 997
        5,
        42,
    )
    assert record_identity(value) == ("kp-java-keyed", 1000)
    assert json.loads(value)["pp"] == predicted
