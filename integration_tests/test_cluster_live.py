"""Live checks of the harness itself: the cluster the other live tests rely on is what we claim.

- six brokers, ids 0–5, with exactly the racks of the ``AdminUtils.assignReplicasToBrokers`` javadoc
  example, read back through the admin API of BOTH kafka-python (DescribeCluster) and confluent-kafka
  (librdkafka's describe_cluster);
- a topic created with RF 3 has three distinct replicas per partition, full ISR, and every produced
  record is consumed back;
- a broker stopped gracefully leaves describe_cluster, the topic stays writable/readable, and after
  start_broker it is listed again with its rack and rejoins the ISR;
- a broker killed with SIGKILL (exit 137, no controlled shutdown) is fenced within the broker session
  timeout and comes back the same way.

Against the shared dev cluster: ``KAFKA_PLACEMENT_REUSE=1 pytest integration_tests/test_cluster_live.py``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.integration

#: The racks of the ``AdminUtils.assignReplicasToBrokers`` javadoc example, written out independently
#: of the harness constant on purpose.
SEED_RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def wait_until(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except Exception as exc:  # metadata moving while brokers come and go
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


CREATED: list[str] = []


@pytest.fixture(scope="module")
def admin(kafka_cluster: Any) -> Iterator[Any]:
    from kafka import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="cluster-live")
    yield client
    if CREATED:  # keep the shared dev cluster tidy
        try:
            client.delete_topics(list(CREATED))
        except Exception as exc:  # best effort: the assertions already ran
            print(f"could not delete {CREATED}: {exc}")
        CREATED.clear()
    client.close()


def kp_brokers(bootstrap: str) -> dict[int, tuple[str, int, str | None]]:
    from kafka import KafkaAdminClient

    client = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="cluster-live-describe")
    try:
        info = client.describe_cluster()
    finally:
        client.close()
    return {
        int(b["broker_id"]): (b["host"], int(b["port"]), b["rack"])
        for b in info["brokers"]
        if not b.get("is_fenced", False)
    }


def ck_brokers(bootstrap: str) -> dict[int, tuple[str, int, str | None]]:
    from confluent_kafka.admin import AdminClient

    client = AdminClient({"bootstrap.servers": bootstrap})
    desc = client.describe_cluster(request_timeout=15).result(timeout=20)
    return {n.id: (n.host, n.port, n.rack) for n in desc.nodes}


def make_topic(admin: Any, partitions: int, rf: int) -> str:
    from kafka import KafkaAdminClient

    from kafka_placement.testing.topics import create_topic

    name = f"cluster-live-{uuid.uuid4().hex[:10]}"
    bootstrap = admin.config["bootstrap_servers"]
    CREATED.append(name)
    create_topic(
        admin,
        name,
        partitions,
        rf,
        fresh_admin=lambda: KafkaAdminClient(bootstrap_servers=bootstrap, client_id="cluster-live"),
    )
    return name


def replicas_of(admin: Any, topic: str) -> dict[int, tuple[list[int], list[int]]]:
    """partition → (replicas, isr) from kafka-python describe_topics."""
    (desc,) = admin.describe_topics([topic])
    if desc.get("error_code", 0):
        raise RuntimeError(f"describe_topics error {desc['error_code']}")
    return {
        p["partition_index"]: (list(p["replica_nodes"]), list(p["isr_nodes"])) for p in desc["partitions"]
    }


def produce(bootstrap: str, topic: str, n: int, tag: str) -> None:
    from confluent_kafka import Producer

    errors: list[Any] = []
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
    for i in range(n):
        p.produce(
            topic,
            key=f"{tag}-{i}".encode(),
            value=f"{tag}-{i}".encode(),
            on_delivery=lambda err, _msg: errors.append(err) if err else None,
        )
    remaining = p.flush(30)
    assert remaining == 0, f"{remaining} records not delivered"
    assert not errors, errors


def consume_all(bootstrap: str, topic: str, expected: int, timeout: float = 30.0) -> list[bytes]:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        group_id=None,
        consumer_timeout_ms=2000,
    )
    values: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while len(values) < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=1000).values():
                values.extend(r.value for r in batch)
    finally:
        consumer.close()
    return values


# ----------------------------------------------------------------------------------------------- tests
def test_six_brokers_with_seed_racks_kafka_python(kafka_cluster: Any) -> None:
    seen = kp_brokers(kafka_cluster.bootstrap_servers)
    assert {b: rack for b, (_h, _p, rack) in seen.items()} == SEED_RACKS
    assert kafka_cluster.broker_racks == SEED_RACKS
    for b, (host, port, _rack) in seen.items():
        assert host == "127.0.0.1"
        assert kafka_cluster.broker_address(b) == f"{host}:{port}"
    assert kafka_cluster.bootstrap_servers.split(",") == [kafka_cluster.broker_address(b) for b in range(6)]


def test_six_brokers_with_seed_racks_confluent(kafka_cluster: Any) -> None:
    seen = ck_brokers(kafka_cluster.bootstrap_servers)
    assert {b: rack for b, (_h, _p, rack) in seen.items()} == SEED_RACKS
    assert seen == kp_brokers(kafka_cluster.bootstrap_servers)


def test_rf3_topic_is_replicated_and_readable(kafka_cluster: Any, admin: Any) -> None:
    topic = make_topic(admin, partitions=6, rf=3)
    parts = wait_until(
        lambda: (r := replicas_of(admin, topic)) and all(len(isr) == 3 for _rep, isr in r.values()) and r,
        30,
        "full ISR",
    )
    for replicas, isr in parts.values():
        assert len(set(replicas)) == 3 and set(replicas) <= set(SEED_RACKS)
        assert set(isr) == set(replicas)
    produce(kafka_cluster.bootstrap_servers, topic, 120, "rf3")
    got = consume_all(kafka_cluster.bootstrap_servers, topic, 120)
    assert sorted(got) == sorted(f"rf3-{i}".encode() for i in range(120))


def test_stop_then_start_broker(kafka_cluster: Any, admin: Any) -> None:
    broker = 3
    topic = make_topic(admin, partitions=6, rf=3)
    try:
        kafka_cluster.stop_broker(broker)
        # 143 = 128 + SIGTERM: the JVM ran its shutdown hooks (Kafka's controlled shutdown) and exited
        # by itself; 137 would mean docker had to SIGKILL it after the stop timeout.
        assert kafka_cluster.broker_exit_code(broker) == 143
        remaining = kp_brokers(kafka_cluster.bootstrap_servers)
        assert broker not in remaining
        assert {b: r for b, (_h, _p, r) in remaining.items()} == {
            b: r for b, r in SEED_RACKS.items() if b != broker
        }
        produce(kafka_cluster.bootstrap_servers, topic, 60, "stopped")
    finally:
        kafka_cluster.start_broker(broker)
    assert {b: r for b, (_h, _p, r) in kp_brokers(kafka_cluster.bootstrap_servers).items()} == SEED_RACKS
    assert ck_brokers(kafka_cluster.bootstrap_servers)[broker][2] == SEED_RACKS[broker]
    wait_until(
        lambda: all(set(isr) == set(rep) for rep, isr in replicas_of(admin, topic).values()),
        60,
        f"broker {broker} back in every ISR",
    )
    assert len(consume_all(kafka_cluster.bootstrap_servers, topic, 60)) == 60


def test_kill_then_start_broker(kafka_cluster: Any, admin: Any) -> None:
    broker = 1
    try:
        kafka_cluster.kill_broker(broker)
        assert not kafka_cluster.broker_running(broker)
        assert kafka_cluster.broker_exit_code(broker) == 137  # 128 + SIGKILL
        # No controlled shutdown: the controller fences it when its session expires (6 s here).
        wait_until(
            lambda: broker not in kp_brokers(kafka_cluster.bootstrap_servers), 30, f"broker {broker} fenced"
        )
    finally:
        kafka_cluster.start_broker(broker)
    assert kafka_cluster.broker_running(broker)
    assert {b: r for b, (_h, _p, r) in kp_brokers(kafka_cluster.bootstrap_servers).items()} == SEED_RACKS


def test_port_taken_between_choice_and_bind_is_retried(
    kafka_cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second (1-broker) cluster whose first port choice is already bound by someone else."""
    import socket

    from kafka_placement.testing import KafkaCluster
    from kafka_placement.testing import cluster as cluster_mod

    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    taken = squatter.getsockname()[1]
    real_free_ports = cluster_mod.free_ports
    calls: list[list[int]] = []

    def first_call_collides(count: int) -> list[int]:
        ports = real_free_ports(count)
        if not calls:
            ports[-1] = taken  # the broker's port
        calls.append(ports)
        return ports

    monkeypatch.setattr(cluster_mod, "free_ports", first_call_collides)
    small = KafkaCluster(kafka_cluster.image, racks={0: "rackA"}, heap_opts="-Xmx192m -Xms64m")
    try:
        small.start()
        assert len(calls) == 2 and taken not in calls[1]
        assert kp_brokers(small.bootstrap_servers) == {0: ("127.0.0.1", calls[1][-1], "rackA")}
    finally:
        small.stop()
        squatter.close()
