"""Handing kafka-python's rebalance events to the application's thread.

kafka-python 3.x runs the group protocol on its own IO thread and calls the rebalance listener
there. confluent-kafka applications expect ``on_assign``/``on_revoke``/``on_lost`` inside their
own ``poll()``, and may call ``commit()`` from them (a blocking call that needs the IO thread).
So the listener on the IO thread only queues the event and *awaits* it — the IO loop keeps
running (heartbeats, the commit the application sends from its callback) — and the
application's next ``poll()`` takes the event, does the librdkafka assign/unassign and the user
callback, then marks it done, which lets the join continue (revocation before JoinGroup,
assignment after SyncGroup: the ordering of Java's and librdkafka's consumers).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener
from kafka.future import Future

REVOKE = "revoke"
ASSIGN = "assign"
LOST = "lost"


@dataclass
class RebalanceEvent:
    """One listener call waiting for the application thread."""

    kind: str
    partitions: list[tuple[str, int]]
    done: Future = field(repr=False)


class RebalanceBridge(AsyncConsumerRebalanceListener):  # type: ignore[misc]
    """kafka-python listener (IO thread) → queue → application thread.

    ``call_soon`` is the IO loop's thread-safe scheduler (``KafkaConsumer._manager.call_soon``):
    the event's future is completed on the IO thread, where the awaiting listener resumes.
    """

    def __init__(self, call_soon: Callable[..., Any]) -> None:
        self._call_soon = call_soon
        self._events: deque[RebalanceEvent] = deque()
        self._lock = threading.Lock()
        self.closing = False

    @property
    def pending(self) -> bool:
        return bool(self._events)

    async def _hand_over(self, kind: str, partitions: Iterable[Any]) -> None:
        parts = sorted((tp.topic, tp.partition) for tp in partitions)
        if self.closing:  # close() already revoked everything on the application thread
            return
        event = RebalanceEvent(kind, parts, Future())
        with self._lock:
            self._events.append(event)
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

    def take(self) -> RebalanceEvent | None:
        """The oldest waiting event (application thread)."""
        with self._lock:
            return self._events.popleft() if self._events else None

    def finish(self, event: RebalanceEvent, error: BaseException | None = None) -> None:
        """Let the waiting listener continue; ``error`` is raised in kafka-python's join (which
        reports a failing user callback as Java does: the rebalance still completes)."""
        if error is None:
            self._call_soon(event.done.success, None)
        else:
            self._call_soon(event.done.failure, error)

    def release_all(self) -> list[RebalanceEvent]:
        """On close: finish every waiting event without handling it; return them."""
        self.closing = True
        released = []
        while (event := self.take()) is not None:
            self.finish(event)
            released.append(event)
        return released
