"""Live: a producer whose metadata names one broker, which then goes down, goes back to its bootstrap
servers (KIP-899) and delivers; kafka-python's and aiokafka's own producers beside it deliver nothing.

Seen in a 30-minute soak (docs/reliability.md, seed 36): a lagging broker answered a metadata request with
a broker list of one; that broker was killed; two kafka-python and two aiokafka producers acknowledged
nothing for 4-5.5 minutes, until it came back. Here that answer is handed to each producer's metadata as
kafka-python and aiokafka apply a response (``update_metadata``): broker X alone, leading every partition.
Then X is stopped. The topic's replicas are on the other brokers, so every partition has a live leader the
whole time; only the producers' metadata is wrong. Expected: ours (``clients.kafka_python.producer.
KafkaProducer``, ``clients.aiokafka.producer.AIOKafkaProducer``) rebootstrap and every record is
acknowledged within ``DELIVER_S``; the plain producers acknowledge none within that time (so the test can
fail: without the mends ours behave exactly like them).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from typing import Any

import pytest

pytestmark = pytest.mark.integration

PARTITIONS = 6
RECORDS = 30
DELIVER_S = 60.0  # ours: the refresh's retry backoff and one bootstrap; measured 0.5-3 s


def _topic(cluster: Any, admin: Any, away_from: int) -> str:
    """A topic whose replicas are all on brokers other than ``away_from``."""
    from kafka_placement.clients.kafka_python import admin as kp_admin

    others = [b for b in cluster.broker_ids if b != away_from]
    name = f"rebootstrap-{uuid.uuid4().hex[:8]}"
    placed = {p: [others[(p + i) % len(others)] for i in range(3)] for p in range(PARTITIONS)}
    kp_admin.create_topic(admin, name, placed, require_rack_diversity=False)
    return name


def _kafka_python_answer(topic: str, broker: Any) -> Any:
    """A MetadataResponse (kafka-python's class) naming ``broker`` alone, leading every partition."""
    from kafka.protocol.metadata import MetadataResponse

    broker_cls = MetadataResponse.MetadataResponseBroker
    topic_cls = MetadataResponse.MetadataResponseTopic
    partition_cls = topic_cls.MetadataResponsePartition
    node = broker.node_id
    return MetadataResponse(
        version=1,
        brokers=[broker_cls(node, broker.host, broker.port, broker.rack, version=1)],
        controller_id=node,
        topics=[
            topic_cls(
                version=1,
                error_code=0,
                name=topic,
                is_internal=False,
                partitions=[
                    partition_cls(
                        version=1,
                        error_code=0,
                        partition_index=p,
                        leader_id=node,
                        replica_nodes=[node],
                        isr_nodes=[node],
                    )
                    for p in range(PARTITIONS)
                ],
            )
        ],
    )


def _aiokafka_answer(topic: str, node: int, host: str, port: int) -> Any:
    """The same answer as aiokafka's MetadataResponse v1."""
    from aiokafka.protocol.metadata import MetadataResponse_v1

    partitions = [(0, p, node, [node], [node]) for p in range(PARTITIONS)]
    return MetadataResponse_v1(
        brokers=[(node, host, port, None)], controller_id=node, topics=[(0, topic, False, partitions)]
    )


def test_kafka_python_producer_rebootstraps_when_its_one_known_broker_is_down(kafka_cluster: Any) -> None:
    import kafka
    from kafka import KafkaAdminClient

    from kafka_placement.clients.kafka_python.metadata_refresh import client_cluster
    from kafka_placement.clients.kafka_python.producer import KafkaProducer

    settings = kafka_cluster.kafka_python_settings()
    admin = KafkaAdminClient(**settings)
    down = max(kafka_cluster.broker_ids)
    topic = _topic(kafka_cluster, admin, away_from=down)
    ours = KafkaProducer(**settings, acks="all", linger_ms=5)
    plain = kafka.KafkaProducer(**settings, acks="all", linger_ms=5)
    stopped = False
    try:
        for producer in (ours, plain):
            producer.send(topic, b"warm", partition=0).get(timeout=60)
            cluster = client_cluster(producer)
            broker = cluster.broker_metadata(down)
            assert broker is not None
            cluster.update_metadata(_kafka_python_answer(topic, broker))
            assert [b.node_id for b in cluster.brokers()] == [down]
            assert cluster.leader_for_partition(kafka.TopicPartition(topic, 0)) == down
        kafka_cluster.stop_broker(down)
        stopped = True
        started = time.monotonic()
        futures = {
            name: [p.send(topic, b"after", partition=i % PARTITIONS) for i in range(RECORDS)]
            for name, p in (("ours", ours), ("plain", plain))
        }
        for future in futures["ours"]:
            future.get(timeout=max(1.0, DELIVER_S - (time.monotonic() - started)))
        took = time.monotonic() - started
        plain_acked = sum(1 for f in futures["plain"] if f.is_done and f.succeeded())
        print(
            f"ours: {RECORDS} records acknowledged {took:.1f} s after broker {down} went down; "
            f"kafka-python's: {plain_acked}; rebootstraps {ours.metadata_refresh.rebootstraps}"
        )
        assert ours.metadata_refresh.rebootstraps, "ours delivered without going back to bootstrap"
        assert plain_acked == 0  # the bug, live: it asks only the broker it knows (so this test can fail)
    finally:
        if stopped:
            kafka_cluster.start_broker(down)
        ours.close(timeout=10)
        # kafka-python's own producer, stuck on the bug, delivers its records once the broker it knows is
        # back and its reconnect backoff (up to 30 s) has run; its close raises when its flush outlasts
        # the timeout (seen once in CI, 10 s after a 6.4 s restart). Not what is tested here.
        with contextlib.suppress(kafka.errors.KafkaTimeoutError):
            plain.close(timeout=45)
        admin.close()


def test_aiokafka_producer_rebootstraps_when_its_one_known_broker_is_down(kafka_cluster: Any) -> None:
    import aiokafka
    from kafka import KafkaAdminClient

    from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer

    settings = kafka_cluster.kafka_python_settings()
    admin = KafkaAdminClient(**settings)
    down = max(kafka_cluster.broker_ids)
    topic = _topic(kafka_cluster, admin, away_from=down)
    bootstrap = settings["bootstrap_servers"]
    stopped = False

    async def run() -> tuple[float, int, list[str]]:
        nonlocal stopped
        ours = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
        plain = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
        await ours.start()
        await plain.start()
        try:
            for producer in (ours, plain):
                await producer.send_and_wait(topic, b"warm", partition=0)
                cluster = producer.client.cluster
                broker = cluster.broker_metadata(down)
                assert broker is not None
                cluster.update_metadata(_aiokafka_answer(topic, down, broker.host, broker.port))
                assert [b.nodeId for b in cluster.brokers()] == [down]
            kafka_cluster.stop_broker(down)  # blocks this loop's thread: both producers wait alike
            stopped = True
            started = time.monotonic()
            sent = {
                name: [await p.send(topic, b"after", partition=i % PARTITIONS) for i in range(RECORDS)]
                for name, p in (("ours", ours), ("plain", plain))
            }
            await asyncio.wait_for(asyncio.gather(*sent["ours"]), DELIVER_S)
            took = time.monotonic() - started
            plain_acked = sum(1 for f in sent["plain"] if f.done() and f.exception() is None)
            return took, plain_acked, list(ours.rebootstraps.outcomes)
        finally:
            if stopped:  # back first: the plain producer's records wait for it
                kafka_cluster.start_broker(down)
                stopped = False
            await ours.stop()
            await plain.stop()

    try:
        took, plain_acked, outcomes = asyncio.run(run())
    finally:
        if stopped:
            kafka_cluster.start_broker(down)
        admin.close()
    print(
        f"ours: {RECORDS} records acknowledged {took:.1f} s after broker {down} went down; "
        f"aiokafka's: {plain_acked}; rebootstraps {outcomes}"
    )
    assert "answered" in outcomes
    assert plain_acked == 0  # the bug, live (so this test can fail)
