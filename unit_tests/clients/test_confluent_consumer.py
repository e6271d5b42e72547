"""The confluent Consumer's rebalance and commit logic with fake librdkafka and kafka-python
clients (no broker): what reaches librdkafka, which application callback runs, what is refused."""

from __future__ import annotations

import inspect
import time
from types import SimpleNamespace
from typing import Any

import confluent_kafka
import pytest
from kafka import errors as kafka_errors
from kafka.coordinator.heartbeat import Heartbeat
from kafka.future import Future

from kafka_placement.clients.confluent import consumer as consumer_module
from kafka_placement.clients.confluent.rebalance import ASSIGN, LOST, REVOKE, RebalanceEvent
from kafka_placement.errors import CommitFailedError, ConsumerGroupError


class FakeRdKafka:
    def __init__(self, conf: dict[str, Any]) -> None:
        self.conf = conf
        self.calls: list[tuple[str, list[tuple[str, int, int]]]] = []
        self.positions: dict[tuple[str, int], int] = {}
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

    def consume(self, n: int, timeout: float) -> list[Any]:
        return []

    def position(self, tps: list[Any]) -> list[Any]:
        return [confluent_kafka.TopicPartition(tp.topic, tp.partition, self._at(tp))
                for tp in tps]

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

    def _invoke_completed_offset_commit_callbacks(self) -> None:
        pass

    def fetch_committed_offsets(self, partitions: Any, timeout_ms: Any = None) -> dict[Any, Any]:
        """The group's committed offsets (``self.committed``: (topic, partition) → offset; none: absent)."""
        self.fetches.append(sorted((tp.topic, tp.partition) for tp in partitions))
        if self.fetch_error is not None:
            raise self.fetch_error
        return {tp: SimpleNamespace(offset=self.committed[(tp.topic, tp.partition)]) for tp in partitions
                if (tp.topic, tp.partition) in self.committed}

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
        return SimpleNamespace(generation_id=-1 if lost else 3, member_id="" if lost else "m-1",
                               group_instance_id=None)

    def coordinator_unknown(self) -> bool:
        return False

    async def _send_offset_commit_request(self, offsets: dict[Any, Any]) -> None:
        if self.commit_error is not None:
            raise self.commit_error
        self.commits.append({(tp.topic, tp.partition): om.offset for tp, om in offsets.items()})


class FakeKafkaConsumer:
    def __init__(self, **config: Any) -> None:
        self.config = config
        self._coordinator = FakeCoordinator()
        self._manager = SimpleNamespace(call_soon=self._call_soon)
        self.known_topics: set[str] = {"t"}
        self.metadata_requests = 0
        self._cluster = SimpleNamespace(
            request_update=self._request_update,
            partitions_for_topic=lambda t: {0} if t in self.known_topics else None)
        self.joins: list[Future] = []
        self.closed = False

    def _call_soon(self, fn: Any, *args: Any) -> Future:
        future = Future()
        if fn == self._coordinator.ensure_active_group_async:
            self.joins.append(future)  # a join in flight until the test completes it
            return future
        result = fn(*args)  # completing a rebalance event or sending commits: the IO thread's work
        if inspect.iscoroutine(result):  # the commit sender: no awaits suspend with the fakes
            with pytest.raises(StopIteration):
                result.send(None)
        return future.success(None)

    def _request_update(self) -> Future:
        self.metadata_requests += 1
        return Future().success(None)  # a metadata response came (with known_topics)

    def subscribe(self, topics: Any = (), pattern: str | None = None, listener: Any = None) -> None:
        self.topics, self.pattern = topics, pattern
        self._coordinator.rejoin = True

    def close(self, autocommit: bool, timeout_ms: int) -> None:
        self.closed = True


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
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


def _make(assignor: Any = "range", conf: dict[str, Any] | None = None,
          lost_cb: bool = True) -> tuple[Any, App]:
    consumer = consumer_module.Consumer({**CONF, **(conf or {})}, assignor=assignor)
    app = App()
    consumer.subscribe(["t"], on_assign=app.cb("assign"), on_revoke=app.cb("revoke"),
                       on_lost=app.cb("lost") if lost_cb else None)
    return consumer, app


