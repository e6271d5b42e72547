"""Live, through Toxiproxy: our confluent ``Consumer`` says so in one error when librdkafka keeps a partition
assigned and fetches none of it (:mod:`kafka_placement.clients.confluent.fetch_stall`), instead of a member
that silently consumes nothing; a new consumer then reads every record, nothing lost.

The soak found librdkafka 2.16 keeping a partition so after a broker left the metadata and came back
(docs/reliability.md, seed 39); that state cannot be made on demand. What the consumer sees of it can: the
partition's leader (broker 1) is up for the cluster but swallows everything this client sends it
(a ``timeout`` toxic), so librdkafka holds the partition ``active``, led by broker 1, with no fetch ever
answered. The group's coordinator (broker 0) and the others are unaffected: the member joins, is assigned
the partitions at their committed offsets, and is told within the stall timeout plus a statistics
interval.

The member's kafka-python may meet the silence too: its first MetadataRequest for the topic goes to a
broker it picks at random, broker 1 a third of the time. Its TLS handshake there then fails at the
connection's setup deadline (:mod:`kafka_placement.clients.kafka_python.tls_handshake`; without it the
member was assigned nothing for the whole test, 2 runs of 5), the member joins first with no partition,
and again once another broker answered: the stall is timed from the assignment that has partitions.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from coordinated_groups import coordinated_by, offsets_leaders
from member_process import wait_until

pytestmark = pytest.mark.integration

PARTITIONS = 2
RECORDS = 10
STALL_S = 10.0
#: the monitor reads librdkafka's statistics every 5 s; the join and the first fetch attempt take a few
SAY_SO_WITHIN_S = STALL_S + 5.0 + 10.0


def test_a_partition_librdkafka_never_fetches_is_named_and_a_new_consumer_reads_it_all(
    kafka_proxied_cluster: Any,
) -> None:
    from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic
    from kafka.structs import OffsetAndMetadata

    from kafka_placement.clients.confluent.consumer import Consumer
    from kafka_placement.clients.confluent.fetch_stall import fetch_states
    from kafka_placement.errors import FetchStalledError
    from kafka_placement.testing.toxiproxy import timeout

    cluster = kafka_proxied_cluster
    settings = cluster.kafka_python_settings()
    admin = KafkaAdminClient(**settings)
    topic = f"fetch-stall-{uuid.uuid4().hex[:8]}"
    consumers: list[Any] = []
    try:
        wait_until(lambda: offsets_leaders(admin), 60, "__consumer_offsets, every partition led", step=0.5)
        leaders = offsets_leaders(admin)
        group = coordinated_by("fetch-stall", 0, leaders, len(leaders))
        admin.create_topics([NewTopic(topic, replica_assignments={p: [1, 2, 0] for p in range(PARTITIONS)})])

        def led_by_1() -> bool:
            described = admin.describe_topics([topic])[0].get("partitions") or []
            return len(described) == PARTITIONS and all(p["leader_id"] == 1 for p in described)

        wait_until(led_by_1, 60, f"{topic}'s partitions led by broker 1", step=0.5)
        producer = KafkaProducer(**settings)
        produced = [producer.send(topic, f"r{i}".encode(), partition=i % PARTITIONS) for i in range(RECORDS)]
        producer.flush(30)
        producer.close(10)
        assert all(f.succeeded() for f in produced)
        # committed offsets: librdkafka starts at them (no offset lookup first), its fetch state "active"
        admin.alter_group_offsets(
            group, {TopicPartition(topic, p): OffsetAndMetadata(0, "", -1) for p in range(PARTITIONS)}
        )
        config = {**cluster.librdkafka_settings(), "group.id": group, "enable.auto.commit": False}
        assigned_at: list[float] = []

        documents: list[str] = []  # what librdkafka reported, to show when the stall is not said
        # built (both clients bootstrapped) before broker 1 goes silent: only the fetching should meet it
        stalled = Consumer(
            {**config, "stats_cb": documents.append, "statistics.interval.ms": 5000},
            assignor="range",
            fetch_stall_timeout_s=STALL_S,
        )
        consumers.append(stalled)
        with cluster.faults.toxic(timeout(0, stream="upstream"), brokers=[1]):
            stalled.subscribe([topic], on_assign=lambda c, tps: tps and assigned_at.append(time.monotonic()))
            started = time.monotonic()
            error: FetchStalledError | None = None
            got: list[Any] = []
            while error is None and time.monotonic() - started < 120:
                try:
                    got += [m for m in stalled.consume(10, 0.5) if m.error() is None]
                except FetchStalledError as exc:
                    error = exc
            last = fetch_states(documents[-1]) if documents else None
            assert error is not None, f"the stall was never said; librdkafka's last statistics: {last}"
            told_s = time.monotonic() - assigned_at[0]
        assert got == []  # nothing fetched from a leader that never answered
        text = str(error)
        print(f"told {told_s:.1f} s after the assignment (stall timeout {STALL_S:.0f} s): {text}")
        # each partition named with the leader librdkafka's statistics give: broker 1, or -1 ("leader
        # unknown") once its connection to the silent leader timed out (CI, session 31)
        named = [
            f"{topic}[{p}] (leader 1," in text or f"{topic}[{p}] (leader unknown," in text
            for p in range(PARTITIONS)
        ]
        assert "\n" not in text and all(named), text
        assert STALL_S <= told_s <= SAY_SO_WITHIN_S, told_s
        stalled.close()
        consumers.remove(stalled)

        fresh = Consumer(config, assignor="range", fetch_stall_timeout_s=STALL_S)
        consumers.append(fresh)
        fresh.subscribe([topic])
        read: set[tuple[int, int]] = set()

        def everything_read() -> bool:
            read.update((m.partition(), m.offset()) for m in fresh.consume(10, 0.5) if m.error() is None)
            return len(read) == RECORDS

        wait_until(everything_read, 60, "a new consumer reading every record", step=0.0)
        assert read == {(f.value.partition, f.value.offset) for f in produced}
    finally:
        for consumer in consumers:
            consumer.close()
        admin.close()
