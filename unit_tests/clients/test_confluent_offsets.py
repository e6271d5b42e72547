"""The confluent Consumer's commit path (``clients/confluent/offsets.GroupCommitter``) with a fake
coordinator whose OffsetCommit requests the test answers one at a time: commits coalesced behind
the request in flight, none dropped, each request's result delivered once, on the application's
thread, to ``on_commit`` (else ``error_cb``)."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import confluent_kafka
import pytest
from confluent_consumer_fakes import Record  # this directory is on sys.path
from kafka import errors as kafka_errors
from kafka.future import Future

from kafka_placement.clients.confluent.commit_connection import CommitConnectionUnavailable
from kafka_placement.clients.confluent.kafka_python_group import KafkaPythonGroup
from kafka_placement.clients.confluent.offsets import GroupCommitter
from kafka_placement.clients.confluent.thread_handoff import ThreadHandoff
from kafka_placement.errors import CommitFailedError, ConsumerConfigError
from kafka_placement.groups.membership import Membership, Step


class SlowCoordinator:
    """Each OffsetCommit waits for the test to answer it."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[tuple[str, int], int], Future]] = []

    def coordinator_unknown(self) -> bool:
        return False

    def group_metadata(self) -> Any:
        return SimpleNamespace(generation_id=7)

    async def _send_offset_commit_request(self, offsets: dict[Any, Any]) -> None:
        answer = Future()
        self.requests.append(({(tp.topic, tp.partition): om.offset for tp, om in offsets.items()}, answer))
        await answer


class Loop:
    """kafka-python's IO loop, stepped by the test: runs a scheduled coroutine until it waits."""

    def __init__(self) -> None:
        self.tasks: list[Any] = []

    def call_soon(self, fn: Any, *args: Any) -> None:
        self.tasks.append(fn(*args))
        self.step()

    def step(self) -> None:
        for task in list(self.tasks):
            try:
                task.send(None)
            except StopIteration:
                self.tasks.remove(task)


def _committer(**kwargs: Any) -> tuple[GroupCommitter, SlowCoordinator, Loop]:
    coordinator, loop = SlowCoordinator(), Loop()
    kafka_consumer = SimpleNamespace(
        _coordinator=coordinator, _manager=SimpleNamespace(), _cluster=None, _subscription=None
    )
    committer = GroupCommitter(
        None,
        KafkaPythonGroup(kafka_consumer),
        ThreadHandoff(loop.call_soon),
        Membership(),
        "g",
        auto_offset_store=True,
        **kwargs,
    )
    return committer, coordinator, loop


def test_async_commits_behind_a_request_in_flight_are_coalesced_and_none_is_dropped() -> None:
    reports: list[tuple[Any, list[tuple[int, int]]]] = []
    committer, coordinator, loop = _committer(
        on_commit=lambda err, tps: reports.append((err, [(tp.partition, tp.offset) for tp in tps]))
    )
    for offset in range(1, 5001):  # the loop: one async commit per record
        committer.commit({("t", offset % 6): offset}, asynchronous=True)
    assert len(coordinator.requests) == 1  # the first went out; 4,999 wait, coalesced
    coordinator.requests[0][1].success(None)
    loop.step()
    assert len(coordinator.requests) == 2
    newest = {("t", p): max(o for o in range(2, 5001) if o % 6 == p) for p in range(6)}
    assert coordinator.requests[1][0] == newest
    coordinator.requests[1][1].success(None)
    loop.step()
    assert committer.queue.idle and len(coordinator.requests) == 2
    assert reports == []  # delivered on the application's thread only
    committer.deliver()
    assert [err for err, _ in reports] == [None, None]  # once per request
    assert reports[1][1] == [(p, o) for (_, p), o in sorted(newest.items())]
    committer.deliver()
    assert len(reports) == 2


def test_a_refused_request_is_reported_once_to_on_commit_else_to_error_cb() -> None:
    reports: list[Any] = []
    committer, coordinator, loop = _committer(on_commit=lambda err, tps: reports.append(err))
    committer.commit({("t", 0): 5}, asynchronous=True)
    committer.commit({("t", 0): 6}, asynchronous=True)
    coordinator.requests[0][1].failure(kafka_errors.CommitFailedError(kafka_errors.IllegalGenerationError()))
    loop.step()
    coordinator.requests[1][1].success(None)
    loop.step()
    committer.deliver()
    assert [None if e is None else e.code() for e in reports] == [
        confluent_kafka.KafkaError.ILLEGAL_GENERATION,
        None,
    ]
    errors: list[Any] = []
    committer, coordinator, loop = _committer(on_commit=None, error_cb=errors.append)
    committer.commit({("t", 0): 5}, asynchronous=True)
    coordinator.requests[0][1].failure(kafka_errors.UnknownMemberIdError())
    loop.step()
    committer.deliver()
    assert [e.code() for e in errors] == [confluent_kafka.KafkaError.UNKNOWN_MEMBER_ID]
    assert committer.failed_requests == 1


