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

from coordinated_groups import coordinated_by, offsets_leaders
from member_process import wait_until

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
    from kafka.admin import NewTopic

    from kafka_placement.clients.kafka_python import KafkaConsumer
    from kafka_placement.testing.toxiproxy import timeout

    cluster = kafka_proxied_cluster
    settings = cluster.kafka_python_settings()
    admin = KafkaAdminClient(**settings)
    topic = f"session-guard-{uuid.uuid4().hex[:8]}"
    consumers: dict[str, Any] = {}
    producer: Any = None
    try:
        wait_until(lambda: offsets_leaders(admin), 60, "__consumer_offsets, every partition led", step=0.5)
        leaders = offsets_leaders(admin)
        groups = {
            name: coordinated_by("session-guard", 0, leaders, len(leaders)) for name in ("guarded", "plain")
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
        produced: set[tuple[int, int]] = set()
        consumed: dict[str, list[tuple[float, int, int]]] = {name: [] for name in consumers}

        def turn() -> None:
            future = producer.send(topic, b"x", partition=len(produced) % PARTITIONS)
            future.add_callback(lambda meta: produced.add((meta.partition, meta.offset)))
            for name, consumer in consumers.items():
                for records in consumer.poll(timeout_ms=int(PRODUCE_EVERY_S * 500)).values():
                    now = time.monotonic()
                    consumed[name] += [(now, r.partition, r.offset) for r in records]

        def run_for(seconds: float) -> None:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                turn()

        def each_consumed_since(t: float) -> bool:
            turn()
            return all(any(at >= t for at, _, _ in got) for got in consumed.values())

        wait_until(lambda: each_consumed_since(0.0), 90, "both members consuming", step=0.0)
        run_for(3.0)
        with cluster.faults.toxic(timeout(0, stream="upstream"), brokers=[0]):
            silent_from = time.monotonic()
            run_for(SILENCE_S)
            silent_until = time.monotonic()
        window = (silent_from + SESSION_MS / 1000 + GUARD_SLACK_S, silent_until)
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
        after = [at for at, _, _ in consumed["guarded"] if suspected_at[0] <= at < silent_until]
        assert after == [], f"{len(after)} records consumed after the guard stopped the member"
        assert not guard.suspected, told  # and went on after the silence
    finally:
        for consumer in consumers.values():
            consumer.close()
        if producer is not None:
            producer.close(10)
        admin.close()
