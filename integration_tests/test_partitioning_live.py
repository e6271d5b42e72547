"""Live proofs of key → partition on the rack-labelled cluster (real kafka-python and confluent-kafka).

- every kafka-python partitioner of ours: keyed records are consumed back from the partition our core
  predicts, keyless records follow the strategy (exact round-robin counts — no KAFKA-9965 skip — and
  rack-local leaders for KIP-1123), nothing acknowledged is missing;
- confluent-kafka through our drop-in ``Producer``: same; and librdkafka itself as an external oracle:
  a plain ``confluent_kafka.Producer`` with ``partitioner=murmur2_random|consistent|fnv1a`` delivers
  every keyed record to the partition ``partition_key(key, n, scheme)`` names;
- a broker stopped mid-produce: keyless records avoid the partitions it led, keyed records keep their
  hash partition, and every acknowledged record is consumed after the broker is back.

Against the shared dev cluster:
``KAFKA_PLACEMENT_REUSE=1 pytest integration_tests/test_partitioning_live.py``.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.integration

N = 12


def wait_until(check: Callable[[], Any], timeout: float, what: str, step: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except Exception as exc:  # transient metadata errors while brokers move
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


@pytest.fixture(scope="module")
def admin(kafka_cluster: Any) -> Iterator[Any]:
    from kafka import KafkaAdminClient

    client = KafkaAdminClient(
        bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="partitioning-live"
    )
    yield client
    client.close()


def create_topic(admin: Any, partitions: int = N, replication_factor: int = 2) -> str:
    """A fresh topic whose partitions all have a leader (also right after a test restarted a broker)."""
    from kafka import KafkaAdminClient

    from kafka_placement.testing.topics import create_topic as create_ready_topic

    name = f"part-{uuid.uuid4().hex[:10]}"
    bootstrap = admin.config["bootstrap_servers"]
    create_ready_topic(
        admin,
        name,
        partitions,
        replication_factor,
        fresh_admin=lambda: KafkaAdminClient(bootstrap_servers=bootstrap, client_id="partitioning-live"),
    )
    return name


def leaders(admin: Any, topic: str) -> dict[int, int]:
    """partition → leader id (-1: none). Waits while the broker asked does not know the topic yet: a new
    topic's metadata reaches the brokers one by one."""

    def described() -> dict[int, int]:
        (topic_info,) = admin.describe_topics([topic])
        return {p["partition_index"]: p["leader_id"] for p in topic_info.get("partitions") or []}

    return wait_until(described, 30, f"topic {topic} known to the broker asked")


