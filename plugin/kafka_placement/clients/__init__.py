"""Adapters for Kafka clients (kafka-python, aiokafka, confluent-kafka) and the settings they share.

Each subpackage translates one client's objects into the vocabulary, calls a core (partitioning,
assignment, replicas) and translates back; no algorithm lives here (docs/architecture.md).
"""
