"""The kafka-python group member of the live tests, run as a subprocess:
``python kafka_python_member.py '<json config>'`` (see :func:`main`); it reports JSON events on stdout
and takes ``close``/``recover`` on stdin (the test side is ``member_process.MemberProcess``).

Keeping a kafka-python 3.0.12 consumer in its group on a loaded machine takes care:

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

import contextlib
import json
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from kafka_placement.member_commands import watch_stdin
from member_process import Json, event_writer  # this directory is sys.path[0] of a member


class JoinWatchdog:
    """The library's :class:`~kafka_placement.clients.kafka_python.join_watchdog.JoinWatchdog` on
    a worker's ``KafkaConsumer``, reporting each rescue as an ``unstick`` event."""

    def __init__(
        self, consumer: Any, emit: Callable[[Json], None], session_timeout_s: float, grace_s: float = 2.0
    ) -> None:
        from kafka_placement.clients.kafka_python.join_watchdog import JoinWatchdog as CoordinatorWatchdog

        self.consumer = consumer
        self._watchdog = CoordinatorWatchdog(
            consumer._coordinator,
            session_timeout_s,
            grace_s=grace_s,
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

    def take(word: str) -> None:
        with lock:
            commands.append(word)

    closing = watch_stdin(take)
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
            emit(
                {
                    "ev": "assignment",
                    "gen": meta.generation_id,
                    "member_id": meta.member_id,
                    "state": state_name,
                    "parts": parts,
                }
            )
    consumer.close()
    emit({"ev": "closed"})
    return 0


def main(config: Json) -> int:  # pragma: no cover - runs in a subprocess
    """A consumer running one of our assignors that reports its assignment changes as JSON lines on
    stdout. ``config``: bootstrap, group, name, topics, strategy, and optionally priority, rack,
    session_timeout_ms, group_instance_id (a static member), migration_ready (failover),
    report_records (records seen, committed),
    report_leader (a ``led`` event for each assignment this member computed as the leader)."""
    import logging

    from kafka import KafkaConsumer
    from kafka.consumer.subscription_state import ConsumerRebalanceListener

    from kafka_placement.clients.kafka_python import ASSIGNOR_CLASSES
    from kafka_placement.clients.kafka_python.partition_counts import watch_partition_counts

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("kafka.coordinator").setLevel(logging.DEBUG)
    # its need_rejoin() debug line is written on every poll (150 MB per worker per minute)
    logging.getLogger("kafka.coordinator.consumer").setLevel(logging.INFO)
    session_timeout_ms = int(config.get("session_timeout_ms", 6000))
    emit = event_writer(config["name"])

    base = ASSIGNOR_CLASSES[config["strategy"]]

    class Reporting(base):  # type: ignore[misc, valid-type]
        def assign(self, cluster: Any, members: Any) -> Any:
            result = super().assign(cluster, members)
            if config.get("report_leader"):
                emit({"ev": "led", "members": sorted(m.member_id for m in members)})
            return result

    kwargs: Json = {"rack": config["rack"]} if config.get("rack") else {}
    if config["strategy"] in ("failover", "priority"):
        kwargs["priority"] = config.get("priority")
        kwargs["migration_ready"] = bool(config.get("migration_ready", False))
    assignor = Reporting(**kwargs)

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        def on_partitions_revoked(self, revoked: Iterable[Any]) -> None:
            emit({"ev": "revoked", "parts": sorted([tp.topic, tp.partition] for tp in revoked)})

        def on_partitions_assigned(self, assigned: Iterable[Any]) -> None:
            emit({"ev": "added", "parts": sorted([tp.topic, tp.partition] for tp in assigned)})

        def on_partitions_lost(self, lost: Iterable[Any]) -> None:
            emit({"ev": "lost", "parts": sorted([tp.topic, tp.partition] for tp in lost)})

    # the consumer's own client.rack (KIP-392 fetch-from-follower) matches the assignor's;
    consumer_extra: Json = {"client_rack": config["rack"]} if config.get("rack") else {}
    if config.get("group_instance_id"):  # a static member (KIP-345)
        consumer_extra["group_instance_id"] = config["group_instance_id"]

    def make_consumer() -> Any:
        consumer = KafkaConsumer(
            bootstrap_servers=config["bootstrap"],
            group_id=config["group"],
            client_id=config["name"],
            partition_assignment_strategy=[assignor],
            session_timeout_ms=session_timeout_ms,
            heartbeat_interval_ms=1000,
            max_poll_interval_ms=20000,
            # A SyncGroup response that never came parked a leader (heartbeats are off while it
            # waits) for kafka-python's default 30 s on this loaded machine; retry sooner.
            request_timeout_ms=10000,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            **consumer_extra,
        )
        consumer.subscribe(config["topics"], listener=Listener())
        watch_partition_counts(consumer)
        return consumer

    def on_poll(consumer: Any, records: Any) -> None:
        if config.get("report_records"):
            items = [[r.partition, r.offset] for batch in records.values() for r in batch]
            if items:
                emit({"ev": "recs", "items": items})
                with contextlib.suppress(Exception):  # a rebalance may be under way: committed later
                    consumer.commit()

    return run_member(make_consumer, emit, session_timeout_ms / 1000, on_poll)


if __name__ == "__main__":  # pragma: no cover - the worker entry point
    sys.exit(main(json.loads(sys.argv[1])))
