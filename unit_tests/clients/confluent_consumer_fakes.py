"""Fake librdkafka and kafka-python clients for the confluent Consumer's unit tests (no broker), and
the helpers those tests share: a subscribed consumer with recording callbacks, a rebalance event
handed over as kafka-python's IO thread would. Tests call :func:`install_fakes` from an autouse
fixture."""

from __future__ import annotations

import inspect
from types import SimpleNamespace
from typing import Any

import confluent_kafka
import pytest
from kafka.coordinator.heartbeat import Heartbeat
from kafka.future import Future

from kafka_placement.clients.confluent import consumer as consumer_module
from kafka_placement.clients.confluent.thread_handoff import RebalanceEvent


class FakeRdKafka:
    def __init__(self, conf: dict[str, Any]) -> None:
        self.conf = conf
        self.calls: list[tuple[str, list[tuple[str, int, int]]]] = []
        self.positions: dict[tuple[str, int], int] = {}
        self.metadata_requests: list[str | None] = []  # list_topics(topic) calls: the topic, or None for all
        self.closed = False

    def _log(self, name: str, tps: list[Any] | None = None) -> None:
        self.calls.append((name, [(tp.topic, tp.partition, tp.offset) for tp in tps or []]))

    def assign(self, tps: list[Any]) -> None:
        self._log("assign", tps)

    def unassign(self) -> None:
        self._log("unassign")

    def incremental_assign(self, tps: list[Any]) -> None:
        self._log("incremental_assign", tps)

    def incremental_unassign(self, tps: list[Any]) -> None:
        self._log("incremental_unassign", tps)

    def poll(self, timeout: float) -> Any:
        return None

    def pause(self, tps: list[Any]) -> None:
        self._log("pause", tps)

    def resume(self, tps: list[Any]) -> None:
        self._log("resume", tps)

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        self.metadata_requests.append(topic)
        return None

    def consume(self, n: int, timeout: float) -> list[Any]:
        return []

    def position(self, tps: list[Any]) -> list[Any]:
        return [confluent_kafka.TopicPartition(tp.topic, tp.partition, self._at(tp)) for tp in tps]

    def _at(self, tp: Any) -> int:
        return self.positions.get((tp.topic, tp.partition), confluent_kafka.OFFSET_INVALID)

    def close(self) -> None:
        self.closed = True


class FakeCoordinator:
    def __init__(self) -> None:
        self._generation = SimpleNamespace(lost=False, is_lost=lambda: self._generation.lost)
        self._heartbeat_enabled = True
        self._join_task = None
        self.heartbeat = Heartbeat(group_id="g", session_timeout_ms=6000, heartbeat_interval_ms=1000)
        self.heartbeat.received_heartbeat()
        self.rejoin = False
        self.state = "stable"
        self.commits: list[dict[tuple[str, int], int]] = []
        self.commit_error: Exception | None = None
        self.resets = 0
        self.committed: dict[tuple[str, int], int] = {}
        self.fetches: list[list[tuple[str, int]]] = []
        self.fetch_error: Exception | None = None
        #: OffsetCommits wait for the test to answer them (``held``) instead of succeeding at once
        self.hold_commits = False
        self.held: list[Future] = []
        self.on_send: Any = None  # called as each OffsetCommit goes out

    def _invoke_completed_offset_commit_callbacks(self) -> None:
        pass

    def fetch_committed_offsets(self, partitions: Any, timeout_ms: Any = None) -> dict[Any, Any]:
        """The group's committed offsets (``self.committed``: (topic, partition) → offset; none: absent)."""
        self.fetches.append(sorted((tp.topic, tp.partition) for tp in partitions))
        if self.fetch_error is not None:
            raise self.fetch_error
        return {
            tp: SimpleNamespace(offset=self.committed[(tp.topic, tp.partition)])
            for tp in partitions
            if (tp.topic, tp.partition) in self.committed
        }

    def need_rejoin(self) -> bool:
        return self.rejoin

    def request_rejoin(self) -> None:
        self.rejoin = True

    def ensure_active_group_async(self, timeout_ms: Any) -> None:
        pass

    def poll_heartbeat(self) -> None:
        pass

    def rebalance_in_progress(self) -> bool:
        return False

    def reset_generation(self) -> None:
        self.resets += 1
        self._generation.lost = True

    def group_metadata(self) -> Any:
        lost = self._generation.lost
        return SimpleNamespace(
            generation_id=-1 if lost else 3, member_id="" if lost else "m-1", group_instance_id=None
        )

    def coordinator_unknown(self) -> bool:
        return False

    #: no coordinator address: every commit takes kafka-python's path (``_send_offset_commit_request``
    #: below), not the commit connection (commit_connection.py, tested on its own)
    coordinator_id = None
    group_id = "g"
    group_instance_id = None

    def generation_if_stable(self) -> Any:
        return None

    async def _send_offset_commit_request(self, offsets: dict[Any, Any]) -> None:
        if self.on_send is not None:
            self.on_send(offsets)
        if self.hold_commits:
            answer = Future()
            self.held.append(answer)
            await answer
        if self.commit_error is not None:
            raise self.commit_error
        self.commits.append({(tp.topic, tp.partition): om.offset for tp, om in offsets.items()})


