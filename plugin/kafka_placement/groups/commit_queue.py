"""Offset commits queued and coalesced per partition, as librdkafka's consumer never drops one.

Sans-I/O: no Kafka client here, no clock, no threads. An adapter owns one :class:`CommitQueue`,
calls :meth:`CommitQueue.add` for every ``commit()`` of the application (asynchronous or not),
sends what :meth:`CommitQueue.next_batch` hands out as one OffsetCommit request, and reports the
request's outcome to :meth:`CommitQueue.complete`.

- **At most one request in flight.** Commits made meanwhile wait in ``pending``; a new commit of a
  partition replaces the waiting offset of that partition (the newest wins, as the broker would
  have kept the last of two requests anyway). So a loop committing after every record never
  overruns a connection's in-flight limit, and the broker sees one request per round trip.
- **Tickets.** Every :meth:`~CommitQueue.add` returns a ticket (consecutive integers). A batch
  carries the range of tickets whose offsets it holds — a contiguous range, because the batch in
  flight always holds older tickets than the pending ones. Every ticket is reported exactly once,
  in one :class:`CommitResult` (success or error): what a synchronous caller waits for and what an
  ``on_commit`` callback receives once per request.
- **Retries.** A request that failed with a retriable error (coordinator moved, timeout) goes back
  into ``pending`` under the offsets committed since (the newest still wins) and keeps its tickets,
  until ``retry_window_s`` after its oldest commit; then it is reported failed.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["CommitBatch", "CommitQueue", "CommitResult"]

P = TypeVar("P", bound=Hashable)  # a partition, as the adapter names it


@dataclass(frozen=True)
class CommitBatch(Generic[P]):
    """One OffsetCommit request: ``offsets`` per partition, tickets ``first_ticket..last_ticket``."""

    offsets: Mapping[P, int]
    first_ticket: int
    last_ticket: int
    since: float  # when the oldest of its commits was added (for the retry window)


@dataclass(frozen=True)
class CommitResult(Generic[P]):
    """The outcome of one request (or of commits failed without being sent), reported once."""

    offsets: Mapping[P, int]
    first_ticket: int
    last_ticket: int
    error: BaseException | None = None

    def covers(self, ticket: int) -> bool:
        return self.first_ticket <= ticket <= self.last_ticket

    @property
    def commits(self) -> int:
        """How many ``commit()`` calls this result answers."""
        return self.last_ticket - self.first_ticket + 1


@dataclass
class CommitQueue(Generic[P]):
    """See the module docstring. Not thread-safe: the adapter holds a lock around each call."""

    retry_window_s: float = 5.0
    pending: dict[P, int] = field(default_factory=dict)
    in_flight: CommitBatch[P] | None = None
    _next_ticket: int = 0
    _pending_first: int | None = None  # first ticket of the pending commits
    _pending_since: float = 0.0

    @property
    def last_ticket(self) -> int:
        """The newest ticket handed out (-1 before the first)."""
        return self._next_ticket - 1

    @property
    def idle(self) -> bool:
        """Nothing in flight and nothing waiting."""
        return self.in_flight is None and self._pending_first is None

    def add(self, offsets: Mapping[P, int], now: float) -> int:
        """Queue one commit; return its ticket. The newest offset of a partition wins."""
        ticket = self._ticket(now)
        self.pending.update(offsets)
        return ticket

    def add_offset(self, partition: P, offset: int, now: float) -> int:
        """:meth:`add` of one partition's offset (a commit per record, without a mapping built for it)."""
        ticket = self._ticket(now)
        self.pending[partition] = offset
        return ticket

    def _ticket(self, now: float) -> int:
        """The next ticket; the first pending one also starts the pending commits' retry clock."""
        ticket = self._next_ticket
        self._next_ticket += 1
        if self._pending_first is None:
            self._pending_first, self._pending_since = ticket, now
        return ticket

    def next_batch(self) -> CommitBatch[P] | None:
        """The pending commits as one request, when none is in flight; None otherwise. A batch
        with no offsets (only commits of nothing) is completed at once without a request."""
        if self.in_flight is not None or self._pending_first is None:
            return None
        batch = CommitBatch(self.pending, self._pending_first, self.last_ticket, self._pending_since)
        self.pending, self._pending_first = {}, None
        self.in_flight = batch
        return batch

    def complete(
        self, batch: CommitBatch[P], error: BaseException | None, *, retriable: bool, now: float
    ) -> CommitResult[P] | None:
        """The request of ``batch`` finished. Returns its result, or None when it was put back to
        be retried (a retriable error within the retry window)."""
        if batch is not self.in_flight:
            raise ValueError("complete() called for a batch that is not in flight")
        self.in_flight = None
        if error is not None and retriable and now - batch.since < self.retry_window_s:
            self.pending = {**batch.offsets, **self.pending}  # newer pending offsets win
            self._pending_first = batch.first_ticket
            self._pending_since = batch.since
            return None
        return CommitResult(batch.offsets, batch.first_ticket, batch.last_ticket, error)

    def put_back(self, batch: CommitBatch[P]) -> None:
        """``batch`` was taken but not sent: it waits again, as it was (newer pending offsets win)."""
        if batch is not self.in_flight:
            raise ValueError("put_back() called for a batch that is not in flight")
        self.in_flight = None
        self.pending = {**batch.offsets, **self.pending}
        self._pending_first, self._pending_since = batch.first_ticket, batch.since

    def fail_pending(self, error: BaseException) -> CommitResult[P] | None:
        """Fail the waiting commits without sending them (membership lost, closing)."""
        if self._pending_first is None:
            return None
        result = CommitResult(self.pending, self._pending_first, self.last_ticket, error)
        self.pending, self._pending_first = {}, None
        return result
