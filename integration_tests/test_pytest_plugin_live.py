"""The pytest plugin from another project (pytester): a user's tests reuse the running cluster through
``--kafka-bootstrap-server`` and create, use and clean up topics with the plugin's fixtures."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytest_plugins = ["pytester"]

USERS_TESTS = """
from kafka import KafkaConsumer, KafkaProducer, TopicPartition


def test_round_trip(kafka_cluster, kafka_admin, kafka_topic_factory):
    topic = kafka_topic_factory(partitions=4)
    assert topic.startswith("test_round_trip-") and topic in kafka_admin.list_topics()
    producer = KafkaProducer(**kafka_cluster.kafka_python_settings())
    producer.send(topic, key=b"k", value=b"v", partition=2).get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(**kafka_cluster.kafka_python_settings(), auto_offset_reset="earliest",
                             consumer_timeout_ms=10000)
    consumer.assign([TopicPartition(topic, 2)])
    assert [(m.key, m.value) for m in consumer] == [(b"k", b"v")]
    consumer.close()
    with open("created.txt", "w") as out:
        out.write(topic)
"""


def test_a_users_project_reuses_the_running_cluster(kafka_cluster: Any, pytester: pytest.Pytester) -> None:
    from kafka.admin import KafkaAdminClient

    pytester.makepyfile(test_users=USERS_TESTS)
    result = pytester.runpytest_subprocess(
        f"--kafka-bootstrap-server={kafka_cluster.bootstrap_servers}",
        "--kafka-unavailable=fail",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=1)
    topic = (pytester.path / "created.txt").read_text()
    admin = KafkaAdminClient(bootstrap_servers=kafka_cluster.bootstrap_servers)
    try:
        deadline = time.monotonic() + 30
        while topic in admin.list_topics() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert topic not in admin.list_topics()  # the factory deleted what it created
    finally:
        admin.close()


XDIST_TESTS = """
import os


def _record(kafka_cluster, test):
    with open(f"{test}-{os.environ['PYTEST_XDIST_WORKER']}.txt", "w") as out:
        out.write(f"{kafka_cluster.name} {kafka_cluster.bootstrap_servers}")


def test_a(kafka_cluster):
    _record(kafka_cluster, "a")


def test_b(kafka_cluster):
    _record(kafka_cluster, "b")
"""


def test_xdist_workers_share_one_cluster(pytester: pytest.Pytester) -> None:
    """Two workers run both tests (``--dist each``): all four see the same cluster, which is gone after."""
    import docker

    from kafka_placement.testing.engine import LABEL

    pytester.makepyfile(test_shared=XDIST_TESTS)
    result = pytester.runpytest_subprocess(
        "-n", "2", "--dist", "each", "--kafka-unavailable=fail", "--kafka-brokers=1", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=4)
    seen = {path.name: path.read_text() for path in pytester.path.glob("[ab]-gw*.txt")}
    assert sorted(seen) == ["a-gw0.txt", "a-gw1.txt", "b-gw0.txt", "b-gw1.txt"]
    assert len(set(seen.values())) == 1, seen  # one cluster for both workers
    name = next(iter(seen.values())).split()[0]
    client = docker.from_env()
    try:
        left = client.containers.list(all=True, filters={"label": f"{LABEL}={name}"})
        assert not left, [c.name for c in left]  # the last worker out removed it
    finally:
        client.close()
