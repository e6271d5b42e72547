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
went on without it (:func:`~kafka_placement.soak.member_events.watch_membership`). ``close`` on stdin
leaves the group and ends it. The kafka-python member is here; the confluent ones are in
:mod:`~kafka_placement.soak.confluent_member`.

The ``generation`` of an ownership is the member's own count of its assignments (not Kafka's generation
id, which kafka-python and librdkafka expose differently).
"""

from __future__ import annotations

import faulthandler
import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from kafka_placement.member_commands import watch_stdin
from kafka_placement.soak.bootstrap_retry import built_when_reachable
from kafka_placement.soak.confluent_member import run_confluent, run_confluent_consumer_protocol
from kafka_placement.soak.events import Committed, Consumed, Event, SessionLost, dump_event
from kafka_placement.soak.load import record_identity
from kafka_placement.soak.member_events import REBALANCE_TIMEOUT_MS, OwnershipLog, watch_membership
from kafka_placement.soak.stacks import DUMP_SIGNAL


def main(config_path: str) -> int:  # pragma: no cover - runs in a child process (integration tests)
    config = json.loads(Path(config_path).read_text())
    # every thread's Python stack to stderr when the soak finds this member stuck (soak/stacks.py)
    faulthandler.register(DUMP_SIGNAL, all_threads=True)
    # and on a crash (SIGSEGV, SIGABRT...): seed 40's librdkafka segfault left no stack at all
    faulthandler.enable(all_threads=True)
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
        sent = time.time()
        try:
            consumer.commit()
        except Exception:  # a rebalance under way: the next owner re-reads (duplicates, not losses)
            return
        now = time.time()
        for tp, meta in (consumer._subscription.all_consumed_offsets() or {}).items():
            write(Committed(group, name, tp.partition, meta.offset, now, sent))

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
    consumer = built_when_reachable(
        lambda: KafkaConsumer(
            **config["connection"],
            group_id=group,
            client_id=name,
            partition_assignment_strategy=[
                FailoverAssignor(
                    priority=int(config["priority"]),
                    migration_ready=bool(config.get("migration_ready", False)),
                )
            ],
            session_timeout_ms=timeout_ms,
            heartbeat_interval_ms=max(300, timeout_ms // 6),
            max_poll_interval_ms=REBALANCE_TIMEOUT_MS,
            request_timeout_ms=10000,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        ),
        closing,
        name,
    )
    if consumer is None:  # told to close before the cluster could be reached
        return
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


if __name__ == "__main__":  # pragma: no cover
    if len(sys.argv) != 2:
        sys.exit("usage: python -m kafka_placement.soak.member_process CONFIG.json (internal)")
    sys.exit(main(sys.argv[1]))
