"""The soak's confluent members, run by :mod:`~kafka_placement.soak.member_process`: our classic
``Consumer`` (kafka-python's coordinator runs the group, librdkafka fetches) and librdkafka's own
consumer-protocol consumer. Each logs what it owns, consumes and commits as the kafka-python member does;
each replaces a consumer that failed for good, as an application that must not hang would: one whose
librdkafka raised a fatal error (:class:`FatalConsumerError`), or whose librdkafka stopped fetching a
partition it owns (:class:`~kafka_placement.errors.FetchStalledError`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka_placement.soak.bootstrap_retry import built_when_reachable
from kafka_placement.soak.events import Committed, Consumed, Event, SessionLost
from kafka_placement.soak.load import record_identity
from kafka_placement.soak.member_events import REBALANCE_TIMEOUT_MS, OwnershipLog, watch_membership

#: The soak's classic confluent members' fetch stall timeout (the library's default is 120 s): a partition
#: librdkafka never fetches is given up within it plus a statistics interval (5 s) and a rejoin, inside the
#: stuck-member bound (the session plus 60 s)
FETCH_STALL_TIMEOUT_S = 30.0
#: How long a replaced consumer's close() may take before the member goes on without it
CLOSE_TIMEOUT_S = 30.0


class FatalConsumerError(Exception):
    """librdkafka's consumer raised a fatal error: no call on it works again. Seen on the consumer protocol:
    a heartbeat answered GROUP_ID_NOT_FOUND after a migration step ("ConsumerGroupHeartbeat fatal error:
    Broker: The group id does not exist"); the member was dead for the run's last 25 minutes, and when the
    active member went silent nobody took over."""


def confluent_commit(
    consumer: Any,
    refused: tuple[type[BaseException], ...],
    write: Callable[[Event], None],
    group: str,
    name: str,
) -> None:
    """A synchronous commit of a confluent-kafka consumer, each accepted offset logged; ``refused``: the
    errors of a refused commit (fenced, or nothing to commit), which log nothing."""
    sent = time.time()
    try:
        done = consumer.commit(asynchronous=False)
    except refused:
        return
    now = time.time()
    for tp in done or ():
        if tp.error is None and tp.offset >= 0:
            write(Committed(group, name, tp.partition, tp.offset, now, sent))


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
    from kafka_placement.errors import CommitFailedError, FetchStalledError
    from kafka_placement.soak.rdkafka_stats import stats_settings

    group, name = config["group"], config["name"]
    owned = OwnershipLog(write, group, name)
    cooperative = config["strategy"] == "cooperative-sticky"
    assignor: Any = (
        "cooperative-sticky" if cooperative else FailoverAssignor(priority=int(config["priority"]))
    )
    timeout_ms = int(config["session_timeout_ms"])
    settings = {
        **config["connection"],
        "group.id": group,
        "client.id": name,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": timeout_ms,
        "heartbeat.interval.ms": max(300, timeout_ms // 6),
        "max.poll.interval.ms": REBALANCE_TIMEOUT_MS,
        **stats_settings(Path(config["log"]).with_suffix(".rdkstats")),
    }
    consumer: Any = None

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

    while True:  # a consumer whose librdkafka stopped fetching a partition is replaced, as an app would
        consumer = built_when_reachable(
            lambda: Consumer(settings, assignor=assignor, fetch_stall_timeout_s=FETCH_STALL_TIMEOUT_S),
            closing,
            name,
        )
        if consumer is None:  # told to close before the cluster could be reached
            break
        # our Consumer keeps its membership in kafka-python's coordinator (librdkafka only fetches)
        watch_membership(
            consumer._coordinator, lambda since: write(SessionLost(group, name, since, time.time())), closing
        )
        consumer.subscribe([config["topic"]], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
        try:
            consume_confluent(consumer, commit, write, group, name, closing)
        except FetchStalledError as exc:
            if replaced(consumer, exc, owned, closing):
                continue
        break
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
    from kafka_placement.testing.failover_plugin import HEARTBEAT_INTERVAL_MS

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
        guard = FencingGuard(
            int(config["session_timeout_ms"]),
            # the test cluster's group.consumer.heartbeat.interval.ms
            heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            on_suspect=on_suspect,
            on_cleared=on_cleared,
        )
        consumer = Consumer.for_consumer_protocol(
            confluent_failover_config(int(config["priority"]), base=base), fencing_guard=guard
        )
        consumer.subscribe([config["topic"]], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
        try:
            consume_confluent(consumer, commit, write, group, name, closing)
        except FatalConsumerError as exc:
            now = time.time()
            write(SessionLost(group, name, now - session_s, now))
            if replaced(consumer, exc, owned, closing):
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


def replaced(consumer: Any, failure: Exception, owned: OwnershipLog, closing: threading.Event) -> bool:
    """Give up a consumer that failed for good: log why, close it within :data:`CLOSE_TIMEOUT_S` (its
    librdkafka misbehaves, so its close may never return) and release what it owned. True when a new
    consumer is to join (the member is not closing)."""
    again = not closing.is_set()
    logging.getLogger(__name__).warning("%s: %s", failure, "a new consumer joins" if again else "closing")
    close_within(consumer, CLOSE_TIMEOUT_S)
    owned.set(())
    return again


def close_within(consumer: Any, timeout_s: float) -> bool:
    """Close ``consumer`` on a thread of its own, waiting at most ``timeout_s``: a consumer being replaced
    because its librdkafka misbehaves must not hang the member. True when the close returned."""
    done = threading.Event()

    def close() -> None:
        try:
            consumer.close()
        except Exception as exc:  # a close that fails leaves nothing to do: the member goes on
            logging.getLogger(__name__).warning("closing the replaced consumer failed: %r", exc)
        finally:
            done.set()

    threading.Thread(target=close, name="close-replaced-consumer", daemon=True).start()
    if not done.wait(timeout_s):
        logging.getLogger(__name__).warning("the replaced consumer did not close within %.0f s", timeout_s)
        return False
    return True


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
