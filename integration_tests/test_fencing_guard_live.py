"""Live, through Toxiproxy: a consumer-protocol member whose group coordinator goes silent stops
consuming once the broker has fenced it (:mod:`kafka_placement.clients.confluent.fencing_guard`);
librdkafka's own consumer goes on.

Two groups, one member each, both coordinated by broker 0; their topic's partitions are led by brokers
1 and 2. A ``timeout`` toxic swallows everything the clients send to broker 0 for
:data:`SILENCE_S`: no heartbeat reaches the coordinator, which fences both members after the cluster's
session timeout (6 s), while their fetches from the leaders carry on. Expected, from the session timeout
plus :data:`GUARD_SLACK_S` into the silence until its end: the guarded member consumes nothing (its
partitions may be someone else's by then); the unguarded one still consumes (the behaviour the guard
exists for, seen in the soak for 10-112 s; if librdkafka ever stops by itself this test says so). After
the silence both rejoin and consume every record produced, nothing lost.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from coordinated_groups import groups_behind_broker_0, run_through_silence

pytestmark = pytest.mark.integration

PARTITIONS = 6
SESSION_S = 6.0  # the test cluster's group.consumer.session.timeout.ms (testing/failover_plugin.py)
SILENCE_S = 24.0
#: After a session of silence: the guard's margin is 2 s early, but it counts from the coordinator's last
#: answer (up to a heartbeat interval, 1 s, before the silence) and reads statistics every second; what
#: librdkafka had fetched before the pause is dropped by it. 3 s covers those with room.
GUARD_SLACK_S = 3.0
RECOVERY_S = 90.0  # the rejoin after the silence: librdkafka's requests swallowed must time out first
PRODUCE_EVERY_S = 0.02


def test_a_member_fenced_behind_a_silent_coordinator_stops_consuming(kafka_proxied_cluster: Any) -> None:
    import confluent_kafka
    from kafka import KafkaAdminClient

    from kafka_placement.clients.confluent.consumer import Consumer
    from kafka_placement.clients.confluent.fencing_guard import FencingGuard

    cluster = kafka_proxied_cluster
    admin = KafkaAdminClient(**cluster.kafka_python_settings())
    topic = f"fencing-guard-{uuid.uuid4().hex[:8]}"
    consumers: dict[str, Any] = {}
    producer: Any = None
    try:
        groups = groups_behind_broker_0(admin, "fencing-guard", topic, PARTITIONS)
        base = {
            **cluster.librdkafka_settings(),
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": True,
            "auto.commit.interval.ms": 1000,
        }
        told: list[tuple[str, int]] = []
        guard = FencingGuard(
            6000,
            on_suspect=lambda tps: told.append(("suspect", len(tps))),
            on_cleared=lambda tps: told.append(("cleared", len(tps))),
        )
        consumers["guarded"] = Consumer.for_consumer_protocol(
            {**base, "group.id": groups["guarded"]}, preflight=False, fencing_guard=guard
        )
        consumers["plain"] = Consumer.for_consumer_protocol(
            {**base, "group.id": groups["plain"]}, preflight=False, fencing_guard=False
        )
        for consumer in consumers.values():
            consumer.subscribe([topic])
        producer = confluent_kafka.Producer({**cluster.librdkafka_settings(), "linger.ms": 5})

        def produce_one(produced: set[tuple[int, int]]) -> None:
            def delivered(error: Any, message: Any) -> None:
                assert error is None, error
                produced.add((message.partition(), message.offset()))

            producer.produce(topic, b"x", partition=len(produced) % PARTITIONS, on_delivery=delivered)
            producer.poll(0)

        def poll(consumer: Any) -> list[tuple[int, int]]:
            messages = consumer.consume(100, PRODUCE_EVERY_S / 2)
            assert all(m.error() is None for m in messages), [m.error() for m in messages]
            return [(m.partition(), m.offset()) for m in messages]

        run = run_through_silence(
            cluster,
            produce_one,
            {name: (lambda c=consumer: poll(c)) for name, consumer in consumers.items()},
            lambda: producer.flush(30),
            silence_s=SILENCE_S,
            recovery_s=RECOVERY_S,
        )
        window = (run.silent_from + SESSION_S + GUARD_SLACK_S, run.silent_until)
        in_window = {name: run.count_between(name, *window) for name in consumers}
        recovered = {name: run.recovered_s(name) for name in consumers}
        produced = run.produced
        print(
            f"records consumed {window[1] - window[0]:.0f} s into a {SILENCE_S:.0f} s coordinator silence "
            f"(after the session + {GUARD_SLACK_S:.0f} s): guarded {in_window['guarded']}, librdkafka "
            f"alone {in_window['plain']}; consuming again {recovered['guarded']:.1f} s / "
            f"{recovered['plain']:.1f} s after it; {len(produced)} records, every one consumed by both; "
            f"the guard: {told}"
        )
        assert in_window["guarded"] == 0, in_window
        assert told[0] == ("suspect", PARTITIONS) and not guard.suspected, told  # paused all, then went on
        assert in_window["plain"] > 0, in_window  # without the guard: consuming while fenced
    finally:
        for consumer in consumers.values():
            consumer.close()
        if producer is not None:
            producer.flush(10)
        admin.close()
