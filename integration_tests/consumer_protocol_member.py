"""A confluent-kafka failover member on the consumer group protocol (KIP-848), for the live tests (run as
``python consumer_protocol_member.py '<json config>'``; this directory is ``sys.path[0]``).

Its settings come from :func:`kafka_placement.clients.consumer_protocol.confluent_failover_config` and it is
built through our :class:`kafka_placement.clients.confluent.Consumer`, which hands such a config to plain
librdkafka (the broker's failover assignor decides). Prints one JSON event per line: ``ready``,
``assignment`` (on every change), ``recs`` (``[partition, offset, key]``), ``committed``, ``closing`` (the
clean close starts), ``closed``.
Commits synchronously every 0.5 s and in ``on_revoke``. Reads ``close`` on stdin.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from kafka_placement.member_commands import watch_stdin
from member_process import Json, event_writer  # this directory is sys.path[0] of a member


def main(config: Json) -> int:
    from confluent_kafka import KafkaException

    from kafka_placement.clients.confluent import Consumer
    from kafka_placement.clients.consumer_protocol import confluent_failover_config

    emit = event_writer(config["name"])
    closing = watch_stdin()
    base = {
        "bootstrap.servers": config["bootstrap"],
        "group.id": config["group"],
        "client.id": config["name"],
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "topic.metadata.refresh.interval.ms": 5000,
    }
    consumer = Consumer.for_consumer_protocol(
        confluent_failover_config(config["priority"], config.get("rack"), base)
    )
    pending = [False]

    def commit(why: str) -> None:
        try:
            consumer.commit(asynchronous=False)
        except KafkaException as exc:  # _NO_OFFSET: nothing consumed since the last commit
            emit({"ev": "commit-nothing", "why": why, "error": str(exc)})
            return
        pending[0] = False
        emit({"ev": "committed", "why": why})

    def on_revoke(c: Any, partitions: list[Any]) -> None:
        if partitions and pending[0]:
            commit("revoke")

    consumer.subscribe([config["topic"]], on_revoke=on_revoke)
    emit({"ev": "ready"})
    last: list[int] | None = None
    next_commit = time.monotonic()
    while not closing.is_set():
        msgs = consumer.consume(500, 0.1)
        items = [[m.partition(), m.offset(), (m.key() or b"").decode()] for m in msgs if m.error() is None]
        if items:
            emit({"ev": "recs", "items": items})
            pending[0] = True
        if pending[0] and time.monotonic() >= next_commit:
            next_commit = time.monotonic() + 0.5
            commit("periodic")
        owned = sorted(tp.partition for tp in consumer.assignment())
        if owned != last:
            last = owned
            emit({"ev": "assignment", "parts": owned, "member_id": consumer.memberid()})
    emit({"ev": "closing"})  # the clean close starts now (commit, revoke, leave)
    if pending[0]:
        commit("close")
    consumer.close()
    emit({"ev": "closed"})
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
