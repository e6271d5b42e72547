"""A kafka-python member that stops consuming once its session may have ended at the broker.

A classic member's session lives at its group coordinator: one that receives no heartbeat from it for
``session.timeout.ms`` removes it and gives its partitions to the others. kafka-python's member does not
know until a heartbeat or a join is answered again, which needs the coordinator; meanwhile it goes on
fetching from the partitions' leaders, which it still reaches. Two members then consume the same
partitions: 24.4 s of it in a 30-minute soak (docs/reliability.md, session 26, seed 37). librdkafka's
classic consumer and our confluent ``Consumer`` treat "no successful heartbeat for a session" as the
assignment lost; kafka-python 3.x only marks its coordinator dead.

:class:`SessionGuard` pauses the assigned partitions (``KafkaConsumer.pause``: what was fetched for them is
dropped, their positions stay, so nothing is skipped) once no heartbeat succeeded for the session timeout
less :data:`MARGIN_S` — the broker counts from the last heartbeat it received, which is no earlier than
the last one answered — and resumes exactly what it paused once the membership is confirmed: a heartbeat
answered, or a join completed (a new generation). The partitions the application paused itself are left
alone. It never touches the group: the rejoin, the revocation and the commits stay kafka-python's.

kafka-python names used (public attributes, not underscored): ``coordinator.heartbeat.last_receive``
(set only by a successful heartbeat, or one answered REBALANCE_IN_PROGRESS, which keeps the session) and
``coordinator.group_metadata().generation_id``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["MARGIN_S", "SessionGuard"]

#: How much earlier than a full session the member stops: the check runs once per round of polling
#: (kafka-python bounds a round by ``fetch.max.wait.ms``, 500 ms by default), and the broker's count
#: starts no earlier than the member's
MARGIN_S = 2.0


class SessionGuard:
    """See the module docstring. ``consumer``: the kafka-python ``KafkaConsumer`` (its ``assignment``,
    ``paused``, ``pause`` and ``resume``); ``coordinator``: its ``ConsumerCoordinator``;
    ``session_timeout_s``: its ``session_timeout_ms`` in seconds."""

    def __init__(
        self,
        consumer: Any,
        coordinator: Any,
        session_timeout_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._consumer = consumer
        self._coordinator = coordinator
        self.session_timeout_s = session_timeout_s
        self.limit_s = max(session_timeout_s - MARGIN_S, session_timeout_s / 2)
        self._clock = clock
        #: when the membership was last confirmed other than by a heartbeat: the guard's start, or the
        #: round that first saw a new generation (a join completed; its first heartbeat comes later)
        self._confirmed_at = clock()
        self._generation_seen: int | None = self._generation()
        #: what the guard paused, and when
        self.paused: frozenset[Any] = frozenset()
        self._paused_at = 0.0
        self._paused_receive = 0.0
        #: how many times it stopped the member (for the application's and the soak's logs)
        self.suspicions = 0
        #: told what was paused (with the seconds of silence) / resumed, after the pause / the resume
        self.on_suspect: Callable[[frozenset[Any], float], None] | None = None
        self.on_cleared: Callable[[frozenset[Any]], None] | None = None

    @property
    def suspected(self) -> bool:
        return bool(self.paused)

    def check(self) -> None:
        """Once per round of polling, before the round (records of paused partitions are not returned)."""
        now = self._clock()
        generation = self._generation()
        if generation is not None and generation != self._generation_seen:
            self._generation_seen, self._confirmed_at = generation, now
        heartbeat = self._coordinator.heartbeat
        if self.paused:
            answered = heartbeat.last_receive > self._paused_receive
            if answered or self._confirmed_at > self._paused_at:
                self._clear("a heartbeat answered" if answered else "rejoined")
            return
        # kafka-python's last_receive is -inf until its first heartbeat answer
        silent = now - max(heartbeat.last_receive, self._confirmed_at)
        if silent < self.limit_s:
            return
        ours = frozenset(set(self._consumer.assignment()) - set(self._consumer.paused()))
        if not ours:
            return
        self._consumer.pause(*ours)
        self.paused, self._paused_at, self._paused_receive = ours, now, heartbeat.last_receive
        self.suspicions += 1
        log.warning(
            "consumer group %s: no heartbeat answered for %.1f s (session timeout %.1f s): the coordinator "
            "may have removed this member; its %d partition(s) paused until the membership is confirmed",
            self._coordinator.group_id,
            silent,
            self.session_timeout_s,
            len(ours),
        )
        if self.on_suspect is not None:
            self.on_suspect(ours, silent)

    def _generation(self) -> int | None:
        """The member's generation, None while it has none (never joined, or removed: kafka-python's
        NO_GENERATION is -1) — so a removal never reads as a rejoin."""
        generation = int(self._coordinator.group_metadata().generation_id)
        return generation if generation >= 0 else None

    def _clear(self, why: str) -> None:
        held = self.paused & set(self._consumer.assignment())
        self.paused = frozenset()
        if held:
            self._consumer.resume(*held)
        log.warning(
            "consumer group %s: membership confirmed (%s); %d partition(s) resumed",
            self._coordinator.group_id,
            why,
            len(held),
        )
        if self.on_cleared is not None:
            self.on_cleared(frozenset(held))
