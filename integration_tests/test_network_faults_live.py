"""Live, through Toxiproxy: connections reset during metadata requests; our kafka-python clients carry on.

kafka-python 3.0.12's metadata refresh loop ends for good when a refresh fails with a bare ``OSError``
(:mod:`kafka_placement.clients.kafka_python.metadata_refresh`). On a TLS cluster the proxy makes one:
``reset_peer`` sets the client connection to close with a TCP RST, and a ``timeout`` of 1 ms closes each
connection right after it opens — before the client's first TLS byte — so kafka-python's
``SSLContext.wrap_socket`` raises ``ConnectionResetError``, which reaches the MetadataRequest waiting on
that connection. (``reset_peer`` alone resets a connection on its first bytes: a refresh then fails with a
``KafkaConnectionError``, which kafka-python already retries.)

Every client byte of the cluster passes its proxy; the brokers replicate directly. Under the fault run our
producer and consumer and an unmended ``kafka.KafkaProducer`` beside them. Expected: the unmended
producer's loop ends and it can no longer learn a new topic; ours convert the resets, and afterwards
every record they produce is acknowledged, and every acknowledged record is consumed. Without the mend
this test fails (two runs of two): our consumer's ``poll()`` raises the bare ``ConnectionResetError`` of a
FindCoordinator request that met the same reset. Without its third part (the waiters of a failed refresh kept
waiting for the next one, as Java's ``awaitMetadataUpdate`` does) it fails too (four runs of four, and once
in CI): the coordinator lookup raises the refresh's ``KafkaConnectionError`` out of ``poll()``.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from member_process import wait_until

pytestmark = pytest.mark.integration

BEFORE, DURING, AFTER = 50, 50, 200  # records produced before, during and after the fault
FAULT_WINDOW_S = 60.0  # bound on the wait for the resets to reach all three clients (0.2-2 s measured)
ACK_TIMEOUT_S = 120.0  # each record: the producer's delivery timeout (120 s) is the bound that matters
CONSUME_TIMEOUT_S = 120.0


def _topic(cluster: Any, admin: Any, partitions: int) -> str:
    from kafka_placement.clients.kafka_python.admin import open_admin
    from kafka_placement.testing.topics import create_topic

    name = f"net-faults-{uuid.uuid4().hex[:8]}"
    create_topic(
        admin,
        name,
        partitions,
        3,
        config={"min.insync.replicas": "2"},
        fresh_admin=lambda: open_admin(cluster.kafka_python_settings()),
    )
    return name


def test_resets_during_metadata_requests_end_kafka_pythons_loop_not_ours(kafka_proxied_cluster: Any) -> None:
    import kafka
    from kafka.errors import KafkaTimeoutError

    from kafka_placement.clients.kafka_python.admin import open_admin
    from kafka_placement.clients.kafka_python.consumer import KafkaConsumer
    from kafka_placement.clients.kafka_python.metadata_refresh import client_cluster, refresh_loop_ended
    from kafka_placement.clients.kafka_python.producer import KafkaProducer
    from kafka_placement.testing.toxiproxy import reset_peer, timeout

    cluster = kafka_proxied_cluster
    settings = cluster.kafka_python_settings()
    assert settings["bootstrap_servers"] == cluster.layout.bootstrap_servers  # the proxies' ports
    admin = open_admin(settings)
    producer = KafkaProducer(**settings, acks="all", linger_ms=5)
    plain = kafka.KafkaProducer(**settings, acks="all", max_block_ms=10_000)
    consumer: Any = None
    try:
        topic = _topic(cluster, admin, partitions=3)
        consumer = KafkaConsumer(
            topic,
            **settings,
            group_id=f"net-faults-{uuid.uuid4().hex[:8]}",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout_ms=10_000,
            heartbeat_interval_ms=1_000,
        )
        consumed: dict[bytes, tuple[int, int]] = {}

        def consume_for(seconds: float) -> None:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                for records in consumer.poll(timeout_ms=200).values():
                    for record in records:
                        consumed[record.value] = (record.partition, record.offset)

        acked: dict[bytes, tuple[int, int]] = {}
        futures: dict[bytes, Any] = {}

        def send(phase: str, count: int) -> None:
            for i in range(count):
                value = f"{phase}-{i}".encode()
                futures[value] = producer.send(topic, value=value, key=str(i).encode())

        def settle(values: list[bytes]) -> None:
            for value in values:
                metadata = futures[value].get(timeout=ACK_TIMEOUT_S)
                acked[value] = (metadata.partition, metadata.offset)

        send("before", BEFORE)
        settle([v for v in futures if v.startswith(b"before")])
        plain.send(topic, b"plain-before").get(timeout=ACK_TIMEOUT_S)
        wait_until(
            lambda: consume_for(0.5) or len(consumed) >= BEFORE,
            CONSUME_TIMEOUT_S,
            f"our consumer reading the {BEFORE} records produced before the fault",
        )
        assert refresh_loop_ended(client_cluster(plain)) is False  # running, like ours

        clients = {"our producer": producer.metadata_refresh, "our consumer": consumer.metadata_refresh}
        with cluster.faults.toxic(reset_peer(stream="upstream"), timeout(1, stream="upstream")):
            send("during", DURING)

            def reached() -> bool:
                consume_for(0.2)
                return bool(refresh_loop_ended(client_cluster(plain))) and all(
                    m.converted for m in clients.values()
                )

            try:
                wait_until(reached, FAULT_WINDOW_S, "the resets to reach every client's metadata refresh")
            except AssertionError as exc:
                ended = refresh_loop_ended(client_cluster(plain))
                seen = {name: m.converted for name, m in clients.items()}
                raise AssertionError(f"{exc}: unmended loop ended {ended}, converted {seen}") from None

        print(
            f"converted under the fault: { {n: len(m.converted) for n, m in clients.items()} }, waiters held"
            f" through failed refreshes: { {n: len(m.held) for n, m in clients.items()} }, first "
            f"{producer.metadata_refresh.converted[:1] or consumer.metadata_refresh.converted[:1]}"
        )
        # the bug, live: the unmended producer's loop is gone, so a topic it has not seen is never learnt
        assert refresh_loop_ended(client_cluster(plain)) is True
        fresh = _topic(cluster, admin, partitions=1)
        with pytest.raises(KafkaTimeoutError):
            plain.send(fresh, b"never")

        # ours: loops alive, and they carry on
        assert refresh_loop_ended(client_cluster(producer)) is False
        assert refresh_loop_ended(client_cluster(consumer)) is False
        assert producer.send(fresh, b"learnt").get(timeout=ACK_TIMEOUT_S).topic == fresh
        send("after", AFTER)
        settle([v for v in futures if not v.startswith(b"before")])  # during and after: all acknowledged
        assert len(acked) == BEFORE + DURING + AFTER
        wait_until(
            lambda: consume_for(0.5) or set(acked) <= set(consumed),
            CONSUME_TIMEOUT_S,
            "our consumer reading every acknowledged record",
        )
        for value, where in acked.items():  # nothing acknowledged lost, each where the broker said
            assert consumed[value] == where, value
    finally:
        if consumer is not None:
            consumer.close()
        producer.close(timeout=10)
        plain.close(timeout=10)
        admin.close()


LEADER_LATENCY_S = 3.0


def test_clients_pass_the_proxy_and_brokers_replicate_around_it(kafka_proxied_cluster: Any) -> None:
    """A latency on the leader's proxy delays every answer the client gets from it, and only those: a record
    that needs both followers' fetches (``acks=all``, ``min.insync.replicas`` 3) is acknowledged one
    latency late. Were replication to pass that proxy, each follower fetch's answer would wait too, and the
    acknowledgement would come at least two latencies late (measured: 6.03 s with inter-broker traffic on the
    proxied listener, 3.02–3.03 s as built)."""
    from kafka.admin import NewTopic

    from kafka_placement.clients.kafka_python.admin import open_admin
    from kafka_placement.clients.kafka_python.producer import KafkaProducer
    from kafka_placement.testing.toxiproxy import latency

    cluster = kafka_proxied_cluster
    settings = cluster.kafka_python_settings()
    admin = open_admin(settings)
    topic = f"net-faults-direct-{uuid.uuid4().hex[:8]}"
    producer: Any = None
    try:
        admin.create_topics(
            [NewTopic(topic, replica_assignments={0: [0, 1, 2]}, topic_configs={"min.insync.replicas": "3"})]
        )

        def fully_replicated() -> bool:
            partitions = admin.describe_topics([topic])[0].get("partitions") or []
            return any(p["leader_id"] == 0 and len(p["isr_nodes"]) == 3 for p in partitions)

        wait_until(fully_replicated, 60, f"{topic} led by broker 0 with 3 in sync", step=0.5)
        producer = KafkaProducer(**settings, acks="all", request_timeout_ms=30_000)
        producer.send(topic, b"warm").get(timeout=ACK_TIMEOUT_S)
        with cluster.faults.toxic(latency(int(LEADER_LATENCY_S * 1000)), brokers=[0]):
            started = time.monotonic()
            metadata = producer.send(topic, b"slow").get(timeout=ACK_TIMEOUT_S)
            took = time.monotonic() - started
        print(f"acks=all through a {LEADER_LATENCY_S:.0f} s leader latency: {took:.2f} s")
        assert metadata.offset == 1
        assert LEADER_LATENCY_S - 0.05 <= took < 1.5 * LEADER_LATENCY_S, took
    finally:
        if producer is not None:
            producer.close(timeout=10)
        admin.close()


OUTAGE_S = 6.0  # the leader's link silent while both producers keep sending to it
LEADER_PARTITIONS = 24  # the soak topic's count (a sender's turn walks every partition with records)
SEND_EVERY_S = 0.02


def _thread_cpu_s(thread: Any) -> float:
    """User + system CPU seconds of one thread of this process (``/proc/self/task/<tid>/stat``)."""
    import os

    with open(f"/proc/self/task/{thread.native_id}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def test_a_silent_leader_spins_kafka_pythons_sender_not_ours(kafka_proxied_cluster: Any) -> None:
    """kafka-python 3.0.12's sender reads the client's connection delay (seconds, and 0 for a connection that
    is not ready without a reconnect backoff) as milliseconds, and polls with that timeout while a leader
    cannot take records (:mod:`kafka_placement.clients.kafka_python.producer_connection_delay`). Here the
    leader's link goes silent (a ``timeout`` toxic holds its answers back; the broker stays leader): each
    producer's connection fills its in-flight requests and stops being ready. The unmended sender thread
    then spins for the whole outage, and holds the GIL from the application thread too; ours waits. Both
    deliver every record once the link is back. Measured here over a 6 s silence (three runs): the
    unmended sender 6.0-6.4 s of CPU, ours 0.05-0.08 s."""
    import kafka
    from kafka.admin import NewTopic

    from kafka_placement.clients.kafka_python.admin import open_admin
    from kafka_placement.clients.kafka_python.producer import KafkaProducer
    from kafka_placement.testing.toxiproxy import timeout

    cluster = kafka_proxied_cluster
    settings = cluster.kafka_python_settings()
    admin = open_admin(settings)
    topic = f"net-faults-leader-{uuid.uuid4().hex[:8]}"
    ours: Any = None
    plain: Any = None
    try:
        admin.create_topics(
            [
                NewTopic(
                    topic,
                    replica_assignments={p: [0, 1, 2] for p in range(LEADER_PARTITIONS)},
                    topic_configs={"min.insync.replicas": "2"},
                )
            ]
        )

        def led_by_broker_0() -> bool:
            partitions = admin.describe_topics([topic])[0].get("partitions") or []
            led = [p for p in partitions if p["leader_id"] == 0 and len(p["isr_nodes"]) == 3]
            return len(led) == LEADER_PARTITIONS

        wait_until(led_by_broker_0, 60, f"{topic}'s partitions led by broker 0, 3 in sync", step=0.5)
        ours = KafkaProducer(**settings, acks="all", linger_ms=5)
        plain = kafka.KafkaProducer(**settings, acks="all", linger_ms=5)
        for producer in (ours, plain):
            producer.send(topic, b"warm").get(timeout=ACK_TIMEOUT_S)
        futures: list[Any] = []
        with cluster.faults.toxic(timeout(0), brokers=[0]):  # the leader's answers held back
            cpu_before = {name: _thread_cpu_s(p._sender) for name, p in (("ours", ours), ("plain", plain))}
            deadline = time.monotonic() + OUTAGE_S
            while time.monotonic() < deadline:
                partition = len(futures) // 2 % LEADER_PARTITIONS
                futures += [
                    ours.send(topic, b"ours", partition=partition),
                    plain.send(topic, b"plain", partition=partition),
                ]
                time.sleep(SEND_EVERY_S)
            cpu = {
                name: _thread_cpu_s(p._sender) - cpu_before[name]
                for name, p in (("ours", ours), ("plain", plain))
            }
        for future in futures:  # nothing lost: each acknowledged once the link is back
            assert future.get(timeout=ACK_TIMEOUT_S).topic == topic
        print(
            f"sender CPU over a {OUTAGE_S:.0f} s silence of the leader's link: ours {cpu['ours']:.2f} s, "
            f"kafka-python's {cpu['plain']:.2f} s; {len(futures)} records acknowledged after it"
        )
        assert cpu["ours"] <= 0.2 * OUTAGE_S, cpu  # waits: the backoff, then the connection's events
        assert cpu["plain"] >= 0.25 * OUTAGE_S, cpu  # the bug, live: it spins (so this test can fail)
    finally:
        for producer in (ours, plain):
            if producer is not None:
                producer.close(timeout=10)
        admin.close()