def test_a_retriable_failure_is_retried_not_reported() -> None:
    reports: list[Any] = []
    committer, coordinator, loop = _committer(on_commit=lambda err, tps: reports.append((err, len(tps))))
    committer.commit({("t", 0): 5, ("t", 1): 3}, asynchronous=True)
    coordinator.requests[0][1].failure(kafka_errors.NotCoordinatorError())
    loop.step()  # no sleep function given: retried at once
    assert len(coordinator.requests) == 2 and coordinator.requests[1][0] == {("t", 0): 5, ("t", 1): 3}
    coordinator.requests[1][1].success(None)
    loop.step()
    committer.deliver()
    assert reports == [(None, 2)]


def test_a_sync_commit_waits_for_its_own_request_and_a_refusal_is_typed() -> None:
    committer, coordinator, loop = _committer(on_commit=None)
    committer.commit({("t", 0): 1}, asynchronous=True)
    answered: list[Any] = []

    def sync_commit() -> None:
        try:
            answered.append(committer.commit({("t", 0): 2}, asynchronous=False))
        except CommitFailedError as exc:
            answered.append(exc)

    thread = threading.Thread(target=sync_commit)
    thread.start()
    thread.join(0.3)
    assert thread.is_alive() and not answered  # behind the async one in flight
    coordinator.requests[0][1].success(None)
    loop.step()
    coordinator.requests[1][1].failure(kafka_errors.CommitFailedError(kafka_errors.UnknownMemberIdError()))
    loop.step()
    thread.join(10)
    assert len(answered) == 1 and isinstance(answered[0], CommitFailedError)
    assert "refused for generation 7" in str(answered[0])


def test_commits_not_yet_sent_fail_at_a_loss_and_later_ones_are_refused_locally() -> None:
    reports: list[Any] = []
    committer, coordinator, loop = _committer(on_commit=lambda err, tps: reports.append(err))
    committer.commit({("t", 0): 1}, asynchronous=True)
    committer.commit({("t", 0): 2}, asynchronous=True)
    committer._membership.apply(Step.SUBSCRIBE)
    committer._membership.apply(Step.LOSE)  # what the applier does at a loss, then:
    committer.fail_pending("membership lost")
    with pytest.raises(CommitFailedError, match="lost its group membership"):
        committer.commit({("t", 0): 3}, asynchronous=True)
    coordinator.requests[0][1].success(None)
    loop.step()
    assert len(coordinator.requests) == 1  # the failed one was never sent
    committer.deliver()
    assert [e is None for e in reports] == [False, True]  # failed (not sent) first, then the one in flight


def test_on_commit_hears_of_asynchronous_commits_only_as_confluent_kafka() -> None:
    """confluent-kafka calls on_commit for asynchronous and automatic commits, never for a
    synchronous one (its caller has the answer): a request that carried only synchronous commits
    is not reported, one that coalesced both is reported once."""
    reports: list[Any] = []
    committer, coordinator, loop = _committer(on_commit=lambda err, tps: reports.append(len(tps)))
    done: list[Any] = []
    worker = threading.Thread(target=lambda: done.append(committer.commit({("t", 0): 1}, asynchronous=False)))
    worker.start()
    while not coordinator.requests:
        worker.join(0.01)
    coordinator.requests[0][1].success(None)
    loop.step()
    worker.join(10)
    assert [(tp.partition, tp.offset) for tp in done[0]] == [(0, 1)]
    committer.deliver()
    assert reports == []
    committer.commit({("t", 1): 5}, asynchronous=True)  # goes out at once, alone
    committer.commit({("t", 2): 7}, asynchronous=True)  # waits, coalesced with the sync one below
    worker = threading.Thread(target=lambda: committer.commit({("t", 0): 2}, asynchronous=False))
    worker.start()
    while worker.is_alive() and ("t", 0) not in committer.queue.pending:
        worker.join(0.01)
    coordinator.requests[1][1].success(None)
    loop.step()
    coordinator.requests[2][1].success(None)
    loop.step()
    worker.join(10)
    committer.deliver()
    assert reports == [1, 2]  # ({t1}) and ({t0, t2}): once each


