"""kafka-python's metadata refresh loop kept alive through a network error that is not a ``KafkaError``.

kafka-python (3.0.12) refreshes metadata in one coroutine, ``ClusterMetadata._refresh_loop``, which
retries a refresh that failed with a ``KafkaError`` and ends, for good, on anything else.
``request_update()`` then only wakes a loop that no longer exists: the client keeps sending to leaders
that moved until its batches expire. A bare ``OSError`` does reach it: a TLS connection reset between
its TCP connect and the TLS wrap raises ``ConnectionResetError`` from ``ssl.SSLContext.wrap_socket``,
which kafka-python hands unwrapped to every request waiting on that connection — the refresh's
MetadataRequest among them (seen in a secured soak when a broker was SIGKILLed; docs/reliability.md).

Java's ``NetworkClient`` turns every ``IOException`` of a connection into a disconnect, and a metadata
request lost to a disconnect is asked again (``DefaultMetadataUpdater.handleServerDisconnect``, Kafka
``clients/src/main/java/org/apache/kafka/clients/NetworkClient.java``). :func:`mend_metadata_refresh`
does the same for one client, in two places:

- where the bare ``OSError`` starts: building a connection's transport (``create_connection`` and the TLS
  handshake already raise ``KafkaConnectionError``; the TLS wrap between them does not). Every request
  waiting on that connection then fails with a ``KafkaConnectionError`` — the refresh's MetadataRequest,
  and also a consumer's FindCoordinator, whose bare ``OSError`` kafka-python raises out of ``poll()``
  (seen in the live test without this mend);
- the refresh itself, for an ``OSError`` from anywhere else: it arrives as the exception the refresh
  raises (a ``KafkaError``, which the loop already retries) and as the ``request_update()`` future's
  failure. Other exceptions are left alone.

A third gap is in the waiters. kafka-python fails the ``request_update()`` future with a failed refresh's
error, and its waiters catch only ``KafkaTimeoutError``: a consumer looking for its coordinator
(``BaseCoordinator.ensure_coordinator_ready_async``) raises a refresh's ``KafkaConnectionError`` out of
``poll()`` (seen in the live test in 4 runs of 4, on CI once). Java's ``ConsumerNetworkClient
.awaitMetadataUpdate`` waits for the next *successful* update or its own timer; a failed refresh is only
retried. The mend does the same: after a retriable failure the waiters' future stays pending for the
refresh loop's next attempt, for at most ``hold_failures_s`` (Java's ``request.timeout.ms`` default, 30 s)
from the first failure, so a waiter without a timer of its own (``KafkaConsumer.topics()``) still hears of
an outage that lasts.

A fourth is where the refresh goes. kafka-python asks the least loaded broker *of its current metadata*
and never goes back to ``bootstrap_servers`` (it has no ``metadata.recovery.strategy``). A broker whose
own metadata lags (a loaded cluster fences and unfences brokers) can answer with a broker list of one;
when that broker then goes down the client can ask nobody else, and its producer's sender spins on it
(seen in a 30-minute soak: two producers stalled 4.5 minutes, until that broker came back;
docs/reliability.md). Java's clients rebootstrap ([KIP-899](https://cwiki.apache.org/confluence/display/
KAFKA/KIP-899%3A+Allow+producer+and+consumer+clients+to+rebootstrap), the default strategy since Kafka
4.0): when no broker they know can be reached they resolve ``bootstrap.servers`` again. The mend does
the same: after as many failed refreshes in a row as the metadata names brokers (at least one), the
next refresh asks a bootstrap server (kafka-python's own bootstrap node ids, connected as at start-up),
whose answer replaces the broker list.

The same connections' TLS handshakes are held to their setup deadline
(:mod:`~kafka_placement.clients.kafka_python.tls_handshake`): a broker that accepts a connection and
answers nothing fails the refresh in time, and the next one goes elsewhere.

kafka-python has no public hook here; the private names used are only in this module, each checked by
``unit_tests/clients/test_kafka_python_metadata_refresh.py`` against the installed release.
"""

