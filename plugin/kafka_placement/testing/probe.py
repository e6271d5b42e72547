"""Asking a running cluster what it is, and keeping secrets out of what its containers print."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


def describe_brokers(bootstrap_servers: str, timeout_s: float = 10.0,
                     client_kwargs: Mapping[str, object] | None = None) -> dict[int, str | None]:
    """Broker id → rack as the admin API (kafka-python describe_cluster) reports them right now.

    ``client_kwargs``: kafka-python security settings (``KafkaCluster.kafka_python_settings()``).
    """
    from kafka import KafkaAdminClient

    kwargs: dict[str, Any] = dict(client_kwargs or {})
    kwargs["bootstrap_servers"] = bootstrap_servers
    admin = KafkaAdminClient(
        client_id="kafka-placement-harness",
        request_timeout_ms=int(timeout_s * 1000),
        bootstrap_timeout_ms=int(timeout_s * 1000),
        **kwargs,
    )
    try:
        info = admin.describe_cluster()
    finally:
        admin.close()
    brokers = info["brokers"]
    return {int(b["broker_id"]): b.get("rack") for b in brokers if not b.get("is_fenced", False)}


def transient_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean "not up yet"; anything else is a bug and is raised at once."""
    from kafka.errors import KafkaError

    return (KafkaError, OSError, TimeoutError)


_SECRET_LINE = re.compile(r"(?im)^(.*(?:password|jaas\.config)[^=\n]*=).*$")


def redact(text: str) -> str:
    """Container output with every ``...password...=value`` / ``sasl.jaas.config=...`` value hidden."""
    return _SECRET_LINE.sub(r"\1[hidden]", text)
