"""The metadata-refresh mend, on kafka-python's own ``ClusterMetadata._refresh_loop`` (no broker: a scripted
connection manager fails each MetadataRequest the way kafka-python's connection does — the request's
future failed with the connection's exception, here the ``ConnectionResetError`` a TLS wrap raises)."""

from __future__ import annotations

import inspect
import socket
import struct
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kafka.cluster import ClusterMetadata
from kafka.coordinator.base import BaseCoordinator
from kafka.errors import ClusterAuthorizationFailedError, KafkaConnectionError, KafkaError, NodeNotReadyError
from kafka.future import Future
from kafka.net.manager import KafkaConnectionManager
from kafka.net.selector import NetworkSelector
from kafka.net.transport import KafkaSSLTransport
from kafka.protocol.metadata import MetadataResponse

from kafka_placement.clients.kafka_python import metadata_refresh
from kafka_placement.clients.kafka_python.consumer import KafkaConsumer
from kafka_placement.clients.kafka_python.metadata_refresh import (
    client_cluster,
    mend_metadata_refresh,
    refresh_loop_ended,
)
from kafka_placement.clients.kafka_python.producer import KafkaProducer
from kafka_placement.errors import InvalidArgumentError
from kafka_placement.testing.ports import loopback_server

RESET = ConnectionResetError(104, "Connection reset by peer")


class ScriptedManager:
    """What the refresh loop uses of kafka-python's ``KafkaConnectionManager``, on kafka-python's own
    ``NetworkSelector``; each MetadataRequest fails with the next scripted exception, or is answered with
    the next scripted response."""

    def __init__(self, outcomes: list[object]) -> None:
        self._net = NetworkSelector()
        self.bootstrapped = True
        self.outcomes = outcomes
        self.sent = 0
        self.node_ids: list[object] = []  # where each MetadataRequest went

    def least_loaded_node(self) -> int:
        return 0

    def connection_delay(self, key: object) -> float:
        return 0.0

    def reset_backoff(self, key: object) -> None:
        pass

    def update_backoff(self, key: object) -> None:
        pass

    def call_soon(self, coro: object, *args: object) -> Future:
        return self._net.call_soon_with_future(coro, *args)

    def send(self, request: object, node_id: object = None, request_timeout_ms: object = None) -> Future:
        self.sent += 1
        self.node_ids.append(node_id)
        outcome = self.outcomes.pop(0) if self.outcomes else KafkaConnectionError("socket disconnected")
        if isinstance(outcome, BaseException):
            return Future().failure(outcome)
        return Future().success(outcome)


def _cluster(
    outcomes: list[object], mended: bool, hold_failures_s: float = metadata_refresh.HOLD_FAILURES_S
) -> tuple[ClusterMetadata, ScriptedManager]:
    cluster = ClusterMetadata(bootstrap_servers=["127.0.0.1:9"], retry_backoff_ms=5)
    manager = ScriptedManager(outcomes)
    if mended:  # before attach: the scripted manager builds no connections, only the refresh is mended
        mend_metadata_refresh(cluster, hold_failures_s=hold_failures_s)
    cluster.attach(manager)
    cluster.start_refresh_loop()
    return cluster, manager


