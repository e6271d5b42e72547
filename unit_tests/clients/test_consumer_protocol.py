"""Failover members on the consumer group protocol: each client's settings, and the clients that refuse."""

from __future__ import annotations

import confluent_kafka
import pytest

from kafka_placement.assignment.rack_priority import decode_rack_priority
from kafka_placement.clients.confluent.consumer import Consumer
from kafka_placement.clients.consumer_protocol import (
    confluent_failover_config,
    is_consumer_protocol,
    java_failover_properties,
)
from kafka_placement.errors import ConsumerConfigError, InvalidArgumentError

BASE = {"bootstrap.servers": "127.0.0.1:1", "group.id": "g"}


def test_confluent_config_names_the_broker_assignor_and_carries_the_priority() -> None:
    config = confluent_failover_config(10, "az1", BASE)
    assert config == {
        **BASE,
        "group.protocol": "consumer",
        "group.remote.assignor": "failover",
        "client.rack": "az1#priority=10",
    }
    decoded = decode_rack_priority(config["client.rack"])
    assert (decoded.rack, decoded.priority) == ("az1", 10)
    assert confluent_failover_config(-1)["client.rack"] == "#priority=-1"


@pytest.mark.parametrize(
    "key",
    [
        "partition.assignment.strategy",
        "session.timeout.ms",
        "heartbeat.interval.ms",
        "group.instance.id",
        "client.rack",
        "group.remote.assignor",
    ],
)
def test_settings_that_would_defeat_failover_are_refused(key: str) -> None:
    with pytest.raises(ConsumerConfigError, match=key):
        confluent_failover_config(1, None, {**BASE, key: "x"})


@pytest.mark.parametrize(("priority", "rack"), [(2**31, None), (True, None), (1, "a#b"), (1, 5)])
def test_bad_priority_or_rack_is_a_typed_error(priority: object, rack: object) -> None:
    with pytest.raises(InvalidArgumentError):
        confluent_failover_config(priority, rack)  # type: ignore[arg-type]


def test_java_properties_text() -> None:
    text = java_failover_properties(5, None, BASE)
    assert text.splitlines() == [
        "bootstrap.servers=127.0.0.1:1",
        "group.id=g",
        "group.protocol=consumer",
        "group.remote.assignor=failover",
        "client.rack=#priority=5",
    ]


def test_confluent_consumer_with_the_consumer_protocol_is_plain_librdkafka_through_its_factory() -> None:
    consumer = Consumer.for_consumer_protocol(confluent_failover_config(3, None, BASE), preflight=False)
    try:
        assert type(consumer) is confluent_kafka.Consumer  # no Python-side membership
    finally:
        consumer.close()
    assert is_consumer_protocol({"group.protocol": " Consumer "})
    # Consumer(config) never returns another class: it names the factory
    with pytest.raises(ConsumerConfigError, match=r"Consumer\.for_consumer_protocol\(config\)"):
        Consumer(confluent_failover_config(3, None, BASE))
    with pytest.raises(ConsumerConfigError, match="classic protocol only"):
        Consumer(confluent_failover_config(3, None, BASE), assignor="range")
    with pytest.raises(
        ConsumerConfigError, match=r"needs group\.protocol=consumer, got group\.protocol='classic'"
    ):
        Consumer.for_consumer_protocol({**BASE, "group.protocol": "classic"}, preflight=False)


def test_kafka_python_and_aiokafka_refuse_in_one_line() -> None:
    from kafka_placement.clients.aiokafka.assignors import assignors_from_config as aiokafka_assignors
    from kafka_placement.clients.kafka_python import KafkaConsumer
    from kafka_placement.clients.kafka_python.assignors import assignors_from_config as kafka_python_assignors

    calls = [
        (lambda: KafkaConsumer(bootstrap_servers="127.0.0.1:1", group_protocol="consumer"), "kafka-python"),
        (lambda: kafka_python_assignors("failover", group_protocol="consumer"), "kafka-python"),
        (lambda: aiokafka_assignors("failover", group_protocol="consumer"), "aiokafka"),
    ]
    for call, client in calls:
        with pytest.raises(ConsumerConfigError) as info:
            call()
        message = str(info.value)
        assert "\n" not in message and message.startswith(f"{client} speaks only the classic group protocol")
    assert len(kafka_python_assignors("failover", group_protocol="classic", priority=1)) == 1


def test_java_properties_refuse_a_client_that_sends_no_rack_on_the_consumer_protocol() -> None:
    # Kafka 4.0's Java consumer leaves ConsumerGroupHeartbeat's RackId empty; 4.1.0 sends client.rack
    # (KAFKA-17747)
    with pytest.raises(ConsumerConfigError, match=r"sends no client\.rack on the consumer protocol") as info:
        java_failover_properties(5, None, BASE, client_version="4.0.2")
    assert "\n" not in str(info.value)
    text = java_failover_properties(5, None, BASE, client_version="4.1.0")
    assert "client.rack=#priority=5" in text.splitlines()
    with pytest.raises(ConsumerConfigError, match=r"must look like 4\.1\.0"):
        java_failover_properties(5, None, BASE, client_version="four")
