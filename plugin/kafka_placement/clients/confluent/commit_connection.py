"""A connection of its own to the group's coordinator, for synchronous offset commits sent and answered
on the calling thread.

A synchronous commit through kafka-python's coordinator crosses to kafka-python's IO thread and back:
the request is scheduled on its loop, encoded, written a loop turn later, the response read, decoded
and handed back, each step a coroutine step on the IO thread, and the application thread woken at the
end (docs/performance.md, "Where the confluent Consumer's time goes"). This connection is kafka-python's
own networking layer (``kafka.net``: a ``KafkaConnectionManager`` and its ``KafkaConnection``, so the
same TLS, SASL and its re-authentication, ApiVersions negotiation, reconnect backoff and request
timeout) on a private ``NetworkSelector`` that no IO thread runs.

The first request on a connection goes through kafka.net's own request path, the selector driven on
the caller's thread until the answer is there (it connects, authenticates and negotiates the
version on the way). Once set up and idle, each commit is one exchange on the calling thread
(``kafka_python_group.exchange_now``): kafka-python's ``OffsetCommitRequest`` of the negotiated version
and its response class encode and decode it, header and frame included, and the transport's own
send and receive write and read it — none of kafka.net's per-request tasks and timers, whose Python ran
mostly after the thread woke up for the answer (docs/performance.md, "A synchronous commit as one
exchange"). The selector still gets a turn before a commit when :data:`SELECTOR_TURN_INTERVAL_S` has
passed (a close from the broker, re-authentication, throttling, idle connections); a connection it
re-authenticates, throttles or is still setting up is left to its own request path.

Only the successful answer is handled here. The generation, member id and coordinator come from
kafka-python's coordinator at each commit (:class:`GroupView`: its stable generation, as its own commit
reads it; a moved coordinator is followed by connecting to the new address). Every error answer is
handed to kafka-python's own handler on its IO thread (``GroupView.handle_offset_commit_response``:
rebalance in progress, illegal generation, unknown member, coordinator not available or moved, ...),
which updates the membership exactly as for its own commits and raises the same exception. When
there is no stable generation or no known coordinator, or no answer came (connection refused, dropped
or silent; the connection is then closed so that a late answer reaches nobody),
:class:`CommitConnectionUnavailable` tells the caller to use kafka-python's path instead. Nothing
private of kafka-python is named here: the view and the exchange are given by the adapter that holds
those (``kafka_python_group.py``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kafka import errors as kafka_errors
from kafka.net.manager import KafkaConnectionManager
from kafka.net.selector import NetworkSelector
from kafka.protocol.consumer import OffsetCommitRequest

from kafka_placement.clients.confluent.exchange_codec import ExchangeCodec, partition_error
from kafka_placement.clients.confluent.kafka_python_group import (
    exchange_now,
    ready_for_exchange,
    throttle_after,
)
from kafka_placement.clients.kafka_python.tls_handshake import bound_tls_handshakes

__all__ = ["CommitConnection", "CommitConnectionUnavailable", "GroupView", "offset_commit_request"]

Partition = tuple[str, int]
#: The highest OffsetCommit version kafka-python 3.0.12's coordinator sends (its
#: ``_send_offset_commit_request``); the connection negotiates down from it with the broker's ApiVersions.
OFFSET_COMMIT_MAX_VERSION = 8
#: Between two commits on an idle connection, the selector gets a turn when this long passed since
#: its last one (its timers are seconds apart: re-authentication, throttling, idle connections).
SELECTOR_TURN_INTERVAL_S = 0.1
#: The leader epoch of a commit that names none (the OffsetCommit field's default, KIP-320).
NO_LEADER_EPOCH = -1


class GroupView(Protocol):
    """What the connection reads of the member's kafka-python coordinator at each commit."""

    @property
    def group_id(self) -> str: ...

    @property
    def group_instance_id(self) -> str | None: ...

    def stable_generation(self) -> Any | None:
        """kafka-python's ``Generation`` (generation_id, member_id) while the group is stable, else None."""

    def coordinator_address(self) -> tuple[str, int] | None:
        """(host, port) of the group's coordinator as kafka-python knows it; None when unknown."""

    def handle_offset_commit_response(
        self, offsets: Mapping[Partition, int], send_time: float, response: Any
    ) -> None:
        """kafka-python's handling of an OffsetCommit answer, run on its IO thread; raises its error."""


