"""The TLS handshake deadline, on kafka-python's own ``KafkaConnectionManager`` and ``NetworkSelector``
against a local server that accepts a TCP connection and then answers nothing (a silent broker)."""

from __future__ import annotations

import inspect
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from kafka.errors import KafkaConnectionError
from kafka.net.manager import KafkaConnectionManager
from kafka.net.selector import NetworkSelector
from kafka.net.transport import KafkaSSLTransport
from kafka.protocol.metadata import MetadataResponse

from kafka_placement.clients.kafka_python.consumer import KafkaConsumer
from kafka_placement.clients.kafka_python.metadata_refresh import client_cluster, mend_metadata_refresh
from kafka_placement.clients.kafka_python.tls_handshake import (
    bound_client_tls_handshakes,
    bound_tls_handshakes,
)
from kafka_placement.testing.ports import loopback_server

DEADLINE_S = 0.5


class SilentServer:
    """Accepts every connection and reads it, answering nothing, until the client closes it."""

    def __init__(self) -> None:
        self.closed_by_client = threading.Event()

    def handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(30)
            try:
                while conn.recv(4096):  # the client's ClientHello, then nothing
                    pass
            except OSError:
                return
            self.closed_by_client.set()


@pytest.fixture()
def silent() -> Iterator[tuple[SilentServer, int]]:
    server = SilentServer()
    with loopback_server(server.handle) as port:
        yield server, port


def _tls_manager(port: int) -> KafkaConnectionManager:
    return KafkaConnectionManager(
        NetworkSelector(),
        bootstrap_servers=[f"127.0.0.1:{port}"],
        security_protocol="SSL",
        ssl_check_hostname=False,
    )


def _build(
    manager: KafkaConnectionManager, port: int, wait_s: float, deadline_s: float | None = DEADLINE_S
) -> object:
    """Build a transport to ``port`` with a deadline ``deadline_s`` away (None: no deadline); wait up to
    ``wait_s``. Returns the build's future (pending if it is still waiting)."""
    node = MetadataResponse.MetadataResponseBroker(0, "127.0.0.1", port, None)
    deadline = None if deadline_s is None else time.monotonic() + deadline_s
    future = manager._net.call_soon_with_future(manager._build_transport, node, deadline)
    manager._net.poll(timeout_ms=wait_s * 1000, future=future)
    return future


def test_without_the_bound_kafka_pythons_tls_handshake_waits_past_its_deadline(
    silent: tuple[SilentServer, int],
) -> None:
    """The bug: 6 deadlines later kafka-python is still in the handshake. (A kafka-python release that
    bounds it fails this test: the bound can then go.)"""
    _, port = silent
    manager = _tls_manager(port)
    try:
        future = _build(manager, port, 6 * DEADLINE_S)
        assert not future.is_done
    finally:
        manager._net.close()


def test_with_the_bound_the_handshake_fails_at_the_deadline_and_its_socket_is_closed(
    silent: tuple[SilentServer, int],
) -> None:
    server, port = silent
    manager = _tls_manager(port)
    assert bound_tls_handshakes(manager) is True
    assert bound_tls_handshakes(manager) is False  # idempotent
    started = time.monotonic()
    try:
        future = _build(manager, port, 20 * DEADLINE_S)
        took = time.monotonic() - started
        assert future.is_done and future.failed()
        assert isinstance(future.exception, KafkaConnectionError)
        assert str(future.exception).startswith("KafkaConnectionError: Handshake failed: ")
        assert DEADLINE_S * 0.9 <= took <= DEADLINE_S + 3.0, took
        assert server.closed_by_client.wait(5), "the handshake's socket was left open"
    finally:
        manager._net.close()


def test_a_connection_given_no_deadline_is_built_by_kafka_python_as_before(
    silent: tuple[SilentServer, int],
) -> None:
    _, port = silent
    manager = _tls_manager(port)
    bound_tls_handshakes(manager)
    try:
        future = _build(manager, port, 1.0, deadline_s=None)
        assert not future.is_done  # kafka-python's own, unbounded
    finally:
        manager._net.close()


