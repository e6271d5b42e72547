"""kafka-python's TLS handshake held to the connection's setup deadline, as Java's is.

kafka-python 3.0.12 gives each new connection one deadline, ``socket_connection_setup_timeout_ms``
(KIP-601, growing with each failure up to ``socket_connection_setup_timeout_max_ms``), and holds the TCP
connect and the first requests (ApiVersions, SASL) to it — but not the TLS handshake between them:
``KafkaSSLTransport.handshake`` waits for the socket with no timeout. A broker or a link that accepts the
TCP connection and then answers nothing (a hung broker, a silent network) keeps that connection in its
handshake until the peer closes it, and every request queued on it waits as long. Seen live: the
kafka-python inside our confluent ``Consumer`` sent its first MetadataRequest for the subscribed topic to
such a broker, joined its group without the topic's partitions — assigned nothing — and stayed so for the
test's 120 s (``integration_tests/test_confluent_fetch_stall_live.py``: 2 runs of 5, and CI once).

Java's ``NetworkClient`` keeps a node ``CONNECTING`` — under the setup timeout — until its channel is
ready, TLS handshake and SASL included, and only then moves it on to ``CHECKING_API_VERSIONS``
(``handleInitiateApiVersionRequests``: "Without this, the client could remain in the
CHECKING_API_VERSIONS state forever if the channel does not become ready"); kafka-python 2.x timed out any
connection not fully connected, TLS included (dpkp/kafka-python#1696). :func:`bound_tls_handshakes` does
the same for one kafka-python connection manager: the handshake waits until the connection's deadline at
most, then fails as a handshake failure does (``KafkaConnectionError("Handshake failed: …")``), so the
connection is dropped, backed off, and the requests on it go to another broker. The socket of a failed
handshake is closed (kafka-python leaves it open).

kafka-python has no public hook here. The private names used are only in this module — the manager's
``_build_transport`` (what ``_connect`` awaits with the deadline), ``_net``, and the transport's ``_sock``
and ``_net`` — each checked by ``unit_tests/clients/test_kafka_python_tls_handshake.py`` against the
installed release, which also shows the unbounded handshake without this module.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Coroutine
from typing import Any

from kafka.errors import KafkaConnectionError
from kafka.net.inet import create_connection
from kafka.net.transport import KafkaSSLTransport

__all__ = ["bound_client_tls_handshakes", "bound_tls_handshakes", "handshake_by"]

#: ``KafkaConnectionManager``'s transport build (private): TCP connect, TLS wrap, TLS handshake.
_TRANSPORT_BUILD = "_build_transport"
#: A ``KafkaConsumer``'s or ``KafkaAdminClient``'s connection manager (private).
_CLIENT_MANAGER = "_manager"
#: marks a manager already bounded
_BOUNDED = "_kafka_placement_tls_deadline"


async def handshake_by(transport: KafkaSSLTransport, deadline: float) -> None:
    """The TLS handshake of ``transport`` (kafka-python's, its socket not yet handshaken), each wait for the
    socket ending at ``deadline`` (monotonic seconds) at most: kafka-python's loop raises
    ``KafkaTimeoutError`` there."""
    sock, net = transport._sock, transport._net
    while True:
        try:
            sock.do_handshake()
            return
        except ssl.SSLWantReadError:
            await net.wait_read(sock, timeout_at=deadline)
        except ssl.SSLWantWriteError:
            await net.wait_write(sock, timeout_at=deadline)


def bound_tls_handshakes(manager: Any) -> bool:
    """Hold every TLS handshake of kafka-python's ``manager`` (a ``KafkaConnectionManager``) to its
    connection's setup deadline; idempotent. Returns whether it was bounded now. A PLAINTEXT manager, or a
    connection given no deadline, is built by kafka-python as before."""
    if getattr(manager, _BOUNDED, False):
        return False
    build: Callable[..., Coroutine[Any, Any, Any]] = getattr(manager, _TRANSPORT_BUILD)

    async def build_transport(node: Any, timeout_at: float | None = None) -> Any:
        if timeout_at is None or not manager.ssl_enabled:
            return await build(node, timeout_at=timeout_at)
        config = manager.config
        net = manager._net
        sock = await create_connection(
            net,
            node.host,
            node.port,
            config["socket_options"],
            proxy_url=config["proxy_url"],
            timeout_at=timeout_at,
        )
        try:
            transport = KafkaSSLTransport(
                net, sock, host=node.host, **{k: v for k, v in config.items() if k.startswith("ssl_")}
            )
        except BaseException:
            sock.close()
            raise
        try:
            await handshake_by(transport, timeout_at)
        except Exception as exc:
            transport.abort(exc)
            raise KafkaConnectionError(f"Handshake failed: {exc}") from exc
        return transport

    setattr(manager, _TRANSPORT_BUILD, build_transport)
    setattr(manager, _BOUNDED, True)
    return True


def bound_client_tls_handshakes(client: Any) -> bool:
    """:func:`bound_tls_handshakes` for a kafka-python ``KafkaConsumer`` or ``KafkaAdminClient``: its
    connections made from now on (those of its bootstrap, if any, are made and closed already)."""
    return bound_tls_handshakes(getattr(client, _CLIENT_MANAGER))