from __future__ import annotations

import inspect
import random
import time
import weakref
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from kafka.cluster import ClusterMetadata
from kafka.errors import KafkaConnectionError, KafkaError

from kafka_placement.clients.kafka_python.tls_handshake import bound_tls_handshakes

__all__ = ["MetadataRefreshMend", "client_cluster", "mend_metadata_refresh", "refresh_loop_ended"]

#: kafka-python's one refresh step (private): the only place a refresh's own exception can be replaced
#: before the loop, the shared in-flight refresh future and ``failed_update`` see it.
_REFRESH_STEP = "_do_refresh_metadata"
#: The loop's future (private), set by ``start_refresh_loop``: done means the loop ended.
_LOOP_FUTURE = "_refresh_loop_future"
#: ``KafkaConnectionManager``'s transport build (private): TCP connect, TLS wrap, TLS handshake.
_TRANSPORT_BUILD = "_build_transport"
#: The cluster's manager (private, a weak proxy set by ``attach``).
_MANAGER = "_manager"
#: The future ``request_update()`` hands its waiters (private), failed and cleared by ``failed_update``.
_UPDATE_FUTURE = "_future"
#: How long waiters are kept waiting through retriable refresh failures: Java's request.timeout.ms default.
HOLD_FAILURES_S = 30.0

if not inspect.iscoroutinefunction(getattr(ClusterMetadata, _REFRESH_STEP, None)):  # pragma: no cover
    raise ImportError(
        f"this kafka-python has no coroutine ClusterMetadata.{_REFRESH_STEP}; kafka_placement supports 3.x"
    )


@dataclass
class MetadataRefreshMend:
    """What the mend did on one client: each ``OSError`` it turned into a connection error, as
    ``connect: <error>`` (building a connection) or ``refresh: <error>`` (a refresh); and each retriable
    refresh failure its waiters were kept waiting through, as ``<error type>: <error>``."""

    converted: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    #: each refresh sent to a bootstrap server because no broker of the metadata answered, as
    #: ``<bootstrap node id> after <n> failures``
    rebootstraps: list[str] = field(default_factory=list)


_MENDED: weakref.WeakKeyDictionary[ClusterMetadata, MetadataRefreshMend] = weakref.WeakKeyDictionary()


def _as_connection_error(exc: BaseException, where: str = "metadata refresh") -> KafkaConnectionError | None:
    if isinstance(exc, OSError) and not isinstance(exc, KafkaError):
        converted = KafkaConnectionError(f"{where}: {type(exc).__name__}: {exc}")
        converted.__cause__ = exc
        return converted
    return None


def _mend_transport_build(manager: Any, mend: MetadataRefreshMend) -> None:
    bound_tls_handshakes(manager)  # a silent broker fails the connection in time (see that module)
    build: Callable[..., Coroutine[Any, Any, Any]] = getattr(manager, _TRANSPORT_BUILD)

    async def build_transport(node: Any, timeout_at: Any = None) -> Any:
        try:
            return await build(node, timeout_at=timeout_at)
        except OSError as exc:
            converted = _as_connection_error(exc, f"connecting to {node.host}:{node.port}")
            if converted is None:
                raise
            mend.converted.append(f"connect: {type(exc).__name__}: {exc}")
            raise converted from exc

    setattr(manager, _TRANSPORT_BUILD, build_transport)


