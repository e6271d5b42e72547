"""Keeping a kafka-python 3.0.12 consumer in its group on a loaded machine (used by the live
workers of ``test_assignment_live.py`` and ``test_java_mixed_group_live.py``; they run as
subprocesses with this directory on ``sys.path``).

The kafka-python bug (client side, any assignor; read in ``kafka/coordinator/base.py`` and
``consumer.py``): ``ConsumerCoordinator.poll()`` only enters ``ensure_active_group()`` while
``need_rejoin()`` is true, and ``join_group_async()`` only consumes a finished join task inside its
``while self.need_rejoin()`` loop. A rebalance triggered by the *metadata snapshot* (the leader's
``_assignment_snapshot != _metadata_snapshot``, e.g. the leader assigned before it had metadata for
the topics) does not set the base ``rejoin_needed`` flag. When the JoinGroup/SyncGroup round trip
outlasts one ``poll(timeout_ms=…)`` call, ``wait_for`` times out and the task stays in flight;
meanwhile the leader's ``_perform_assignment`` refreshes ``_assignment_snapshot``, so at the next
``poll()`` ``need_rejoin()`` is false: the finished join (its SyncGroup assignment) is never
consumed. The member stays REBALANCING with heartbeats disabled (they are disabled for the join),
keeps reporting the new generation with the old assignment, the broker drops it after
session.timeout.ms, and nothing ever notices (no heartbeat is sent that could fail).

:class:`JoinWatchdog` (the library's, ``kafka_placement.clients.kafka_python.join_watchdog``,
which the confluent Consumer runs too) is called after every ``poll()`` of the worker's loop and
recovers through the coordinator's semi-public ``request_rejoin()`` (the next ``poll()`` then starts a fresh
JoinGroup; a member the broker already dropped gets UNKNOWN_MEMBER_ID and rejoins as new):

1. a finished join task that nobody will consume (the bug above);
2. no join in flight, no rejoin requested, heartbeats off, for longer than ``grace_s`` (any other
   way of ending up parked outside the group);
3. joined and heartbeating, but no successful heartbeat for longer than the session timeout.

The test side adds the last resort: a worker absent from DescribeGroups while it believes it is a
member is told to ``recover`` and replaces its consumer by a new one (:func:`run_member`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

Json = dict[str, Any]


class JoinWatchdog:
    """The library's :class:`~kafka_placement.clients.kafka_python.join_watchdog.JoinWatchdog` on
    a worker's ``KafkaConsumer``, reporting each rescue as an ``unstick`` event."""

    def __init__(self, consumer: Any, emit: Callable[[Json], None], session_timeout_s: float,
                 grace_s: float = 2.0) -> None:
        from kafka_placement.clients.kafka_python.join_watchdog import JoinWatchdog as CoordinatorWatchdog

        self.consumer = consumer
        self._watchdog = CoordinatorWatchdog(
            consumer._coordinator, session_timeout_s, grace_s=grace_s,
            on_fire=lambda reason, details: emit({"ev": "unstick", "reason": reason, **details}),
        )

    def check(self) -> None:
        self._watchdog.check()


def run_member(
    make_consumer: Callable[[], Any],
    emit: Callable[[Json], None],
    session_timeout_s: float,
    on_poll: Callable[[Any, Any], None] | None = None,
) -> int:
    """The worker loop: poll, watchdog, report ``assignment`` changes (generation, member id,
    partitions, member state); obey ``close`` and ``recover`` (new consumer) lines on stdin."""
    commands: list[str] = []
    lock = threading.Lock()
    closing = threading.Event()

    def read_stdin() -> None:
        for line in sys.stdin:
            word = line.strip()
            if word == "close":
                break
            with lock:
                commands.append(word)
        closing.set()

    threading.Thread(target=read_stdin, daemon=True).start()
    consumer = make_consumer()
    watchdog = JoinWatchdog(consumer, emit, session_timeout_s)
    emit({"ev": "ready"})
    last: tuple[Any, ...] | None = None
    while not closing.is_set():
        with lock:
            pending, commands[:] = list(commands), []
        if "recover" in pending:
            emit({"ev": "recreate", "member_id": consumer.group_metadata().member_id})
            try:
                consumer.close(timeout_ms=5000)
            except Exception as exc:  # the old consumer is abandoned either way
                emit({"ev": "close-error", "error": repr(exc)})
            consumer = make_consumer()
            watchdog = JoinWatchdog(consumer, emit, session_timeout_s)
            last = None
        try:
            records = consumer.poll(timeout_ms=100)
        except Exception as exc:  # e.g. the heartbeat loop's error, re-raised once by poll()
            emit({"ev": "poll-error", "error": repr(exc)})
            records = {}
        watchdog.check()
        if on_poll is not None:
            on_poll(consumer, records)
        meta = consumer.group_metadata()
        parts = sorted([tp.topic, tp.partition] for tp in consumer.assignment())
        state_name = getattr(meta.state, "name", str(meta.state))
        state = (meta.generation_id, meta.member_id, state_name, repr(parts))
        if state != last:
            last = state
            emit({"ev": "assignment", "gen": meta.generation_id, "member_id": meta.member_id,
                  "state": state_name, "parts": parts})
    consumer.close()
    emit({"ev": "closed"})
    return 0
