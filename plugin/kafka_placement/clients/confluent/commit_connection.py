"""A connection of its own to the group's coordinator, for synchronous offset commits sent and answered
on the calling thread.

A synchronous commit through kafka-python's coordinator crosses to kafka-python's IO thread and back:
the request is scheduled on its loop, encoded, written a loop turn later, the response read, decoded
and handed back, each step a coroutine step on the IO thread, and the application thread woken at the
end (docs/performance.md, "Where the confluent Consumer's time goes"). This connection is kafka-python's
own networking layer (``kafka.net``: a ``KafkaConnectionManager`` and its ``KafkaConnection``, so the
same TLS, SASL, ApiVersions negotiation, reconnect backoff and request timeout) on a private
``NetworkSelector`` that no IO thread runs: :meth:`CommitConnection.commit` sends kafka-python's
``OffsetCommitRequest`` and drives that selector on the caller's thread until the answer is there.
On a ready connection it skips the selector's turns: the transport's queued bytes are written at once
and the answer read as soon as the socket has it, both on the caller's thread through the transport's
own send and receive (``kafka_python_group.send_queued_now``/``receive_answer_now``); the selector
still connects, authenticates, and takes whatever is left.

Only the successful answer is handled here. The generation, member id and coordinator come from
kafka-python's coordinator at each commit (:class:`GroupView`: its stable generation, as its own commit
reads it; a moved coordinator is followed by connecting to the new address). Every error answer is
handed to kafka-python's own handler on its IO thread (``GroupView.handle_offset_commit_response``:
rebalance in progress, illegal generation, unknown member, coordinator not available or moved, ...),
which updates the membership exactly as for its own commits and raises the same exception. When
there is no stable generation or no known coordinator, :class:`CommitConnectionUnavailable` tells the
caller to use kafka-python's path instead. Nothing private of kafka-python is named here: the view
is given by the adapter that holds those (``kafka_python_group.py``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Protocol

from kafka import errors as kafka_errors
from kafka.net.manager import KafkaConnectionManager
from kafka.net.selector import NetworkSelector
from kafka.protocol.consumer import OffsetCommitRequest
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KafkaTopicPartition

from kafka_placement.clients.confluent.kafka_python_group import receive_answer_now, send_queued_now
from kafka_placement.clients.kafka_python.tls_handshake import bound_tls_handshakes

__all__ = ["CommitConnection", "CommitConnectionUnavailable", "GroupView", "offset_commit_request"]

Partition = tuple[str, int]
#: The highest OffsetCommit version kafka-python 3.0.12's coordinator sends (its
#: ``_send_offset_commit_request``); the connection negotiates down from it with the broker's ApiVersions.
OFFSET_COMMIT_MAX_VERSION = 8


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

    def handle_offset_commit_response(self, offsets: Any, send_time: float, response: Any) -> None:
        """kafka-python's handling of an OffsetCommit answer, run on its IO thread; raises its error."""


class CommitConnectionUnavailable(Exception):
    """This commit cannot take the connection now (no stable generation, coordinator unknown, the
    connection backing off after a failure): send it through kafka-python's coordinator instead."""


def offset_commit_request(
    group_id: str,
    generation_id: int,
    member_id: str,
    group_instance_id: str | None,
    offsets: Mapping[KafkaTopicPartition, OffsetAndMetadata],
) -> Any:
    """kafka-python's ``OffsetCommitRequest`` for ``offsets``, with the fields its coordinator's
    ``_send_offset_commit_request`` sets (kafka-python 3.0.12)."""
    by_topic: dict[str, dict[int, OffsetAndMetadata]] = {}
    for tp, offset in offsets.items():
        by_topic.setdefault(tp.topic, {})[tp.partition] = offset
    topic_cls = OffsetCommitRequest.OffsetCommitRequestTopic
    partition_cls = topic_cls.OffsetCommitRequestPartition
    return OffsetCommitRequest(
        max_version=OFFSET_COMMIT_MAX_VERSION,
        group_id=group_id,
        generation_id_or_member_epoch=generation_id,
        member_id=member_id,
        group_instance_id=group_instance_id,
        topics=[
            topic_cls(
                name=topic,
                partitions=[
                    partition_cls(
                        partition_index=partition,
                        committed_offset=offset.offset,
                        committed_leader_epoch=offset.leader_epoch,
                        committed_metadata=offset.metadata,
                    )
                    for partition, offset in partitions.items()
                ],
            )
            for topic, partitions in by_topic.items()
        ],
    )


def _connection_config(client_config: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python's connection settings out of a ``KafkaConsumer``'s ``config``: TLS, SASL, socket
    options, timeouts, client id. The broker's API versions are negotiated by this connection itself
    (``api_version`` dropped), and nobody reads its metrics."""
    keep = KafkaConnectionManager.DEFAULT_CONFIG.keys() - {"bootstrap_servers", "api_version", "metrics"}
    return {key: value for key, value in client_config.items() if key in keep}


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


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
        self.closed = False
        self.requests_sent = 0  # observable: requests this connection carried

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
        net.poll(0)  # take in what came meanwhile (a connection the broker closed)
        connection = self._connection_to(*address)
        kafka_offsets = {
            KafkaTopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()
        }
        request = offset_commit_request(
            group.group_id,
            generation.generation_id,
            generation.member_id,
            group.group_instance_id,
            kafka_offsets,
        )
        timeout_ms = max(1, int(timeout_s * 1000))
        send_time = time.monotonic()
        future = connection.send_request(request, request_timeout_ms=timeout_ms)
        self.requests_sent += 1
        # written and answered on this thread when the connection is ready; kafka.net's loop does
        # the rest (connecting, a partial answer, a socket that did not take every byte)
        if send_queued_now(connection):
            receive_answer_now(connection, future, send_time + timeout_ms / 1000)
        if not future.is_done:
            net.poll(max(0, timeout_ms - int((time.monotonic() - send_time) * 1000)), future=future)
        if not future.is_done:  # the connection was still being set up past the deadline
            connection.close(kafka_errors.KafkaTimeoutError("OffsetCommit not answered in time"))
            net.poll(0)
            raise CommitConnectionUnavailable(f"OffsetCommit not answered within {timeout_ms} ms")
        if future.failed():
            # no answer from the broker (connection refused or dropped, TLS or SASL failed, timed out):
            # kafka-python's path sends it again (the same offsets), with its own handling of the cause
            raise CommitConnectionUnavailable(f"commit connection failed: {future.exception!r}") from (
                future.exception
            )
        response = future.value
        if any(code != 0 for _, partitions in response.topics for _, code in partitions):
            # kafka-python's own handling, on its thread: the membership updated as for its commits
            group.handle_offset_commit_response(kafka_offsets, send_time, response)

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
