"""A cluster someone else runs (``--kafka-bootstrap-server``): the same client-facing face as
:class:`~kafka_placement.testing.cluster.KafkaCluster`, minus the container controls."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_placement.clients.connection.settings import ConnectionSettings, connection_settings


@dataclass(frozen=True)
class ExternalCluster:
    """A running cluster reached with ``settings``; never started or stopped by us."""

    settings: ConnectionSettings

    @classmethod
    def connect(cls, bootstrap_server: str, client_config: str | None = None) -> ExternalCluster:
        """Settings from ``host:port`` and an optional Java client ``.properties`` (TLS/SASL); the cluster
        must answer (:class:`~kafka_placement.errors.ConnectionFailedError` otherwise, within seconds)."""
        from kafka_placement.clients.connection.probe import check_connection

        settings = connection_settings(bootstrap_server, client_config)
        check_connection(settings)
        return cls(settings)

    @property
    def bootstrap_servers(self) -> str:
        return self.settings.bootstrap_servers

    @property
    def broker_racks(self) -> dict[int, str | None]:
        from kafka_placement.clients.connection.probe import check_connection

        return check_connection(self.settings)

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self.broker_racks)

    def client_settings(self, user: str | None = None) -> dict[str, str]:
        """Java client properties, ``bootstrap.servers`` included (``user`` is for our own clusters)."""
        return {"bootstrap.servers": self.settings.bootstrap_servers, **self.settings.properties}

    def kafka_python_settings(self, user: str | None = None) -> dict[str, Any]:
        return self.settings.kafka_python()

    def librdkafka_settings(self, user: str | None = None) -> dict[str, Any]:
        return self.settings.confluent()

    def write_client_config(self, path: Path, user: str | None = None) -> Path:
        return self.settings.write_properties(path)

    def wait_ready(self, timeout_s: float = 60.0, **_: Any) -> None:
        """Nothing to wait for: :meth:`connect` already saw it answer."""

    def stop(self) -> None:
        """Not ours to stop."""
