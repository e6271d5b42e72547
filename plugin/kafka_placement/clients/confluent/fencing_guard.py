"""A consumer-protocol member (librdkafka's own consumer) that stops consuming when the broker has
likely fenced it without its knowing: the rule is :mod:`kafka_placement.groups.coordinator_silence`.

librdkafka does not tell the application how its heartbeats fare; its statistics do (STATISTICS.md):
the group coordinator's connection is the logical broker ``GroupCoordinator``, whose ``rx`` counts the
responses received from it (``waitresp_cnt``/``outbuf_cnt`` the requests in flight and waiting to be
sent; ``req_timeouts``, ``txerrs``, ``rxerrs`` and ``disconnects`` those that failed), and
``cgrp.join_state`` is ``steady`` while no rebalance is under way. The
guard asks for statistics every :data:`STATS_INTERVAL_MS` (the application's own ``stats_cb`` still
gets them at its own interval), and on a suspicion pauses the member's assigned partitions —
``pause()`` also drops what was fetched and not yet handed out — until the coordinator answers again and
the member is still steady (then resumes exactly what it paused and is still assigned). If the answer
was a fencing, librdkafka revokes the partitions as lost and rejoins; a new assignment is the group's
word and is not held back.

The statistics callback runs inside the application's ``poll()``/``consume()``, on its thread: the
guard never raises there (a document it cannot read is logged and skipped).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from kafka_placement.clients.confluent.statistics_tap import StatisticsTap
from kafka_placement.errors import ConsumerConfigError
from kafka_placement.groups.coordinator_silence import CoordinatorSilence, Observation, Verdict

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_HEARTBEAT_INTERVAL_MS", "DEFAULT_SESSION_TIMEOUT_MS", "STATS_INTERVAL_MS", "FencingGuard"]

#: Kafka's default ``group.consumer.session.timeout.ms``
DEFAULT_SESSION_TIMEOUT_MS = 45_000
#: Kafka's default ``group.consumer.heartbeat.interval.ms`` (the broker tells the member its interval)
DEFAULT_HEARTBEAT_INTERVAL_MS = 5_000
#: How often librdkafka reports to the guard: the suspicion comes at most this much late
STATS_INTERVAL_MS = 1000
#: librdkafka's name for the connection to the group coordinator in its statistics
_COORDINATOR = "GroupCoordinator"

PartitionsCallback = Callable[[list[Any]], None]


class FencingGuard:
    """See the module docstring. ``session_timeout_ms``: the group's session timeout on the broker
    (``group.consumer.session.timeout.ms``, Kafka's default 45 s); ``heartbeat_interval_ms``: the
    group's heartbeat interval (``group.consumer.heartbeat.interval.ms``, Kafka's default 5 s; at most
    the session timeout): after a suspicion, an answer clears it only once every request to the
    coordinator over that interval and one statistics interval was answered, none failed (a heartbeat
    was among them); before one, answers keep the member consuming only so too once a request to the
    coordinator failed (heartbeats timing out behind answered commits); ``on_suspect(partitions)`` /
    ``on_cleared(partitions)``: told what was paused / resumed (after the pause / the resume). Give
    :meth:`settings` to the consumer's configuration, then :meth:`watch` the consumer built from it
    (``Consumer.for_consumer_protocol`` does both)."""

    def __init__(
        self,
        session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS,
        *,
        heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS,
        on_suspect: PartitionsCallback | None = None,
        on_cleared: PartitionsCallback | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(session_timeout_ms, bool) or not isinstance(session_timeout_ms, int):
            raise ConsumerConfigError(f"session_timeout_ms must be an int, got {session_timeout_ms!r}")
        if not 1000 <= session_timeout_ms <= 3_600_000:
            raise ConsumerConfigError(
                f"session_timeout_ms must be in [1000, 3600000], got {session_timeout_ms}"
            )
        if isinstance(heartbeat_interval_ms, bool) or not isinstance(heartbeat_interval_ms, int):
            raise ConsumerConfigError(f"heartbeat_interval_ms must be an int, got {heartbeat_interval_ms!r}")
        if not 100 <= heartbeat_interval_ms <= session_timeout_ms:
            raise ConsumerConfigError(
                f"heartbeat_interval_ms must be in [100, session_timeout_ms={session_timeout_ms}], "
                f"got {heartbeat_interval_ms}"
            )
        self.session_timeout_ms = session_timeout_ms
        self.silence = CoordinatorSilence(
            session_timeout_ms / 1000,
            margin_s=min(2 * STATS_INTERVAL_MS / 1000, session_timeout_ms / 2000),
            confirm_after_s=min(
                (heartbeat_interval_ms + STATS_INTERVAL_MS) / 1000, session_timeout_ms / 1000
            ),
        )
        self._on_suspect = on_suspect
        self._on_cleared = on_cleared
        self._clock = clock
        self._consumer: Any = None
        self._paused: list[Any] = []  # what a suspicion paused
        self._left_paused: list[Any] = []  # of those, what was not assigned when it cleared
        self._tap = StatisticsTap(self.on_stats, STATS_INTERVAL_MS, guard="fencing guard", clock=clock)

    def settings(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """``config`` with the statistics the guard reads; the application's own ``stats_cb`` is
        still called, at its own ``statistics.interval.ms`` (:class:`~.statistics_tap.StatisticsTap`)."""
        return self._tap.settings(config)

    def watch(self, consumer: Any) -> None:
        """The consumer built from :meth:`settings` (its pause/resume/assignment are used)."""
        self._consumer = consumer

    @property
    def suspected(self) -> bool:
        """The member stopped consuming: its coordinator was silent for about a session."""
        return self.silence.suspected

    def on_stats(self, text: str) -> None:
        """One statistics document (through the tap, which logs and skips one it cannot read)."""
        now = self._clock()
        seen = observation(text, now)
        if seen is None or self._consumer is None:
            return
        verdict = self.silence.observe(seen)
        try:
            if verdict is Verdict.SUSPECT:
                self._suspect(now)
            elif verdict is Verdict.CLEARED:
                self._clear()
            elif self._left_paused and not self.silence.suspected:
                self._resume_left()
        except Exception as exc:  # never out of the application's poll(): it goes on, logged
            log.warning("fencing guard: %s failed (%r)", verdict.value, exc)

    def _suspect(self, now: float) -> None:
        consumer = self._consumer
        self._paused = list(consumer.assignment())
        if not self._paused:  # a standby, or not joined yet: nothing to stop
            return
        consumer.pause(self._paused)
        silent = now - (self.silence.last_answer_at or now)
        log.warning(
            "group coordinator silent for %.1f s (session timeout %.1f s): the broker has likely fenced "
            "this member; its %d partition(s) paused until the coordinator answers",
            silent,
            self.session_timeout_ms / 1000,
            len(self._paused),
        )
        if self._on_suspect is not None:
            self._on_suspect(list(self._paused))

    def _held(self, partitions: list[Any]) -> tuple[list[Any], list[Any]]:
        """``partitions`` split into those assigned now and the others."""
        assigned = {(tp.topic, tp.partition) for tp in self._consumer.assignment()}
        held = [tp for tp in partitions if (tp.topic, tp.partition) in assigned]
        return held, [tp for tp in partitions if (tp.topic, tp.partition) not in assigned]

    def _clear(self) -> None:
        if not self._paused:
            return
        # one not assigned now (fenced: revoked as lost, the rejoin not over) is resumed if it comes back
        # (librdkafka may keep it paused through the unassign)
        paused = {(tp.topic, tp.partition): tp for tp in self._left_paused + self._paused}
        resumed, self._left_paused = self._held(list(paused.values()))
        self._paused = []
        if resumed:
            self._consumer.resume(resumed)
        log.warning("group coordinator answering again: %d partition(s) resumed", len(resumed))
        if self._on_cleared is not None:
            self._on_cleared(resumed)

    def _resume_left(self) -> None:
        back, self._left_paused = self._held(self._left_paused)
        if back:
            self._consumer.resume(back)
            if self._on_cleared is not None:
                self._on_cleared(back)


def observation(text: str, at: float) -> Observation | None:
    """What the guard reads from one librdkafka statistics document: the coordinator connection's
    responses, requests in flight and failed requests, and whether the group state is steady. None for
    a client without a group."""
    doc = json.loads(text)
    cgrp = doc.get("cgrp")
    if not cgrp:
        return None
    coordinator = next(b for b in doc["brokers"].values() if b["name"] == _COORDINATOR)
    return Observation(
        at=at,
        answers=int(coordinator["rx"]),
        steady=cgrp.get("join_state") == "steady",
        in_flight=int(coordinator["waitresp_cnt"]) + int(coordinator["outbuf_cnt"]),
        failures=sum(int(coordinator[k]) for k in ("req_timeouts", "txerrs", "rxerrs", "disconnects")),
    )
