"""Every private part of kafka-python our confluent ``Consumer`` touches, in one place.

The ``Consumer`` runs its group with a kafka-python ``KafkaConsumer`` that never fetches. kafka-python
has no public API for what a group member outside its ``poll()`` needs, so this adapter reaches the
few private attributes listed in :data:`PRIVATE_PARTS`; nothing else in
:mod:`kafka_placement.clients.confluent` names one. Each is checked against the installed
kafka-python by ``unit_tests/clients/test_confluent_kafka_python_group.py``, which fails when a release
renames or reshapes one (kafka-python 3.0.12 is what they were read from).
"""

from __future__ import annotations

import select
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kafka import errors as kafka_errors
from kafka.net.transport import KafkaTCPTransport
from kafka.protocol.schemas.fields.codecs import Int32
from kafka.structs import OffsetAndMetadata
from kafka.structs import TopicPartition as KafkaTopicPartition

__all__ = ["PRIVATE_PARTS", "KafkaPythonGroup", "exchange_now", "ready_for_exchange", "throttle_after"]

Partition = tuple[str, int]
#: Bytes asked of a plain TCP socket per read of an answer (an OffsetCommit answer is tens of bytes).
RECEIVE_CHUNK = 65536

#: The private names used, and why no public one serves.
PRIVATE_PARTS: dict[str, str] = {
    "KafkaConsumer._coordinator": "the ConsumerCoordinator: joins, heartbeats, commits, committed offsets",
    "KafkaConsumer._manager": "call_soon: the IO thread's thread-safe scheduler",
    "KafkaConsumer._manager._net": "sleep: a pause on the IO loop between commit retries",
    "KafkaConsumer._cluster": "request_update/partitions_for_topic: metadata before the first join",
    "KafkaConsumer._subscription": "assigned_partitions: what the last join gave this member",
    "ConsumerCoordinator._generation": "is_lost(): the broker reset this member (UNKNOWN_MEMBER_ID, ...)",
    "ConsumerCoordinator._send_offset_commit_request": "an OffsetCommit awaited on the IO loop (the "
    "public commit_offsets_async takes a callback on the IO thread and cannot be awaited)",
    "ConsumerCoordinator._handle_offset_commit_response": "kafka-python's handling of an OffsetCommit "
    "answer (membership updates, the error raised) for an answer the commit connection received",
    "KafkaTCPTransport._write_buffer": "the commit connection's request queued for the transport's send, "
    "and whether bytes are still queued",
    "KafkaTCPTransport._sock_send": "the commit connection's request written on the calling thread, not a "
    "loop task later (kafka.net's write() has no synchronous form)",
    "KafkaTCPTransport._sock_recv": "the commit connection's answer read on the calling thread",
    "KafkaTCPTransport._sock": "the socket whose readability the calling thread waits for",
    "KafkaConnection._reauth": "is_reauthenticating: no exchange of our own while KIP-368 "
    "re-authentication owns the connection (send_request reads the same)",
    "KafkaConnection._maybe_throttle": "a throttled answer read by the calling thread pauses the "
    "connection as kafka.net does for the answers it reads",
}


