"""An aiokafka group member of the live tests, run as ``python aiokafka_member.py '<json config>'`` (this
directory is ``sys.path[0]``): an ``AIOKafkaConsumer`` with our aiokafka ``FailoverAssignor``.

Config: bootstrap, group, name, topics, priority, and optionally migration_ready, session_timeout_ms.
Prints one JSON event per line: ``ready``, ``assignment`` (``parts`` as ``[topic, partition]``, on every
change), ``recs`` (``[partition, offset]``; committed after each batch), ``closed``. Reads ``close`` on stdin.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from kafka_placement.member_commands import watch_stdin
from member_process import Json, event_writer  # this directory is sys.path[0] of a member


async def run(config: Json) -> int:
    from aiokafka import AIOKafkaConsumer

    from kafka_placement.clients.aiokafka import FailoverAssignor

    emit = event_writer(config["name"])
    closing = watch_stdin()
    assignor = FailoverAssignor(config.get("priority"), migration_ready=bool(config.get("migration_ready")))
    consumer = AIOKafkaConsumer(
        *config["topics"],
        bootstrap_servers=config["bootstrap"],
        group_id=config["group"],
        client_id=config["name"],
        partition_assignment_strategy=(assignor,),
        session_timeout_ms=int(config.get("session_timeout_ms", 6000)),
        heartbeat_interval_ms=1000,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    emit({"ev": "ready"})
    last: Any = None
    try:
        while not closing.is_set():
            batches = await consumer.getmany(timeout_ms=100)
            items = [[r.partition, r.offset] for records in batches.values() for r in records]
            if items:
                emit({"ev": "recs", "items": items})
                try:
                    await consumer.commit()
                except Exception as exc:  # a rebalance may be under way: committed with the next batch
                    emit({"ev": "commit-error", "error": repr(exc)})
            parts = sorted([tp.topic, tp.partition] for tp in consumer.assignment())
            if parts != last:
                last = parts
                emit({"ev": "assignment", "parts": parts, "member_id": consumer._coordinator.member_id})
    finally:
        await consumer.stop()
    emit({"ev": "closed"})
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(run(json.loads(sys.argv[1]))))