class CommitConnectionUnavailable(Exception):
    """This commit cannot take the connection now (no stable generation, coordinator unknown, the
    connection backing off after a failure): send it through kafka-python's coordinator instead."""


def offset_commit_request(
    group_id: str,
    generation_id: int,
    member_id: str,
    group_instance_id: str | None,
    offsets: Mapping[Partition, int],
    version: int | None = None,
) -> Any:
    """kafka-python's ``OffsetCommitRequest`` for ``offsets`` ((topic, partition) → offset), with the
    fields its coordinator's ``_send_offset_commit_request`` sets (kafka-python 3.0.12) for offsets
    committed as ours are: no metadata, no leader epoch. ``version``: the version this connection
    negotiated for an earlier request (the request's class for it, so the connection does not look
    it up again); None leaves it to the connection, up to :data:`OFFSET_COMMIT_MAX_VERSION`."""
    request_cls = OffsetCommitRequest if version is None else OffsetCommitRequest[version]
    topic_cls = request_cls.OffsetCommitRequestTopic
    partition_cls = topic_cls.OffsetCommitRequestPartition
    by_topic: dict[str, list[Any]] = {}
    for (topic, partition), offset in offsets.items():
        by_topic.setdefault(topic, []).append(
            partition_cls(
                partition_index=partition,
                committed_offset=offset,
                committed_leader_epoch=NO_LEADER_EPOCH,
                committed_metadata="",
            )
        )
    fields: dict[str, Any] = {} if version is not None else {"max_version": OFFSET_COMMIT_MAX_VERSION}
    return request_cls(
        **fields,
        group_id=group_id,
        generation_id_or_member_epoch=generation_id,
        member_id=member_id,
        group_instance_id=group_instance_id,
        topics=[topic_cls(name=topic, partitions=partitions) for topic, partitions in by_topic.items()],
    )


