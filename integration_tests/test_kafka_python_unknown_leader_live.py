"""Live: our kafka-python ``KafkaProducer`` delivers again after its metadata named a leader that the
broker list lacks (what a KRaft broker answers while that leader is fenced).

kafka-python 3.0.12's sender then raises ``UnknownBrokerIdError`` on every turn of its loop before it
polls, so its metadata is never refreshed and nothing is sent again (found by the secured 30-minute soak
of session 32: one producer stalled for the rest of the run, 721,692 tracebacks in 11 minutes). The state
is what the soak's producer held: its cluster metadata updated with a Metadata answer (kafka-python's own
response class) that names broker 99 leader of the topic's partition and leaves it out of the broker
list. Our producer must ask for new metadata, learn the real leader from the live cluster and deliver
the records within seconds; kafka-python's own producer, in the same state, delivers nothing.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

pytestmark = pytest.mark.integration

ABSENT = 99  # no such broker
RECORDS = 20
WAIT_S = 15.0


def _stale_answer(topic: str, brokers: list[Any]) -> Any:
    from kafka.protocol.metadata import MetadataResponse

    broker = MetadataResponse.MetadataResponseBroker
    topic_cls = MetadataResponse.MetadataResponseTopic
    partition = topic_cls.MetadataResponsePartition
    return MetadataResponse(
        version=1,
        brokers=[broker(b.node_id, b.host, b.port, b.rack, version=1) for b in brokers],
        controller_id=brokers[0].node_id,
        topics=[
            topic_cls(
                error_code=0,
                name=topic,
                is_internal=False,
                partitions=[partition(0, 0, ABSENT, [ABSENT], [ABSENT], version=1)],
                version=1,
            )
        ],
    )


def _delivered_after_stale_metadata(cls: Any, bootstrap: str, topic: str) -> tuple[int, int]:
    """(acknowledged, failed) of RECORDS sent to partition 0 right after the stale metadata."""
    producer = cls(
        bootstrap_servers=bootstrap, acks="all", linger_ms=5, request_timeout_ms=5000,
        delivery_timeout_ms=int(WAIT_S * 1000) + 10_000,
    )  # fmt: skip
    acked: list[int] = []
    failed: list[int] = []
    try:
        producer.send(topic, b"warm-up", partition=0).get(timeout=30)  # metadata and connections up
        brokers = list(producer._metadata.brokers())
        producer._metadata.update_metadata(_stale_answer(topic, brokers))
        for i in range(RECORDS):
            future = producer.send(topic, str(i).encode(), partition=0)
            future.add_callback(lambda _md, i=i: acked.append(i))
            future.add_errback(lambda _exc, i=i: failed.append(i))
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline and len(acked) + len(failed) < RECORDS:
            time.sleep(0.1)
        return len(acked), len(failed)
    finally:
        producer._sender.force_close()  # kafka-python's stalled sender would not flush
        producer._sender.join(10)
        producer.close(timeout=5)


def test_a_leader_missing_from_the_broker_list_does_not_stop_the_producer(kafka_cluster: Any) -> None:
    import kafka
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    from kafka_placement.clients.kafka_python.producer import KafkaProducer

    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"unknown-leader-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="unknown-leader-live")
    try:
        admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=3)])
    finally:
        admin.close()

    started = time.monotonic()
    ours = _delivered_after_stale_metadata(KafkaProducer, bootstrap, topic)
    ours_s = time.monotonic() - started
    theirs = _delivered_after_stale_metadata(kafka.KafkaProducer, bootstrap, topic)
    assert ours == (RECORDS, 0), f"ours: {ours} (acknowledged, failed) of {RECORDS} within {WAIT_S} s"
    assert theirs[0] == 0, f"kafka-python's own producer delivered {theirs}: the bug is gone, the mend can go"
    print(
        f"\n[unknown-leader-live] ours delivered {ours[0]}/{RECORDS} ({ours_s:.1f} s with set-up); "
        f"kafka-python's own: {theirs[0]} acknowledged, {theirs[1]} failed in {WAIT_S:.0f} s"
    )