def consume_all(
    bootstrap: str, topic: str, expected: int, timeout: float = 60
) -> list[tuple[int, bytes | None, bytes]]:
    """Every record of ``topic`` as (partition, key, value), read from the beginning of each partition."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=2000)
    try:
        parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        out: list[tuple[int, bytes | None, bytes]] = []
        deadline = time.monotonic() + timeout
        while len(out) < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=1000).values():
                out.extend((r.partition, r.key, r.value) for r in batch)
        return out
    finally:
        consumer.close()


def _kafka_python_partitioners() -> dict[str, Any]:
    from kafka_placement.clients.kafka_python import partitioners as kp

    return {
        "java-default": kp.JavaDefaultPartitioner(batch_size=256),
        "legacy-default": kp.LegacyDefaultPartitioner(),
        "round-robin": kp.RoundRobinPartitioner(),
        "rack-aware": kp.RackAwarePartitioner("rack1", batch_size=256),
        "consistent_random": kp.SchemePartitioner("consistent_random", batch_size=256),
    }


@pytest.mark.parametrize("name", list(_kafka_python_partitioners()))
def test_kafka_python_partitioners_place_records_as_predicted(
    name: str, kafka_cluster: Any, admin: Any
) -> None:
    from kafka import KafkaProducer

    from kafka_placement.partitioning import partition_key

    partitioner = _kafka_python_partitioners()[name]
    new_batches: list[int] = []
    forward = partitioner.on_new_batch

    def counting_on_new_batch(topic: str, cluster: Any, prev_partition: int) -> None:
        new_batches.append(prev_partition)
        forward(topic, cluster, prev_partition)

    partitioner.on_new_batch = counting_on_new_batch
    topic = create_topic(admin)
    # small batches + linger: many "new batch" aborts, so on_new_batch and the double partition() call happen
    producer = KafkaProducer(
        bootstrap_servers=kafka_cluster.bootstrap_servers,
        partitioner=partitioner,
        batch_size=512,
        linger_ms=2,
    )
    keyed = [(f"user-{i}".encode(), f"keyed-{i}".encode()) for i in range(240)]
    keyless = [(None, f"keyless-{i}".encode()) for i in range(240)]
    futures = []
    for wave in range(4):  # each wave starts with no open batch: keyless sends abort for a new batch
        futures += [producer.send(topic, key=k, value=v) for k, v in keyless[wave * 60 : (wave + 1) * 60]]
        producer.flush(60)
    futures += [producer.send(topic, key=k, value=v) for k, v in keyed]
    producer.flush(60)
    placed = [f.get(timeout=30).partition for f in futures]  # keyless first, in send order
    acked = set(placed)
    producer.close(10)
    records = consume_all(kafka_cluster.bootstrap_servers, topic, len(futures))
    assert len(records) == len(futures), "acknowledged records missing"
    assert acked <= set(range(N))

    by_value = {v: (p, k) for p, k, v in records}
    keyless_parts = Counter(by_value[v][0] for _, v in keyless)
    if name == "round-robin":
        # the producer did re-partition records after aborting for a new batch (the KAFKA-9965 path)
        assert new_batches, "no on_new_batch call: the scenario did not happen"
        # every record (keyed too) strictly round-robin over the 12 available partitions: 480 = 12 x 40
        counts = Counter(p for p, _, _ in records)
        assert sorted(counts) == list(range(N))
        assert set(counts.values()) == {40}, f"round-robin skew (KAFKA-9965?): {dict(counts)}"
        return
    scheme = "consistent_random" if name == "consistent_random" else "murmur2_random"
    for key, value in keyed:
        assert by_value[value] == (partition_key(key, N, scheme), key)
    if name == "rack-aware":
        lead = leaders(admin, topic)
        local = {p for p, b in lead.items() if kafka_cluster.broker_racks[b] == "rack1"}
        assert local and set(keyless_parts) <= local, (dict(keyless_parts), local)
    elif name == "legacy-default":
        assert set(keyless_parts.values()) == {20}  # round-robin: 240 keyless over 12 partitions
    else:  # uniform sticky (KIP-794): a partition keeps keyless records until 256 bytes went to it
        assert 1 < len(keyless_parts) <= N
        runs: list[int] = []  # bytes per run of consecutive keyless records on one partition
        for i, (_, value) in enumerate(keyless):
            if i and placed[i] == placed[i - 1]:
                runs[-1] += len(value)
            else:
                runs.append(len(value))
        assert all(r >= 256 for r in runs[:-1]), runs


def test_confluent_wrapper_places_records_as_predicted(kafka_cluster: Any, admin: Any) -> None:
    import confluent_kafka

    from kafka_placement.clients.confluent.producer import Producer
    from kafka_placement.partitioning import partition_key

    topic = create_topic(admin)
    for scheme in ("murmur2_random", "consistent_random", "fnv1a"):
        for native in (True, False):  # librdkafka places the records / our partitioner does
            producer = Producer(
                {"bootstrap.servers": kafka_cluster.bootstrap_servers}, partitioner=scheme, native=native
            )
            delivered: list[tuple[bytes | None, int]] = []

            def report(err: Any, msg: Any, out: list[tuple[bytes | None, int]] = delivered) -> None:
                assert err is None, err
                out.append((msg.key(), msg.partition()))

            keys = [f"{scheme}-{native}-{i}".encode() for i in range(200)]
            for k in keys:
                producer.produce(topic, value=b"v-" + k, key=k, on_delivery=report)
            for i in range(50):
                producer.produce(
                    topic, f"keyless-{scheme}-{i}".encode(), headers={"h": b"1"}, callback=report
                )
            assert producer.flush(60) == 0
            assert producer.metadata_fetches == (
                0 if native else 1
            )  # ours: one metadata call for 250 records
            assert len(delivered) == 250
            for key, part in delivered:
                if key is not None:
                    assert part == partition_key(key, N, scheme), (scheme, native, key)
    # produce_batch through the partitioner, in a with block like any confluent Producer
    batch_keys = [f"batch-{i}".encode() for i in range(300)]
    batch_delivered: list[tuple[bytes | None, int]] = []

    def batch_report(err: Any, msg: Any) -> None:
        assert err is None, err
        batch_delivered.append((msg.key(), msg.partition()))

    with Producer(
        {"bootstrap.servers": kafka_cluster.bootstrap_servers}, partitioner="murmur2_random"
    ) as producer:
        assert isinstance(producer, confluent_kafka.Producer)
        sent = producer.produce_batch(
            topic, [{"key": k, "value": b"b"} for k in batch_keys], on_delivery=batch_report
        )
        assert sent == 300
        assert producer.flush(60) == 0
    assert sorted(batch_delivered) == sorted((k, partition_key(k, N, "murmur2_random")) for k in batch_keys)
    records = consume_all(kafka_cluster.bootstrap_servers, topic, 1800)
    assert len(records) == 1800


def test_confluent_producer_routed_in_c_places_keyed_and_keyless_records_exactly(
    kafka_cluster: Any, admin: Any
) -> None:
    """The C record router on a real cluster: records without per-record callbacks (the common call) are
    placed in C; keyed ones land on the scheme's partition, keyless ones in sticky runs of at least
    ``batch.size`` bytes (Java's BuiltInPartitioner), and every record arrives."""
    from kafka_placement.clients.confluent.producer import Producer
    from kafka_placement.partitioning import partition_key

    for scheme in (None, "jump"):  # None: Java's producer (murmur2 keyed, uniform sticky keyless)
        topic = create_topic(admin)
        placed: dict[bytes, int] = {}

        def report(err: Any, msg: Any, out: dict[bytes, int] = placed) -> None:
            assert err is None, err
            out[msg.value()] = msg.partition()

        config = {"bootstrap.servers": kafka_cluster.bootstrap_servers, "on_delivery": report}
        if scheme is None:
            config["batch.size"] = 2000  # our keyless stickiness follows it, as Java's does
        producer = Producer(config, partitioner=scheme)
        assert producer.router is not None and not producer.native
        keyed: dict[bytes, bytes] = {}
        keyless: list[bytes] = []
        for i in range(3000):
            value = f"{i:05d}-".encode() + b"v" * 95
            if i % 3 == 0:
                keyless.append(value)
                producer.produce(topic, value)
            else:
                key = f"user-{i % 700}".encode()
                keyed[value] = key
                producer.produce(topic, value, key)
        assert producer.flush(60) == 0
        assert producer.router.fast >= 2900, (producer.router.fast, producer.router.slow_calls)
        assert len(placed) == 3000
        for value, key in keyed.items():
            assert placed[value] == partition_key(key, N, scheme or "murmur2_random"), (scheme, key)
        runs: list[int] = []  # bytes per run of consecutive keyless records on one partition
        for i, value in enumerate(keyless):
            if i and placed[value] == placed[keyless[i - 1]]:
                runs[-1] += len(value)
            else:
                runs.append(len(value))
        batch = 2000 if scheme is None else 16384
        assert len(runs) > 1 and all(r >= batch for r in runs[:-1]), runs
        got = consume_all(kafka_cluster.bootstrap_servers, topic, 3000)
        assert {value: part for part, _, value in got} == placed  # stored where the reports said


def test_aiokafka_producer_places_by_scheme_with_keyless_state_per_topic(
    kafka_cluster: Any, admin: Any
) -> None:
    import asyncio

    from kafka_placement.clients.aiokafka.partitioner import PlacementPartitioner
    from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer
    from kafka_placement.partitioning import RecordPartitioner, RoundRobin, partition_key

    first, second = create_topic(admin), create_topic(admin)

    async def produce() -> tuple[dict[bytes, int], list[tuple[str, int]]]:
        partitioner = PlacementPartitioner(RecordPartitioner("murmur2_random", RoundRobin(0)))
        producer = AIOKafkaProducer(
            bootstrap_servers=kafka_cluster.bootstrap_servers, partitioner=partitioner
        )
        await producer.start()
        try:
            keyed = {}
            for i in range(100):
                key = f"aio-{i}".encode()
                keyed[key] = (await producer.send_and_wait(first, b"v", key=key)).partition
            keyless = []
            for i in range(2 * N):  # alternating topics: each topic's round robin runs on its own
                topic = (first, second)[i % 2]
                keyless.append((topic, (await producer.send_and_wait(topic, b"k")).partition))
            return keyed, keyless
        finally:
            await producer.stop()

    keyed, keyless = asyncio.run(produce())
    assert keyed == {k: partition_key(k, N, "murmur2_random") for k in keyed}
    for topic in (first, second):
        assert [p for t, p in keyless if t == topic] == list(range(N))


@pytest.mark.parametrize("scheme", ["murmur2_random", "consistent", "fnv1a"])
def test_librdkafka_builtin_partitioners_agree_with_our_schemes(
    scheme: str, kafka_cluster: Any, admin: Any
) -> None:
    import confluent_kafka

    from kafka_placement.partitioning import partition_keys

    topic = create_topic(admin, partitions=13)
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": kafka_cluster.bootstrap_servers, "partitioner": scheme}
    )
    delivered: dict[bytes, int] = {}

    def report(err: Any, msg: Any) -> None:
        assert err is None, err
        delivered[msg.key()] = msg.partition()

    keys = [f"oracle-{scheme}-{i}-{'x' * (i % 37)}".encode() for i in range(400)]
    for k in keys:
        producer.produce(topic, value=b"v", key=k, on_delivery=report)
    assert producer.flush(60) == 0
    predicted = partition_keys(keys, 13, scheme).tolist()
    assert [delivered[k] for k in keys] == predicted


