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

import time
import uuid
from typing import Any

import pytest

from coordinated_groups import coordinated_by, offsets_leaders
from member_process import wait_until

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
    from kafka.admin import NewTopic

    from kafka_placement.clients.confluent.consumer import Consumer
    from kafka_placement.clients.confluent.fencing_guard import FencingGuard
    from kafka_placement.testing.toxiproxy import timeout

    cluster = kafka_proxied_cluster
    admin = KafkaAdminClient(**cluster.kafka_python_settings())
    topic = f"fencing-guard-{uuid.uuid4().hex[:8]}"
    consumers: dict[str, Any] = {}
    producer: Any = None
    try:
        wait_until(lambda: offsets_leaders(admin), 60, "__consumer_offsets, every partition led", step=0.5)
        leaders = offsets_leaders(admin)
        groups = {
            "guarded": coordinated_by("fencing-guard", 0, leaders, len(leaders)),
            "plain": coordinated_by("fencing-guard", 0, leaders, len(leaders)),
        }
        admin.create_topics(
            [
                NewTopic(
                    topic,
                    replica_assignments={p: [1 + p % 2, 2 - p % 2, 0] for p in range(PARTITIONS)},
                    topic_configs={"min.insync.replicas": "2"},
                )
            ]
        )

        def led_by_1_and_2() -> bool:
            described = admin.describe_topics([topic])[0].get("partitions") or []
            return len(described) == PARTITIONS and all(p["leader_id"] in (1, 2) for p in described)

        wait_until(led_by_1_and_2, 60, f"{topic}'s partitions led by brokers 1 and 2", step=0.5)
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
        produced: set[tuple[int, int]] = set()

        def delivered(error: Any, message: Any) -> None:
            assert error is None, error
            produced.add((message.partition(), message.offset()))

        consumed: dict[str, list[tuple[float, int, int]]] = {name: [] for name in consumers}

        def turn() -> None:
            producer.produce(topic, b"x", partition=len(produced) % PARTITIONS, on_delivery=delivered)
            producer.poll(0)
            for name, consumer in consumers.items():
                for message in consumer.consume(100, PRODUCE_EVERY_S / 2):
                    assert message.error() is None, message.error()
                    consumed[name].append((time.monotonic(), message.partition(), message.offset()))

        def run_for(seconds: float) -> None:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                turn()

        def each_consumed_since(t: float) -> bool:
            turn()
            return all(any(at >= t for at, _, _ in got) for got in consumed.values())

        wait_until(lambda: each_consumed_since(0.0), 60, "both members consuming", step=0.0)
        run_for(3.0)
        with cluster.faults.toxic(timeout(0, stream="upstream"), brokers=[0]):
            silent_from = time.monotonic()
            run_for(SILENCE_S)
            silent_until = time.monotonic()
        window = (silent_from + SESSION_S + GUARD_SLACK_S, silent_until)
        in_window = {
            name: sum(1 for at, _, _ in got if window[0] <= at < window[1]) for name, got in consumed.items()
        }
        wait_until(
            lambda: each_consumed_since(silent_until), RECOVERY_S, "both members consuming again", step=0.0
        )
        producer.flush(30)

        def everything_consumed() -> bool:
            turn()
            return all(produced <= {(p, o) for _, p, o in got} for got in consumed.values())

        wait_until(everything_consumed, RECOVERY_S, "every record produced consumed by both groups", step=0.0)
        recovered = {
            name: min(at for at, _, _ in got if at >= silent_until) - silent_until
            for name, got in consumed.items()
        }
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