def _event(consumer: Any, kind: str, partitions: list[int]) -> RebalanceEvent:
    event = RebalanceEvent(kind, [("t", p) for p in partitions], Future())
    consumer._bridge._events.append(event)
    consumer._next_drive = 0.0
    consumer.poll(0)
    return event


def test_eager_assign_then_revoke_reach_librdkafka_and_the_callbacks_in_order() -> None:
    consumer, app = _make()
    consumer.poll(0)
    assert len(consumer._kc.joins) == 1  # the join started, kept in flight across polls
    consumer.poll(0)
    assert len(consumer._kc.joins) == 1
    consumer._coordinator.committed = {("t", 1): 17}
    first = _event(consumer, ASSIGN, [0, 1, 2])
    assert first.done.is_done  # the join may continue
    # librdkafka starts from the committed offsets our coordinator read; none → auto.offset.reset
    # (librdkafka's default "largest": OFFSET_END)
    end = confluent_kafka.OFFSET_END
    assert consumer._rk.calls == [("assign", [("t", 0, end), ("t", 1, 17), ("t", 2, end)])]
    assert [tp.partition for tp in consumer.assignment()] == [0, 1, 2]
    _event(consumer, REVOKE, [0, 1, 2])
    assert consumer._rk.calls[-1] == ("unassign", [])
    assert app.seen == [("assign", [0, 1, 2]), ("revoke", [0, 1, 2])]
    assert consumer.assignment() == []


def test_a_callback_that_assigns_itself_is_not_overridden() -> None:
    consumer = consumer_module.Consumer(CONF, assignor="cooperative-sticky")

    def on_assign(c: Any, partitions: list[Any]) -> None:
        for tp in partitions:
            tp.offset = 42
        c.incremental_assign(partitions)

    consumer.subscribe(["t"], on_assign=on_assign)
    _event(consumer, ASSIGN, [4])
    assert consumer._rk.calls == [("incremental_assign", [("t", 4, 42)])]


def test_cooperative_moves_only_the_partitions_that_change() -> None:
    consumer, _ = _make("cooperative-sticky")
    _event(consumer, ASSIGN, [0, 1, 2, 3])
    _event(consumer, REVOKE, [3])
    _event(consumer, ASSIGN, [5])
    end = confluent_kafka.OFFSET_END
    assert consumer._rk.calls == [
        ("incremental_assign", [("t", p, end) for p in (0, 1, 2, 3)]),
        ("incremental_unassign", [("t", 3, -1001)]),
        ("incremental_assign", [("t", 5, end)]),
    ]
    assert consumer._coordinator.fetches == [[("t", p) for p in (0, 1, 2, 3)], [("t", 5)]]  # only the new
    assert [tp.partition for tp in consumer.assignment()] == [0, 1, 2, 5]
    assert consumer.rebalance_protocol() == "COOPERATIVE"


@pytest.mark.parametrize(("reset", "expected"), [
    ("earliest", confluent_kafka.OFFSET_BEGINNING), ("smallest", confluent_kafka.OFFSET_BEGINNING),
    ("beginning", confluent_kafka.OFFSET_BEGINNING), ("latest", confluent_kafka.OFFSET_END),
    ("largest", confluent_kafka.OFFSET_END), ("end", confluent_kafka.OFFSET_END),
    ("error", confluent_kafka.OFFSET_INVALID),  # librdkafka applies its own rule
])
def test_no_committed_offset_starts_where_auto_offset_reset_says(reset: str, expected: int) -> None:
    consumer, _ = _make(conf={"auto.offset.reset": reset})
    consumer._coordinator.committed = {("t", 0): 5}
    _event(consumer, ASSIGN, [0, 1])
    assert consumer._rk.calls == [("assign", [("t", 0, 5), ("t", 1, expected)])]


def test_committed_offsets_not_read_leave_librdkafka_to_read_them() -> None:
    consumer, app = _make()
    consumer._coordinator.fetch_error = kafka_errors.KafkaTimeoutError("no coordinator")
    _event(consumer, ASSIGN, [0, 1])
    assert consumer._rk.calls == [("assign", [("t", 0, -1001), ("t", 1, -1001)])]
    assert app.seen == [("assign", [0, 1])]


