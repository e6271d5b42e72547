"""Live, rack-labelled Apache Kafka cluster for tests (Testcontainers) and its pytest plugin.

``KafkaCluster`` (start/stop, ``bootstrap_servers``, ``broker_racks``, ``broker_address(id)``,
``stop_broker`` / ``kill_broker`` / ``start_broker``); pytest fixture ``kafka_cluster`` (session
scope, from ``kafka_placement.testing.pytest_plugin``; also ``kafka_secure_cluster`` and
``kafka_cluster_factory``); ``kafka-placement cluster up|down|status`` (alias ``python -m
kafka_placement.testing``) for the long-lived dev cluster. See docs/cluster.md.

Test infrastructure: may use Docker and clients; nothing in the cores imports it.
"""

from __future__ import annotations

from kafka_placement.testing.cluster import (
    ClusterError,
    EngineUnavailable,
    KafkaCluster,
    describe_brokers,
    remove_leftovers,
)
from kafka_placement.testing.layout import BROKER_RACKS, CONTROLLER_ID, ClusterLayout

__all__ = [
    "BROKER_RACKS",
    "CONTROLLER_ID",
    "ClusterError",
    "ClusterLayout",
    "EngineUnavailable",
    "KafkaCluster",
    "describe_brokers",
    "remove_leftovers",
]
