"""Live: the commit modes of :class:`kafka_placement.clients.confluent.Consumer` (issue 30).

Expected values come from the broker, read back with a plain ``confluent_kafka.Consumer``
(``committed()``, ``get_watermark_offsets()``), never from the wrapper under test.
"""

from __future__ import annotations

import random
import time
import uuid
from typing import Any

import pytest

from confluent_workers import (  # the worker processes of the failover proofs; on sys.path
    SESSION_TIMEOUT_S,
    KeyedProducer,
    spawn,  # noqa: F401  (fixture)
    topic,  # noqa: F401  (fixture)
)
from member_process import create_filled_topic, wait_until

pytestmark = [pytest.mark.integration]

PARTITIONS = 6
RECORDS = 5000


@pytest.fixture(scope="module")
def filled_topic(kafka_cluster: Any) -> str:
    """6 partitions, 5,000 keyed records (the issue's setting), written once for the module."""
    return create_filled_topic(
        kafka_cluster.bootstrap_servers, "cf-commits", PARTITIONS, RECORDS, by_key=True
    )


def _broker_view(bootstrap: str, group: str, topic_name: str) -> tuple[dict[int, int], dict[int, int]]:
    """(committed offset, high watermark) per partition, from the broker, by a plain client."""
    import confluent_kafka

    reader = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        tps = [confluent_kafka.TopicPartition(topic_name, p) for p in range(PARTITIONS)]
        committed = {tp.partition: tp.offset for tp in reader.committed(tps, timeout=30)}
        high = {tp.partition: reader.get_watermark_offsets(tp, timeout=30)[1] for tp in tps}
    finally:
        reader.close()
    return committed, high


def _conf(bootstrap: str, group: str, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 1000,
        **extra,
    }


def test_async_commit_per_record_none_dropped_results_once_heartbeats_kept(
    kafka_cluster: Any, filled_topic: str
) -> None:
    """The issue's loop: poll one record, commit it asynchronously. No commit fails, the results
    come to on_commit once per request (far fewer requests than commits), the group's committed
    offsets end at the high watermarks, and the member keeps its generation throughout (the commit
    path never starves its heartbeats)."""
    import confluent_kafka

    from kafka_placement.clients.confluent import Consumer, FailoverAssignor

    bootstrap, group = kafka_cluster.bootstrap_servers, f"cf-async-{uuid.uuid4().hex[:8]}"
    results: list[tuple[Any, dict[int, int]]] = []
    lost: list[Any] = []
    consumer = Consumer(
        _conf(
            bootstrap,
            group,
            **{
                "enable.auto.commit": False,
                "on_commit": lambda err, tps: results.append((err, {tp.partition: tp.offset for tp in tps})),
            },
        ),
        assignor=FailoverAssignor(priority=1),
    )
    consumer.subscribe([filled_topic], on_lost=lambda c, parts: lost.append(parts))
    last: dict[int, int] = {}
    generations = set()
    deadline = time.monotonic() + 120
    while sum(o + 1 for o in last.values()) < RECORDS and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is None or msg.error() is not None:
            continue
        last[msg.partition()] = msg.offset()
        consumer.commit(msg, asynchronous=True)
        generations.add(consumer.group_metadata().generation_id)
    assert sum(o + 1 for o in last.values()) == RECORDS
    # position() and get_watermark_offsets() (librdkafka's, through the wrapper)
    tps = [confluent_kafka.TopicPartition(filled_topic, p) for p in range(PARTITIONS)]
    _, high = _broker_view(bootstrap, group, filled_topic)
    assert {tp.partition: tp.offset for tp in consumer.position(tps)} == high
    assert {p: consumer.get_watermark_offsets(tp, timeout=30)[1] for p, tp in enumerate(tps)} == high
    # every result arrives through poll(); committed() (through the wrapper) catches up
    wait_until(
        lambda: (
            consumer.poll(0.1) is None
            and {tp.partition: tp.offset for tp in consumer.committed(tps, timeout=30)} == high
        ),
        60,
        "committed() at the high watermarks",
    )
    consumer.close()
    committed, high = _broker_view(bootstrap, group, filled_topic)
    assert committed == high
    failed = [err for err, _ in results if err is not None]
    assert failed == []
    assert 0 < len(results) < RECORDS // 5  # coalesced: one request per round trip, not per record
    final = {}
    for _, offsets in results:
        final.update(offsets)
    assert final == high  # the newest offsets were the last ones reported
    assert not lost and len(generations) == 1 and -1 not in generations


