"""A plain confluent-kafka consumer on Kafka's consumer group protocol (KIP-848,
``group.protocol=consumer``) for the live tests: ``python plain_consumer_protocol_member.py '<json config>'``
(this directory is ``sys.path[0]``).

No kafka-placement code runs in it: it is what a user's ordinary consumer does. Prints one JSON
event per line: ``ready``, ``assignment`` (partitions owned, on every change), ``error`` (every error
librdkafka reports: ``error_cb`` and errors returned by ``poll``, with code name and text),
``closed``. Reads ``close`` on stdin. ``config``: bootstrap, group, name, topics, and optionally
``conf`` (more librdkafka settings, e.g. ``client.rack``, ``group.remote.assignor``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from kafka_placement.member_commands import watch_stdin
from member_process import Json, event_writer  # this directory is sys.path[0] of a member


def main(config: Json) -> int:
    from confluent_kafka import Consumer, KafkaError

    emit = event_writer(config["name"])
    closing = watch_stdin()

    def report(error: Any, where: str) -> None:
        emit(
            {"ev": "error", "where": where, "code": error.name(), "fatal": error.fatal(), "text": error.str()}
        )

    conf: Json = {
        "bootstrap.servers": config["bootstrap"],
        "group.id": config["group"],
        "client.id": config["name"],
        "group.protocol": "consumer",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "error_cb": lambda error: report(error, "error_cb"),
    }
    conf.update(config.get("conf", {}))
    consumer = Consumer(conf)
    consumer.subscribe(config["topics"])
    emit({"ev": "ready"})
    last: list[int] | None = None
    while not closing.is_set():
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is not None and msg.error().code() != KafkaError._PARTITION_EOF:
            report(msg.error(), "poll")
        owned = sorted(tp.partition for tp in consumer.assignment())
        if owned != last:
            last = owned
            emit({"ev": "assignment", "parts": owned, "member_id": consumer.memberid()})
    consumer.close()
    emit({"ev": "closed"})
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