def test_broker_stopped_mid_produce(kafka_cluster: Any, admin: Any) -> None:
    from kafka import KafkaProducer

    from kafka_placement.clients.confluent.producer import Producer
    from kafka_placement.clients.kafka_python.partitioners import (
        JavaDefaultPartitioner,
        RoundRobinPartitioner,
    )
    from kafka_placement.partitioning import RecordPartitioner, RoundRobin, partition_key

    topic = create_topic(
        admin, replication_factor=1
    )  # RF 1: the stopped broker's partitions lose their leader
    lead = leaders(admin, topic)
    victim = max(Counter(lead.values()).items(), key=lambda kv: kv[1])[0]
    dead = {p for p, b in lead.items() if b == victim}
    bootstrap = ",".join(kafka_cluster.broker_address(b) for b in kafka_cluster.broker_racks if b != victim)
    common = {
        "bootstrap_servers": bootstrap,
        "metadata_max_age_ms": 1000,
        "linger_ms": 2,
        "batch_size": 512,
        "request_timeout_ms": 10000,
        "delivery_timeout_ms": 180000,
    }
    rr = KafkaProducer(partitioner=RoundRobinPartitioner(), **common)
    sticky = KafkaProducer(partitioner=JavaDefaultPartitioner(batch_size=1024), **common)
    conf = Producer(
        {"bootstrap.servers": bootstrap, "message.timeout.ms": 180000},
        partitioner=RecordPartitioner("murmur2_random", RoundRobin()),
        metadata_max_age_s=1.0,
    )
    conf_acked: list[int] = []
    sent: list[Any] = []
    try:
        for i in range(60):  # before the outage (also makes both producers track the topic)
            sent.append(rr.send(topic, value=f"pre-{i}".encode()))
            sent.append(sticky.send(topic, value=f"pre-st-{i}".encode()))
        rr.flush(30)
        sticky.flush(30)
        kafka_cluster.stop_broker(victim)
        try:
            wait_until(
                lambda: all(leaders(admin, topic)[p] == -1 for p in dead), 60, f"{sorted(dead)} leaderless"
            )
            for prod in (rr, sticky):  # wait for the producers' own metadata to see it
                wait_until(
                    lambda prod=prod: (
                        prod._metadata.available_partitions_for_topic(topic) == set(range(N)) - dead
                    ),
                    30,
                    "producer metadata without the stopped broker's partitions",
                )
            wait_until(
                lambda: conf.refresh_metadata(topic).available == tuple(sorted(set(range(N)) - dead)),
                30,
                "confluent metadata without the stopped broker's partitions",
            )
            outage_keyless = []
            for i in range(120):
                outage_keyless.append(rr.send(topic, value=f"rr-{i}".encode()))
                outage_keyless.append(sticky.send(topic, value=f"st-{i}".encode()))
                conf.produce(
                    topic,
                    f"cf-{i}".encode(),
                    on_delivery=lambda e, m: conf_acked.append(m.partition()) if e is None else None,
                )
            keyed = [
                (f"k-{i}".encode(), sticky.send(topic, key=f"k-{i}".encode(), value=f"kv-{i}".encode()))
                for i in range(60)
            ]
            rr.flush(60)
            conf.flush(60)
            outage_parts = {f.get(timeout=60).partition for f in outage_keyless}
            assert outage_parts and not (outage_parts & dead), (
                f"keyless records went to {outage_parts & dead}"
            )
            assert conf_acked and not (set(conf_acked) & dead)
            sent.extend(outage_keyless)
        finally:
            kafka_cluster.start_broker(victim)
        wait_until(lambda: all(b >= 0 for b in leaders(admin, topic).values()), 120, "leaders back")
        sticky.flush(120)
        for key, fut in keyed:
            assert fut.get(timeout=120).partition == partition_key(key, N, "murmur2_random")
        sent.extend(f for _, f in keyed)
    finally:
        rr.close(10)
        sticky.close(10)
        conf.flush(30)
    acked = len(sent) + len(conf_acked)
    records = consume_all(kafka_cluster.bootstrap_servers, topic, acked, timeout=90)
    assert len(records) == acked, f"{acked - len(records)} acknowledged records missing"
    values = {v for _, _, v in records}
    assert all(f"kv-{i}".encode() in values for i in range(60))


