"""Live, through Toxiproxy: our kafka-python ``KafkaConsumer`` whose group coordinator goes silent stops
consuming once its session may have ended at the broker (:mod:`kafka_placement.clients.kafka_python.
session_guard`); kafka-python's own ``KafkaConsumer`` beside it is measured for comparison.

Two classic groups, one member each, both coordinated by broker 0; their topic's partitions are led by
brokers 1 and 2. A ``timeout`` toxic swallows everything the clients send to broker 0 for
:data:`SILENCE_S`: no heartbeat reaches the coordinator, which removes both members after their session
timeout (6 s), while their fetches from the leaders could go on. Expected, from the session timeout plus
:data:`GUARD_SLACK_S` into the silence until its end: the guarded member consumes nothing; its guard
stopped it before a full session of silence (before the broker can have removed it) and said so once
(its partitions paused), nothing consumed from then on; after the silence both rejoin and consume every
record produced, nothing lost. Without the guard the test fails (no suspicion); kafka-python's own
consumer consumed 340-1,466 records in the window in four runs.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from coordinated_groups import groups_behind_broker_0, run_through_silence

pytestmark = pytest.mark.integration

PARTITIONS = 6
SESSION_MS = 6000
SILENCE_S = 24.0
#: The guard stops 2 s before a full session, counted from the last heartbeat answered (up to a heartbeat
#: interval, 1 s, before the silence), checked once per round of polling: it has stopped 4-5 s into the
#: silence. The window starts 1 s after a full session: by then the broker may have removed the member.
#: (Our consumer's join watchdog also stops fetching, later: it asks for a rejoin once no heartbeat was
#: answered for the session + 1 s, and kafka-python does not fetch while a join cannot complete.)
GUARD_SLACK_S = 1.0
RECOVERY_S = 120.0  # the rejoin after the silence: the requests swallowed must time out first
PRODUCE_EVERY_S = 0.02


def test_a_kafka_python_member_behind_a_silent_coordinator_stops_consuming(
    kafka_proxied_cluster: Any,
) -> None:
    import kafka
    from kafka import KafkaAdminClient, KafkaProducer

    from kafka_placement.clients.kafka_python import KafkaConsumer

    cluster = kafka_proxied_cluster
    settings = cluster.kafka_python_settings()
    admin = KafkaAdminClient(**settings)
    topic = f"session-guard-{uuid.uuid4().hex[:8]}"
    consumers: dict[str, Any] = {}
    producer: Any = None
    try:
        groups = groups_behind_broker_0(admin, "session-guard", topic, PARTITIONS)
        common = {
            **settings,
            "auto_offset_reset": "earliest",
            "enable_auto_commit": True,
            "auto_commit_interval_ms": 1000,
            "session_timeout_ms": SESSION_MS,
            "heartbeat_interval_ms": 1000,
            "request_timeout_ms": 10000,
        }
        consumers["guarded"] = KafkaConsumer(topic, group_id=groups["guarded"], **common)
        consumers["plain"] = kafka.KafkaConsumer(topic, group_id=groups["plain"], **common)
        guard = consumers["guarded"].session_guard
        told: list[tuple[str, int]] = []
        suspected_at: list[float] = []

        def on_suspect(partitions: Any, silent_s: float) -> None:
            told.append(("suspect", len(partitions)))
            suspected_at.append(time.monotonic())

        guard.on_suspect = on_suspect
        guard.on_cleared = lambda partitions: told.append(("cleared", len(partitions)))
        producer = KafkaProducer(**settings, linger_ms=5)

        def produce_one(produced: set[tuple[int, int]]) -> None:
            future = producer.send(topic, b"x", partition=len(produced) % PARTITIONS)
            future.add_callback(lambda meta: produced.add((meta.partition, meta.offset)))

        def poll(consumer: Any) -> list[tuple[int, int]]:
            batches = consumer.poll(timeout_ms=int(PRODUCE_EVERY_S * 500))
            return [(r.partition, r.offset) for records in batches.values() for r in records]

        run = run_through_silence(
            cluster,
            produce_one,
            {name: (lambda c=consumer: poll(c)) for name, consumer in consumers.items()},
            lambda: producer.flush(30),
            silence_s=SILENCE_S,
            recovery_s=RECOVERY_S,
        )
        silent_from, silent_until = run.silent_from, run.silent_until
        window = (silent_from + SESSION_MS / 1000 + GUARD_SLACK_S, silent_until)
        in_window = {name: run.count_between(name, *window) for name in consumers}
        recovered = {name: run.recovered_s(name) for name in consumers}
        produced = run.produced
        print(
            f"records consumed {window[1] - window[0]:.0f} s into a {SILENCE_S:.0f} s coordinator silence "
            f"(after the session + {GUARD_SLACK_S:.0f} s): ours {in_window['guarded']}, kafka-python's "
            f"{in_window['plain']}; consuming again {recovered['guarded']:.1f} s / "
            f"{recovered['plain']:.1f} s after it; {len(produced)} records, every one consumed by both; "
            f"the guard: {told}, {suspected_at[0] - silent_from if suspected_at else None} s into the silence"
        )
        assert in_window["guarded"] == 0, in_window
        assert told and told[0] == ("suspect", PARTITIONS), told  # paused all of them, once silent
        stopped_s = suspected_at[0] - silent_from
        # before a full session of silence: before the broker can have removed the member
        assert stopped_s < SESSION_MS / 1000, stopped_s
        after = run.count_between("guarded", suspected_at[0], silent_until)
        assert after == 0, f"{after} records consumed after the guard stopped the member"
        assert not guard.suspected, told  # and went on after the silence
    finally:
        for consumer in consumers.values():
            consumer.close()
        if producer is not None:
            producer.close(10)
        admin.close()