def mend_metadata_refresh(
    cluster: ClusterMetadata, hold_failures_s: float = HOLD_FAILURES_S
) -> MetadataRefreshMend:
    """Mend ``cluster`` (kafka-python's ``ClusterMetadata`` of one client) and the connection manager it is
    attached to; idempotent (the first call's ``hold_failures_s`` stays). Takes effect at the next refresh
    and the next connection, also when the loop is already running (kafka-python looks both steps up on
    the instance)."""
    if not isinstance(cluster, ClusterMetadata):
        from kafka_placement.errors import InvalidArgumentError

        raise InvalidArgumentError(f"cluster {cluster!r} is not a kafka.cluster.ClusterMetadata")
    if not 0.0 <= hold_failures_s <= 3600.0:  # also rejects NaN
        from kafka_placement.errors import InvalidArgumentError

        raise InvalidArgumentError(f"hold_failures_s {hold_failures_s!r} is outside 0..3600 seconds")
    mend = _MENDED.get(cluster)
    if mend is not None:
        return mend
    mend = MetadataRefreshMend()
    step: Callable[[Any], Coroutine[Any, Any, None]] = getattr(cluster, _REFRESH_STEP)
    failed_update: Callable[[BaseException], None] = cluster.failed_update

    failures_in_a_row = [0]

    async def refresh_step(node_id: Any) -> None:
        known = len(cluster.brokers())
        if node_id is None and failures_in_a_row[0] >= max(1, known):  # KIP-899: rebootstrap
            node_id = random.choice(cluster.bootstrap_brokers()).node_id
            mend.rebootstraps.append(f"{node_id} after {failures_in_a_row[0]} failures")
            failures_in_a_row[0] = 0
        try:
            await step(node_id)
        except BaseException as exc:
            failures_in_a_row[0] += 1
            converted = _as_connection_error(exc)  # None unless a bare OSError
            if converted is None:
                raise
            mend.converted.append(f"refresh: {type(exc).__name__}: {exc}")
            raise converted from exc
        failures_in_a_row[0] = 0

    held_future: list[Any] = [None, 0.0]  # the future kept waiting, and since when (monotonic)

    def failed_update_mended(exception: BaseException) -> None:
        failure = _as_connection_error(exception) or exception
        now = time.monotonic()
        with cluster._lock:
            pending = getattr(cluster, _UPDATE_FUTURE)
            if pending is not None and pending is not held_future[0]:
                held_future[:] = [pending, now]
            hold = (
                pending is not None
                and bool(getattr(failure, "retriable", False))
                and now - held_future[1] < hold_failures_s
            )
            if hold:  # kafka-python records the failed attempt (its retry backoff) but fails no waiter
                setattr(cluster, _UPDATE_FUTURE, None)
        if not hold:
            failed_update(failure)
            return
        mend.held.append(f"{type(failure).__name__}: {failure}")
        failed_update(failure)
        with cluster._lock:
            current = getattr(cluster, _UPDATE_FUTURE)
            if current is None:
                setattr(cluster, _UPDATE_FUTURE, pending)
        if current is not None:  # a request_update() in between made a new future: ours follows it
            current.chain(pending)

    setattr(cluster, _REFRESH_STEP, refresh_step)
    cluster.failed_update = failed_update_mended  # type: ignore[method-assign]
    manager = getattr(cluster, _MANAGER)
    if manager is not None:  # attached: a client's own cluster (a standalone one has no connections)
        _mend_transport_build(manager, mend)
    _MENDED[cluster] = mend
    return mend


def refresh_loop_ended(cluster: ClusterMetadata) -> bool | None:
    """True once ``cluster``'s refresh loop has ended; None if it never started. (A loop ends only on
    close, or on an exception it does not catch — the bug mended here.)"""
    future = getattr(cluster, _LOOP_FUTURE)
    if future is None:
        return None
    return bool(future.is_done)


def client_cluster(client: Any) -> ClusterMetadata:
    """The ``ClusterMetadata`` of a kafka-python ``KafkaProducer`` (private ``_metadata``) or
    ``KafkaConsumer`` (private ``_cluster``); neither client exposes it publicly."""
    for name in ("_metadata", "_cluster"):
        cluster = getattr(client, name, None)
        if isinstance(cluster, ClusterMetadata):
            return cluster
    from kafka_placement.errors import InvalidArgumentError

    raise InvalidArgumentError(f"client {type(client).__name__} has no kafka-python ClusterMetadata")
