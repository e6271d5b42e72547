"""Asking a running cluster what it is, and keeping secrets out of what its containers print."""

from __future__ import annotations

import gc
import re
import socket
import warnings
from collections.abc import Mapping
from typing import Any


def describe_brokers(
    bootstrap_servers: str, timeout_s: float = 10.0, client_kwargs: Mapping[str, object] | None = None
) -> dict[int, str | None]:
    """Broker id → rack as the admin API (kafka-python describe_cluster) reports them right now.

    ``client_kwargs``: kafka-python security settings (``KafkaCluster.kafka_python_settings()``).
    """
    from kafka import KafkaAdminClient

    _some_listener(bootstrap_servers, timeout_s)
    kwargs: dict[str, Any] = dict(client_kwargs or {})
    kwargs["bootstrap_servers"] = bootstrap_servers
    try:
        admin = KafkaAdminClient(
            client_id="kafka-placement-harness",
            request_timeout_ms=int(timeout_s * 1000),
            bootstrap_timeout_ms=int(timeout_s * 1000),
            **kwargs,
        )
    except Exception as exc:
        raise _without_half_built_client(exc) from None
    try:
        info = admin.describe_cluster()
    finally:
        admin.close()
    brokers = info["brokers"]
    return {int(b["broker_id"]): b.get("rack") for b in brokers if not b.get("is_fenced", False)}


def _some_listener(bootstrap_servers: str, timeout_s: float) -> None:
    """Raise ConnectionRefusedError unless one bootstrap address accepts a TCP connection.

    While a cluster starts nothing listens yet; a plain connect says so without building a
    kafka-python client, whose sockets a failed constructor leaves mid-connect in its IO thread.
    """
    refused: list[str] = []
    for address in bootstrap_servers.split(","):
        host, _, port = address.strip().rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=min(timeout_s, 2.0)):
                return
        except (OSError, ValueError) as exc:
            refused.append(f"{address.strip()}: {exc}")
    raise ConnectionRefusedError("no bootstrap server accepts connections: " + "; ".join(refused))


def _without_half_built_client(exc: Exception) -> Exception:
    """``exc`` with its traceback dropped, after closing what kafka-python left open.

    A KafkaAdminClient whose constructor fails (no broker answered in time: the normal case while a
    cluster starts) keeps its half-built client's sockets, mid-connect, and nobody can close them; the
    traceback's frames keep that client alive. Dropped here and collected at once, its sockets close now
    instead of warning wherever the garbage collector happens to run later.
    """
    exc.__traceback__ = None
    exc.__context__ = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    return exc


def transient_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean "not up yet"; anything else is a bug and is raised at once."""
    from kafka.errors import KafkaError

    return (KafkaError, OSError, TimeoutError)


_SECRET_LINE = re.compile(r"(?im)^(.*(?:password|jaas\.config)[^=\n]*=).*$")


def redact(text: str) -> str:
    """Container output with every ``...password...=value`` / ``sasl.jaas.config=...`` value hidden."""
    return _SECRET_LINE.sub(r"\1[hidden]", text)