class KafkaPythonGroup:
    """The group side of one ``KafkaConsumer`` (``kafka_consumer``), as the ``Consumer`` uses it.

    Public kafka-python calls are made on ``coordinator`` directly; the private ones only here.
    """

    def __init__(self, kafka_consumer: Any) -> None:
        self.kafka_consumer = kafka_consumer
        self.coordinator: Any = kafka_consumer._coordinator
        self._manager = kafka_consumer._manager
        self._cluster = kafka_consumer._cluster
        self._subscription = kafka_consumer._subscription

    # --- the IO thread ------------------------------------------------------------------------
    @property
    def call_soon(self) -> Callable[..., Any]:
        """Run a function or coroutine on the IO thread (thread-safe); returns kafka-python's Future."""
        return self._manager.call_soon  # type: ignore[no-any-return]

    @property
    def sleep(self) -> Callable[[float], Any] | None:
        """An awaitable pause on the IO loop (None when this kafka-python has none)."""
        return getattr(getattr(self._manager, "_net", None), "sleep", None)

    # --- metadata -----------------------------------------------------------------------------
    def request_metadata_update(self) -> Any:
        """A Future resolved by the next metadata response."""
        return self._cluster.request_update()

    def knows_topic(self, topic: str) -> bool:
        """The metadata names ``topic`` with at least one partition."""
        return bool(self._cluster.partitions_for_topic(topic))

    # --- membership ---------------------------------------------------------------------------
    def generation_lost(self) -> bool:
        """kafka-python reset this member (a heartbeat, join or commit answered UNKNOWN_MEMBER_ID,
        ILLEGAL_GENERATION, ...; or no generation yet)."""
        return bool(self.coordinator._generation.is_lost())

    def last_heartbeat_success(self) -> float:
        """Monotonic time of the last successful heartbeat response (-inf before the first). Not the
        timer's last reset: kafka-python resets it when it marks its coordinator dead (after a pause,
        say), which says nothing about the broker still counting this member."""
        return float(self.coordinator.heartbeat.last_receive)

    def held_partitions(self) -> list[Partition]:
        """What kafka-python's subscription holds from the last join, sorted."""
        return sorted((tp.topic, tp.partition) for tp in self._subscription.assigned_partitions())

    # --- the commit connection's view (commit_connection.GroupView; application thread) ---------
    @property
    def group_id(self) -> str:
        return str(self.coordinator.group_id)

    @property
    def group_instance_id(self) -> str | None:
        return self.coordinator.group_instance_id  # type: ignore[no-any-return]

    def stable_generation(self) -> Any | None:
        """kafka-python's generation while the group is stable (its own commits read the same)."""
        return self.coordinator.generation_if_stable()

    def coordinator_address(self) -> tuple[str, int] | None:
        """(host, port) of the group coordinator kafka-python found; None when unknown."""
        node_id = self.coordinator.coordinator_id
        broker = None if node_id is None else self._cluster.broker_metadata(node_id)
        return None if broker is None else (broker.host, broker.port)

    def handle_offset_commit_response(
        self, offsets: Mapping[Partition, int], send_time: float, response: Any
    ) -> None:
        """kafka-python's handling of an OffsetCommit answer, run on the IO thread and waited for:
        the membership updated as for its own commits (a moved coordinator marked dead, an old
        generation reset, a rejoin requested); raises the same error."""
        handle = self.coordinator._handle_offset_commit_response
        self._manager.run(handle, _kafka_offsets(offsets.items()), send_time, response)

    # --- commits (IO thread) --------------------------------------------------------------------
    async def send_offset_commit(self, offsets: Mapping[Partition, int], timeout_ms: int) -> None:
        """One OffsetCommit with this member's generation and member id, awaited on the IO loop;
        kafka-python's own error handling (an UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION resets the
        member and makes it rejoin). A coordinator not known yet is looked up first, within
        ``timeout_ms``."""
        coordinator = self.coordinator
        if coordinator.coordinator_unknown():
            await coordinator.ensure_coordinator_ready_async(timeout_ms=timeout_ms)
        await coordinator._send_offset_commit_request(_kafka_offsets(offsets.items()))


def _kafka_offsets(offsets: Iterable[tuple[Partition, int]]) -> dict[Any, Any]:
    return {KafkaTopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets}


# --- the commit connection's exchanges on the calling thread (commit_connection.py) -----------------
# kafka.net runs a request as tasks of its NetworkSelector: the bytes queued, then written by a task
# that first waits for writability; a timer task per request for its timeout; the answer read by a
# task parked on the socket's readability and handed to the connection's parser and in-flight list.
# On a synchronous commit's path all of that is Python between two syscalls, most of it after the
# thread wakes up (docs/performance.md, "A synchronous commit as one exchange"). On an idle, set-up
# connection these do the exchange itself on the calling thread: the request as kafka-python's
# classes encode it (exchange_codec.py) written, and its answer read, by the transport's own send and
# receive (TLS included); kafka.net still connects, negotiates versions, authenticates,
# re-authenticates and reconnects.


