"""Connection settings, one way for every client and every command.

A user describes a cluster the way Kafka's own tools do — a bootstrap address, a Java client
``.properties`` file (``kafka-topics.sh --command-config``) and ``key=value`` overrides (librdkafka's
``-X``) — and gets each client's configuration from one object::

    from kafka_placement.clients.connection import connection_settings
    settings = connection_settings("broker:9093", command_config="client.properties")
    KafkaAdminClient(**settings.kafka_python())            # kafka-python
    confluent_kafka.Producer(settings.confluent())         # confluent-kafka / librdkafka
    AIOKafkaConsumer(**settings.aiokafka())                # aiokafka (ssl.SSLContext inside)
    spark.read.format("kafka").options(**settings.spark_options())

:func:`check_connection` is the bounded pre-flight every networked command runs; :func:`translate_error`
turns client exceptions into one clear line. This package imports Kafka clients only inside the
functions that use them; it holds no placement algorithm.
"""

from __future__ import annotations

from kafka_placement.clients.connection.probe import check_connection, diagnose, translate_error
from kafka_placement.clients.connection.properties import is_secret, masked, parse_jaas, read_properties
from kafka_placement.clients.connection.settings import (
    DEFAULT_TIMEOUT_S,
    LIBRDKAFKA_LOGGER,
    ConnectionSettings,
    connection_settings,
)

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "LIBRDKAFKA_LOGGER",
    "ConnectionSettings",
    "check_connection",
    "connection_settings",
    "diagnose",
    "is_secret",
    "masked",
    "parse_jaas",
    "read_properties",
    "translate_error",
]