def test_kip794_confluent_keyless_records_leave_a_partition_that_stopped_taking_data(
    kafka_cluster: Any, admin: Any
) -> None:
    """KIP-794 (``partitioner.availability.timeout.ms``): a broker is killed and the producer's metadata is
    kept stale on purpose (refreshed every 300 s), so only the availability timeout can steer keyless
    records away from the dead broker's partitions — which it does within a second."""
    from kafka_placement.clients.confluent.producer import Producer
    from kafka_placement.partitioning import RecordPartitioner, RoundRobin

    topic = create_topic(admin, replication_factor=1)  # RF 1: the dead broker's partitions take nothing
    lead = leaders(admin, topic)
    victim = max(Counter(lead.values()).items(), key=lambda kv: kv[1])[0]
    dead = {p for p, b in lead.items() if b == victim}
    bootstrap = ",".join(kafka_cluster.broker_address(b) for b in kafka_cluster.broker_racks if b != victim)
    producer = Producer(
        {"bootstrap.servers": bootstrap, "message.timeout.ms": 180000, "linger.ms": 2},
        partitioner=RecordPartitioner("murmur2_random", RoundRobin(0)),
        availability_timeout_s=1.0,
        metadata_max_age_s=300,
    )
    reports: list[tuple[float, int]] = []

    def report(err: Any, msg: Any) -> None:
        if err is None:
            reports.append((float(msg.value()), msg.partition()))

    for _ in range(60):  # before: every partition takes data
        producer.produce(topic, str(time.monotonic()).encode(), on_delivery=report)
    assert producer.flush(60) == 0
    kafka_cluster.kill_broker(victim)
    killed = time.monotonic()
    try:
        while time.monotonic() - killed < 4:
            producer.produce(topic, str(time.monotonic()).encode(), on_delivery=report)
            producer.poll(0)
            time.sleep(0.01)
    finally:
        kafka_cluster.start_broker(victim)
    assert producer.flush(120) == 0  # the dead broker's records go out once it is back
    assert producer.metadata_fetches == 1  # no metadata refresh steered anything
    late = {p for t, p in reports if t > killed + 2.0}
    early = {p for t, p in reports if killed < t < killed + 0.5}
    assert early & dead, "no record went to the dead broker's partitions right after the kill"
    assert late and not (late & dead), f"keyless records still went to {sorted(late & dead)}"