def _drive(manager: ScriptedManager, until: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not until() and time.monotonic() < deadline:
        manager._net.poll(timeout_ms=20)


def test_without_the_mend_a_bare_oserror_ends_kafka_pythons_refresh_loop_for_good() -> None:
    """The bug itself (kafka-python 3.0.12): if this fails, kafka-python fixed it and the mend can go."""
    cluster, manager = _cluster([RESET], mended=False)
    _drive(manager, lambda: bool(refresh_loop_ended(cluster)))
    assert refresh_loop_ended(cluster) is True
    assert cluster._refresh_loop_future.exception is RESET  # ended by the reset, not closed
    request = cluster.request_update()  # what a producer asks after NotLeaderForPartition
    _drive(manager, lambda: manager.sent > 1, timeout_s=1.0)
    assert manager.sent == 1  # nobody sends the MetadataRequest any more
    assert not request.is_done
    assert isinstance(RESET, OSError) and not isinstance(RESET, KafkaError)


def test_a_kafka_connection_error_is_retried_by_kafka_pythons_own_loop() -> None:
    """What the mend relies on: the loop goes on after a ``KafkaConnectionError``."""
    cluster, manager = _cluster([KafkaConnectionError("socket disconnected")], mended=False)
    _drive(manager, lambda: manager.sent >= 3)
    assert manager.sent >= 3
    assert refresh_loop_ended(cluster) is False


def test_with_the_mend_the_loop_sends_the_next_metadata_request_after_a_reset() -> None:
    cluster, manager = _cluster([RESET, OSError(113, "No route to host"), RESET], mended=True)
    waiting = cluster.request_update()
    _drive(manager, lambda: manager.sent >= 5)
    assert manager.sent >= 5
    assert refresh_loop_ended(cluster) is False
    assert not waiting.is_done  # kept for the next successful refresh (below)
    mend = metadata_refresh._MENDED[cluster]
    assert mend.converted == [
        "refresh: ConnectionResetError: [Errno 104] Connection reset by peer",
        "refresh: OSError: [Errno 113] No route to host",
        "refresh: ConnectionResetError: [Errno 104] Connection reset by peer",
    ]
    assert mend.held[0] == (
        "KafkaConnectionError: KafkaConnectionError: metadata refresh: ConnectionResetError: "
        "[Errno 104] Connection reset by peer"
    )


def _answer() -> MetadataResponse:
    broker = MetadataResponse.MetadataResponseBroker(0, "127.0.0.1", 9, None, version=1)
    return MetadataResponse(version=1, brokers=[broker], controller_id=0, topics=[])


def _brokers(*node_ids: int) -> MetadataResponse:
    broker = MetadataResponse.MetadataResponseBroker
    brokers = [broker(n, "127.0.0.1", 9000 + n, None, version=1) for n in node_ids]
    return MetadataResponse(version=1, brokers=brokers, controller_id=node_ids[0], topics=[])


def _one_broker_left_then_down(mended: bool) -> tuple[ClusterMetadata, ScriptedManager]:
    """A lagging broker's answer names one broker (5); the next refresh fails (5 went down); the one
    after is answered with all six (what a bootstrap server says; then every later one fails)."""
    down = KafkaConnectionError("socket disconnected")
    cluster, manager = _cluster([_brokers(5), down, _brokers(*range(6))], mended=mended)
    _drive(manager, lambda: manager.sent >= 1)
    assert [b.node_id for b in cluster.brokers()] == [5]
    cluster.request_update()  # a producer's NotLeaderForPartition
    return cluster, manager


def test_without_the_mend_a_client_whose_metadata_names_one_dead_broker_never_asks_another() -> None:
    """The bug itself (kafka-python 3.0.12): if this fails, kafka-python rebootstraps and the mend can go."""
    _, manager = _one_broker_left_then_down(mended=False)
    _drive(manager, lambda: manager.sent >= 3)
    assert manager.node_ids == [0, 0, 0]  # the least loaded broker it knows, never a bootstrap server


def test_with_the_mend_the_refresh_goes_back_to_the_bootstrap_servers_kip_899() -> None:
    cluster, manager = _one_broker_left_then_down(mended=True)
    _drive(manager, lambda: len(cluster.brokers()) == 6)
    # the first request (before 5 went down), one failed refresh (one broker known), then bootstrap
    assert manager.node_ids[:3] == [0, 0, "bootstrap-0"]
    assert sorted(b.node_id for b in cluster.brokers()) == list(range(6))
    assert metadata_refresh._MENDED[cluster].rebootstraps == ["bootstrap-0 after 1 failures"]


def test_without_the_mend_a_waiter_gets_a_refresh_failure_that_kafka_pythons_coordinator_raises() -> None:
    """kafka-python fails the ``request_update()`` future with the refresh's error, and the consumer's
    coordinator lookup waits on it catching only ``KafkaTimeoutError``: the error leaves ``poll()``. If
    either part fails here, kafka-python changed and the hold below may go."""
    cluster, manager = _cluster([KafkaConnectionError("socket disconnected"), _answer()], mended=False)
    waiting = cluster.request_update()
    _drive(manager, lambda: waiting.is_done)
    assert waiting.failed() and isinstance(waiting.exception, KafkaConnectionError)
    lookup = inspect.getsource(BaseCoordinator.ensure_coordinator_ready_async)
    inner_wait = lookup[lookup.index("metadata_update = self._cluster.request_update()") :]
    assert inner_wait.split("except", 2)[1].strip().startswith("Errors.KafkaTimeoutError:")
    assert (
        "except Errors.KafkaTimeoutError:\n                    return False\n            except" in inner_wait
    )


def test_with_the_mend_a_waiter_waits_through_failures_for_the_next_successful_refresh() -> None:
    """Java's ``awaitMetadataUpdate``: a failed refresh is retried, its waiters wait for one that works."""
    failures: list[object] = [RESET, KafkaConnectionError("socket disconnected"), NodeNotReadyError("0")]
    cluster, manager = _cluster([*failures, _answer()], mended=True)
    waiting = cluster.request_update()
    _drive(manager, lambda: waiting.is_done)
    assert waiting.succeeded()
    assert manager.sent == 4
    assert [held.split(":")[0] for held in metadata_refresh._MENDED[cluster].held] == [
        "KafkaConnectionError",
        "KafkaConnectionError",
        "NodeNotReadyError",
    ]
    assert [(b.node_id, b.host, b.port) for b in cluster.brokers()] == [(0, "127.0.0.1", 9)]


def test_with_the_mend_an_outage_longer_than_the_hold_reaches_the_waiters() -> None:
    cluster, manager = _cluster([], mended=True, hold_failures_s=0.2)  # every refresh fails
    waiting = cluster.request_update()
    started = time.monotonic()
    _drive(manager, lambda: waiting.is_done)
    assert waiting.failed() and isinstance(waiting.exception, KafkaConnectionError)
    assert time.monotonic() - started >= 0.2
    assert refresh_loop_ended(cluster) is False


def test_with_the_mend_a_failure_that_is_not_retriable_reaches_the_waiters_at_once() -> None:
    denied = ClusterAuthorizationFailedError("metadata")
    cluster, manager = _cluster([denied, _answer()], mended=True)
    waiting = cluster.request_update()
    _drive(manager, lambda: waiting.is_done)
    assert waiting.exception is denied
    assert metadata_refresh._MENDED[cluster].held == []


def test_other_exceptions_are_left_as_kafka_python_raises_them() -> None:
    bug = ValueError("not a network error")
    cluster, manager = _cluster([NodeNotReadyError("0"), bug], mended=True)
    _drive(manager, lambda: bool(refresh_loop_ended(cluster)))
    assert cluster._refresh_loop_future.exception is bug
    assert mend_metadata_refresh(cluster).converted == []


def test_the_mend_is_applied_once() -> None:
    cluster = ClusterMetadata(bootstrap_servers=["127.0.0.1:9"])
    first = mend_metadata_refresh(cluster)
    step = cluster._do_refresh_metadata
    assert mend_metadata_refresh(cluster) is first
    assert cluster._do_refresh_metadata is step


def test_bad_input_names_the_value() -> None:
    cluster = ClusterMetadata(bootstrap_servers=["127.0.0.1:9"])
    for bad in (-1.0, float("nan"), 3601.0):
        with pytest.raises(
            InvalidArgumentError, match=rf"hold_failures_s {bad!r} is outside 0\.\.3600 seconds"
        ):
            mend_metadata_refresh(cluster, hold_failures_s=bad)
    with pytest.raises(InvalidArgumentError, match=r"'nope' is not a kafka\.cluster\.ClusterMetadata"):
        mend_metadata_refresh("nope")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="client str has no kafka-python ClusterMetadata"):
        client_cluster("nope")


