"""Test-side helpers shared by the live group tests (assignment, mixed Java/Python group).

:class:`MemberProcess` is a group member in a subprocess that prints one JSON event per line on
stdout (written by :func:`event_writer`) and takes commands (``close``, ``recover``) on stdin; the
member side of kafka-python workers is ``kafka_python_member``, of confluent ones
``confluent_member``. :func:`create_ready_topic` creates a topic and waits until every partition has
a leader (CreateTopics only says the controller accepted it).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import IO, Any

Json = dict[str, Any]


def event_writer(name: str) -> Callable[[Json], None]:
    """The member side: ``emit(event)`` prints ``event`` as one JSON line on stdout, stamped with the
    time and the member's ``name`` (thread-safe: listeners and the poll loop both report)."""
    lock = threading.Lock()

    def emit(event: Json) -> None:
        event["t"] = time.time()
        event["name"] = name
        with lock:
            sys.stdout.write(json.dumps(event) + "\n")
            sys.stdout.flush()

    return emit


class MemberProcess:
    """A member subprocess and the events it reported, read on a background thread."""

    def __init__(self, argv: list[str], *, stderr: int | IO[Any]) -> None:
        self.events: list[Json] = []
        self._lock = threading.Lock()
        self.started_at = time.time()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                self.events.append(event)

    def snapshot(self) -> list[Json]:
        with self._lock:
            return list(self.events)

    def last(self, kind: str) -> Json | None:
        return next((e for e in reversed(self.snapshot()) if e["ev"] == kind), None)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, command: str) -> None:
        """Write one command line; a member that already exited is not an error."""
        if self.alive() and self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.write(command + "\n")
                self.proc.stdin.flush()

    def recover(self) -> None:
        """Tell the worker to replace its consumer by a new one (it fell out of the group)."""
        self.send("recover")

    def recoveries(self) -> int:
        """Recoveries so far: the worker's own rejoins (``unstick``) and consumers replaced."""
        return sum(1 for e in self.snapshot() if e["ev"] in ("unstick", "recreate"))

    def close(self, timeout: float = 20.0) -> None:
        """Graceful close (the member sends LeaveGroup); SIGKILL if it does not exit in time."""
        self.send("close")
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """SIGKILL: no LeaveGroup, the broker notices only after the session timeout."""
        if self.alive():
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)


def wait_until(predicate: Callable[[], Any], timeout: float, what: str, step: float = 0.1) -> Any:
    """Poll ``predicate`` until it returns something truthy (returned), or fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.1f}s waiting for {what}")
        time.sleep(step)


def produce_queued(producer: Any, topic: str, wait_s: float = 0.1, **fields: Any) -> None:
    """``producer.produce(topic, **fields)`` for a confluent-kafka producer, serving delivery reports while
    its local queue is full (BufferError) until there is room: no record is dropped for want of space."""
    while True:
        try:
            producer.produce(topic, **fields)
            return
        except BufferError:
            producer.poll(wait_s)


def create_ready_topic(admin: Any, prefix: str, partitions: int, replication_factor: int) -> str:
    """Create ``<prefix>-<random>`` through kafka-python's admin client; return its name once every
    partition has a leader and every broker lists it (the harness's own waits)."""
    from kafka.admin import NewTopic

    from kafka_placement.testing.topics import wait_for_every_broker, wait_for_leaders

    name = f"{prefix}-{uuid.uuid4().hex[:10]}"
    admin.create_topics([NewTopic(name, partitions, replication_factor)])
    deadline = time.monotonic() + 30
    wait_for_leaders(admin, name, partitions, deadline=deadline)
    wait_for_every_broker(admin, name, partitions, deadline=deadline)
    return name


def create_filled_topic(
    bootstrap: str, prefix: str, partitions: int, records: int, *, by_key: bool = False
) -> str:
    """A ready topic (:func:`create_ready_topic`, replication 2) holding ``records`` records keyed
    ``k<i>``, each acknowledged: placed in turn on each partition, or, ``by_key``, where librdkafka's
    ``murmur2_random`` (Java's partitioner) puts its key."""
    from confluent_kafka import Producer
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id=prefix)
    try:
        topic = create_ready_topic(admin, prefix, partitions, 2)
    finally:
        admin.close()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "partitioner": "murmur2_random"})
    for i in range(records):
        placed = {} if by_key else {"partition": i % partitions}
        produce_queued(producer, topic, key=f"k{i}".encode(), value=b"v", **placed)
    assert producer.flush(60) == 0
    return topic