def _connection_config(client_config: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python's connection settings out of a ``KafkaConsumer``'s ``config``: TLS, SASL, socket
    options, timeouts, client id. The broker's API versions are negotiated by this connection itself
    (``api_version`` dropped), and nobody reads its metrics."""
    keep = KafkaConnectionManager.DEFAULT_CONFIG.keys() - {"bootstrap_servers", "api_version", "metrics"}
    return {key: value for key, value in client_config.items() if key in keep}


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


#: Requests an exchange keeps for reuse, per connection (one per set of partitions committed together).
KEPT_REQUESTS = 64


@dataclass
class _Link:
    """A connection kafka.net set up (to the coordinator at ``CommitConnection._address``), with what an
    exchange on this thread needs: the OffsetCommit version it negotiated (its first request's), the
    codec of its exchanges (their correlation ids counted apart from kafka.net's own: its parser never
    sees these) and the requests kept for reuse."""

    connection: Any
    version: int
    codec: ExchangeCodec
    #: (group, generation, member, instance, partitions in order) -> (request, its partition entries)
    requests: dict[tuple[Any, ...], tuple[Any, list[Any]]] = field(default_factory=dict)

    def request_for(self, group: GroupView, generation: Any, offsets: Mapping[Partition, int]) -> Any:
        """The ``OffsetCommitRequest`` for ``offsets``: the one built for the same member, generation and
        partitions before, its offsets set anew (building kafka-python's request objects is most of
        what a commit costs in Python before it is written; kafka-python encodes it again each time,
        with a header of its own), else a new one."""
        member = (group.group_id, generation.generation_id, generation.member_id, group.group_instance_id)
        key = (*member, *offsets)
        kept = self.requests.get(key)
        if kept is None:
            request = offset_commit_request(*member, offsets, self.version)
            by_partition = {(t.name, e.partition_index): e for t in request.topics for e in t.partitions}
            if len(self.requests) >= KEPT_REQUESTS:
                self.requests.clear()  # old generations' and partition sets': built again when needed
            kept = self.requests[key] = (request, [by_partition[partition] for partition in offsets])
        request, entries = kept
        for entry, offset in zip(entries, offsets.values(), strict=True):
            entry.committed_offset = offset
        return request


class CommitConnection:
    """Synchronous OffsetCommit requests to ``group``'s coordinator on a connection of their own (see
    the module docstring). One thread at a time (the selector refuses a second). ``client_config`` is
    the ``KafkaConsumer``'s public ``config`` (TLS, SASL, timeouts, client id).
    """

    def __init__(self, group: GroupView, client_config: Mapping[str, Any]) -> None:
        self._group = group
        self._config = _connection_config(client_config)
        self._net: NetworkSelector | None = None  # made by the first commit (a socket pair of its own)
        self._manager: KafkaConnectionManager | None = None
        self._address: tuple[str, int] | None = None
        self._node_id: Any = None
        #: the connection kafka.net set up and answered on, for exchanges on this thread
        self._link: _Link | None = None
        self._last_turn = float("-inf")  # monotonic time of the selector's last turn before a commit
        self.closed = False
        self.requests_sent = 0  # observable: requests this connection carried
        self.exchanges = 0  # observable: of those, answered in an exchange on the calling thread

    @property
    def address(self) -> tuple[str, int] | None:
        """The coordinator this connection talks to (host, port), None before the first commit."""
        return self._address

    def commit(self, offsets: Mapping[Partition, int], timeout_s: float) -> None:
        """Commit ``offsets`` ((topic, partition) → offset) with the member's current generation.

        Returns when the coordinator accepted every partition. Raises kafka-python's exception for
        an error answer (after its handler ran on the IO thread), and
        :class:`CommitConnectionUnavailable` when this commit must take kafka-python's path instead:
        before sending (no stable generation, coordinator unknown, reconnect backoff) or when no
        answer came (the connection failed, or ``timeout_s`` passed).
        """
        if self.closed:
            raise CommitConnectionUnavailable("commit connection closed")
        group = self._group
        generation = group.stable_generation()
        if generation is None or generation.generation_id < 0 or not generation.member_id:
            raise CommitConnectionUnavailable("no stable generation")
        address = group.coordinator_address()
        if address is None:
            raise CommitConnectionUnavailable("group coordinator unknown")
        net = self._selector()
        now = time.monotonic()
        if self._link is None or now - self._last_turn >= SELECTOR_TURN_INTERVAL_S:
            # the selector's own turn: a close the broker sent, timers (KIP-368 re-authentication,
            # the end of a throttle, the idle-connection check). Not before every exchange: a close
            # it did not see yet fails that exchange, which then takes kafka-python's path.
            net.poll(0)
            self._last_turn = now
        link = self._link
        timeout_ms = max(1, int(timeout_s * 1000))
        self.requests_sent += 1
        # a link is to the connection of self._address (a moved coordinator closes both)
        if link is not None and self._address == address and ready_for_exchange(link.connection):
            request = link.request_for(group, generation, offsets)
            send_time = time.monotonic()
            response, known = self._exchange(link, request, send_time + timeout_ms / 1000)
            self.exchanges += 1
            if known:  # an answer decoded before: every partition accepted
                return
        else:
            connection = self._connection_to(*address)
            request = offset_commit_request(
                group.group_id,
                generation.generation_id,
                generation.member_id,
                group.group_instance_id,
                offsets,
                None if link is None or link.connection is not connection else link.version,
            )
            send_time = time.monotonic()
            response = self._through_selector(connection, request, timeout_ms, send_time)
        if partition_error(response):
            # kafka-python's own handling, on its thread: the membership updated as for its commits
            group.handle_offset_commit_response(offsets, send_time, response)

    def _exchange(self, link: _Link, request: Any, deadline: float) -> tuple[Any, bool]:
        """The request and its answer on this thread, on the idle connection (module docstring); the
        answer and whether the codec knew it (error-free, decoded before)."""
        connection = link.connection
        codec = link.codec
        try:
            correlation_id = codec.next_correlation_id()
            frame = exchange_now(connection, codec.encode(request, correlation_id), deadline)
            if frame is not None:
                response, known = codec.decode(frame, request, correlation_id)
                if not known:
                    throttle_after(connection, response)
                return response, known
        except Exception as exc:  # the connection failed, or an answer that does not decode
            self._drop(connection, exc)
            raise CommitConnectionUnavailable(f"commit connection failed: {exc!r}") from exc
        self._drop(connection, kafka_errors.KafkaTimeoutError("OffsetCommit not answered in time"))
        raise CommitConnectionUnavailable("OffsetCommit not answered in time")

    def _through_selector(self, connection: Any, request: Any, timeout_ms: int, send_time: float) -> Any:
        """The request through kafka.net's own loop, driven here: a connection being set up (the
        request waits in its buffer), re-authenticating or throttled (refused at once: the commit
        then takes kafka-python's path)."""
        net = self._selector()
        future = connection.send_request(request, request_timeout_ms=timeout_ms)
        if not future.is_done:
            net.poll(max(0, timeout_ms - int((time.monotonic() - send_time) * 1000)), future=future)
        if not future.is_done:  # the connection was still being set up past the deadline
            self._drop(connection, kafka_errors.KafkaTimeoutError("OffsetCommit not answered in time"))
            raise CommitConnectionUnavailable(f"OffsetCommit not answered within {timeout_ms} ms")
        if future.failed():
            # no answer from the broker (connection refused or dropped, TLS or SASL failed, timed out,
            # throttled): kafka-python's path sends it again (the same offsets), with its own handling
            raise CommitConnectionUnavailable(f"commit connection failed: {future.exception!r}") from (
                future.exception
            )
        # set up and answered: later requests on this connection are exchanged on this thread
        client_id = str(self._config.get("client_id", "kafka-placement"))
        self._link = _Link(connection, request.API_VERSION, ExchangeCodec(client_id))
        return future.value

    def _drop(self, connection: Any, error: BaseException) -> None:
        """Close ``connection`` (a late answer must reach nobody) and let the close run."""
        connection.close(error)
        self._link = None
        self._selector().poll(0)

    def _selector(self) -> NetworkSelector:
        if self._net is None:
            self._net = NetworkSelector(client_id=str(self._config.get("client_id", "kafka-placement")))
        return self._net

    def _connection_to(self, host: str, port: int) -> Any:
        if self._address != (host, port):  # first commit, or the coordinator moved
            self._close_manager()
            self._manager = KafkaConnectionManager(
                self._selector(), bootstrap_servers=[_host_port(host, port)], **self._config
            )
            bound_tls_handshakes(self._manager)
            self._node_id = self._manager.cluster.bootstrap_brokers()[0].node_id
            self._address = (host, port)
        assert self._manager is not None
        try:
            # no metadata refresh when it closes: this manager knows one broker, the coordinator
            return self._manager.get_connection(self._node_id, refresh_metadata_on_err=False)
        except kafka_errors.NodeNotReadyError as exc:  # reconnect backoff after a failure
            raise CommitConnectionUnavailable(f"commit connection to {host}:{port} backing off") from exc

    def _close_manager(self) -> None:
        if self._manager is not None and self._net is not None:
            self._manager.close()
            self._net.poll(0)  # let the connection's close run
            self._manager = None
            self._address = None
            self._link = None

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self.closed:
            return
        self.closed = True
        try:
            self._close_manager()
        finally:
            if self._net is not None:
                self._net.close()
