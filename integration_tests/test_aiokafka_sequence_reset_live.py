"""Live: an idempotent producer whose sequence the broker refuses takes a new producer id and goes on
(``clients/aiokafka/sequence_reset.py``, KIP-360's recovery); aiokafka's own producer beside it fails
every later record of that partition.

Seen in a 30-minute soak (docs/reliability.md, seed 51): our keyed aiokafka producer acknowledged nothing
for the run's last 24 minutes while the other producers, aiokafka's keyless one among them, went on
writing to the same partitions. aio-libs/aiokafka#1017 reports the same ("producing messages stops until
we restart pods"). Here the gap a failed batch leaves is made directly: each producer writes
``WARM`` records to a partition, then its sequence for that partition is moved on by three, as a batch
that failed after being given its sequence leaves it. The broker now refuses the next batch
(OUT_OF_ORDER_SEQUENCE_NUMBER). Expected: ours fails that one record, takes a new producer id and writes
every later record; aiokafka's fails them all (so this test can fail: without the mend ours behaves the
same). Read back, the partition holds exactly the records reported written.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from member_process import create_ready_topic  # this directory is on sys.path

pytestmark = pytest.mark.integration

WARM = 5
AFTER = 20
SEND_S = 60.0  # one record's send_and_wait; measured well under a second


async def _produce(producer: Any, topic: str, name: str) -> tuple[list[str], list[str]]:
    """(written, failed): the values of the AFTER records by their outcome, each sent and awaited in
    turn after the sequence gap."""
    from aiokafka.structs import TopicPartition

    await producer.start()
    try:
        for i in range(WARM):
            await asyncio.wait_for(
                producer.send_and_wait(topic, f"{name}-warm-{i}".encode(), partition=0), SEND_S
            )
        # the gap a batch that failed after getting its sequence leaves (aiokafka's own counter)
        producer._sender._txn_manager.increment_sequence_number(TopicPartition(topic, 0), 3)
        written: list[str] = []
        failed: list[str] = []
        for i in range(AFTER):
            value = f"{name}-after-{i}"
            try:
                await asyncio.wait_for(producer.send_and_wait(topic, value.encode(), partition=0), SEND_S)
            except Exception as error:  # the broker's refusal, as aiokafka reports it
                failed.append(f"{value}: {type(error).__name__}")
            else:
                written.append(value)
        return written, failed
    finally:
        await producer.stop()


def _read_back(settings: dict[str, Any], topic: str) -> list[str]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(**settings, enable_auto_commit=False, consumer_timeout_ms=10_000)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        values: list[str] = []
        for message in consumer:
            values.append(message.value.decode())
            if message.offset + 1 >= end:
                break
        return values
    finally:
        consumer.close()


def test_an_idempotent_producer_whose_sequence_is_refused_takes_a_new_producer_id(kafka_cluster: Any) -> None:
    import aiokafka
    from kafka import KafkaAdminClient

    from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer

    settings = kafka_cluster.kafka_python_settings()
    admin = KafkaAdminClient(**settings)
    try:
        topic = create_ready_topic(admin, "seq-reset", 1, 3)
    finally:
        admin.close()
    bootstrap = settings["bootstrap_servers"]
    common = {"bootstrap_servers": bootstrap, "acks": "all", "enable_idempotence": True, "linger_ms": 0}

    async def run() -> dict[str, Any]:
        ours = AIOKafkaProducer(**common)
        plain = aiokafka.AIOKafkaProducer(**common)
        outcome: dict[str, Any] = {"ours": await _produce(ours, topic, "ours")}
        outcome["plain"] = await _produce(plain, topic, "plain")
        outcome["resets"] = list(ours.sequence_resets.resets)
        return outcome

    outcome = asyncio.run(run())
    (ours_written, ours_failed), (plain_written, plain_failed) = outcome["ours"], outcome["plain"]
    print(
        f"ours: {len(ours_written)} written, failed {ours_failed}, resets {outcome['resets']}; "
        f"aiokafka's: {len(plain_written)} written, {len(plain_failed)} failed ({plain_failed[:1]})"
    )
    assert ours_failed == ["ours-after-0: OutOfOrderSequenceNumber"]
    assert ours_written == [f"ours-after-{i}" for i in range(1, AFTER)]
    (reset,) = outcome["resets"]
    assert reset.startswith(f"OutOfOrderSequenceNumber on {topic}-0 (producer id ")
    # the bug, live: aiokafka counts on from the gap and every later record is refused
    assert plain_written == [] and len(plain_failed) == AFTER
    assert {failure.split(": ")[1] for failure in plain_failed} == {"OutOfOrderSequenceNumber"}
    # the partition holds what was reported written, each once, in order, and nothing reported failed
    expected = (
        [f"ours-warm-{i}" for i in range(WARM)]
        + ours_written
        + [f"plain-warm-{i}" for i in range(WARM)]
        + plain_written
    )
    assert _read_back(settings, topic) == expected