def test_membership_reset_by_the_broker_is_lost_before_any_more_records_and_commits_are_refused() -> None:
    errors: list[Any] = []
    consumer, app = _make(conf={"error_cb": errors.append})
    _event(consumer, ASSIGN, [0, 1])
    consumer._coordinator._generation.lost = True  # heartbeat answered UNKNOWN_MEMBER_ID
    consumer._next_drive = 0.0
    consumer.poll(0)
    assert app.seen[-1] == ("lost", [0, 1]) and consumer._rk.calls[-1] == ("unassign", [])
    assert errors and errors[0].code() == confluent_kafka.KafkaError._ASSIGNMENT_LOST
    with pytest.raises(CommitFailedError, match="lost its group membership"):
        consumer.commit(offsets=[confluent_kafka.TopicPartition("t", 0, 10)], asynchronous=False)
    with pytest.raises(CommitFailedError):
        consumer.commit(offsets=[confluent_kafka.TopicPartition("t", 0, 10)], asynchronous=True)
    assert consumer._coordinator.commits == []
    _event(consumer, LOST, [0, 1])  # kafka-python's own on_partitions_lost later: no second callback
    assert [s for s in app.seen if s[0] == "lost"] == [("lost", [0, 1])]
    consumer._coordinator._generation.lost = False  # rejoined: a new generation
    _event(consumer, ASSIGN, [0])  # commits allowed again
    consumer.commit(offsets=[confluent_kafka.TopicPartition("t", 0, 11)], asynchronous=False)
    assert consumer._coordinator.commits == [{("t", 0): 11}]


def test_consumer_group_metadata_carries_the_generation_and_is_refused_while_not_in_one() -> None:
    """What librdkafka reads back from ``consumer_group_metadata()`` (the bytes
    ``send_offsets_to_transaction`` takes) is kafka-python's generation and member id; after a loss
    (generation -1, which the broker would not fence) it is refused until the next assignment."""
    from kafka_placement.clients.confluent.consumer_group_metadata import GroupMetadata, read_group_metadata

    consumer, _ = _make()
    _event(consumer, ASSIGN, [0])
    assert read_group_metadata(consumer.consumer_group_metadata()) == GroupMetadata("g", 3, "m-1", None)
    consumer._coordinator._generation.lost = True
    consumer._next_drive = 0.0
    consumer.poll(0)  # on_lost
    with pytest.raises(CommitFailedError, match=r"not in a generation \(generation -1, member id ''\)"):
        consumer.consumer_group_metadata()
    consumer._coordinator._generation.lost = False  # rejoined
    with pytest.raises(CommitFailedError):  # lost until the next assignment, as commits are
        consumer.consumer_group_metadata()
    _event(consumer, ASSIGN, [0])
    assert read_group_metadata(consumer.consumer_group_metadata()).generation_id == 3
    consumer.close()
    with pytest.raises(RuntimeError, match="closed"):
        consumer.consumer_group_metadata()


def test_without_on_lost_on_revoke_is_called_as_confluent_kafka_does() -> None:
    consumer, app = _make(lost_cb=False)
    _event(consumer, ASSIGN, [2])
    _event(consumer, LOST, [2])
    assert app.seen == [("assign", [2]), ("revoke", [2])]


