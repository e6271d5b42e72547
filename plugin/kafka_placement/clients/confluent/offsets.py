"""Offsets and commits of one :class:`~kafka_placement.clients.confluent.consumer.Consumer`.

Commits carry the member's generation id and member id (the broker refuses a stale member); a
member that knows it lost its membership (:class:`~kafka_placement.groups.membership.Membership`
``LOST``) refuses them itself first. Offsets to commit without arguments are librdkafka's "stored
offsets": the position after the last delivered message (``enable.auto.offset.store=true``), or
what the application stored with ``store_offsets()``.

Every commit — asynchronous, synchronous, automatic — goes through one
:class:`~kafka_placement.groups.commit_queue.CommitQueue`: one OffsetCommit request in flight,
the commits made meanwhile coalesced per partition (the newest offset wins), none dropped because
a request is in flight. A synchronous commit is sent on the commit connection on the caller's
thread (:mod:`.commit_connection`); the others, and whatever that connection cannot take, by one
coroutine on kafka-python's IO thread through its ``ConsumerCoordinator`` (the thread that also
heartbeats). Each request's result reaches the application once, on its own thread
(``poll()``/``consume()``/``close()``), through the member's one
:class:`~.thread_handoff.ThreadHandoff` (its lock guards the queue and the results, its condition
wakes a synchronous commit): ``on_commit(err, partitions)`` once per request that carried an
asynchronous or automatic commit (as confluent-kafka, not for synchronous ones: their callers get
the answer); a failed one without ``on_commit`` goes to ``error_cb``, else to one log line per
request.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import confluent_kafka
from kafka import errors as kafka_errors

from kafka_placement.clients.confluent.commit_connection import CommitConnection, CommitConnectionUnavailable
from kafka_placement.clients.confluent.kafka_python_group import KafkaPythonGroup
from kafka_placement.clients.confluent.thread_handoff import ThreadHandoff
from kafka_placement.errors import CommitFailedError, ConsumerConfigError, ConsumerGroupError
from kafka_placement.groups.commit_queue import CommitBatch, CommitQueue, CommitResult
from kafka_placement.groups.membership import Membership

log = logging.getLogger(__name__)
_monotonic = time.monotonic

Partition = tuple[str, int]
#: Bound on a synchronous commit (and on close()'s LeaveGroup); also how long a commit that
#: failed with a retriable error (coordinator moved, timeout) is retried.
COMMIT_TIMEOUT_MS = 5000
#: Pause before a retriable failure is retried (librdkafka's retry.backoff.ms default).
RETRY_BACKOFF_S = 0.1
_COMMIT_REFUSED = (
    kafka_errors.CommitFailedError,
    kafka_errors.IllegalGenerationError,
    kafka_errors.UnknownMemberIdError,
    kafka_errors.RebalanceInProgressError,
    kafka_errors.FencedInstanceIdError,
)


def confluent_tp(topic: str, partition: int, offset: int = confluent_kafka.OFFSET_INVALID) -> Any:
    return confluent_kafka.TopicPartition(topic, partition, offset)


def offsets_of(message: Any, offsets: Iterable[Any] | None) -> dict[Partition, int]:
    """``commit(message=...)`` commits the message's offset + 1; ``offsets=`` as given."""
    if message is not None and offsets is not None:
        raise ConsumerConfigError("give message or offsets, not both")
    if message is not None:
        partition, offset = message_offset(message)
        return {partition: offset}
    return {(tp.topic, tp.partition): tp.offset for tp in offsets or ()}


def _committed(offsets: Mapping[Partition, int]) -> list[Any]:
    """What a synchronous commit of ``offsets`` returns: confluent-kafka's partitions, sorted."""
    return [confluent_tp(t, p, o) for (t, p), o in sorted(offsets.items())]


def message_offset(message: Any) -> tuple[Partition, int]:
    """What committing ``message`` commits: its partition and its offset + 1 (an error message has none)."""
    if message.error() is not None:
        raise ConsumerConfigError(f"cannot commit an error message: {message.error()}")
    return (message.topic(), message.partition()), message.offset() + 1