def test_an_automatic_commit_made_synchronously_is_reported_to_on_commit_as_librdkafkas() -> None:
    """The auto-commit before a revocation (and at close) waits for its answer, yet librdkafka reports
    its automatic commits to on_commit: a plain Consumer with auto-commit calls it once at close
    (bench_consumer.py's auto rows: "on_commit calls 1"; ours said 0)."""
    reports: list[Any] = []
    committer, coordinator, loop = _committer(on_commit=lambda err, tps: reports.append((err, len(tps))))
    done: list[Any] = []
    worker = threading.Thread(
        target=lambda: done.append(
            committer.commit({("t", 0): 3, ("t", 1): 4}, asynchronous=False, automatic=True)
        )
    )
    worker.start()
    while not coordinator.requests:
        worker.join(0.01)
    coordinator.requests[0][1].success(None)
    loop.step()
    worker.join(10)
    assert [(tp.partition, tp.offset) for tp in done[0]] == [(0, 3), (1, 4)]  # its caller has it too
    committer.deliver()
    assert reports == [(None, 2)]
    committer.deliver()
    assert reports == [(None, 2)]  # once


class Connection:
    """The commit connection (commit_connection.CommitConnection) as the committer uses it: each commit
    answered at once from ``answers`` (None = accepted, an exception = raised), recording the thread."""

    def __init__(self, *answers: BaseException | None) -> None:
        self.answers = list(answers)
        self.sent: list[tuple[dict[tuple[str, int], int], str]] = []

    def commit(self, offsets: dict[tuple[str, int], int], timeout_s: float) -> None:
        self.sent.append((dict(offsets), threading.current_thread().name))
        answer = self.answers.pop(0) if self.answers else None
        if answer is not None:
            raise answer


def _wait_for_request(coordinator: SlowCoordinator, waiter: threading.Thread) -> None:
    while not coordinator.requests:
        waiter.join(0.01)


def test_a_synchronous_commit_goes_over_the_commit_connection_on_the_callers_thread() -> None:
    connection = Connection()
    committer, coordinator, loop = _committer(on_commit=None, connection=connection)
    committed = committer.commit({("t", 0): 5, ("t", 1): 9}, asynchronous=False)
    assert [(tp.partition, tp.offset) for tp in committed] == [(0, 5), (1, 9)]
    assert connection.sent == [({("t", 0): 5, ("t", 1): 9}, threading.current_thread().name)]
    assert coordinator.requests == [] and loop.tasks == [] and committer.queue.idle

    # the connection cannot be used (no stable generation): the same commit takes kafka-python's path
    connection.answers = [CommitConnectionUnavailable("no stable generation")]
    assert _committed_through_kafka_python(committer, coordinator, loop, {("t", 0): 6}) == [(0, 6)]


def _committed_through_kafka_python(
    committer: Any, coordinator: Any, loop: Any, offsets: dict[tuple[str, int], int]
) -> list[tuple[int, int]]:
    """A synchronous commit (on a thread of its own) that reaches kafka-python's coordinator: its
    request answered there; the (partition, offset) pairs the commit returned."""
    done: list[Any] = []
    waiter = threading.Thread(target=lambda: done.append(committer.commit(offsets, asynchronous=False)))
    waiter.start()
    _wait_for_request(coordinator, waiter)
    assert coordinator.requests[0][0] == offsets
    coordinator.requests[0][1].success(None)
    loop.step()
    waiter.join(10)
    return [(tp.partition, tp.offset) for tp in done[0]]


def test_a_refusal_on_the_commit_connection_is_reported_as_from_kafka_pythons_path() -> None:
    connection = Connection(kafka_errors.CommitFailedError(kafka_errors.IllegalGenerationError()))
    committer, coordinator, _loop = _committer(on_commit=None, connection=connection)
    with pytest.raises(CommitFailedError, match="commit refused for generation 7"):
        committer.commit({("t", 0): 5}, asynchronous=False)
    assert coordinator.requests == [] and committer.failed_requests == 1


def test_a_retriable_failure_on_the_commit_connection_is_retried_through_kafka_pythons_path() -> None:
    connection = Connection(kafka_errors.NotCoordinatorError())  # the coordinator moved
    committer, coordinator, loop = _committer(on_commit=None, connection=connection)
    assert _committed_through_kafka_python(committer, coordinator, loop, {("t", 0): 5}) == [(0, 5)]
    assert committer.failed_requests == 0


def test_a_commit_per_record_takes_the_short_way_with_the_same_requests_and_reports() -> None:
    """``commit_message_async(msg)`` is ``commit({(topic, partition): offset + 1}, asynchronous=True)``:
    the same requests (the first at once, the rest coalesced behind it) and the same reports."""
    outcomes = []
    for short in (False, True):
        reports: list[Any] = []
        committer, coordinator, loop = _committer(
            on_commit=lambda err, tps, reports=reports: reports.append(
                (err, [(tp.partition, tp.offset) for tp in tps])
            )
        )
        for offset in range(5000):
            record = Record(offset % 6, offset)
            if short:
                committer.commit_message_async(record)
            else:
                committer.commit({("t", record.partition()): record.offset() + 1}, asynchronous=True)
        for request in range(2):
            coordinator.requests[request][1].success(None)
            loop.step()
        committer.deliver()
        assert committer.queue.idle
        outcomes.append(([offsets for offsets, _ in coordinator.requests], reports))
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][0][1] == {("t", p): max(o for o in range(1, 5000) if o % 6 == p) + 1 for p in range(6)}


def test_a_commit_per_record_is_refused_for_an_error_message_and_after_a_loss() -> None:
    committer, coordinator, _ = _committer(on_commit=None)
    with pytest.raises(ConsumerConfigError, match="cannot commit an error message: broken"):
        committer.commit_message_async(Record(0, 5, error="broken"))
    committer._membership.apply(Step.SUBSCRIBE)
    committer._membership.apply(Step.LOSE)
    with pytest.raises(
        CommitFailedError, match="group g: commit refused, this member lost its group membership"
    ):
        committer.commit_message_async(Record(0, 5))
    assert coordinator.requests == [] and committer.queue.idle


def test_a_store_per_record_stores_the_next_offset_as_the_general_store_does() -> None:
    short, general = _committer(on_commit=None)[0], _committer(on_commit=None)[0]
    for committer in (short, general):
        committer.auto_offset_store = False
    for offset in range(50):
        record = Record(offset % 3, offset)
        short.store_message(record)
        general.store(record, None)
    assert (
        short.stored
        == general.stored
        == {("t", p): max(o for o in range(50) if o % 3 == p) + 1 for p in range(3)}
    )
    with pytest.raises(ConsumerConfigError, match="cannot commit an error message: broken"):
        short.store_message(Record(0, 5, error="broken"))
    short.auto_offset_store = True
    with pytest.raises(
        ConsumerConfigError, match=r"store_offsets\(\) requires enable.auto.offset.store=false"
    ):
        short.store_message(Record(0, 5))


def test_a_commit_made_during_a_synchronous_commit_on_the_connection_is_sent_after_it() -> None:
    """The first synchronous commit (nothing queued) is sent alone on the caller's thread; a commit
    another thread makes meanwhile waits in the queue and goes out next, from that same thread, as
    one request; neither is reported to on_commit (both were waited for)."""
    started, release = threading.Event(), threading.Event()

    class HeldConnection(Connection):
        def commit(self, offsets: dict[tuple[str, int], int], timeout_s: float) -> None:
            super().commit(offsets, timeout_s)
            if len(self.sent) == 1:
                started.set()
                assert release.wait(10)

    connection = HeldConnection()
    reports: list[Any] = []
    committer, coordinator, loop = _committer(
        on_commit=lambda err, tps: reports.append(err), connection=connection
    )
    results: dict[str, Any] = {}
    first = threading.Thread(
        target=lambda: results.setdefault("first", committer.commit({("t", 0): 5}, asynchronous=False)),
        name="first",
    )
    first.start()
    assert started.wait(10)
    second = threading.Thread(
        target=lambda: results.setdefault("second", committer.commit({("t", 1): 9}, asynchronous=False)),
        name="second",
    )
    second.start()
    deadline = time.monotonic() + 10
    while not committer.queue.pending and time.monotonic() < deadline:  # queued behind the first
        second.join(0.01)
    queued = dict(committer.queue.pending)
    release.set()
    first.join(10)
    second.join(10)
    assert queued == {("t", 1): 9}
    assert [(tp.partition, tp.offset) for tp in results["first"]] == [(0, 5)]
    assert [(tp.partition, tp.offset) for tp in results["second"]] == [(1, 9)]
    assert connection.sent == [({("t", 0): 5}, "first"), ({("t", 1): 9}, "first")]
    assert coordinator.requests == [] and loop.tasks == [] and committer.queue.idle
    committer.deliver()
    assert reports == [] and committer.failed_requests == 0
    assert committer.flush(0.1)  # nothing left: flush() does not wait
