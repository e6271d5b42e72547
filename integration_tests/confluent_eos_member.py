"""A transactional consume-transform-produce worker around
:class:`kafka_placement.clients.confluent.Consumer` (``FailoverAssignor``) and a transactional
``confluent_kafka.Producer``, for the live exactly-once test (run as
``python confluent_eos_member.py '<json config>'``; this directory is ``sys.path[0]``).

Each batch from ``consume()`` is one transaction: every input record is written to the output
topic as ``"<partition>:<offset>"`` (same key), the batch's next offsets go in with
``send_offsets_to_transaction(offsets, consumer.consumer_group_metadata())``, then
``commit_transaction()``. With ``pause_at_batch`` = n, the n-th batch is produced, its offsets and
the group metadata are taken, ``pause-point`` is printed, and the worker waits for ``go`` on stdin
(the test SIGSTOPs it there, past its session) before sending those offsets with that metadata.
With ``then_unfenced`` it then sends the same offsets in a new transaction with the metadata of
librdkafka's own consumer handle (``unfenced``: accepted or not) — the control.

Prints one JSON event per line: ``ready``, ``assignment``, ``txn-committed`` (offsets, generation,
member id), ``pause-point`` (what librdkafka reads from the metadata it will send), ``refused``
(the error confluent-kafka raised: code name, fatal, retriable, txn_requires_abort), ``aborted``,
``committed-after-pause`` (the broker did NOT refuse), ``metadata-refused`` (our Consumer refused
to give metadata: not in a generation), ``closed``. Reads ``go`` and ``close`` on stdin.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

from kafka_placement.member_commands import watch_stdin
from member_process import Json, event_writer  # this directory is sys.path[0] of a member


def main(config: Json) -> int:
    from confluent_kafka import KafkaException, Producer, TopicPartition

    from kafka_placement.clients.confluent import Consumer, FailoverAssignor
    from kafka_placement.clients.confluent.consumer_group_metadata import read_group_metadata
    from kafka_placement.errors import CommitFailedError

    emit = event_writer(config["name"])
    go = threading.Event()
    closing = watch_stdin(lambda word: go.set() if word == "go" else None)
    # transaction.timeout.ms well past the test's pause: the broker must not abort the zombie's
    # transaction (and fence its producer epoch) before it answers with the group's verdict
    producer = Producer(
        {
            "bootstrap.servers": config["bootstrap"],
            "linger.ms": 5,
            "transactional.id": config["transactional_id"],
            "transaction.timeout.ms": 300000,
            "client.id": f"{config['name']}-producer",
        }
    )
    producer.init_transactions(60)
    consumer = Consumer(
        {
            "bootstrap.servers": config["bootstrap"],
            "group.id": config["group"],
            "client.id": config["name"],
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "session.timeout.ms": config["session_timeout_ms"],
            "heartbeat.interval.ms": 1000,
        },
        assignor=FailoverAssignor(priority=config["priority"]),
    )
    in_txn = False

    def describe(exc: KafkaException) -> Json:
        err = exc.args[0]
        return {
            "code": err.name(),
            "str": err.str(),
            "fatal": err.fatal(),
            "retriable": err.retriable(),
            "txn_requires_abort": err.txn_requires_abort(),
        }

    def abort(why: str, rewind: bool = False) -> None:
        nonlocal in_txn
        try:
            producer.abort_transaction(60)
            emit({"ev": "aborted", "why": why})
        except KafkaException as exc:
            emit({"ev": "abort-failed", "why": why, **describe(exc)})
        in_txn = False
        if rewind:  # the aborted batch is consumed again (its records are not in the output)
            for p, o in batch_start.items():
                consumer.seek(TopicPartition(config["input"], p, o))
        batch_start.clear()

    def send_and_commit(offsets: list[Any], metadata: bytes) -> None:
        nonlocal in_txn
        producer.send_offsets_to_transaction(offsets, metadata, 60)
        producer.commit_transaction(60)
        in_txn = False
        group = read_group_metadata(metadata)
        emit(
            {
                "ev": "txn-committed",
                "offsets": [[tp.partition, tp.offset] for tp in offsets],
                "generation": group.generation_id,
                "member_id": group.member_id,
            }
        )

    pending: dict[int, int] = {}  # partition -> next offset, for the open transaction
    batch_start: dict[int, int] = {}  # partition -> first offset in the open transaction

    def commit_open(why: str) -> None:
        if not in_txn:
            return
        try:
            send_and_commit(
                [TopicPartition(config["input"], p, o) for p, o in sorted(pending.items())],
                consumer.consumer_group_metadata(),
            )
            pending.clear()
        except (KafkaException, CommitFailedError) as exc:
            emit({"ev": "commit-failed", "why": why, "error": str(exc)})
            abort(why, rewind=why == "batch")
            pending.clear()
        batch_start.clear()

    def on_revoke(c: Any, partitions: list[Any]) -> None:
        commit_open("revoke")  # the generation is still this member's until the join completes
        emit({"ev": "revoke", "parts": sorted(tp.partition for tp in partitions)})

    def on_lost(c: Any, partitions: list[Any]) -> None:
        if in_txn:
            abort("lost")
            pending.clear()
        emit({"ev": "lost", "parts": sorted(tp.partition for tp in partitions)})

    consumer.subscribe([config["input"]], on_revoke=on_revoke, on_lost=on_lost)
    emit({"ev": "ready"})
    batches = 0
    last: list[int] | None = None
    while not closing.is_set():
        msgs = [m for m in consumer.consume(100, 0.2) if m.error() is None]
        owned = sorted(tp.partition for tp in consumer.assignment())
        if owned != last:
            last = owned
            emit({"ev": "assignment", "parts": owned})
        if not msgs:
            continue
        if not in_txn:
            producer.begin_transaction()
            in_txn = True
        for m in msgs:
            producer.produce(config["output"], key=m.key(), value=f"{m.partition()}:{m.offset()}".encode())
            pending[m.partition()] = m.offset() + 1
            batch_start.setdefault(m.partition(), m.offset())
        batches += 1
        if batches == config.get("pause_at_batch"):
            producer.flush(60)  # the batch's records are in the open transaction on the brokers
            offsets = [TopicPartition(config["input"], p, o) for p, o in sorted(pending.items())]
            metadata = consumer.consumer_group_metadata()
            carried = read_group_metadata(metadata)
            emit(
                {
                    "ev": "pause-point",
                    "records": len(msgs),
                    "generation": carried.generation_id,
                    "offsets": [[tp.partition, tp.offset] for tp in offsets],
                    "member_id": carried.member_id,
                    "group": carried.group_id,
                    "coordinator_generation": consumer.group_metadata().generation_id,
                    "coordinator_member_id": consumer.group_metadata().member_id,
                }
            )
            # SIGSTOPped here by the test, past the session timeout, then SIGCONTed; "go" goes on
            while not go.wait(0.1) and not closing.is_set():
                pass
            try:
                send_and_commit(offsets, metadata)
                emit({"ev": "committed-after-pause"})
            except KafkaException as exc:
                emit({"ev": "refused", **describe(exc)})
                abort("refused")
            pending.clear()
            if config.get("then_unfenced"):
                # the control: the same offsets with librdkafka's own metadata for this group —
                # its consumer handle never joined, so generation -1 and no member id
                unfenced = consumer._rk.consumer_group_metadata()
                carried = read_group_metadata(unfenced)
                producer.begin_transaction()
                try:
                    send_and_commit(offsets, unfenced)
                    emit(
                        {
                            "ev": "unfenced",
                            "accepted": True,
                            "generation": carried.generation_id,
                            "member_id": carried.member_id,
                        }
                    )
                except KafkaException as exc:
                    emit(
                        {
                            "ev": "unfenced",
                            "accepted": False,
                            "generation": carried.generation_id,
                            **describe(exc),
                        }
                    )
                    abort("unfenced refused")
            break  # the zombie stops here; the test reads the output
        commit_open("batch")
    consumer.close()
    emit({"ev": "closed"})
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
