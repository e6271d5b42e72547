"""The one way between the application's thread and kafka-python's IO thread.

kafka-python 3.x runs the group protocol on its own IO thread and calls the rebalance listener
there. confluent-kafka applications expect ``on_assign``/``on_revoke``/``on_lost`` inside their
own ``poll()``, and may call ``commit()`` from them (a blocking call that needs the IO thread).

Everything that crosses between the two threads goes through one :class:`ThreadHandoff`:

- **to the application thread**: items appended under its one lock (a ``threading.Condition``) —
  the rebalance events (:class:`RebalanceBridge`, the listener) and the commit results
  (:mod:`.offsets`); the application thread takes them under the same lock, and waits on the same
  condition (a synchronous commit, a flush before a revocation);
- **to the IO thread**: :meth:`ThreadHandoff.to_io`, kafka-python's thread-safe ``call_soon``; a
  listener's event is completed that way, so the awaiting listener resumes on its own thread;
- **closing**: :meth:`ThreadHandoff.close` sets the flag under the lock; a listener called after it
  does not wait (``close()`` gives everything up on the application thread). A listener already
  waiting is released only by :meth:`ThreadHandoff.release_waiting`, after kafka-python's consumer is
  closed: released earlier, its join would go on to a JoinGroup while the member leaves, and the
  broker would count a member that is gone until its session expires.

So the listener on the IO thread only queues the event and *awaits* it — the IO loop keeps running
(heartbeats, the commit the application sends from its callback) — and the application's next
``poll()`` takes the event, applies it (:mod:`.rebalance_applier`), then finishes it, which lets
the join continue (revocation before JoinGroup, assignment after SyncGroup: the ordering of Java's
and librdkafka's consumers).
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener
from kafka.future import Future

__all__ = ["ASSIGN", "LOST", "REVOKE", "RebalanceBridge", "RebalanceEvent", "ThreadHandoff"]

REVOKE = "revoke"
ASSIGN = "assign"
LOST = "lost"


@dataclass
class RebalanceEvent:
    """One listener call waiting for the application thread."""

    kind: str
    partitions: list[tuple[str, int]]
    done: Future = field(repr=False)


class ThreadHandoff:
    """See the module docstring. ``call_soon`` is kafka-python's IO-thread scheduler."""

    def __init__(self, call_soon: Callable[..., Any]) -> None:
        self._call_soon = call_soon
        #: the one lock (entered directly where nothing waits: a per-record commit pays no
        #: ``Condition.__enter__`` in Python), and its condition, what the application thread waits on
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self._events: deque[RebalanceEvent] = deque()
        self._closed = False

    # --- to the IO thread -----------------------------------------------------------------------
    def to_io(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` (a function or coroutine function) on the IO thread; kafka-python's Future."""
        return self._call_soon(fn, *args)

    # --- rebalance events (IO thread → application thread) ---------------------------------------
    def post(self, event: RebalanceEvent) -> bool:
        """Queue ``event`` for the application thread (IO thread); False once closed (not queued)."""
        with self.cond:
            if self._closed:
                return False
            self._events.append(event)
            self.cond.notify_all()
            return True

    @property
    def pending(self) -> bool:
        with self.cond:
            return bool(self._events)

    @property
    def closed(self) -> bool:
        with self.cond:
            return self._closed

    def take(self) -> RebalanceEvent | None:
        """The oldest waiting event (application thread)."""
        with self.cond:
            return self._events.popleft() if self._events else None

    def finish(self, event: RebalanceEvent, error: BaseException | None = None) -> None:
        """Let the waiting listener continue, on the IO thread; ``error`` is raised in kafka-python's
        join (which reports a failing user callback as Java does: the rebalance still completes)."""
        if error is None:
            self.to_io(event.done.success, None)
        else:
            self.to_io(event.done.failure, error)

    def close(self) -> None:
        """Stop queueing events: a listener called from now on does not wait."""
        with self.cond:
            self._closed = True
            self.cond.notify_all()

    def release_waiting(self) -> list[RebalanceEvent]:
        """Finish every waiting event without applying it (after close); return them. The IO loop may
        be stopped already (the consumer closed): then there is nobody left to release."""
        with self.cond:
            released = list(self._events)
            self._events.clear()
        for event in released:
            # kafka-python's IO loop closed: the listener's coroutine is gone with it
            with contextlib.suppress(Exception):
                self.finish(event)
        return released


class RebalanceBridge(AsyncConsumerRebalanceListener):  # type: ignore[misc]
    """kafka-python's rebalance listener (IO thread): each call handed over and awaited."""

    def __init__(self, handoff: ThreadHandoff) -> None:
        self._handoff = handoff

    async def _hand_over(self, kind: str, partitions: Iterable[Any]) -> None:
        event = RebalanceEvent(kind, sorted((tp.topic, tp.partition) for tp in partitions), Future())
        if self._handoff.post(event):  # else close() already gave everything up
            await event.done

    async def on_partitions_revoked(self, revoked: Iterable[Any]) -> None:
        revoked = list(revoked)
        if revoked:  # nothing to give up (every first join): no round trip through the application
            await self._hand_over(REVOKE, revoked)

    async def on_partitions_assigned(self, assigned: Iterable[Any]) -> None:
        await self._hand_over(ASSIGN, assigned)

    async def on_partitions_lost(self, lost: Iterable[Any]) -> None:
        lost = list(lost)
        if lost:
            await self._hand_over(LOST, lost)