def ready_for_exchange(connection: Any) -> bool:
    """``connection`` is set up and idle: connected, not initializing, not paused (throttled), not
    re-authenticating (KIP-368), nothing of its own in flight, nothing queued to write."""
    transport = connection.transport
    return bool(
        connection.connected
        and not connection.initializing
        and not connection.paused
        and not connection.in_flight_requests
        and not connection._reauth.is_reauthenticating
        and transport is not None
        and transport._sock is not None
        and not transport._write_buffer
    )


def exchange_now(connection: Any, frame: bytes, deadline: float) -> bytes | None:
    """Write ``frame`` (a request as kafka-python encodes it, framed, with its header; see
    ``exchange_codec``) on ``connection``'s socket and read the framed answer, on this thread. This
    only gathers the answer's bytes until its frame (its length read by kafka-python's ``Int32``
    codec) is whole; the caller decodes it. Only for a connection :func:`ready_for_exchange` calls
    idle, and only while nobody runs its selector, whose read task would otherwise take the answer.

    Returns the answer's frame; None when it was not all there by ``deadline`` (monotonic) — the
    caller then closes the connection, so that a late answer never reaches kafka.net's read task. A
    send or receive error aborts the transport, as kafka.net's tasks do, and raises
    ``KafkaConnectionError``; a frame over ``receive_message_max_bytes`` raises kafka-python's
    ``InvalidReceiveError``."""
    transport = connection.transport
    sock = transport._sock
    transport._write_buffer.append(frame)
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLOUT)
    while True:  # a socket that takes only part waits for writability (a full send buffer)
        _, error = transport._sock_send()
        if error is not None:
            transport.abort(error=error)
            raise error
        if not transport._write_buffer:
            break
        if not _wait(poller, deadline):
            return None
    transport.last_write = time.monotonic()  # kafka.net's idle-connection check reads it
    poller.modify(sock.fileno(), select.POLLIN)
    # plain TCP: one read per wake-up (the transport's own reads until the socket has no more, one
    # read and one refusal per answer); TLS: the transport's, which drains what the TLS layer holds
    plain = type(transport) is KafkaTCPTransport
    received = b""
    while True:
        if not _wait(poller, deadline):
            return None
        data, error = _receive_once(sock) if plain else transport._sock_recv()
        if error is not None:
            transport.abort(error=error)
            raise error
        if not data:  # TLS had only part of a record
            continue
        transport.last_read = time.monotonic()
        received += data
        if len(received) < 4:
            continue
        size, _ = Int32.decode_from(received, 0)
        if not 0 <= size <= connection.config["receive_message_max_bytes"]:
            raise kafka_errors.InvalidReceiveError(f"Invalid frame length: {size}")
        if len(received) < 4 + size:
            continue
        if len(received) > 4 + size:  # one request, one answer: more bytes are no answer of ours
            raise kafka_errors.KafkaProtocolError(f"{len(received) - 4 - size} bytes past the answer")
        return received


def throttle_after(connection: Any, response: Any) -> None:
    """A throttled answer the calling thread read pauses ``connection`` as kafka.net does for its own."""
    connection._maybe_throttle(response)


def _receive_once(sock: Any) -> tuple[bytes, BaseException | None]:
    """One read of a plain TCP socket that poll() called readable, with what ``_sock_recv`` makes of
    a closed socket and of an error (nothing read after a spurious wake-up is no error)."""
    try:
        data: bytes = sock.recv(RECEIVE_CHUNK)
    except (BlockingIOError, InterruptedError):
        return b"", None
    except OSError as exc:
        return b"", kafka_errors.KafkaConnectionError(exc)
    if not data:
        return b"", kafka_errors.KafkaConnectionError("socket disconnected")
    return data, None


def _wait(poller: Any, deadline: float) -> bool:
    """Wait for ``poller``'s event until ``deadline``; False when the deadline passed first."""
    while True:
        wait_ms = (deadline - time.monotonic()) * 1000
        if wait_ms <= 0:
            return False
        if poller.poll(max(1, int(wait_ms + 0.999))):
            return True
