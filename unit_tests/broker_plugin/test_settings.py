"""Broker and member settings, and the .properties text Java reads back exactly."""

from __future__ import annotations

import random

from unit_tests.broker_plugin.harness import Harness

from kafka_placement.assignment.rack_priority import decode_rack_priority
from kafka_placement.broker_plugin.settings import broker_settings, member_settings, properties_text


def test_broker_settings_keep_kafkas_assignors_first() -> None:
    settings = broker_settings()
    # Kafka's default group.consumer.assignors is "uniform,range", the first the default (Kafka 4.4 docs,
    # operations/consumer-rebalance-protocol; GroupCoordinatorConfig.CONSUMER_GROUP_ASSIGNORS_DEFAULT)
    assert settings["group.consumer.assignors"].split(",") == [
        "uniform",
        "range",
        "io.kafkaplacement.broker.FailoverServerAssignor",
    ]
    assert settings["replica.selector.class"] == "io.kafkaplacement.broker.RackPriorityReplicaSelector"
    assert "group.consumer.session.timeout.ms" not in settings


def test_lowered_timeouts_set_the_minimum_too() -> None:
    settings = broker_settings(session_timeout_ms=6000, heartbeat_interval_ms=1000)
    assert settings["group.consumer.min.session.timeout.ms"] == "6000"
    assert settings["group.consumer.session.timeout.ms"] == "6000"
    assert settings["group.consumer.min.heartbeat.interval.ms"] == "1000"
    assert settings["group.consumer.heartbeat.interval.ms"] == "1000"


def test_member_settings_carry_the_priority_in_client_rack() -> None:
    settings = member_settings(10, "az1")
    assert settings == {
        "group.protocol": "consumer",
        "group.remote.assignor": "failover",
        "client.rack": "az1#priority=10",
    }
    assert decode_rack_priority(member_settings(-3)["client.rack"]).priority == -3


def test_java_properties_read_back_what_we_wrote(harness: Harness) -> None:
    rng = random.Random(7)
    alphabet = " =:#!\\\n\r\t\f\x00aZ9é\u20ac\U0001f600."
    for _ in range(300):
        settings = {
            "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))): "".join(
                rng.choice(alphabet) for _ in range(rng.randint(0, 8))
            )
            for _ in range(3)
        }
        text = properties_text(settings)
        assert text.isascii()
        assert harness.load_properties(text) == settings, repr(settings)
    assert harness.load_properties(properties_text(member_settings(10, "az1"))) == member_settings(10, "az1")