def kafka_error(exc: BaseException) -> Any:
    """A kafka-python exception as confluent-kafka's ``KafkaError`` (the broker's code when it is
    a broker error: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, ...)."""
    cause = exc.args[0] if isinstance(exc, kafka_errors.CommitFailedError) and exc.args else exc
    code = getattr(cause, "errno", None)
    if not isinstance(code, int) or code <= 0:
        code = confluent_kafka.KafkaError._FAIL
    return confluent_kafka.KafkaError(code, f"commit failed: {exc!r}")


class GroupCommitter:
    """The offset store and the commits of one group member (see the module docstring)."""

    def __init__(
        self,
        rdkafka: Any,
        kafka_python: KafkaPythonGroup,
        handoff: ThreadHandoff,
        membership: Membership,
        group: str,
        *,
        auto_offset_store: bool,
        on_commit: Callable[..., Any] | None,
        error_cb: Callable[..., Any] | None = None,
        connection: CommitConnection | None = None,
    ) -> None:
        self._rk = rdkafka
        #: synchronous commits sent and answered on the application thread (None: all on the IO thread)
        self._connection = connection
        self._kafka_python = kafka_python
        self._handoff = handoff
        self._membership = membership
        self._sleep = kafka_python.sleep
        self.group = group
        self.auto_offset_store = auto_offset_store
        self.on_commit = on_commit
        self.error_cb = error_cb
        self.stored: dict[Partition, int] = {}
        self.queue: CommitQueue[Partition] = CommitQueue(retry_window_s=COMMIT_TIMEOUT_MS / 1000)
        self._cond = handoff.cond  # the handoff's one lock: the queue, the results, the waiters
        self._lock = handoff.lock  # the same lock, entered without the condition where none waits
        self._sending = False
        #: finished requests for the application thread, and whether on_commit hears of them
        self._results: deque[tuple[CommitResult[Partition], bool]] = deque()
        self._waiting: dict[int, CommitResult[Partition] | None] = {}  # synchronous commits' tickets
        #: tickets of automatic commits made synchronously (before a revocation): reported to on_commit
        self._automatic: set[int] = set()
        self.failed_requests = 0  # observable: requests reported failed

    # --- stored offsets -------------------------------------------------------------------------
    def store(self, message: Any, offsets: Iterable[Any] | None) -> None:
        if self.auto_offset_store:
            raise ConsumerConfigError("store_offsets() requires enable.auto.offset.store=false")
        self.stored.update(offsets_of(message, offsets))

    def store_message(self, message: Any) -> None:
        """``store(message, None)``, the store per record: the message's offset + 1, no mapping built."""
        if self.auto_offset_store:
            raise ConsumerConfigError("store_offsets() requires enable.auto.offset.store=false")
        partition, offset = message_offset(message)
        self.stored[partition] = offset

    def forget(self, partitions: Iterable[Partition]) -> None:
        for p in partitions:
            self.stored.pop(p, None)

    def stored_offsets(self, partitions: Iterable[Partition]) -> dict[Partition, int]:
        parts = sorted(partitions)
        if not parts:
            return {}
        if not self.auto_offset_store:
            return {p: self.stored[p] for p in parts if p in self.stored}
        positions = self._rk.position([confluent_tp(t, p) for t, p in parts])
        return {(tp.topic, tp.partition): tp.offset for tp in positions if tp.offset >= 0}

    # --- committing (application thread) --------------------------------------------------------
    def commit(self, offsets: Mapping[Partition, int], asynchronous: bool, *, automatic: bool = False) -> Any:
        """Queue ``offsets``; sync waits for the request that carries them and returns the
        committed partitions, async returns None (the result goes to ``on_commit``).
        ``automatic``: the auto-commit's own (before a revocation, at close), reported to ``on_commit``
        even when waited for, as librdkafka reports its automatic commits.
        Refused → :class:`~kafka_placement.errors.CommitFailedError`."""
        if self._membership.lost:
            raise self._lost()
        if not offsets:
            return None if asynchronous else []
        if not asynchronous and not automatic and self._connection is not None:
            committed = self._commit_alone(offsets)
            if committed is not None:
                return committed
        with self._lock:
            ticket = self.queue.add(dict(offsets), _monotonic())
            if not asynchronous:
                self._waiting[ticket] = None
            if automatic:
                self._automatic.add(ticket)
            start, self._sending = not self._sending, True
        if start and not asynchronous and self._connection is not None:
            start = self._send_here()
        if start:
            self._start_sender()
        if asynchronous:
            return None
        return self._answer(ticket, offsets)

    def _commit_alone(self, offsets: Mapping[Partition, int]) -> list[Any] | None:
        """A synchronous commit with nothing queued or in flight, sent on the commit connection here
        with the queue's bookkeeping in two holds of the lock (docs/performance.md, "A synchronous
        commit as one exchange"). None when others are queued or in flight: the general path then
        queues it behind them. Anything but an accepted answer continues as on the general path."""
        assert self._connection is not None
        with self._lock:
            if self._sending or not self.queue.idle:
                return None
            ticket = self.queue.add(offsets, _monotonic())
            batch = self.queue.next_batch()
            self._sending = True
        assert batch is not None
        try:
            self._connection.commit(batch.offsets, COMMIT_TIMEOUT_MS / 1000)
        except CommitConnectionUnavailable:
            with self._cond:
                self._waiting[ticket] = None
                self.queue.put_back(batch)
            self._start_sender()
            return self._answer(ticket, offsets)
        except Exception as exc:  # answered with an error: reported as from the general path
            with self._cond:
                self._waiting[ticket] = None
            if self._complete(batch, exc) is None or self._send_here():
                self._start_sender()
            return self._answer(ticket, offsets)
        with self._cond:  # accepted: a synchronous commit's result is for its caller only
            self.queue.complete(batch, None, retriable=False, now=0.0)
            more = not self.queue.idle  # another thread's commits, queued behind this one
            if not more:
                self._sending = False
            self._cond.notify_all()  # flush() waits for the queue to drain
        if more and self._send_here():
            self._start_sender()
        return _committed(offsets)

    def _answer(self, ticket: int, offsets: Mapping[Partition, int]) -> list[Any]:
        """What a synchronous commit returns once ``ticket`` is answered; a refusal raised."""
        result = self._wait(ticket)
        if result.error is not None:
            raise self._refusal(result.error)
        return _committed(offsets)

    def commit_message_async(self, message: Any) -> None:
        """``commit(message, asynchronous=True)``, the commit per record: :meth:`commit` of the
        message's offset + 1, with no mapping built and the lock entered directly (one record's
        worth of Python; its result goes to ``on_commit`` as any asynchronous commit's)."""
        if self._membership.lost:
            raise self._lost()
        partition, offset = message_offset(message)
        with self._lock:
            self.queue.add_offset(partition, offset, _monotonic())
            start, self._sending = not self._sending, True
        if start:
            self._start_sender()

    def _lost(self) -> CommitFailedError:
        return CommitFailedError(
            f"group {self.group}: commit refused, this member lost its group membership; its "
            "partitions may be consumed by another member now"
        )

    def _send_here(self) -> bool:
        """The sender on this (the application's) thread, for a synchronous commit with nothing in
        flight: the queued commits go out on the commit connection and are answered here, without
        crossing to kafka-python's IO thread and back (docs/performance.md, "Where the confluent
        Consumer's time goes"). True when what is left must be sent from the IO thread: the
        connection cannot be used now, or a request failed and is retried through kafka-python's own
        path (which then handles the coordinator's state)."""
        assert self._connection is not None
        while (batch := self._next_batch()) is not None:
            error: BaseException | None = None
            if batch.offsets:
                try:
                    self._connection.commit(batch.offsets, COMMIT_TIMEOUT_MS / 1000)
                except CommitConnectionUnavailable:
                    with self._cond:
                        self.queue.put_back(batch)
                    return True
                except Exception as exc:  # reported to the application, as from the IO thread
                    error = exc
            if self._complete(batch, error) is None:
                return True
        return False

    def _complete(
        self, batch: CommitBatch[Partition], error: BaseException | None
    ) -> CommitResult[Partition] | None:
        """The sent ``batch`` answered (``error`` None: accepted): its result finished, or None when it
        waits to be sent again (a retriable error within the retry window)."""
        retriable = bool(getattr(error, "retriable", False))
        with self._cond:
            result = self.queue.complete(batch, error, retriable=retriable, now=time.monotonic())
            if result is not None:
                self._finish(result)
        return result

    def _start_sender(self) -> None:
        try:
            self._handoff.to_io(self._send_all)
        except Exception as exc:  # the IO loop is closed: nothing can be sent any more
            with self._cond:
                self._sending = False
                result = self.queue.fail_pending(exc)
                if result is not None:
                    self._finish(result)

    def _wait(self, ticket: int) -> CommitResult[Partition]:
        deadline = time.monotonic() + COMMIT_TIMEOUT_MS / 1000 + 1.0
        with self._cond:
            try:
                while (result := self._waiting[ticket]) is None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise CommitFailedError(
                            f"group {self.group}: commit not answered within {COMMIT_TIMEOUT_MS} ms; "
                            "its result goes to on_commit when it comes"
                        )
                    self._cond.wait(remaining)
            finally:
                self._waiting.pop(ticket, None)
        return result

    def _refusal(self, error: BaseException) -> CommitFailedError:
        if isinstance(error, _COMMIT_REFUSED):
            return CommitFailedError(
                f"group {self.group}: commit refused for generation "
                f"{self._kafka_python.coordinator.group_metadata().generation_id}: {error}"
            )
        return CommitFailedError(f"group {self.group}: commit failed: {error!r}")

    def flush(self, timeout_s: float) -> bool:
        """Wait until every queued commit is answered (before a revocation, at close)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while self._sending and not self.queue.idle:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    def fail_pending(self, why: str) -> None:
        """Membership lost: the commits not sent yet are failed, not sent."""
        with self._cond:
            result = self.queue.fail_pending(kafka_errors.CommitFailedError(why))
            if result is not None:
                self._finish(result)

    def deliver(self) -> None:
        """Report finished requests to the application (its thread: poll/consume/close)."""
        while True:
            with self._cond:
                if not self._results:
                    return
                result, report = self._results.popleft()
            if not report:  # synchronous commits only: their callers had the answer
                continue
            error = None if result.error is None else kafka_error(result.error)
            if self.on_commit is not None:
                parts = _committed(result.offsets)
                self.on_commit(error, parts)
            elif error is not None:
                if self.error_cb is not None:
                    self.error_cb(error)
                else:
                    log.warning(
                        "group %s: commit of %d offsets (%d commit calls) failed: %s",
                        self.group,
                        len(result.offsets),
                        result.commits,
                        error.str(),
                    )
            if isinstance(result.error, kafka_errors.FencedInstanceIdError):
                raise ConsumerGroupError(f"group {self.group}: fenced static member: {result.error}")

    # --- sending (kafka-python's IO thread) -----------------------------------------------------
    async def _send_all(self) -> None:
        """Send the queued commits, one request at a time, until none is left."""
        try:
            while (batch := self._next_batch()) is not None:
                error: BaseException | None = None
                if batch.offsets:
                    try:
                        await self._kafka_python.send_offset_commit(batch.offsets, COMMIT_TIMEOUT_MS)
                    except Exception as exc:  # reported to the application, never raised here
                        error = exc
                if self._complete(batch, error) is None and self._sleep is not None:
                    await self._sleep(RETRY_BACKOFF_S)
        except BaseException as exc:  # the IO loop is closing: answer every commit
            with self._cond:
                batch = self.queue.in_flight
                if batch is not None:
                    self._finish(CommitResult(batch.offsets, batch.first_ticket, batch.last_ticket, exc))
                    self.queue.in_flight = None
                if (pending := self.queue.fail_pending(exc)) is not None:
                    self._finish(pending)
                self._sending = False
            raise

    def _next_batch(self) -> CommitBatch[Partition] | None:
        with self._cond:
            batch = self.queue.next_batch()
            if batch is None:
                self._sending = False
                self._cond.notify_all()
            return batch

    def _finish(self, result: CommitResult[Partition]) -> None:
        """Record ``result`` (lock held): for the synchronous waiters and the application."""
        if result.error is not None:
            self.failed_requests += 1
        waited_for = 0
        for ticket in self._waiting:
            if result.covers(ticket):
                self._waiting[ticket] = result
                waited_for += ticket not in self._automatic
        automatic = {ticket for ticket in self._automatic if result.covers(ticket)}
        self._automatic -= automatic
        # confluent-kafka calls on_commit for asynchronous and automatic commits, not for the
        # application's synchronous ones: a request carrying only the latter is not reported again
        self._results.append((result, result.commits > waited_for))
        self._cond.notify_all()