def test_sync_offsets_lists_store_offsets_and_auto_commit(kafka_cluster: Any, filled_topic: str) -> None:
    """``commit(offsets=[...], asynchronous=False)`` returns what it committed; with
    ``enable.auto.offset.store=false`` auto-commit commits what ``store_offsets()`` stored (not
    the positions) on its interval while the consumer runs, and the newest stored at close."""
    import confluent_kafka

    from kafka_placement.clients.confluent import Consumer

    bootstrap, group = kafka_cluster.bootstrap_servers, f"cf-store-{uuid.uuid4().hex[:8]}"
    commits: list[Any] = []
    consumer = Consumer(
        _conf(
            bootstrap,
            group,
            **{
                "enable.auto.commit": True,
                "auto.commit.interval.ms": 300,
                "enable.auto.offset.store": False,
                "on_commit": lambda err, tps: commits.append(err),
            },
        ),
        assignor="range",
    )
    consumer.subscribe([filled_topic])
    seen: dict[int, list[int]] = {}
    deadline = time.monotonic() + 120
    while sum(len(v) for v in seen.values()) < RECORDS and time.monotonic() < deadline:
        for msg in consumer.consume(500, 1.0):
            if msg.error() is None:
                seen.setdefault(msg.partition(), []).append(msg.offset())
                if msg.offset() % 2 == 0:  # the application stores only some of what it handled
                    consumer.store_offsets(msg)
    assert sum(len(v) for v in seen.values()) == RECORDS
    stored = {p: max(o for o in offsets if o % 2 == 0) + 1 for p, offsets in seen.items()}
    # the interval commit, while the consumer is open: the stored offsets, not the positions
    wait_until(
        lambda: consumer.poll(0.1) is None and _broker_view(bootstrap, group, filled_topic)[0] == stored,
        30,
        "auto-commit of stored offsets",
    )
    # an explicit list, synchronously: partition 0 moved back to its start
    done = consumer.commit(offsets=[confluent_kafka.TopicPartition(filled_topic, 0, 0)], asynchronous=False)
    assert [(tp.partition, tp.offset) for tp in done] == [(0, 0)]
    assert _broker_view(bootstrap, group, filled_topic)[0][0] == 0
    last0 = max(seen[0])
    consumer.store_offsets(offsets=[confluent_kafka.TopicPartition(filled_topic, 0, last0 + 1)])
    consumer.close()  # auto-commit at close: the newest stored offset of partition 0
    committed, high = _broker_view(bootstrap, group, filled_topic)
    assert committed == {**stored, 0: last0 + 1} and committed[0] == high[0]
    assert commits and all(err is None for err in commits)


def test_sigkill_while_committing_async_per_record_standby_resumes_at_the_last_reported_commit(
    kafka_cluster: Any,
    topic: str,  # noqa: F811  (fixture)
    spawn: Any,  # noqa: F811  (fixture)
    request: pytest.FixtureRequest,
) -> None:
    """A failover group; the active member commits asynchronously after every record and is
    SIGKILLed at a random moment. The standby starts each partition no further back than the last
    commit the killed member's application was told succeeded (on_commit), nothing is lost, and
    the replayed records are counted."""
    group = f"cf-kill-async-{uuid.uuid4().hex[:8]}"
    producer = KeyedProducer(kafka_cluster.bootstrap_servers, topic, rate_per_s=3000, limit=40_000)
    request.addfinalizer(producer.stop)
    active = spawn(group, "p10", topic, "failover", priority=10, commit_mode="async-per-record")
    wait_until(lambda: active.owned() == set(range(PARTITIONS)), 60, "p10 owning everything")
    standby = spawn(group, "p5", topic, "failover", priority=5, commit_mode="async-per-record")
    wait_until(lambda: standby.last("assignment") is not None, 60, "p5 in the group")
    delay = random.uniform(2.0, 6.0)
    time.sleep(delay)
    active.kill()
    wait_until(
        lambda: standby.owned() == set(range(PARTITIONS)),
        SESSION_TIMEOUT_S + 30,
        "p5 owning everything after p10's SIGKILL",
    )
    producer.finish(120)
    assert producer.failed == 0
    produced = producer.delivered
    wait_until(
        lambda: produced <= set(active.records()) | set(standby.records()), 90, "every record consumed"
    )

    told: dict[int, int] = {}  # partition -> the newest offset on_commit reported committed
    for e in active.snapshot():
        if e["ev"] == "commit-ok":
            told.update({p: o for p, o in e["offsets"]})
    assert not [e for e in active.snapshot() if e["ev"] == "commit-failed"]
    first_after: dict[int, int] = {}
    for p, o in standby.records():
        first_after[p] = min(o, first_after.get(p, o))
    for p, committed in told.items():
        assert first_after[p] >= committed, (
            f"partition {p}: p5 started at {first_after[p]}, before {committed}, the commit p10 was told of"
        )
    replayed = sum(1 for p, o in active.records() if o >= first_after.get(p, o + 1))
    delivered_by_active = len(active.records())
    assert told and delivered_by_active > 0
    print(
        f"\nSIGKILL after {delay:.1f}s: p10 delivered {delivered_by_active} records, "
        f"was told of commits up to {sum(told.values())} (sum over partitions), "
        f"p5 replayed {replayed}"
    )