def test_a_plaintext_manager_is_built_by_kafka_python(silent: tuple[SilentServer, int]) -> None:
    _, port = silent
    manager = KafkaConnectionManager(NetworkSelector(), bootstrap_servers=[f"127.0.0.1:{port}"])
    bound_tls_handshakes(manager)
    try:
        future = _build(manager, port, 5.0)
        assert future.succeeded()  # TCP connected; no handshake to wait for
        future.value.close()
    finally:
        manager._net.close()


def test_the_metadata_mend_and_our_consumer_bound_their_managers() -> None:
    consumer = KafkaConsumer(bootstrap_servers="127.0.0.1:9", api_version=(2, 5))
    try:
        manager = client_cluster(consumer)._manager
        assert mend_metadata_refresh(client_cluster(consumer)) is consumer.metadata_refresh
        assert bound_tls_handshakes(manager) is False  # already, by the mend
        assert bound_client_tls_handshakes(consumer) is False  # the same manager
    finally:
        consumer.close()


def test_every_admin_client_we_open_has_its_handshakes_bounded(
    silent: tuple[SilentServer, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``open_admin`` (the CLI's audit, reassign and demo, and the soak's checks open theirs through it)
    on an admin client holding kafka-python's own manager: the handshake fails at the deadline."""
    import kafka.admin

    from kafka_placement.clients.kafka_python.admin import open_admin

    server, port = silent
    opened: list[dict[str, object]] = []

    class AdminOverManager:  # KafkaAdminClient bootstraps in its constructor; the manager is what counts
        def __init__(self, **settings: object) -> None:
            opened.append(settings)
            self._manager = _tls_manager(port)

    monkeypatch.setattr(kafka.admin, "KafkaAdminClient", AdminOverManager)
    admin = open_admin({"bootstrap_servers": f"127.0.0.1:{port}"}, client_id="audit")
    assert opened == [{"bootstrap_servers": f"127.0.0.1:{port}", "client_id": "audit"}]
    try:
        future = _build(admin._manager, port, 20 * DEADLINE_S)
        assert future.is_done and isinstance(future.exception, KafkaConnectionError)
        assert server.closed_by_client.wait(5)
    finally:
        admin._manager._net.close()


# --- the private kafka-python names used: each fails loudly if a release changes it ---------------------


def test_private_transport_build_is_what_connect_awaits_with_the_deadline() -> None:
    assert inspect.iscoroutinefunction(KafkaConnectionManager._build_transport)
    connect = inspect.getsource(KafkaConnectionManager._connect)
    assert "transport = await self._build_transport(node, timeout_at=timeout_at)" in connect
    build = inspect.getsource(KafkaConnectionManager._build_transport)
    assert "await transport.handshake()" in build and "'Handshake failed: %s'" in build


def test_private_handshake_waits_on_the_transports_socket_and_loop() -> None:
    handshake = inspect.getsource(KafkaSSLTransport.handshake)
    assert "self._sock.do_handshake()" in handshake and "await self._net.wait_read(self._sock)" in handshake
    assert "timeout_at" in inspect.signature(NetworkSelector.wait_read).parameters


def test_private_manager_of_a_kafka_python_consumer() -> None:
    consumer = KafkaConsumer(bootstrap_servers="127.0.0.1:9", api_version=(2, 5))
    try:
        assert isinstance(consumer._manager, KafkaConnectionManager)
        assert consumer._manager.cluster is client_cluster(consumer)
    finally:
        consumer.close()


def test_private_manager_of_a_kafka_python_admin_client() -> None:
    from kafka.admin import KafkaAdminClient

    assert "self._manager = self._client._manager" in inspect.getsource(KafkaAdminClient.__init__)