@pytest.mark.parametrize("client", ["kafka-python", "aiokafka"])
def test_kip794_kafka_python_and_aiokafka_keyless_records_leave_a_stalled_partition(
    client: str, kafka_cluster: Any, admin: Any
) -> None:
    """The same outage for our kafka-python and aiokafka producers: within the 4 s after the kill (before
    the controller fences the broker, 6 s), only the availability timeout can steer keyless records."""
    import asyncio

    from kafka_placement.partitioning import RecordPartitioner, RoundRobin

    topic = create_topic(admin, replication_factor=1)
    lead = leaders(admin, topic)
    victim = max(Counter(lead.values()).items(), key=lambda kv: kv[1])[0]
    dead = {p for p, b in lead.items() if b == victim}
    bootstrap = ",".join(kafka_cluster.broker_address(b) for b in kafka_cluster.broker_racks if b != victim)
    core = RecordPartitioner("murmur2_random", RoundRobin(0))
    placed: list[tuple[float, int]] = []  # (sent at, partition)

    if client == "kafka-python":
        from kafka_placement.clients.kafka_python.partitioners import PlacementPartitioner
        from kafka_placement.clients.kafka_python.producer import KafkaProducer

        producer = KafkaProducer(
            bootstrap_servers=bootstrap, partitioner=PlacementPartitioner(core), availability_timeout_s=1.0,
            metadata_max_age_ms=300000, linger_ms=2, delivery_timeout_ms=180000, request_timeout_ms=120000,
        )  # fmt: skip
        try:
            for _ in range(60):
                producer.send(topic, b"before")
            producer.flush(60)
            kafka_cluster.kill_broker(victim)
            killed = time.monotonic()
            sent: list[tuple[float, Any]] = []
            try:
                while time.monotonic() - killed < 4:
                    sent.append((time.monotonic(), producer.send(topic, b"during")))
                    time.sleep(0.01)
            finally:
                kafka_cluster.start_broker(victim)
            producer.flush(120)
            placed = [(at, future.get(timeout=60).partition) for at, future in sent]
        finally:
            producer.close(10)
    else:
        from kafka_placement.clients.aiokafka.partitioner import PlacementPartitioner as AioPlacement
        from kafka_placement.clients.aiokafka.producer import AIOKafkaProducer

        async def produce() -> float:
            producer = AIOKafkaProducer(
                bootstrap_servers=bootstrap, partitioner=AioPlacement(core), availability_timeout_s=1.0,
                metadata_max_age_ms=300000, linger_ms=2, request_timeout_ms=120000,
            )  # fmt: skip
            await producer.start()
            try:
                for _ in range(60):
                    await (await producer.send(topic, b"before"))
                kafka_cluster.kill_broker(victim)
                started = time.monotonic()
                pending = []
                try:
                    while time.monotonic() - started < 4:
                        pending.append((time.monotonic(), await producer.send(topic, b"during")))
                        await asyncio.sleep(0.01)
                finally:
                    kafka_cluster.start_broker(victim)
                for at, future in pending:
                    placed.append((at, (await asyncio.wait_for(future, 120)).partition))
                return started
            finally:
                await producer.stop()

        killed = asyncio.run(produce())
    early = {p for at, p in placed if at < killed + 0.5}
    late = {p for at, p in placed if at > killed + 2.0}
    assert early & dead, "no record went to the dead broker's partitions right after the kill"
    assert late and not (late & dead), f"keyless records still went to {sorted(late & dead)}"
