"""Live: our kafka-python ``KafkaProducer`` keeps producing after kafka-python resets its producer id.

kafka-python 3.0.12 resets an idempotent producer's id when a batch it had sent expires, then waits for
a new id it never asks for: every later record is neither acknowledged nor failed, for good (found by
the 30-minute soak: both kafka-python producers stalled after a long outage; reproduced with the whole
cluster frozen past ``delivery_timeout_ms``). The topic's only replica's broker is frozen (the cgroup
freezer, like SIGSTOP) for longer than the producer's delivery timeout while records are in flight,
then thawed: the producer must get a new producer id and acknowledge records again, resolve every record
(acknowledged or failed, none left hanging), and every acknowledged record must be in the topic.

With every broker frozen (the outage the soak met), the new id's InitProducerId may time out too:
kafka-python 3.0.12 then fails the producer for good — every later record failed (found by the secured
30-minute soak: 44,387 records over 13 minutes); our producer sends it again, as Java's does
(``producer_request_timeout``). Without that mend this case failed here in 1 of 5 runs (it depends on
whether the request is sent before the thaw); the path itself is shown every time by the unit tests on
kafka-python's own handler (``unit_tests/clients/test_kafka_python_producer_request_timeout.py``).
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest

from member_process import wait_until

pytestmark = pytest.mark.integration

# > DELIVERY_TIMEOUT_MS, and below the test cluster's broker.session.timeout.ms (6 s) with a heartbeat
# (every 1 s) to spare: the controller does not fence the broker (were it fenced, the test would only
# take longer: the partition comes back once it registers again)
FROZEN_S = 4.5
DELIVERY_TIMEOUT_MS = 3000
REQUEST_TIMEOUT_MS = 1500
RESUMED_ACKS = 100  # records acknowledged after the thaw that show the producer is back


@pytest.mark.parametrize("frozen", ["the topic's broker", "every broker"])
def test_an_idempotent_producer_gets_a_new_id_and_goes_on_after_a_batch_expired(
    kafka_cluster: Any, frozen: str
) -> None:
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
    from kafka.admin import NewTopic

    from kafka_placement.clients.kafka_python.producer import KafkaProducer

    bootstrap = kafka_cluster.bootstrap_servers
    victim = max(kafka_cluster.broker_racks)
    topic = f"pid-reset-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="pid-reset-live")
    try:
        admin.create_topics([NewTopic(topic, replica_assignments={0: [victim]})])

        def led_by_victim() -> bool:
            described = admin.describe_topics([topic])[0].get("partitions") or []
            return bool(described) and described[0]["leader_id"] == victim

        wait_until(led_by_victim, 30, f"broker {victim} leading {topic}", step=0.2)
    finally:
        admin.close()

    producer = KafkaProducer(
        bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, linger_ms=5, retries=2**31 - 1,
        request_timeout_ms=REQUEST_TIMEOUT_MS, delivery_timeout_ms=DELIVERY_TIMEOUT_MS,
    )  # fmt: skip
    lock = threading.Lock()
    acked: dict[int, float] = {}  # sequence -> when acknowledged
    failed: list[int] = []
    sent = 0
    stop = threading.Event()

    def produce() -> None:
        nonlocal sent
        while not stop.is_set():
            sequence = sent
            future = producer.send(topic, value=str(sequence).encode())
            sent += 1

            def ok(_: Any, s: int = sequence) -> None:
                with lock:
                    acked[s] = time.monotonic()

            def bad(_: Any, s: int = sequence) -> None:
                with lock:
                    failed.append(s)

            future.add_callback(ok)
            future.add_errback(bad)
            time.sleep(0.005)

    sender = threading.Thread(target=produce, daemon=True)
    manager = producer._transaction_manager
    try:
        sender.start()
        time.sleep(2.0)
        first_id = manager.producer_id_and_epoch.producer_id
        assert len(acked) > 50 and first_id >= 0, (len(acked), manager.producer_id_and_epoch)
        brokers = [victim] if frozen == "the topic's broker" else sorted(kafka_cluster.broker_racks)
        paused: list[int] = []
        try:
            for broker in brokers:
                kafka_cluster.pause_broker(broker)
                paused.append(broker)
            time.sleep(FROZEN_S)
        finally:
            for broker in paused:
                kafka_cluster.resume_broker(broker)
        thawed = time.monotonic()
        deadline = thawed + 60
        while time.monotonic() < deadline:
            with lock:
                if sum(1 for at in acked.values() if at > thawed) >= RESUMED_ACKS:
                    break
            time.sleep(0.2)
        with lock:
            resumed = sum(1 for at in acked.values() if at > thawed)
        assert resumed >= RESUMED_ACKS, (
            f"{resumed} records acknowledged within 60 s of the broker's return: the producer stalled "
            f"(producer id {manager.producer_id_and_epoch}, state {manager._current_state}, "
            f"{sent - len(acked) - len(failed)} records unresolved)"
        )
        # the outage cost the first id (a sent batch expired): a new one was asked for and granted
        assert manager.producer_id_and_epoch.producer_id not in (first_id, -1), manager.producer_id_and_epoch
    finally:
        stop.set()
        sender.join(10)
        producer.flush(60)
        producer.close(10)
    with lock:
        unresolved = sent - len(acked) - len(failed)
    assert unresolved == 0, f"{unresolved} of {sent} records neither acknowledged nor failed"
    assert failed, "no record failed: the freeze did not outlast the delivery timeout, nothing was tested"

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=3000)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        stored = {int(record.value) for record in consumer}
    finally:
        consumer.close()
    missing = sorted(set(acked) - stored)
    assert not missing, f"{len(missing)} acknowledged records missing, e.g. {missing[:5]}"
    print(
        f"\n[pid-reset-live] sent {sent}, acknowledged {len(acked)}, failed {len(failed)} (past the "
        f"{DELIVERY_TIMEOUT_MS} ms delivery timeout), {resumed} acknowledged in the first seconds after the "
        f"thaw; producer id {first_id} -> {manager.producer_id_and_epoch.producer_id}"
    )