def test_a_topic_created_just_before_is_in_the_first_assignment(
    kafka_cluster: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The group's topics' metadata is known before the leader assigns: a topic created right
    before subscribe() (no wait for its leaders) is in the first assignment, whole, with no
    "left unassigned" warning. The join time next to a plain confluent consumer's is printed."""
    import logging

    import confluent_kafka
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafka_placement.clients.confluent import Consumer

    bootstrap = kafka_cluster.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": bootstrap})
    joins = {}
    for impl in ("ours", "plain"):
        new_topic = f"cf-fresh-{uuid.uuid4().hex[:8]}"
        admin.create_topics([NewTopic(new_topic, PARTITIONS, 2)])[new_topic].result()
        conf = _conf(bootstrap, f"cf-fresh-{uuid.uuid4().hex[:8]}", **{"enable.auto.commit": False})
        first: list[list[int]] = []

        def on_assign(c: Any, parts: list[Any], first: list[list[int]] = first) -> None:
            first.append(sorted(tp.partition for tp in parts))

        caplog.clear()
        with caplog.at_level(logging.WARNING):
            start = time.monotonic()
            plain_conf = {**conf, "partition.assignment.strategy": "range"}
            consumer: Any = (
                Consumer(conf, assignor="range") if impl == "ours" else confluent_kafka.Consumer(plain_conf)
            )
            consumer.subscribe([new_topic], on_assign=on_assign)
            deadline = start + 60
            while not first and time.monotonic() < deadline:
                consumer.poll(0.1)
            joins[impl] = time.monotonic() - start
            consumer.close()
        assert first and first[0] == list(range(PARTITIONS)), (impl, first)
        assert not [r for r in caplog.records if "left unassigned" in r.getMessage()], impl
    print(
        f"\njoin (constructor + subscribe -> on_assign) on a new topic: ours {joins['ours']:.2f} s, "
        f"plain {joins['plain']:.2f} s"
    )


def test_a_pattern_subscription_picks_up_a_topic_created_after_the_group_started(kafka_cluster: Any) -> None:
    """``^prefix-.*`` (librdkafka's regex syntax) is matched against the cluster's topics; a topic
    created while the group runs is assigned within the metadata refresh interval (2 s here)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafka_placement.clients.confluent import Consumer

    bootstrap = kafka_cluster.bootstrap_servers
    prefix = f"cf-pat-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(f"{prefix}-a", 2, 2), NewTopic(f"{prefix}-other", 2, 2)])
    consumer = Consumer(
        _conf(
            bootstrap,
            f"cf-pat-{uuid.uuid4().hex[:8]}",
            **{"enable.auto.commit": False, "topic.metadata.refresh.interval.ms": 2000},
        ),
        assignor="range",
    )
    try:
        consumer.subscribe([f"^{prefix}-a.*", f"{prefix}-other"])

        def owned() -> set[tuple[str, int]]:
            consumer.poll(0.1)
            return {(tp.topic, tp.partition) for tp in consumer.assignment()}

        first = {(f"{prefix}-a", 0), (f"{prefix}-a", 1), (f"{prefix}-other", 0), (f"{prefix}-other", 1)}
        wait_until(lambda: owned() == first, 60, "the matching topic and the named one assigned")
        admin.create_topics([NewTopic(f"{prefix}-ab", 3, 2), NewTopic(f"{prefix}-b", 1, 2)])
        created = time.monotonic()
        later = first | {(f"{prefix}-ab", p) for p in range(3)}
        wait_until(lambda: owned() == later, 60, "the topic created later assigned too")
        took = time.monotonic() - created
    finally:
        consumer.close()
    print(f"\npattern subscription: new topic assigned {took:.1f} s after it was created (refresh 2 s)")
    assert took <= 2.0 + 15  # the refresh interval plus a rebalance, on a loaded machine
