"""A worker process around :class:`kafka_placement.clients.confluent.Consumer` for the live
tests (run as ``python confluent_member.py '<json config>'``; this directory is ``sys.path[0]``).

Prints one JSON event per line: ``ready``, ``assignment`` (partitions owned, on every change),
``recs`` (``[partition, offset, key]`` of each record delivered), ``committed`` (after every
successful synchronous commit, with the offsets), ``commit-ok``/``commit-failed`` (``on_commit``
results in the ``async-per-record`` commit mode), ``commit-refused``, ``revoke``/``assign``/``lost``
(the application callbacks), ``claim`` (with ``report_claims``), ``closed``. Reads ``close`` on stdin.
Commits synchronously every ``commit_every_s`` and in ``on_revoke`` (the usual at-least-once pattern).
"""

from __future__ import annotations

import faulthandler
import json
import signal
import sys
import time
from typing import Any

from kafka_placement.member_commands import watch_stdin
from member_process import Json, event_writer  # this directory is sys.path[0] of a member


def claims_reported(emit: Any) -> Any:
    """A ``CooperativeStickyAssignor`` that reports (``claim``) the owned partitions of every subscription
    it builds: what the member tells the leader it holds when it joins."""
    from kafka_placement.clients.confluent import CooperativeStickyAssignor

    assignor = CooperativeStickyAssignor()
    build = assignor.metadata

    def metadata(topics: Any) -> Any:
        subscription = build(topics)
        claimed = sorted(p for entry in subscription.owned_partitions for p in entry.partitions)
        emit({"ev": "claim", "parts": claimed})
        return subscription

    assignor.metadata = metadata  # kafka-python's coordinator calls the instance's metadata()
    return assignor


def main(config: Json) -> int:
    from confluent_kafka import KafkaException, TopicPartition

    from kafka_placement.clients.confluent import Consumer, FailoverAssignor
    from kafka_placement.errors import CommitFailedError

    emit = event_writer(config["name"])
    # every thread's stack on stderr when a test sends SIGUSR1 (Worker.diagnosis): what a member that
    # went silent was doing
    faulthandler.register(signal.SIGUSR1, all_threads=True)

    closing = watch_stdin()
    strategy = config["strategy"]
    ready = bool(config.get("migration_ready"))  # docs/migration.md
    assignor: Any = (
        FailoverAssignor(priority=config["priority"], migration_ready=ready)
        if strategy == "failover"
        else strategy
    )
    if isinstance(assignor, str) and "," in assignor:  # a list, e.g. Java's "cooperative-sticky,range"
        assignor = [name.strip() for name in assignor.split(",")]
    if config.get("report_claims"):  # cooperative-sticky: "claim" = each JoinGroup's owned partitions
        assignor = claims_reported(emit)
    conf: Json = {
        "bootstrap.servers": config["bootstrap"],
        "group.id": config["group"],
        "client.id": config["name"],
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": config.get("session_timeout_ms", 6000),
        "heartbeat.interval.ms": 1000,
    }
    conf.update(config.get("conf", {}))  # e.g. enable.auto.commit, group.instance.id, client.rack
    # "async-per-record": commit(msg, asynchronous=True) after every record; on_commit reports
    # each successful request as "commit-ok" (what the application was told is committed)
    per_record_async = config.get("commit_mode") == "async-per-record"
    manual_commits = not conf["enable.auto.commit"] and not per_record_async

    def on_commit(err: Any, partitions: list[Any]) -> None:
        if err is None:
            emit({"ev": "commit-ok", "offsets": [[tp.partition, tp.offset] for tp in partitions]})
        else:
            emit({"ev": "commit-failed", "error": str(err)})

    if per_record_async:
        conf["on_commit"] = on_commit
    consumer = Consumer(conf, assignor=assignor)

    def commit(why: str) -> None:
        try:
            done = consumer.commit(asynchronous=False)
        except CommitFailedError as exc:
            emit({"ev": "commit-refused", "why": why, "error": str(exc)})
            return
        except KafkaException as exc:  # _NO_OFFSET: nothing consumed since the partitions went
            emit({"ev": "commit-nothing", "why": why, "error": str(exc)})
            return
        emit({"ev": "committed", "why": why, "offsets": [[tp.partition, tp.offset] for tp in done]})

    def parts(partitions: list[Any]) -> list[int]:
        return sorted(tp.partition for tp in partitions)

    def on_assign(c: Any, partitions: list[Any]) -> None:
        emit({"ev": "assign", "parts": parts(partitions)})

    def on_revoke(c: Any, partitions: list[Any]) -> None:
        if partitions and manual_commits:
            commit("revoke")
        emit({"ev": "revoke", "parts": parts(partitions)})

    last_offsets: dict[int, int] = {}
    retry_after_lost: list[Any] = []

    def on_lost(c: Any, partitions: list[Any]) -> None:
        emit({"ev": "lost", "parts": parts(partitions)})
        # what a careless application does next: commit what it consumed; must be refused
        retry_after_lost[:] = [
            TopicPartition(tp.topic, tp.partition, last_offsets[tp.partition] + 1)
            for tp in partitions
            if tp.partition in last_offsets
        ]

    consumer.subscribe(config["topics"], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
    emit({"ev": "ready"})
    last: list[int] | None = None
    next_commit = time.monotonic() + config.get("commit_every_s", 0.5)
    pending = False
    while not closing.is_set():
        msgs = consumer.consume(500, 0.1)
        items = [[m.partition(), m.offset(), (m.key() or b"").decode()] for m in msgs if m.error() is None]
        if items:
            emit({"ev": "recs", "items": items})
            if per_record_async:
                for m in msgs:
                    if m.error() is None:
                        consumer.commit(m, asynchronous=True)
            pending = True
            for p, o, _ in items:
                last_offsets[p] = max(o, last_offsets.get(p, -1))
        if retry_after_lost:
            offsets, retry_after_lost[:] = list(retry_after_lost), []
            try:
                consumer.commit(offsets=offsets, asynchronous=False)
                emit(
                    {
                        "ev": "committed",
                        "why": "after-lost",
                        "offsets": [[tp.partition, tp.offset] for tp in offsets],
                    }
                )
            except CommitFailedError as exc:
                emit({"ev": "commit-refused", "why": "after-lost", "error": str(exc)})
        now = time.monotonic()
        if pending and manual_commits and now >= next_commit:
            next_commit = now + config.get("commit_every_s", 0.5)
            pending = False
            commit("periodic")
        owned = parts(consumer.assignment())
        if owned != last:
            last = owned
            emit({"ev": "assignment", "parts": owned, "member_id": consumer.memberid()})
    if pending and manual_commits:
        commit("close")
    consumer.close()
    emit({"ev": "closed"})
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