async def _never_connects(node: Any, timeout_at: float | None = None) -> Any:
    raise AssertionError(f"the fake kafka-python connected to {node}")


class FakeKafkaConsumer:
    def __init__(self, **config: Any) -> None:
        self.config = config
        self._coordinator = FakeCoordinator()
        # _build_transport: what the TLS handshake bound wraps (the fake never connects)
        self._manager = SimpleNamespace(call_soon=self._call_soon, _build_transport=_never_connects)
        self.known_topics: set[str] = {"t"}
        self.metadata_requests = 0
        self._cluster = SimpleNamespace(
            request_update=self._request_update,
            partitions_for_topic=lambda t: {0} if t in self.known_topics else None,
        )
        self.joins: list[Future] = []
        self.io_tasks: list[Any] = []  # coroutines suspended on the IO thread
        self.defer_resets = False  # True: a generation reset waits for run_deferred()
        self.deferred: list[tuple[Any, Future]] = []
        self.closed = False
        #: what kafka-python's subscription holds from the last join ((topic, partition) pairs)
        self.assigned: set[tuple[str, int]] = set()
        self._subscription = SimpleNamespace(
            assigned_partitions=lambda: [
                SimpleNamespace(topic=t, partition=p) for t, p in sorted(self.assigned)
            ]
        )

    def assignment(self) -> set[Any]:
        """kafka.KafkaConsumer.assignment(): what the subscription holds now."""
        return set(self._subscription.assigned_partitions())

    def _call_soon(self, fn: Any, *args: Any) -> Future:
        future = Future()
        if fn == self._coordinator.ensure_active_group_async:
            self.joins.append(future)  # a join in flight until the test completes it
            return future
        if self.defer_resets and fn == self._coordinator.reset_generation:
            self.deferred.append((fn, future))  # the IO thread has not run it yet: run_deferred()
            return future
        result = fn(*args)  # completing a rebalance event or sending commits: the IO thread's work
        if inspect.iscoroutine(result):  # the commit sender: runs until it awaits a held commit
            self.io_tasks.append([result, None])
            self.step_io()
        return future.success(None)

    def run_deferred(self) -> None:
        """The IO thread runs what was deferred."""
        while self.deferred:
            fn, future = self.deferred.pop(0)
            fn()
            future.success(None)

    def step_io(self) -> None:
        """Resume the IO thread's coroutines whose awaited futures are done (kafka-python's
        futures are awaited by yielding themselves)."""
        for task in list(self.io_tasks):
            coroutine, awaited = task
            try:
                while awaited is None or awaited.is_done:
                    awaited = coroutine.send(None)
                task[1] = awaited
            except StopIteration:
                self.io_tasks.remove(task)

    def _request_update(self) -> Future:
        self.metadata_requests += 1
        return Future().success(None)  # a metadata response came (with known_topics)

    def subscribe(self, topics: Any = (), pattern: str | None = None, listener: Any = None) -> None:
        self.topics, self.pattern = topics, pattern
        self._coordinator.rejoin = True

    def close(self, autocommit: bool, timeout_ms: int) -> None:
        self.closed = True


def install_fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Consumer builds the fakes instead of librdkafka's and kafka-python's consumers."""
    monkeypatch.setattr(consumer_module.confluent_kafka, "Consumer", FakeRdKafka)
    monkeypatch.setattr(consumer_module, "KafkaConsumer", FakeKafkaConsumer)


CONF = {"bootstrap.servers": "127.0.0.1:1", "group.id": "g", "enable.auto.commit": False}


class App:
    """Application callbacks recording what they were given."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[int]]] = []

    def cb(self, name: str) -> Any:
        def callback(consumer: Any, partitions: list[Any]) -> None:
            assert all(tp.offset == confluent_kafka.OFFSET_INVALID for tp in partitions)
            self.seen.append((name, [tp.partition for tp in partitions]))

        return callback


def _make(
    assignor: Any = "range", conf: dict[str, Any] | None = None, lost_cb: bool = True
) -> tuple[Any, App]:
    consumer = consumer_module.Consumer({**CONF, **(conf or {})}, assignor=assignor)
    app = App()
    consumer.subscribe(
        ["t"],
        on_assign=app.cb("assign"),
        on_revoke=app.cb("revoke"),
        on_lost=app.cb("lost") if lost_cb else None,
    )
    return consumer, app


def _event(consumer: Any, kind: str, partitions: list[int]) -> RebalanceEvent:
    event = RebalanceEvent(kind, [("t", p) for p in partitions], Future())
    assert consumer._handoff.post(event)  # as the listener on kafka-python's IO thread
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    return event


class Record:
    """A consumed message as confluent-kafka hands it over (the accessors a commit reads)."""

    def __init__(self, partition: int, offset: int, error: Any = None) -> None:
        self._partition, self._offset, self._error = partition, offset, error

    def error(self) -> Any:
        return self._error

    def topic(self) -> str:
        return "t"

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset
