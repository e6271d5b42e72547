"""The group membership driven from the confluent Consumer's poll(), with fake librdkafka and
kafka-python clients (no broker): when a join starts, fatal join errors, partitions lost when the
broker or the session says so (and commits refused after)."""

from __future__ import annotations

import time
from typing import Any

import confluent_kafka
import pytest
from confluent_consumer_fakes import CONF, _event, _make, install_fakes  # this directory is on sys.path
from kafka import errors as kafka_errors

from kafka_placement.clients.confluent import consumer as consumer_module
from kafka_placement.clients.confluent import poll_loop
from kafka_placement.clients.confluent.thread_handoff import ASSIGN, LOST
from kafka_placement.errors import CommitFailedError, ConsumerGroupError


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    install_fakes(monkeypatch)


def test_membership_reset_by_the_broker_is_lost_before_any_more_records_and_commits_are_refused() -> None:
    errors: list[Any] = []
    consumer, app = _make(conf={"error_cb": errors.append})
    _event(consumer, ASSIGN, [0, 1])
    consumer._coordinator._generation.lost = True  # heartbeat answered UNKNOWN_MEMBER_ID
    consumer._loop.next_drive = 0.0
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


def test_no_heartbeat_success_for_a_session_means_lost_and_kafka_python_is_reset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Neither a successful heartbeat nor a completed join for session.timeout.ms: lost. kafka-python's
    timer reset (it resets it when it marks its coordinator dead, as after a pause) does not count."""
    consumer, app = _make(conf={"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000})
    _event(consumer, ASSIGN, [0])
    consumer._kc.joins[-1].success(True)  # the join completed: stable, heartbeating
    consumer._coordinator.rejoin = False
    consumer._coordinator.heartbeat.received_heartbeat()
    later = time.monotonic() + 5.5
    for module in (consumer_module, poll_loop):
        monkeypatch.setattr(module, "_monotonic", lambda: later)
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    assert app.seen[-1] == ("assign", [0])  # within the session: still a member
    later += 1.0
    consumer._coordinator.heartbeat.reset_timeouts()  # kafka-python: "coordinator dead", timer reset
    consumer._coordinator.heartbeat.last_reset = later
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    assert app.seen[-1] == ("lost", [0]) and consumer._coordinator.resets == 1


def test_a_fatal_join_error_is_raised_from_poll() -> None:
    consumer, _ = _make()
    consumer.poll(0)
    consumer._kc.joins[-1].failure(kafka_errors.InconsistentGroupProtocolError("protocols differ"))
    consumer._loop.next_drive = 0.0
    with pytest.raises(ConsumerGroupError, match="cannot join"):
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
        consumer._loop.next_drive = 0.0
        consumer.poll(0)
    assert consumer._kc.joins == [] and consumer._kc.metadata_requests >= 3  # asked again each time
    consumer._kc.known_topics = {"t"}  # the topic's leader is elected, metadata names it
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    assert len(consumer._kc.joins) == 1
    other = consumer_module.Consumer(CONF, assignor="range")
    other._kc.known_topics = set()
    other.subscribe(["missing"])
    later = consumer_module.METADATA_WAIT_S
    for module in (consumer_module, poll_loop):
        monkeypatch.setattr(module, "_monotonic", lambda: time.monotonic() + later)
    other._loop.next_drive = 0.0
    other.poll(0)
    assert len(other._kc.joins) == 1


def test_poll_drives_the_group_often_while_a_join_is_under_way_and_seldom_after() -> None:
    """Each join step waits for the application thread, and librdkafka's poll() cannot be woken
    from Python: while joining, poll() looks at the group every JOIN_DRIVE_INTERVAL_S."""
    consumer, _ = _make()
    consumer.poll(0)  # metadata known, the join starts
    assert consumer._kc.joins and consumer._loop.drive_interval == poll_loop.JOIN_DRIVE_INTERVAL_S
    _event(consumer, ASSIGN, [0])
    consumer._coordinator.rejoin = False  # the join completed: the group is stable
    consumer._kc.joins[-1].success(None)
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    assert consumer._loop.drive_interval == poll_loop.DRIVE_INTERVAL_S
    assert poll_loop.JOIN_DRIVE_INTERVAL_S < poll_loop.DRIVE_INTERVAL_S


def test_partitions_a_retried_join_gave_back_without_an_assign_event_are_taken_up() -> None:
    """The soak's coop-a (docs/reliability.md), reproduced live with a silent coordinator link: the
    member owned 0 and 1; a join attempt began with the generation valid (kafka-python kept the
    cooperative assignment), the coordinator expired the member meanwhile, the drive declared 0 and 1
    lost, and kafka-python's retried join — which skips its join prepare — was assigned 0 and 1 again
    as a new member: kafka-python's diff added nothing, no assign event came. The member must take them
    up once no join is in flight, not heartbeat on consuming nothing."""
    consumer, app = _make(assignor="cooperative-sticky")
    _event(consumer, ASSIGN, [0, 1])
    consumer._kc.joins[-1].success(True)
    consumer._coordinator.rejoin = False
    kafka_python = consumer._kc
    kafka_python.assigned = {("t", 0), ("t", 1)}  # what kafka-python's subscription holds
    consumer._coordinator._generation.lost = True  # the JoinGroup answered UNKNOWN_MEMBER_ID
    consumer._coordinator.rejoin = True
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    assert app.seen[-1] == ("lost", [0, 1])
    # a join in flight (the retry): nothing taken up meanwhile
    consumer._coordinator._generation.lost = False
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    assert app.seen[-1] == ("lost", [0, 1]) and consumer._kc.joins[-1].is_done is False
    # the retried join done, the same partitions assigned and no assign event (added = nothing)
    consumer._kc.joins[-1].success(True)
    consumer._coordinator.rejoin = False
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    assert app.seen[-1] == ("assign", [0, 1])
    kind, assigned = consumer._rk.calls[-1]
    assert (kind, [(t, p) for t, p, _offset in assigned]) == ("incremental_assign", [("t", 0), ("t", 1)])
    consumer.commit(offsets=[confluent_kafka.TopicPartition("t", 0, 5)], asynchronous=False)  # not fenced
    assert consumer._coordinator.commits == [{("t", 0): 5}]
    # taken up once: the next drives see the two views agree
    seen = len(app.seen)
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    assert len(app.seen) == seen


def test_a_member_whose_views_agree_takes_nothing_up() -> None:
    consumer, app = _make(assignor="cooperative-sticky")
    _event(consumer, ASSIGN, [0])
    consumer._kc.joins[-1].success(True)
    consumer._coordinator.rejoin = False
    consumer._kc.assigned = {("t", 0)}
    for _ in range(3):
        consumer._loop.next_drive = 0.0
        consumer.poll(0)
    assert app.seen == [("assign", [0])]


def test_a_loss_the_session_declared_is_not_undone_before_kafka_python_is_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Soak seed 42: a member SIGSTOPped past its session declares its partitions lost and queues
    kafka-python's generation reset for the IO thread; until that runs, kafka-python still holds the
    lost assignment. Nothing may hand it back in the same turn (or any turn before a join): the records
    the pause left behind are dropped and no on_assign comes."""
    from types import SimpleNamespace

    consumer, app = _make(conf={"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000})
    _event(consumer, ASSIGN, [0])
    consumer._kc.joins[-1].success(True)
    consumer._coordinator.rejoin = False
    consumer._kc.assigned = {("t", 0)}  # kafka-python's assignment from the last join
    consumer._kc.defer_resets = True
    clock = [time.monotonic()]
    for module in (consumer_module, poll_loop):
        monkeypatch.setattr(module, "_monotonic", lambda: clock[0])
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    record = SimpleNamespace(error=lambda: None, topic=lambda: "t", partition=lambda: 0, offset=lambda: 5)

    def paused(*args: Any) -> Any:
        clock[0] += 7  # stopped inside librdkafka's wait, past session.timeout.ms
        return [record]

    consumer._rk.consume = paused
    assert consumer.consume(10, 0.01) == []
    assert app.seen[-1] == ("lost", [0]) and consumer._kc.deferred  # the reset not run yet
    consumer._rk.consume = lambda *args: []
    consumer._loop.next_drive = 0.0
    consumer.consume(10, 0)
    assert app.seen[-1] == ("lost", [0])  # still: kafka-python's old assignment is not adopted
    consumer._kc.run_deferred()
    consumer._loop.next_drive = 0.0
    consumer.consume(10, 0)
    assert app.seen[-1] == ("lost", [0]) and consumer._coordinator.resets == 1


def test_records_returned_after_a_pause_past_the_session_are_dropped_once_the_loss_is_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The process stopped inside librdkafka's wait (SIGSTOP, a GC pause) for longer than the session:
    the records librdkafka hands back then belong to partitions the broker has given away. The group
    is looked at before they are returned: on_lost, and none of them delivered."""
    from types import SimpleNamespace

    consumer, app = _make(conf={"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000})
    _event(consumer, ASSIGN, [0])
    consumer._kc.joins[-1].success(True)
    consumer._coordinator.rejoin = False
    clock = [time.monotonic()]
    for module in (consumer_module, poll_loop):
        monkeypatch.setattr(module, "_monotonic", lambda: clock[0])
    consumer._loop.next_drive = 0.0
    consumer.poll(0)  # the group looked at, all well
    record = SimpleNamespace(error=lambda: None, topic=lambda: "t", partition=lambda: 0, offset=lambda: 5)

    def paused(*args: Any) -> Any:
        clock[0] += 7  # stopped inside librdkafka's wait, past session.timeout.ms
        return [record] if len(args) == 2 else record

    consumer._rk.consume = paused
    assert consumer.consume(10, 0.01) == []
    assert app.seen[-1] == ("lost", [0])
    _event(consumer, ASSIGN, [0])  # assigned again: a pause while polling one record
    consumer._kc.joins[-1].success(True)
    consumer._coordinator.rejoin = False
    consumer._coordinator.heartbeat.received_heartbeat()
    clock[0] = time.monotonic()
    consumer._loop.next_drive = 0.0
    consumer.poll(0)
    consumer._rk.poll = paused
    assert consumer.poll(0) is None and app.seen[-1] == ("lost", [0])
