"""Steady keyed load and group settings shared by the live failover tests (this directory is on sys.path).

:class:`KeyedProducer` produces ``k<i>`` records at a steady rate on a thread and remembers every record the
broker acknowledged; :func:`set_group_session_timeout` gives one consumer-protocol group its own session
timeout (a group config, Kafka 4.0+) and waits until the brokers answer it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from member_process import produce_queued


class KeyedProducer:
    """Produces ``k<i>`` records at ``rate_per_s`` on a thread until ``records`` were sent or ``finish()``;
    ``finish(top_up=True)`` sends the rest up to ``records`` first, then flushes. ``delivered`` holds the
    (partition, offset) of every acknowledged record."""

    def __init__(self, bootstrap: str, topic: str, *, records: int, rate_per_s: float) -> None:
        from confluent_kafka import Producer

        self.topic = topic
        self.records = records
        self.rate_per_s = rate_per_s
        self.delivered: set[tuple[int, int]] = set()
        self.errors: list[str] = []
        # idempotent: a retried batch under load must not write a record twice (it would look invented)
        self._producer = Producer(
            {"bootstrap.servers": bootstrap, "linger.ms": 20, "enable.idempotence": True}
        )
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is not None:
            self.errors.append(str(err))
        else:
            self.delivered.add((msg.partition(), msg.offset()))

    def _send(self, count: int) -> None:
        for _ in range(count):
            if self.sent >= self.records:
                return
            produce_queued(
                self._producer,
                self.topic,
                0.05,
                key=f"k{self.sent}".encode(),
                value=b"v",
                on_delivery=self._on_delivery,
            )
            self.sent += 1
        self._producer.poll(0)

    def _run(self) -> None:
        started = time.monotonic()
        while not self._stop.is_set() and self.sent < self.records:
            due = int((time.monotonic() - started) * self.rate_per_s)
            self._send(max(0, due - self.sent))
            time.sleep(0.02)

    def finish(self, *, top_up: bool = True) -> None:
        self._stop.set()
        self._thread.join(30)
        if top_up:
            self._send(self.records - self.sent)
        assert self._producer.flush(60) == 0, "records still in flight after 60 s"


def set_group_session_timeout(bootstrap: str, group: str, session_ms: int) -> None:
    """A group-level config (Kafka 4.0+): the broker applies it to the group's consumer-protocol members."""
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    entry = ConfigEntry(
        "consumer.session.timeout.ms", str(session_ms), incremental_operation=AlterConfigOpType.SET
    )
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[entry])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(60)
    # the change reaches each broker through the metadata log: a broker that has not applied it yet
    # still answers the default (run 18a: "6000" right after the SET) — read until it is seen three
    # times running (the reads go to whichever broker the client picks), at most 30 s
    seen, deadline, configs = 0, time.monotonic() + 30, None
    while seen < 3 and time.monotonic() < deadline:
        described = admin.describe_configs([ConfigResource(ResourceType.GROUP, group)])
        configs = next(iter(described.values())).result(60)
        seen = seen + 1 if configs["consumer.session.timeout.ms"].value == str(session_ms) else 0
        time.sleep(0.2)
    assert seen == 3, configs