# --- where the bare OSError starts: a TLS connection reset before kafka-python wraps its socket --------


@pytest.fixture()
def resetting_port() -> Iterator[int]:
    """A TCP server that resets (RST: SO_LINGER 0, then close) every connection 0.2 s after accepting it:
    after the client's connect completed, before its late TLS wrap (:func:`_tls_manager`)."""

    def reset(conn: socket.socket) -> None:
        time.sleep(0.2)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()

    with loopback_server(reset) as port:
        yield port


def _tls_manager(port: int, monkeypatch: pytest.MonkeyPatch) -> KafkaConnectionManager:
    """kafka-python's own manager for a TLS node at ``port``, its TLS context built 1 s late so that the
    server's reset is there before the wrap (as on a loaded client)."""
    build_context = KafkaSSLTransport._build_ssl_context

    def late_context(config: dict[str, Any]) -> Any:
        time.sleep(1.0)
        return build_context(config)

    monkeypatch.setattr(KafkaSSLTransport, "_build_ssl_context", staticmethod(late_context))
    return KafkaConnectionManager(
        NetworkSelector(),
        bootstrap_servers=[f"127.0.0.1:{port}"],
        security_protocol="SSL",
        ssl_check_hostname=False,
    )


def _build_transport(manager: KafkaConnectionManager, port: int) -> None:
    node = MetadataResponse.MetadataResponseBroker(0, "127.0.0.1", port, None)
    try:
        manager._net.run(manager._build_transport, node)
    finally:
        manager._net.close()


