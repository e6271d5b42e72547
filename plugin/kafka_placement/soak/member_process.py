"""One soak group member, run as a child process: ``python -m kafka_placement.soak.member_process CONFIG``.

``CONFIG`` is a private JSON file (mode 0600: it holds the connection, secrets included) with ``client``
(``kafka-python``, ``confluent`` — our ``Consumer`` on the classic protocol — or ``confluent-consumer`` —
confluent-kafka on the consumer protocol, the broker's failover assignor deciding), ``strategy``
(``failover`` or ``cooperative-sticky``), ``priority``,
``group``, ``name``, ``topic``, ``session_timeout_ms``, ``connection`` (the client's keyword settings) and
``log`` (the JSON-lines file it appends :mod:`~kafka_placement.soak.events` to), and ``migration_ready``
(a kafka-python failover member ready for the move to the consumer protocol). It logs each change of
what it owns from inside the rebalance callbacks (so a release is stamped before the next owner can
acquire), every record it consumed, and every commit the broker accepted (synchronous, after each batch
and on revocation: at-least-once), and — as a ``session-lost`` event — each time it learns that the group
went on without it (:func:`watch_membership`). ``close`` on stdin leaves the group and ends it.

The ``generation`` of an ownership is the member's own count of its assignments (not Kafka's generation
id, which kafka-python and librdkafka expose differently).
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from kafka_placement.member_commands import watch_stdin
from kafka_placement.soak.events import Committed, Consumed, Event, Ownership, SessionLost, dump_event
from kafka_placement.soak.load import record_identity
from kafka_placement.soak.stacks import DUMP_SIGNAL

#: Every classic member's ``max.poll.interval.ms``, which is also its rebalance timeout: how long the
#: coordinator waits for members to rejoin, and (plus 5 s) how long a member waits for a JoinGroup
#: answer, in Java and kafka-python alike. At Kafka's default (300 s) one JoinGroup answer that never
#: came (its coordinator unloaded the group during the rebalance) left a group without a consumer for
#: 283 s in a 30-minute run (docs/reliability.md, session 25). The members poll every 0.2 s.
REBALANCE_TIMEOUT_MS = 30_000


class FatalConsumerError(Exception):
    """librdkafka's consumer raised a fatal error: no call on it works again. Seen on the consumer protocol:
    a heartbeat answered GROUP_ID_NOT_FOUND after a migration step ("ConsumerGroupHeartbeat fatal error:
    Broker: The group id does not exist"); the member was dead for the run's last 25 minutes, and when the
    active member went silent nobody took over."""


class OwnershipLog:
    """What a member holds, as :class:`Ownership` intervals written to its log."""

    def __init__(self, write: Callable[[Event], None], group: str, member: str) -> None:
        self._write, self._group, self._member = write, group, member
        self.owned: frozenset[int] = frozenset()
        self._current: Ownership | None = None
        self._count = 0

    def set(self, partitions: Iterable[int]) -> None:
        new = frozenset(partitions)
        if new == self.owned:
            return
        now = time.time()
        if self._current is not None:
            self._write(replace(self._current, released=now))
            self._current = None
        self.owned = new
        if new:
            self._count += 1
            self._current = Ownership(self._group, self._member, self._count, tuple(sorted(new)), now)
            self._write(self._current)


def watch_membership(coordinator: Any, on_ended: Callable[[float], None], closing: threading.Event) -> None:
    """Call ``on_ended(since)`` each time ``coordinator`` (kafka-python's ``ConsumerCoordinator``, also
    the one under our confluent ``Consumer``) learns that its membership ended; ``since`` is the wall
    time of its last successful heartbeat (or of its join, if none succeeded since).

    kafka-python resets its generation at exactly those moments — a heartbeat, JoinGroup, SyncGroup or
    OffsetCommit answered ``UNKNOWN_MEMBER_ID`` (the coordinator expired the session: "member_id was not
    recognized") or ``ILLEGAL_GENERATION`` (the group rebalanced without it), and our confluent
    ``Consumer`` when no heartbeat succeeded for ``session.timeout.ms`` (librdkafka's rule) — and also
    when it leaves the group on close, or takes the member id a broker hands out on its first join;
    those two are no loss. The rebalance listeners alone would miss some: a member whose rejoin the
    join watchdog asked for revokes its partitions (``on_partitions_revoked``) before the JoinGroup
    answer says it was already gone, so ``on_partitions_lost`` never runs (session 20's 30-minute
    run, docs/reliability.md)."""
    original = coordinator.reset_generation
    monotonic_to_wall = time.time() - time.monotonic()

    def reset_generation(*args: Any, **kwargs: Any) -> Any:
        generation = coordinator._generation
        was_member = generation.generation_id >= 0 and generation.has_member_id()
        beat = coordinator.heartbeat
        # kafka-python's heartbeat times are time.monotonic(); the logs' are time.time()
        since = max(beat.last_receive, beat.last_reset) + monotonic_to_wall
        result = original(*args, **kwargs)
        if was_member and not closing.is_set():
            on_ended(min(since, time.time()))
        return result

    coordinator.reset_generation = reset_generation


def main(config_path: str) -> int:  # pragma: no cover - runs in a child process (integration tests)
    config = json.loads(Path(config_path).read_text())
    # every thread's Python stack to stderr when the soak finds this member stuck (soak/stacks.py)
    faulthandler.register(DUMP_SIGNAL, all_threads=True)
    # the clients' warnings (and ours) on stderr with their time, to set beside the faults' times
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    log: IO[str] = open(config["log"], "a", buffering=1)  # noqa: SIM115 - lives as long as the process
    lock = threading.Lock()

    def write(event: Event) -> None:
        with lock:
            log.write(dump_event(event) + "\n")

    closing = watch_stdin()
    run = {
        "kafka-python": run_kafka_python,
        "confluent": run_confluent,
        "confluent-consumer": run_confluent_consumer_protocol,
    }[config["client"]]
    run(config, write, closing)
    log.close()
    return 0


def run_kafka_python(
    config: dict[str, Any], write: Callable[[Event], None], closing: threading.Event
) -> None:
    from kafka.consumer.subscription_state import ConsumerRebalanceListener
    from kafka.errors import KafkaError

    from kafka_placement.clients.kafka_python import FailoverAssignor, KafkaConsumer

    group, name = config["group"], config["name"]
    owned = OwnershipLog(write, group, name)

    def commit(consumer: Any) -> None:
        try:
            consumer.commit()
        except Exception:  # a rebalance under way: the next owner re-reads (duplicates, not losses)
            return
        now = time.time()
        for tp, meta in (consumer._subscription.all_consumed_offsets() or {}).items():
            write(Committed(group, name, tp.partition, meta.offset, now))

    consumer: Any = None

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        def on_partitions_revoked(self, revoked: Any) -> None:
            commit(consumer)
            owned.set(owned.owned - {tp.partition for tp in revoked})

        def on_partitions_lost(self, lost: Any) -> None:  # KIP-429: already someone else's, no commit
            owned.set(owned.owned - {tp.partition for tp in lost})

        def on_partitions_assigned(self, assigned: Any) -> None:
            owned.set(tp.partition for tp in assigned)

    timeout_ms = int(config["session_timeout_ms"])
    consumer = KafkaConsumer(
        **config["connection"],
        group_id=group,
        client_id=name,
        partition_assignment_strategy=[
            FailoverAssignor(
                priority=int(config["priority"]), migration_ready=bool(config.get("migration_ready", False))
            )
        ],
        session_timeout_ms=timeout_ms,
        heartbeat_interval_ms=max(300, timeout_ms // 6),
        max_poll_interval_ms=REBALANCE_TIMEOUT_MS,
        request_timeout_ms=10000,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    watch_membership(
        consumer._coordinator, lambda since: write(SessionLost(group, name, since, time.time())), closing
    )

    def on_suspect(partitions: frozenset[Any], silent_s: float) -> None:
        # our KafkaConsumer stopped consuming: the membership may have ended at the last heartbeat answer
        now = time.time()
        write(SessionLost(group, name, now - silent_s, now))
        owned.set(owned.owned - {tp.partition for tp in partitions})

    def on_cleared(partitions: frozenset[Any]) -> None:
        owned.set(owned.owned | {tp.partition for tp in partitions})

    if consumer.session_guard is not None:
        consumer.session_guard.on_suspect, consumer.session_guard.on_cleared = on_suspect, on_cleared
    consumer.subscribe([config["topic"]], listener=Listener())
    while not closing.is_set():
        try:
            batches = consumer.poll(timeout_ms=200)
        except KafkaError as exc:
            # kafka-python 3.0.12's fetcher raises e.g. UnknownBrokerIdError for a broker dropped from its
            # metadata mid-fetch (a broker killed); the next poll refreshes and goes on, as an app would
            logging.getLogger(__name__).warning("poll failed: %r; polling again", exc)
            time.sleep(0.2)
            continue
        now = time.time()
        for tp, records in batches.items():
            for r in records:
                producer, sequence = record_identity(r.value)
                write(Consumed(group, name, tp.partition, r.offset, producer, sequence, now))
        if batches:
            commit(consumer)
    commit(consumer)
    owned.set(())
    consumer.close()


def confluent_commit(
    consumer: Any,
    refused: tuple[type[BaseException], ...],
    write: Callable[[Event], None],
    group: str,
    name: str,
) -> None:
    """A synchronous commit of a confluent-kafka consumer, each accepted offset logged; ``refused``: the
    errors of a refused commit (fenced, or nothing to commit), which log nothing."""
    try:
        done = consumer.commit(asynchronous=False)
    except refused:
        return
    now = time.time()
    for tp in done or ():
        if tp.error is None and tp.offset >= 0:
            write(Committed(group, name, tp.partition, tp.offset, now))


def committed_logger(
    write: Callable[[Event], None], group: str, name: str
) -> Callable[[Any, list[Any]], None]:
    """An ``on_commit`` callback that logs each offset the broker accepted (a refused request, or a
    refused partition, logs nothing): how an asynchronous commit's outcome reaches the soak's log."""

    def on_commit(error: Any, partitions: list[Any]) -> None:
        if error is not None:
            return
        now = time.time()
        for tp in partitions or ():
            if tp.error is None and tp.offset >= 0:
                write(Committed(group, name, tp.partition, tp.offset, now))

    return on_commit


def run_confluent(config: dict[str, Any], write: Callable[[Event], None], closing: threading.Event) -> None:
    from confluent_kafka import KafkaException

    from kafka_placement.clients.confluent.consumer import Consumer
    from kafka_placement.clients.kafka_python.assignors import FailoverAssignor
    from kafka_placement.errors import CommitFailedError
    from kafka_placement.soak.rdkafka_stats import stats_settings

    group, name = config["group"], config["name"]
    owned = OwnershipLog(write, group, name)
    cooperative = config["strategy"] == "cooperative-sticky"
    assignor: Any = (
        "cooperative-sticky" if cooperative else FailoverAssignor(priority=int(config["priority"]))
    )
    timeout_ms = int(config["session_timeout_ms"])
    consumer = Consumer(
        {
            **config["connection"],
            "group.id": group,
            "client.id": name,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": timeout_ms,
            "heartbeat.interval.ms": max(300, timeout_ms // 6),
            "max.poll.interval.ms": REBALANCE_TIMEOUT_MS,
            **stats_settings(Path(config["log"]).with_suffix(".rdkstats")),
        },
        assignor=assignor,
    )

    def commit() -> None:
        confluent_commit(consumer, (CommitFailedError, KafkaException), write, group, name)

    def on_assign(c: Any, partitions: list[Any]) -> None:
        new = {tp.partition for tp in partitions}
        owned.set(owned.owned | new if cooperative else new)

    def on_revoke(c: Any, partitions: list[Any]) -> None:
        commit()
        owned.set(owned.owned - {tp.partition for tp in partitions})

    def on_lost(c: Any, partitions: list[Any]) -> None:
        owned.set(owned.owned - {tp.partition for tp in partitions})

    # our Consumer keeps its membership in kafka-python's coordinator (librdkafka only fetches)
    watch_membership(
        consumer._coordinator, lambda since: write(SessionLost(group, name, since, time.time())), closing
    )
    consumer.subscribe([config["topic"]], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
    consume_confluent(consumer, commit, write, group, name, closing)
    owned.set(())


def run_confluent_consumer_protocol(
    config: dict[str, Any], write: Callable[[Event], None], closing: threading.Event
) -> None:
    """A failover member on the consumer protocol (KIP-848): settings from
    :func:`~kafka_placement.clients.consumer_protocol.confluent_failover_config` (our ``Consumer`` then is
    librdkafka's own). Its assignments arrive incrementally; the broker decides the session (no
    heartbeat of ours to watch: a fenced member's ``on_lost`` is its session-lost event, ``since`` one
    session timeout before it — the membership ended at least that long after its last heartbeat). Its
    :class:`~kafka_placement.clients.confluent.fencing_guard.FencingGuard` pauses the partitions when the
    coordinator has been silent for about a session: that is a session-lost event too (``since`` the
    coordinator's last answer), and the partitions are released until the guard resumes them.

    It commits asynchronously (the accepted offsets logged by ``on_commit``, served by ``consume()``):
    librdkafka's synchronous commit has no timeout, and one that cannot reach the coordinator never
    returns — seen twice in 30-minute runs, the member hung for good (docs/reliability.md, sessions 22
    and 23; confluent-kafka-python#1801). What an application that must not hang does."""
    from confluent_kafka import KafkaException

    from kafka_placement.clients.confluent.consumer import Consumer
    from kafka_placement.clients.confluent.fencing_guard import FencingGuard
    from kafka_placement.clients.consumer_protocol import confluent_failover_config
    from kafka_placement.soak.rdkafka_stats import stats_settings

    group, name = config["group"], config["name"]
    owned = OwnershipLog(write, group, name)
    session_s = int(config["session_timeout_ms"]) / 1000
    base = {
        **config["connection"],
        "group.id": group,
        "client.id": name,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "on_commit": committed_logger(write, group, name),
        **stats_settings(Path(config["log"]).with_suffix(".rdkstats")),
    }

    def on_suspect(partitions: list[Any]) -> None:
        # the guard stopped consuming: the membership may have ended at the coordinator's last answer
        now, last = time.time(), guard.silence.last_answer_at
        since = now - (time.monotonic() - last) if last is not None else now - session_s
        write(SessionLost(group, name, since, now))
        owned.set(owned.owned - {tp.partition for tp in partitions})

    def on_cleared(partitions: list[Any]) -> None:
        owned.set(owned.owned | {tp.partition for tp in partitions})

    def commit() -> None:
        with contextlib.suppress(KafkaException):  # nothing to commit (no offset stored)
            consumer.commit(asynchronous=True)

    def on_assign(c: Any, partitions: list[Any]) -> None:
        owned.set(owned.owned | {tp.partition for tp in partitions})

    def on_revoke(c: Any, partitions: list[Any]) -> None:
        commit()
        owned.set(owned.owned - {tp.partition for tp in partitions})

    def on_lost(c: Any, partitions: list[Any]) -> None:
        now = time.time()
        write(SessionLost(group, name, now - session_s, now))
        owned.set(owned.owned - {tp.partition for tp in partitions})

    while True:  # a consumer that failed for good is replaced: what an application that must not hang does
        guard = FencingGuard(int(config["session_timeout_ms"]), on_suspect=on_suspect, on_cleared=on_cleared)
        consumer = Consumer.for_consumer_protocol(
            confluent_failover_config(int(config["priority"]), base=base), fencing_guard=guard
        )
        consumer.subscribe([config["topic"]], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
        try:
            consume_confluent(consumer, commit, write, group, name, closing)
        except FatalConsumerError as exc:
            now = time.time()
            logging.getLogger(__name__).warning("%s: a new consumer joins", exc)
            write(SessionLost(group, name, now - session_s, now))
            owned.set(())
            with contextlib.suppress(Exception):
                consumer.close()
            if not closing.is_set():
                continue
        break
    owned.set(())


def is_fatal(error: Any) -> bool:
    """A librdkafka error after which its consumer never works again. librdkafka hands a consumer's fatal
    error to ``consume()`` as a message whose code is ``_FATAL`` (the cause is in its text, and in
    ``rd_kafka_fatal_error``), and confluent-kafka builds that message's error with ``fatal()`` False:
    asking only ``fatal()`` missed it, and a member whose heartbeat was answered GROUP_ID_NOT_FOUND
    polled a dead consumer for the run's last 22 minutes (docs/reliability.md, session 27)."""
    from confluent_kafka import KafkaError

    if not isinstance(error, KafkaError):
        return False
    return bool(error.fatal()) or error.code() == KafkaError._FATAL


def consume_confluent(
    consumer: Any,
    commit: Callable[[], None],
    write: Callable[[Event], None],
    group: str,
    name: str,
    closing: threading.Event,
) -> None:
    """A confluent member's loop, either protocol: log every record consumed (stamped when its batch
    arrived), commit after each batch that had one, and once more before the close. A fatal error
    (librdkafka's consumer is unusable from then on) raises :class:`FatalConsumerError`."""
    from confluent_kafka import KafkaException

    while not closing.is_set():
        try:
            messages = consumer.consume(500, 0.2)
        except KafkaException as exc:  # confluent-kafka raises a fatal error served as an error event
            if is_fatal(exc.args[0] if exc.args else None):
                raise FatalConsumerError(f"librdkafka's consumer failed for good: {exc}") from exc
            raise
        now = time.time()
        got = False
        for m in messages:
            error = m.error()
            if error is None:
                producer, sequence = record_identity(m.value())
                write(Consumed(group, name, m.partition(), m.offset(), producer, sequence, now))
                got = True
            elif is_fatal(error):
                raise FatalConsumerError(f"librdkafka's consumer failed for good: {error}")
        if got:
            commit()
    commit()
    consumer.close()


if __name__ == "__main__":  # pragma: no cover
    if len(sys.argv) != 2:
        sys.exit("usage: python -m kafka_placement.soak.member_process CONFIG.json (internal)")
    sys.exit(main(sys.argv[1]))