def test_no_heartbeat_success_for_a_session_means_lost_and_kafka_python_is_reset() -> None:
    consumer, app = _make(conf={"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000})
    _event(consumer, ASSIGN, [0])
    consumer._kc.joins[-1].success(True)  # the join completed: stable, heartbeating
    consumer._coordinator.rejoin = False
    consumer._coordinator.heartbeat.last_receive = time.monotonic() - 7
    consumer._coordinator.heartbeat.last_reset = time.monotonic() - 7
    consumer._next_drive = 0.0
    consumer.poll(0)
    assert app.seen[-1] == ("lost", [0]) and consumer._coordinator.resets == 1


def test_commits_refused_by_the_coordinator_are_typed_errors() -> None:
    consumer, _ = _make()
    _event(consumer, ASSIGN, [0])
    consumer._coordinator.commit_error = kafka_errors.CommitFailedError("kicked out")
    with pytest.raises(CommitFailedError, match="commit refused for generation 3"):
        consumer.commit(offsets=[confluent_kafka.TopicPartition("t", 0, 5)], asynchronous=False)


def test_commit_without_arguments_uses_positions_and_nothing_stored_is_no_offset() -> None:
    consumer, _ = _make()
    _event(consumer, ASSIGN, [0, 1])
    with pytest.raises(confluent_kafka.KafkaException) as info:
        consumer.commit()
    assert info.value.args[0].code() == confluent_kafka.KafkaError._NO_OFFSET
    consumer._rk.positions[("t", 1)] = 17
    done = consumer.commit(asynchronous=False)
    assert [(tp.partition, tp.offset) for tp in done] == [(1, 17)]


def test_auto_commit_commits_before_revocation_and_not_after_a_loss() -> None:
    consumer, _ = _make(conf={"enable.auto.commit": True})
    _event(consumer, ASSIGN, [0, 1])
    consumer._rk.positions.update({("t", 0): 5, ("t", 1): 9})
    _event(consumer, REVOKE, [0, 1])
    assert consumer._coordinator.commits == [{("t", 0): 5, ("t", 1): 9}]
    _event(consumer, ASSIGN, [0])
    consumer._coordinator._generation.lost = True
    consumer._next_drive = 0.0
    consumer.poll(0)
    assert consumer._coordinator.commits == [{("t", 0): 5, ("t", 1): 9}]


def test_a_fatal_join_error_is_raised_from_poll() -> None:
    consumer, _ = _make()
    consumer.poll(0)
    consumer._kc.joins[-1].failure(kafka_errors.InconsistentGroupProtocolError("protocols differ"))
    consumer._next_drive = 0.0
    with pytest.raises(ConsumerGroupError, match="cannot join"):
        consumer.poll(0)


def test_close_revokes_then_leaves_and_closes_both_clients() -> None:
    consumer, app = _make()
    _event(consumer, ASSIGN, [3])
    consumer.close()
    assert app.seen[-1] == ("revoke", [3])
    assert consumer._kc.closed and consumer._rk.closed
    with pytest.raises(RuntimeError, match="closed"):
        consumer.poll(0)


def test_the_first_join_waits_for_metadata_naming_every_subscribed_topic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A leader assigns only the topics its metadata knows: a topic created just before the group
    starts must be in the metadata before the first JoinGroup — within METADATA_WAIT_S; a topic
    that does not exist does not hold the join longer (librdkafka joins without it too)."""
    consumer = consumer_module.Consumer(CONF, assignor="range")
    consumer._kc.known_topics = set()
    consumer.subscribe(["t"])
    for _ in range(3):
        consumer._next_drive = 0.0
        consumer.poll(0)
    assert consumer._kc.joins == [] and consumer._kc.metadata_requests >= 3  # asked again each time
    consumer._kc.known_topics = {"t"}  # the topic's leader is elected, metadata names it
    consumer._next_drive = 0.0
    consumer.poll(0)
    assert len(consumer._kc.joins) == 1
    other = consumer_module.Consumer(CONF, assignor="range")
    other._kc.known_topics = set()
    other.subscribe(["missing"])
    later = consumer_module.METADATA_WAIT_S
    monkeypatch.setattr(consumer_module, "_monotonic", lambda: time.monotonic() + later)
    other._next_drive = 0.0
    other.poll(0)
    assert len(other._kc.joins) == 1


def test_regex_subscriptions_are_librdkafkas_names_starting_with_a_caret() -> None:
    import re

    from kafka_placement.errors import ConsumerConfigError

    consumer = consumer_module.Consumer(CONF, assignor="range")
    consumer.subscribe(["^orders-.*", "audit"])
    regex = re.compile(consumer._kc.pattern)
    # kafka-python's coordinator matches topics with pattern.match, re-evaluated per metadata update
    assert [t for t in ["orders-1", "orders-", "audit", "audit2", "xorders-1", "t"] if regex.match(t)] == [
        "orders-1", "orders-", "audit"]
    with pytest.raises(ConsumerConfigError, match="invalid topic regex"):
        consumer.subscribe(["^orders-("])