def test_without_the_mend_a_reset_before_the_tls_wrap_is_a_bare_oserror(
    resetting_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kafka-python raises it unwrapped (``SSLContext.wrap_socket``: ``getpeername`` fails, then ``recv``)."""
    with pytest.raises(ConnectionResetError):
        _build_transport(_tls_manager(resetting_port, monkeypatch), resetting_port)


def test_with_the_mend_the_reset_is_a_kafka_connection_error(
    resetting_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = _tls_manager(resetting_port, monkeypatch)
    mend = mend_metadata_refresh(manager.cluster)
    expected = f"connecting to 127.0.0.1:{resetting_port}: ConnectionResetError"
    with pytest.raises(KafkaConnectionError, match=expected):
        _build_transport(manager, resetting_port)
    assert mend.converted == ["connect: ConnectionResetError: [Errno 104] Connection reset by peer"]


# --- the private kafka-python names the mend uses: each fails loudly if a release changes it ----------


def test_private_refresh_step_is_the_coroutine_refresh_metadata_awaits() -> None:
    assert inspect.iscoroutinefunction(ClusterMetadata._do_refresh_metadata)
    assert "await self._do_refresh_metadata(node_id)" in inspect.getsource(ClusterMetadata.refresh_metadata)
    assert "self.failed_update(exc)" in inspect.getsource(ClusterMetadata._do_refresh_metadata)


def test_private_transport_build_is_what_connect_awaits_and_hands_its_error_on() -> None:
    assert inspect.iscoroutinefunction(KafkaConnectionManager._build_transport)
    connect = inspect.getsource(KafkaConnectionManager._connect)
    assert "transport = await self._build_transport(node, timeout_at=timeout_at)" in connect
    assert "conn.connection_lost(exc)" in connect  # every request waiting on the connection gets it


def test_private_manager_of_a_cluster_is_set_by_attach() -> None:
    cluster = ClusterMetadata(bootstrap_servers=["127.0.0.1:9"])
    assert cluster._manager is None
    manager = ScriptedManager([])
    cluster.attach(manager)
    assert cluster._manager._net is manager._net  # a weak proxy of the manager


def test_private_refresh_loop_future_is_where_the_loop_runs() -> None:
    cluster = ClusterMetadata(bootstrap_servers=["127.0.0.1:9"])
    assert cluster._refresh_loop_future is None
    assert refresh_loop_ended(cluster) is None
    assert "self._refresh_loop_future = self._manager.call_soon(self._refresh_loop)" in inspect.getsource(
        ClusterMetadata.start_refresh_loop
    )


@pytest.mark.parametrize("client_class", [KafkaProducer, KafkaConsumer])
def test_private_cluster_attribute_of_our_clients_is_their_refresh_loops_cluster(client_class: type) -> None:
    """``KafkaProducer._metadata`` / ``KafkaConsumer._cluster``: the ClusterMetadata their manager runs."""
    client = client_class(bootstrap_servers="127.0.0.1:9", api_version=(2, 5))
    try:
        cluster = client_cluster(client)
        assert cluster._manager.cluster is cluster  # the one attached to (and refreshed by) its manager
        assert client.metadata_refresh is mend_metadata_refresh(cluster)
        assert cluster._do_refresh_metadata.__qualname__.endswith("refresh_step")
    finally:
        client.close(timeout=1) if client_class is KafkaProducer else client.close()
